import FoundationEssentials
import PlaybackKit

/// Playing over HTTP from the local server: opening, Range requests and seeks, HLS,
/// redirects, HTTP errors and a connection dropped mid-file. Stalls and the read-ahead cap
/// are in `NetworkStallChecks`, headers, untrusted references and https in
/// `NetworkSafetyChecks`.
enum NetworkChecks {
    static let all: [Check] = [open, rangeSeek, hlsPlaySeek, redirect, errors, droppedConnection]
        + NetworkStallChecks.all + NetworkSafetyChecks.all

    static let open = Check("http.open", "frames.mp4 over http from a local server prepares, plays and counts the bytes read") { context in
        let server = try context.httpServer()
        let p = try context.player(url: server.url(NetworkMedia.media))
        try await p.prepare()
        try expect(abs(p.player.duration - 10) <= TimeChecks.frame + 0.001, "over http the duration is \(format(p.player.duration)) s, expected 10")
        try await p.play()
        try await p.waitForPosition(atLeast: 0.8, timeout: 5)
        try expect(p.player.numberOfBytesTransferred > 0, "numberOfBytesTransferred is \(p.player.numberOfBytesTransferred) after playing over http")
        let shown = try p.thumbnailFrameNumber("playing over http")
        try expect(abs(shown - FramePattern.frame(at: p.position)) <= 3, "playing over http at \(format(p.position)) s the picture is frame \(shown)")
    }

    static let rangeSeek = Check("http.range-seek", "over http (index at the end, so Range requests) playing and seeking show the right frames; numberOfBytesTransferred grows; playableDuration stays within [position, duration] at every sample, after seeks too", timeout: 40) { context in
        let server = try context.httpServer()
        let p = try context.player(url: server.url(NetworkMedia.media))
        try await p.prepare()
        let afterPrepare = p.player.numberOfBytesTransferred
        try expect(afterPrepare > 0, "prepared over http, numberOfBytesTransferred is \(afterPrepare)")
        try await p.play()
        try await NetworkMedia.checkBufferFigures(p, for: 1.2, "playing from the start")
        for target in [6.3, 2.2, 8.1] {
            try await p.seek(to: target)
            try await NetworkMedia.checkBufferFigures(p, for: 0.6, "playing after a seek to \(format(target)) s")
            let shown = try p.thumbnailFrameNumber("playing after a seek to \(format(target)) s over http")
            let expected = FramePattern.frame(at: p.position)
            try expect(abs(shown - expected) <= 3, "playing after a seek to \(format(target)) s over http, at \(format(p.position)) s the picture is frame \(shown), expected about \(expected)")
        }
        try await p.pause()
        let reached = try await p.seek(to: 4.52, near: nil)
        try expect(abs(reached - 4.52) <= SeekChecks.landing + 0.02, "a paused seek to 4.52 s over http reported \(format(reached)) s")
        try await NetworkMedia.checkBufferFigures(p, for: 0.3, "paused after a seek to 4.52 s")
        let shown = try p.thumbnailFrameNumber("after a paused seek to 4.52 s over http")
        try expect(shown == FramePattern.frame(at: 4.52), "a paused seek to 4.52 s over http shows frame \(shown), expected \(FramePattern.frame(at: 4.52))")
        try expect(p.player.numberOfBytesTransferred >= afterPrepare, "numberOfBytesTransferred went down from \(afterPrepare) to \(p.player.numberOfBytesTransferred)")
        let ranged = server.requests(for: NetworkMedia.media).filter { ($0.rangeStart ?? 0) > 0 }
        try expect(!ranged.isEmpty, "no request for part of the file (Range from a byte past 0) reached the server: \(describeRequests(server))")
    }

    static let hlsPlaySeek = Check("http.hls-play-seek", "HLS over http (five 2 s MPEG-TS segments): prepares, reports a 10 s duration, plays the right frames, and accurate paused seeks (ten targets over the segments: the first frame, a segment's last and first frames, frames within, the second and third last frames; two more after the end) show the target frame", timeout: 40) { context in
        _ = try context.fixture("hls/index.m3u8")
        let server = try context.httpServer()
        let p = try context.player(url: server.url(NetworkMedia.hls))
        try await p.prepare()
        try expect(abs(p.player.duration - 10) <= 0.1, "HLS: the duration is \(format(p.player.duration)) s, expected 10")
        let first = try p.thumbnailFrameNumber("HLS prepared")
        try expect(first <= 1, "HLS prepared at the start shows frame \(first), expected 0")
        try await p.play()
        try await p.waitForPosition(atLeast: 1.0, timeout: 6)
        let playing = try p.thumbnailFrameNumber("HLS playing")
        try expect(abs(playing - FramePattern.frame(at: p.position)) <= 3, "HLS playing at \(format(p.position)) s shows frame \(playing)")
        try await p.pause()
        // A paused seek shows the target's frame, reports the target and stays paused.
        func pausedSeek(to target: Double, _ when: String) async throws {
            let reached = try await p.seek(to: target, near: nil)
            let shown = try p.thumbnailFrameNumber("HLS after a paused seek to \(format(target)) s\(when)")
            try expect(shown == FramePattern.frame(at: target), "HLS: a paused seek to \(format(target)) s\(when) shows frame \(shown), expected \(FramePattern.frame(at: target))")
            try expect(abs(reached - target) <= SeekChecks.landing + 0.02, "HLS: a paused seek to \(format(target)) s\(when) reported \(format(reached)) s")
            try expect(p.player.playbackState == .paused, "HLS: after a paused seek\(when) the state is \(p.player.playbackState)")
        }
        for target in [6.44, 3.0, 0.0, 9.93, 1.97, 4.0, 9.88, 5.23, 2.5, 8.92] {
            try await pausedSeek(to: target, "")
        }
        let mark = p.mark
        try await p.play()
        try await p.waitForPosition(atLeast: 9.3, timeout: 4)
        let later = try p.thumbnailFrameNumber("HLS playing after the seeks")
        try expect(abs(later - FramePattern.frame(at: p.position)) <= 3, "HLS playing after the seeks at \(format(p.position)) s shows frame \(later)")
        try await p.waitForEnd(since: mark, timeout: 4)
        for target in [5.23, 0.0] {
            try await pausedSeek(to: target, " after the end")
        }
    }

    static let redirect = Check("http.redirect", "a 302 redirect to the media plays it") { context in
        let server = try context.httpServer()
        server.route("/moved.mp4", .redirect(NetworkMedia.media))
        let p = try context.player(url: server.url("/moved.mp4"))
        try await p.prepare()
        try expect(abs(p.player.duration - 10) <= TimeChecks.frame + 0.001, "through a redirect the duration is \(format(p.player.duration)) s, expected 10")
        try await p.play()
        try await p.waitForPosition(atLeast: 0.6, timeout: 5)
        let shown = try p.thumbnailFrameNumber("playing through a redirect")
        try expect(abs(shown - FramePattern.frame(at: p.position)) <= 3, "playing through a redirect at \(format(p.position)) s the picture is frame \(shown)")
        try expect(!server.requests(for: NetworkMedia.media).isEmpty, "the redirect was not followed: \(describeRequests(server))")
    }

    static let errors = Check("http.errors", "404, 500, a closed port and a redirect loop each end in .finished(.playbackError(.network)) within 10 s, without .preparedToPlay", timeout: 60) { context in
        let server = try context.httpServer()
        server.route("/gone.mp4", .status(404))
        server.route("/broken.mp4", .status(500))
        server.route("/loop-a.mp4", .redirect("/loop-b.mp4"))
        server.route("/loop-b.mp4", .redirect("/loop-a.mp4"))
        let refused: URL
        do { refused = try LocalHTTPServer.refusedURL() } catch { throw CheckFailure("the suite found no free local port: \(error)") }
        let cases: [(String, URL)] = [("a 404", server.url("/gone.mp4")), ("a 500", server.url("/broken.mp4")),
                                      ("a closed port", refused), ("a redirect loop", server.url("/loop-a.mp4"))]
        for (what, url) in cases {
            let p = try context.player(url: url)
            let mark = p.mark
            p.player.prepareToPlay()
            try await NetworkMedia.expectError(p, .network, since: mark, timeout: 10, what)
            p.player.shutdown()
        }
    }

    static let droppedConnection = Check("http.dropped-connection", "a connection dropped halfway through short.mp4 either resumes with a Range request from where it stopped and plays to the end at the right time, or ends in .network; never an early .playbackEnded", timeout: 40) { context in
        let server = try context.httpServer()
        let (data, media) = try NetworkMedia.indexFirstCopy(of: "short.mp4", context: context)
        let drop = media.lowerBound + media.count / 2
        server.route("/drop.mp4", .content(.init(data, contentType: "video/mp4", dropOnceAt: drop)))
        let p = try context.player(url: server.url("/drop.mp4"))
        let mark = p.mark
        p.player.prepareToPlay()
        let prepared = try await p.recorder.waitFor(".preparedToPlay or .finished", since: mark, timeout: 10) {
            $0 == .preparedToPlay || $0.isFinished
        }
        if case .finished(.playbackError(let error)) = prepared.event {
            try expect(error.code == .network, "the dropped connection ended opening with \(error.code.rawValue) (\(error.message)), expected .network")
            return
        }
        try expect(prepared.event == .preparedToPlay, "opening with a dropped connection ended in \(describe(prepared.event))")
        let duration = p.player.duration
        let started = monotonicSeconds()
        let playMark = p.mark
        try await p.play()
        let reason = try await p.recorder.waitForFinish(since: playMark, timeout: duration + 8)
        let played = monotonicSeconds() - started
        switch reason {
        case .playbackError(let error):
            try expect(error.code == .network, "after the dropped connection playback ended with \(error.code.rawValue) (\(error.message)), expected .network")
        case .playbackEnded:
            try expect(played >= duration - 0.4, "after the dropped connection the media ended after \(format(played)) s of playing, expected about \(format(duration)) s")
            let resumed = server.requests(for: "/drop.mp4").dropFirst().contains { ($0.rangeStart ?? 0) > 0 && ($0.rangeStart ?? 0) <= drop }
            try expect(resumed, "after the connection dropped at byte \(drop) no Range request from before that byte followed: \(describeRequests(server))")
        case .userExited:
            throw CheckFailure("after the dropped connection playback finished with userExited")
        }
    }

    /// The server's log in one line, for failure reasons.
    static func describeRequests(_ server: LocalHTTPServer, limit: Int = 12) -> String {
        let all = server.requests
        let shown = all.suffix(limit).map { request in
            let range = request.rangeStart.map { " bytes=\($0)-\(request.rangeEnd.map(String.init) ?? "")" } ?? ""
            return "\(request.method) \(request.path)\(range) → \(request.status), \(request.bodyBytesSent) B"
        }
        let requestless = server.connectionsWithoutRequest
        let closed = requestless > 0 ? "; \(requestless) connection(s) without a request" : ""
        return (all.count > limit ? "… " : "") + (shown.isEmpty ? "no requests" : shown.joined(separator: "; ")) + closed
    }
}

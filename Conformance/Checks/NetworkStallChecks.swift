import FoundationEssentials
import PlaybackKit

/// A network that is slow or gone: stalls and their recovery, the read-ahead cap while
/// paused, and a server that stops answering while opening or while playing.
enum NetworkStallChecks {
    static let all: [Check] = [stallLoadState, slowSource, readAheadCap, unresponsiveOpen, unresponsivePlay]

    /// Bytes beyond `maxBufferBytes` the read-ahead check allows: what the kernel holds
    /// between the server and the engine (the source lets at most `denseInFlight` sit there),
    /// the engine's stream buffer, the frames its decoders and outputs hold (about 40 KiB a
    /// frame of dense.mp4) and the error of the byte estimate of the position.
    static let readAheadSlack = 512 * 1024

    static let stallLoadState = Check("http.stall-load-state", "when the source stops sending, loadState becomes .stalled (with its event) and the position holds", timeout: 40) { context in
        let server = try context.httpServer()
        try await NetworkMedia.requireHTTP(context, server)
        let p = try context.player(url: server.url(NetworkMedia.stallPlay))
        try await p.prepare()
        let mark = p.mark
        try await p.play()
        try await p.recorder.waitFor(".loadStateChanged with .stalled", since: mark, timeout: 15) { event in
            if case .loadStateChanged(let state) = event { return state.contains(.stalled) }
            return false
        }
        try expect(p.player.loadState.contains(.stalled), "after the stalled event loadState is \(p.player.loadState)")
        let held = p.position
        try await observe(for: 1.0)
        try expect(abs(p.position - held) <= 0.05, "stalled, the position moved from \(format(held)) s to \(format(p.position)) s")
        try expect(held < 9.5, "stalled at \(format(held)) s, past the data the server sent")
    }

    static let slowSource = Check("http.slow-source", "a source sending at 40% of the media's bitrate: loadState gains .stalled while playback waits and returns to .playable/.playthroughOK (with .loadStateChanged each time) once the data catches up; the position never runs ahead of playableDuration and holds while stalled", timeout: 60) { context in
        let server = try context.httpServer()
        try await NetworkMedia.requireHTTP(context, server)
        let (data, media) = try NetworkMedia.indexFirstCopy(of: "frames.mp4", context: context)
        let bitrate = media.count / 10
        server.route("/slow.mp4", .content(.init(data, contentType: "video/mp4", bytesPerSecond: bitrate * 4 / 10)))
        let p = try context.player(url: server.url("/slow.mp4"))
        try await p.prepare(timeout: 20)
        let mark = p.mark
        try await p.play()
        var stalledAt: Int?
        var held: TimeInterval?
        var liftedAt = 0.0
        var deadline = monotonicSeconds() + 25
        while true {
            let position = p.position
            let buffered = p.player.playableDuration
            let load = p.player.loadState
            try expect(position <= buffered + NetworkMedia.bufferTolerance,
                       "playing from a slow source the position \(format(position)) s ran ahead of playableDuration \(format(buffered)) s (\(load))")
            let events = p.recorder.events(since: mark)
            if let finish = events.first(where: \.isFinished) {
                let when = stalledAt == nil ? "before any .loadStateChanged with .stalled" : "after it stalled"
                throw CheckFailure("playing from a slow source finished \(when): \(describe(finish))")
            }
            if stalledAt == nil {
                if let index = events.firstIndex(where: { if case .loadStateChanged(let s) = $0 { return s.contains(.stalled) }; return false }) {
                    stalledAt = mark + index
                    held = position
                    // The data catches up: the server sends at full speed from now on.
                    server.changeContent(at: "/slow.mp4") { $0.bytesPerSecond = nil }
                    liftedAt = monotonicSeconds()
                    deadline = liftedAt + 10
                }
            } else if let stalledAt, let held {
                let later = p.recorder.events(since: stalledAt + 1)
                let recovered = later.contains { event in
                    if case .loadStateChanged(let s) = event { return !s.contains(.stalled) && !s.intersection([.playable, .playthroughOK]).isEmpty }
                    return false
                }
                if load.contains(.stalled), !recovered {
                    try expect(abs(position - held) <= 0.08, "stalled, the position moved from \(format(held)) s to \(format(position)) s")
                }
                if recovered, position >= held + 0.5 { break }
            }
            if monotonicSeconds() > deadline {
                if stalledAt == nil {
                    throw CheckFailure("playing from a source at 40% of the bitrate, no .loadStateChanged with .stalled within 25 s (position \(format(position)) s, loadState \(load), events: \(summary(events)))")
                }
                throw CheckFailure("\(format(monotonicSeconds() - liftedAt)) s after the data caught up playback has not recovered and played on (position \(format(position)) s, held at \(format(held ?? 0)) s, loadState \(load), events: \(summary(events)))")
            }
            try await observe(for: 0.05)
        }
    }

    /// The read-ahead check's source runs as over a good real link: at four times the media's
    /// bitrate, with at most 64 KiB in flight (at loopback speed the kernel would otherwise
    /// let a fast reader's receive queue grow to megabytes).
    static let denseThroughput = 4 * 1024 * 1024
    static let denseInFlight = 64 * 1024

    static let readAheadCap = Check("http.read-ahead-cap", "maxBufferBytes 1 MiB on an 8 Mbit/s source: after playing 1 s and pausing 5 s the server has sent at most the bytes played + 1 MiB + \(readAheadSlack / 1024) KiB", timeout: 45) { context in
        let server = try context.httpServer()
        let file = try context.fixture("dense.mp4")
        let data = try Data(contentsOf: file)
        let media = MP4Boxes(data).range(of: "mdat") ?? 0..<data.count
        server.route("/dense.mp4", .content(.init(data, contentType: "video/mp4", bytesPerSecond: denseThroughput, maxInFlight: denseInFlight)))
        let cap = 1024 * 1024
        let p = try context.player(url: server.url("/dense.mp4")) { $0.maxBufferBytes = cap }
        try await p.prepare(timeout: 15)
        let duration = p.player.duration
        try expect(duration > 10, "dense.mp4 over http reports a duration of \(format(duration)) s, expected 12")
        try await p.play()
        try await p.waitForPosition(atLeast: 1.0, timeout: 6)
        try await p.pause()
        try await observe(for: 5)
        let position = p.position
        let sent = server.bodyBytesSent(path: "/dense.mp4")
        let played = media.lowerBound + Int(Double(media.count) * min(1, position / duration))
        let excess = sent - played - cap
        PlaybackLog.log(.info, "conformance", "read-ahead: paused at \(format(position)) s, the server sent \(sent) bytes, \(excess) over played + cap (the player counts \(p.player.numberOfBytesTransferred))")
        try expect(excess <= readAheadSlack, "paused at \(format(position)) s (about \(played / 1024) KiB into the file) with maxBufferBytes 1 MiB the server has sent \(sent / 1024) KiB: \(excess / 1024) KiB over the bytes played + the cap, allowed \(readAheadSlack / 1024) KiB")
    }

    /// The open timeout the unresponsive-server checks set, seconds.
    static let shortOpenTimeout = 3.0
    /// The stall limit the unresponsive-server check sets, seconds.
    static let shortStallTimeout = 3.0

    static let unresponsiveOpen = Check("http.unresponsive-open", "a server that accepts and never answers, or sends headers and a little and then nothing: prepareToPlay(), stop() and shutdown() return at once, and opening fails with .network within openTimeout (3 s here) + 2 s", timeout: 50) { context in
        let server = try context.httpServer()
        server.route("/silent.mp4", .silent)
        for (what, path) in [("a server that never answers", "/silent.mp4"), ("a server that stops sending", NetworkMedia.stallOpen)] {
            let p = try context.player(url: server.url(path)) {
                $0.openTimeout = shortOpenTimeout * SizeSweep.slowdown
            }
            var slow: [String] = []
            var mark = p.mark
            if let late = timed("prepareToPlay()", { p.player.prepareToPlay() }) { slow.append(late) }
            try await observe(for: 0.5)
            if let late = timed("stop() while opening", { p.player.stop() }) { slow.append(late) }
            try await p.recorder.waitFor(".finished(.userExited) after stop()", since: mark, timeout: 2) { $0 == .finished(.userExited) }
            mark = p.mark
            let started = monotonicSeconds()
            if let late = timed("prepareToPlay() again", { p.player.prepareToPlay() }) { slow.append(late) }
            let limit = shortOpenTimeout * SizeSweep.slowdown + 2
            try await NetworkMedia.expectError(p, .network, since: mark, timeout: limit, "opening from \(what)")
            let took = monotonicSeconds() - started
            PlaybackLog.log(.info, "conformance", "unresponsive: opening from \(what) failed after \(format(took)) s")
            if let late = timed("shutdown()", { p.player.shutdown() }) { slow.append(late) }
            try expect(slow.isEmpty, "slow calls with \(what): \(slow.joined(separator: ", "))")
        }
    }

    static let unresponsivePlay = Check("http.unresponsive-play", "a server that stops sending while playing: .stalled, then .finished(.playbackError(.network)) within stallTimeout (3 s here) + 3 s of the stall; calls return at once", timeout: 45) { context in
        let server = try context.httpServer()
        try await NetworkMedia.requireHTTP(context, server)
        let p = try context.player(url: server.url(NetworkMedia.stallPlay)) {
            $0.stallTimeout = shortStallTimeout * SizeSweep.slowdown
        }
        try await p.prepare()
        let mark = p.mark
        try await p.play()
        let stalled = try await p.recorder.waitFor(".loadStateChanged with .stalled", since: mark, timeout: 15) { event in
            if case .loadStateChanged(let state) = event { return state.contains(.stalled) }
            return false
        }
        var slow: [String] = []
        for (name, call) in [("currentPlaybackTime", { _ = p.player.currentPlaybackTime }), ("loadState", { _ = p.player.loadState }),
                             ("playableDuration", { _ = p.player.playableDuration }),
                             ("thumbnailAtCurrentTime()", { _ = p.player.thumbnailAtCurrentTime() })] as [(String, () -> Void)] {
            if let late = timed("\(name) while stalled", call) { slow.append(late) }
        }
        let limit = shortStallTimeout * SizeSweep.slowdown + 3
        try await NetworkMedia.expectError(p, .network, since: mark, timeout: limit + 1, afterPrepare: true, "playing from a server that stopped sending")
        let finished = p.recorder.entries(since: mark).first { $0.event.isFinished }?.time ?? monotonicSeconds()
        let took = finished - stalled.time
        PlaybackLog.log(.info, "conformance", "unresponsive: playback failed \(format(took)) s after the stall")
        try expect(took <= limit, "playback failed \(format(took)) s after it stalled, expected within \(format(limit)) s")
        if let late = timed("shutdown()", { p.player.shutdown() }) { slow.append(late) }
        try expect(slow.isEmpty, "slow calls while stalled: \(slow.joined(separator: ", "))")
    }
}

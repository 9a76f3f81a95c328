import FoundationEssentials
import PlaybackKit

/// Playing over HTTP from the local server.
enum NetworkChecks {
    static let all: [Check] = [open, stallLoadState]

    /// Skips the check when the backend cannot open http at all (http.open reports that).
    static func requireHTTP(_ context: CheckContext, _ server: LocalHTTPServer) async throws {
        let url = server.url("/media.mp4")
        let probe = try context.player(url: url)
        do {
            try await probe.prepare(timeout: 10)
        } catch let failure as CheckFailure {
            throw CheckSkip("the backend cannot open http at all (\(url.absoluteString): \(failure.reason)); http.open reports it")
        }
        probe.player.shutdown()
    }

    /// Waits until playback stalls: `.stalled` in the load state, or the position stands
    /// still for 1 s while playing. Fails after 15 s.
    static func waitForStall(_ p: CheckPlayer) async throws {
        let deadline = monotonicSeconds() + 15
        var last = p.position, since = monotonicSeconds()
        while monotonicSeconds() < deadline {
            if p.player.loadState.contains(.stalled) { return }
            let now = p.position
            if now != last {
                last = now
                since = monotonicSeconds()
            } else if monotonicSeconds() - since >= 1.0 {
                return
            }
            if let finish = p.recorder.events().first(where: \.isFinished) {
                throw CheckFailure("playback of a stalling source finished instead of waiting: \(describe(finish))")
            }
            try await observe(for: 0.02)
        }
        throw CheckFailure("playback of a source that stops sending data never stalled within 15 s (position \(format(p.position)) s)")
    }

    static let open = Check("http.open", "frames.mp4 over http from a local server prepares, plays and counts the bytes read") { context in
        let server = try context.httpServer()
        let p = try context.player(url: server.url("/media.mp4"))
        try await p.prepare()
        try expect(abs(p.player.duration - 10) <= TimeChecks.frame + 0.001, "over http the duration is \(format(p.player.duration)) s, expected 10")
        try await p.play()
        try await p.waitForPosition(atLeast: 0.8, timeout: 5)
        try expect(p.player.numberOfBytesTransferred > 0, "numberOfBytesTransferred is \(p.player.numberOfBytesTransferred) after playing over http")
        let shown = try p.thumbnailFrameNumber("playing over http")
        try expect(abs(shown - FramePattern.frame(at: p.position)) <= 3, "playing over http at \(format(p.position)) s the picture is frame \(shown)")
    }

    static let stallLoadState = Check("http.stall-load-state", "when the source stops sending, loadState becomes .stalled (with its event) and the position holds", timeout: 40) { context in
        let server = try context.httpServer()
        try await requireHTTP(context, server)
        let p = try context.player(url: server.url("/stall-play.mp4"))
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
}

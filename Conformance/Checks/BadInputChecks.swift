import FoundationEssentials
import PlaybackKit

/// Broken and unreachable sources: each ends in `.finished(.playbackError)` with the fitting
/// code within 10 s, never in `.playbackEnded`, and the next player in the process works.
enum BadInputChecks {
    static let all: [Check] = [
        bad("nonexistent", "a path where nothing is", [.sourceNotFound]) { try $0.fixture("frames.mp4").deletingLastPathComponent().appendingPathComponent("no-such-file.mp4") },
        bad("empty", "an empty file", [.unsupportedFormat]) { try $0.fixture("empty.mp4") },
        bad("random", "random bytes", [.unsupportedFormat, .decode]) { try $0.fixture("random.mp4") },
        bad("truncated", "a file cut short before its index", [.unsupportedFormat, .decode]) { try $0.fixture("truncated.mp4") },
        bad("text", "a text file", [.unsupportedFormat, .decode]) { try $0.fixture("text.mp4") },
        bad("directory", "a directory", [.sourceNotFound]) { try $0.fixture("directory.mp4") },
        bad("scheme-ftp", "an unsupported scheme (ftp://127.0.0.1/x)", [.forbiddenURL]) { _ in URL(string: "ftp://127.0.0.1/x")! },
        bad("scheme-gopher", "an unsupported scheme (gopher://127.0.0.1/x)", [.forbiddenURL]) { _ in URL(string: "gopher://127.0.0.1/x")! },
        bad("refused", "a connection refused (http://127.0.0.1 on a closed port)", [.network]) { _ in
            do { return try LocalHTTPServer.refusedURL() } catch { throw CheckFailure("the suite found no free local port: \(error)") }
        },
        bad("http-404", "an HTTP 404 from the local server", [.network]) { try $0.httpServer().url("/missing.mp4") },
    ]

    /// The bound on how long failing may take.
    static let limit: TimeInterval = 10

    static func bad(_ name: String, _ what: String, _ codes: Set<PlaybackError.Code>,
                    _ source: @escaping @Sendable (CheckContext) throws -> URL) -> Check {
        let expected = codes.map(\.rawValue).sorted().joined(separator: " or ")
        return Check("bad-input.\(name)", "\(what) → .finished(.playbackError(\(expected))) within 10 s; the next player works") { context in
            let url = try source(context)
            for viaPlay in [false, true] {
                let how = viaPlay ? "play()" : "prepareToPlay()"
                let p = try context.player(url: url)
                let mark = p.mark
                if viaPlay { p.player.play() } else { p.player.prepareToPlay() }
                let finished = try await p.recorder.waitFor(".finished after \(how)", since: mark, timeout: limit) { $0.isFinished }
                guard let error = finished.event.error else {
                    throw CheckFailure("\(how) on \(what) ended in \(describe(finished.event)), expected .playbackError(\(expected))")
                }
                try expect(codes.contains(error.code), "\(how) on \(what): code \(error.code.rawValue) (\(error.message)), expected \(expected)")
                try expect(!error.message.isEmpty, "\(how) on \(what): the error has no message")
                try await observe(for: 0.3)
                let events = p.recorder.events(since: mark)
                try expect(!events.contains(.preparedToPlay), "\(how) on \(what) sent .preparedToPlay: \(summary(events))")
                try expect(events.filter(\.isFinished).count == 1, "\(how) on \(what) finished more than once: \(summary(events))")
                try expect(!p.player.isPlaying && !p.player.isPreparedToPlay, "after the error isPlaying=\(p.player.isPlaying) isPreparedToPlay=\(p.player.isPreparedToPlay)")
                try expect(p.player.playbackState == .stopped, "after the error the state is \(p.player.playbackState)")
            }
            let good = try context.player("frames.mp4")
            try await good.prepare()
            try await good.play()
            try await good.waitForPosition(atLeast: 0.3, timeout: 5)
        }
    }
}

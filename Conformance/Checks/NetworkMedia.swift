import FoundationEssentials
import Glibc
import PlaybackKit

/// The suite's media on a local server: the same paths on every server a check starts
/// (`CheckContext.httpServer()`), and the helpers the network checks share.
enum NetworkMedia {
    // MARK: - Paths

    /// frames.mp4 as made: its index (`moov`) at the end, so opening it takes a Range request.
    static let media = "/media.mp4"
    /// frames.mp4 with its index first, for players that read straight through.
    static let indexFirst = "/index-first.mp4"
    /// frames.mp4, of which only the first bytes (`openPrefix`) come, then nothing: opening
    /// cannot finish.
    static let stallOpen = "/stall-open.mp4"
    /// frames.mp4 with its index first, served up to about a third into the media data, then
    /// nothing: a player prepares, plays the first seconds and then waits for data.
    static let stallPlay = "/stall-play.mp4"
    /// The HLS fixture (Fixtures/hls): a VOD playlist of five 2 s MPEG-TS segments.
    static let hls = "/hls/index.m3u8"

    /// Adds the suite's routes to `server`.
    static func install(on server: LocalHTTPServer, context: CheckContext) throws {
        let frames = try Data(contentsOf: context.fixture("frames.mp4"))
        let ordered = MP4Boxes.indexFirst(frames) ?? frames
        server.route(media, .content(.init(frames, contentType: "video/mp4")))
        server.route(indexFirst, .content(.init(ordered, contentType: "video/mp4")))
        server.route(stallOpen, .content(.init(frames, contentType: "video/mp4", stallAt: min(frames.count / 8, 16 * 1024))))
        server.route(stallPlay, .content(.init(ordered, contentType: "video/mp4", stallAt: offset(intoMediaOf: ordered, fraction: 0.35))))
        let folder = context.fixtures.appendingPathComponent("hls")
        if FileManager.default.fileExists(atPath: folder.path) { try server.routeFolder(folder, at: "/hls") }
    }

    /// The byte offset `fraction` of the way into the media data (`mdat`) of an MP4 file.
    static func offset(intoMediaOf data: Data, fraction: Double) -> Int {
        guard let mdat = MP4Boxes(data).range(of: "mdat") else { return Int(Double(data.count) * fraction) }
        return mdat.lowerBound + Int(Double(mdat.count) * fraction)
    }

    /// The index-first copy of the fixture `name`, with where its media data lies.
    static func indexFirstCopy(of name: String, context: CheckContext) throws -> (data: Data, media: Range<Int>) {
        let original = try Data(contentsOf: context.fixture(name))
        let data = MP4Boxes.indexFirst(original) ?? original
        let media = MP4Boxes(data).range(of: "mdat") ?? 0..<data.count
        return (data, media)
    }

    // MARK: - Waiting

    /// Skips the check when the backend cannot open http at all (http.open reports that).
    static func requireHTTP(_ context: CheckContext, _ server: LocalHTTPServer) async throws {
        let url = server.url(media)
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

    /// Waits for `.finished` after `mark` and requires `.playbackError` with `code` (and,
    /// unless `afterPrepare`, no `.preparedToPlay` before it); returns the error.
    @discardableResult
    static func expectError(_ p: CheckPlayer, _ code: PlaybackError.Code, since mark: Int, timeout: TimeInterval,
                            afterPrepare: Bool = false, _ what: String) async throws -> PlaybackError {
        let reason = try await p.recorder.waitForFinish(since: mark, timeout: timeout)
        guard case .playbackError(let error) = reason else {
            throw CheckFailure("\(what) ended in \(describe(.finished(reason))), expected .playbackError(\(code.rawValue))")
        }
        try expect(error.code == code, "\(what): code \(error.code.rawValue) (\(error.message)), expected \(code.rawValue)")
        let events = p.recorder.events(since: mark)
        try expect(afterPrepare || !events.contains(.preparedToPlay), "\(what) sent .preparedToPlay before failing: \(summary(events))")
        return error
    }

    // MARK: - Buffer figures

    /// Samples position, `playableDuration` and the byte count every 50 ms for `seconds` and
    /// fails when the buffered time lies below the position or beyond the duration, or the
    /// byte count goes down. `what` says what the player was doing.
    static func checkBufferFigures(_ p: CheckPlayer, for seconds: TimeInterval, _ what: String) async throws {
        let samples = try await sample(every: 0.05, for: seconds) {
            (position: p.position, buffered: p.player.playableDuration, duration: p.player.duration,
             bytes: p.player.numberOfBytesTransferred)
        }
        try checkBufferFigures(samples.map(\.value), what)
    }

    /// The same check on samples taken elsewhere.
    static func checkBufferFigures(_ samples: [(position: TimeInterval, buffered: TimeInterval, duration: TimeInterval, bytes: Int64)],
                                   _ what: String) throws {
        var lastBytes: Int64 = 0
        for s in samples {
            try expect(s.buffered >= s.position - bufferTolerance,
                       "\(what): playableDuration \(format(s.buffered)) s lies behind the position \(format(s.position)) s")
            if s.duration > 0 {
                try expect(s.buffered <= s.duration + bufferTolerance,
                           "\(what): playableDuration \(format(s.buffered)) s lies beyond the duration \(format(s.duration)) s")
            }
            try expect(s.bytes >= lastBytes, "\(what): numberOfBytesTransferred went down from \(lastBytes) to \(s.bytes)")
            lastBytes = s.bytes
        }
    }

    /// How far `playableDuration` may lie behind the position read just before it (one frame
    /// and a sampling step).
    static let bufferTolerance = 0.06

    // MARK: - Named pipes

    /// A named pipe in `folder` that tells whether anything opened it: a thread waits in a
    /// blocking open for writing, which returns only once a reader opens the pipe.
    final class WatchedPipe: Sendable {
        /// The pipe's path.
        let path: String
        private let opened = Watched(false)
        private let finished = Locked(false)

        init(in folder: URL, name: String) throws {
            path = folder.appendingPathComponent(name).path
            guard mkfifo(path, 0o600) == 0 else {
                throw CheckFailure("the suite could not make the named pipe \(path): \(String(cString: strerror(errno)))")
            }
            DetachedThread.start(name: "pipe-watch") { [path, opened, finished] in
                let fd = open(path, O_WRONLY)
                guard fd >= 0 else { return }
                if !finished.get() { opened.update { $0 = true } }
                close(fd)
            }
        }

        /// True once anything opened the pipe.
        var wasOpened: Bool { opened.read { $0 } }

        /// Stops watching (the waiting thread is released; later opens are not counted).
        func finish() {
            finished.set(true)
            let fd = open(path, O_RDONLY | O_NONBLOCK)
            if fd >= 0 { close(fd) }
        }
    }

    /// An HLS VOD playlist of one 2 s segment at `segment` (a URL or a path, written as is).
    static func playlist(naming segment: String) -> Data {
        Data("""
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-TARGETDURATION:2
        #EXT-X-MEDIA-SEQUENCE:0
        #EXT-X-PLAYLIST-TYPE:VOD
        #EXTINF:2.000000,
        \(segment)
        #EXT-X-ENDLIST

        """.utf8)
    }
}

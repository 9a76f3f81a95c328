#if MPV
import Foundation
import MPVPlayback
import PlaybackConformance
import PlaybackKit
import Testing

// MARK: - Helpers

/// The generated fixtures folder (scripts/make-fixtures.sh).
private let fixturesFolder = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures")

private func fixture(_ name: String) throws -> URL {
    let url = fixturesFolder.appendingPathComponent(name)
    try #require(FileManager.default.fileExists(atPath: url.path), "missing fixture \(name): run scripts/make-fixtures.sh")
    return url
}

/// Records a player's events and lets a test wait, with a timeout, for one that matches.
private final class EventWatcher: @unchecked Sendable {
    // @unchecked: `events` and `waiters` are touched only with `lock` held.
    private let lock = NSLock()
    private var events: [PlaybackEvent] = []
    private var waiters: [(id: UUID, match: (PlaybackEvent) -> Bool, from: Int, continuation: CheckedContinuation<PlaybackEvent?, Never>)] = []
    private var task: Task<Void, Never>?

    init(_ player: any MediaPlayback) {
        let stream = player.events
        task = Task { [weak self] in
            for await event in stream { self?.append(event) }
        }
    }

    deinit { task?.cancel() }

    var all: [PlaybackEvent] { lock.withLock { events } }
    var count: Int { lock.withLock { events.count } }

    private func append(_ event: PlaybackEvent) {
        let ready = lock.withLock { () -> [CheckedContinuation<PlaybackEvent?, Never>] in
            events.append(event)
            let matched = waiters.filter { $0.match(event) }
            waiters.removeAll { $0.match(event) }
            return matched.map(\.continuation)
        }
        ready.forEach { $0.resume(returning: event) }
    }

    /// The first event from index `from` on that matches, waiting up to `timeout` seconds.
    func wait(from: Int = 0, timeout: TimeInterval, _ match: @escaping (PlaybackEvent) -> Bool) async -> PlaybackEvent? {
        let id = UUID()
        return await withCheckedContinuation { continuation in
            let found = lock.withLock { () -> PlaybackEvent? in
                if let event = events.dropFirst(from).first(where: match) { return event }
                waiters.append((id, match, from, continuation))
                return nil
            }
            if let found {
                continuation.resume(returning: found)
                return
            }
            Task { [weak self] in
                try? await Task.sleep(for: .seconds(timeout))
                guard let self else { return }
                let expired = self.lock.withLock { () -> CheckedContinuation<PlaybackEvent?, Never>? in
                    guard let index = self.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return self.waiters.remove(at: index).continuation
                }
                expired?.resume(returning: nil)
            }
        }
    }

    func prepared(timeout: TimeInterval = 10) async -> Bool {
        await wait(timeout: timeout) { event in
            if case .preparedToPlay = event { return true }
            if case .finished = event { return true }
            return false
        } == .preparedToPlay
    }

    func seekCompleted(from: Int, timeout: TimeInterval = 5) async -> TimeInterval? {
        let event = await wait(from: from, timeout: timeout) { if case .seekCompleted = $0 { true } else { false } }
        if case .seekCompleted(let time)? = event { return time }
        return nil
    }

    func finished(from: Int = 0, timeout: TimeInterval) async -> FinishReason? {
        let event = await wait(from: from, timeout: timeout) { if case .finished = $0 { true } else { false } }
        if case .finished(let reason)? = event { return reason }
        return nil
    }
}

/// Pairs of (wall time, presentation time, frame) collected from a `.frames` output.
private final class FrameLog: @unchecked Sendable {
    // @unchecked: `entries` is touched only with `lock` held.
    private let lock = NSLock()
    private var entries: [(wall: TimeInterval, frame: VideoFrame)] = []
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    func add(_ frame: VideoFrame) {
        let ready = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            entries.append((ProcessInfo.processInfo.systemUptime, frame))
            let due = waiters.filter { $0.count <= entries.count }
            waiters.removeAll { $0.count <= entries.count }
            return due.map(\.continuation)
        }
        ready.forEach { $0.resume() }
    }

    var all: [(wall: TimeInterval, frame: VideoFrame)] { lock.withLock { entries } }

    /// Waits until `count` frames arrived, up to `timeout` seconds.
    func wait(forCount count: Int, timeout: TimeInterval) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = lock.withLock { () -> Bool in
                if entries.count >= count { return true }
                waiters.append((count, continuation))
                return false
            }
            if done { continuation.resume(); return }
            Task { [weak self] in
                try? await Task.sleep(for: .seconds(timeout))
                guard let self else { return }
                let expired = self.lock.withLock { () -> [CheckedContinuation<Void, Never>] in
                    let due = self.waiters.filter { $0.count == count }
                    self.waiters.removeAll { $0.count == count }
                    return due.map(\.continuation)
                }
                expired.forEach { $0.resume() }
            }
        }
    }
}

private func makePlayer(_ name: String, video: VideoOutput = .none, audio: AudioOutput = .null,
                        configure: (inout PlaybackOptions) -> Void = { _ in }) throws -> any MediaPlayback {
    var options = PlaybackOptions(videoOutput: video, audioOutput: audio)
    configure(&options)
    return try MPVBackend().makePlayer(url: try fixture(name), options: options)
}

private let frameTolerance = 1.0 / FramePattern.frameRate + 0.001

/// A minimal HTTP/1.1 file server on 127.0.0.1 that records each request's header lines and
/// answers byte ranges, so tests can see what the engine sends over HTTP.
private final class MPVTestHTTPServer: @unchecked Sendable {
    // @unchecked: `requests` is touched only with `lock` held; the socket is closed once in `stop()`.
    private let lock = NSLock()
    private var requests: [[String]] = []
    private let listener: Int32
    private let media: Data
    /// The port it listens on.
    let port: UInt16

    init(serving file: URL) throws {
        media = try Data(contentsOf: file)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(listener, raw, length) == 0 && listen(listener, 8) == 0 && getsockname(listener, raw, &length) == 0
            }
        }
        guard bound else { throw PlaybackError(code: .network, message: "test server: cannot listen") }
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Header lines of every request so far.
    var receivedHeaders: [[String]] { lock.withLock { requests } }

    func stop() { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let thread = Thread { [self] in serve(client) }
            thread.start()
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.contains(Data("\r\n\r\n".utf8)) {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return }
            received.append(contentsOf: buffer[0..<count])
        }
        let lines = String(decoding: received, as: UTF8.self).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        lock.withLock { requests.append(lines) }
        var start = 0
        if let range = lines.first(where: { $0.lowercased().hasPrefix("range: bytes=") }) {
            start = Int(range.dropFirst("range: bytes=".count).prefix { $0.isNumber }) ?? 0
        }
        start = min(start, media.count)
        let body = media.subdata(in: start..<media.count)
        let status = start > 0 ? "206 Partial Content" : "200 OK"
        var head = "HTTP/1.1 \(status)\r\nContent-Type: video/mp4\r\nAccept-Ranges: bytes\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
        if start > 0 { head += "Content-Range: bytes \(start)-\(media.count - 1)/\(media.count)\r\n" }
        head += "\r\n"
        let reply = Data(head.utf8) + body
        reply.withUnsafeBytes { bytes in
            var sent = 0
            while sent < bytes.count {
                let count = send(client, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
                guard count > 0 else { return }
                sent += count
            }
        }
    }
}

/// Threads of this process now.
private func processThreadCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
}

/// Waits (up to `timeout` seconds) until at most `limit` threads are left: shut-down players
/// tear their cores down on their own threads, which must not be cut off by the process ending.
private func waitForThreads(atMost limit: Int, timeout: TimeInterval = 5) async {
    let deadline = Date().addingTimeInterval(timeout)
    while processThreadCount() > limit, Date() < deadline {
        try? await Task.sleep(for: .milliseconds(50))
    }
}

// MARK: - Tests

@Suite("MPV adapter", .serialized)
struct MPVAdapterTests {
    @Test("backend names itself and its libmpv version")
    func backendIdentity() {
        let backend = MPVBackend()
        #expect(backend.name == "mpv")
        #expect(backend.engineVersion.hasPrefix("libmpv 2."))
        Backends.register(backend)
        #expect(Backends.all.contains { $0.name == "mpv" })
    }

    @Test("prepare reports duration 10 s and size 320x240, paused at frame 0")
    func prepareFrames() async throws {
        let player = try makePlayer("frames.mp4")
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        #expect(await watcher.prepared())
        #expect(abs(player.duration - 10) <= frameTolerance)
        #expect(player.naturalSize == VideoSize(width: 320, height: 240))
        #expect(player.playbackState == .paused)
        #expect(player.currentPlaybackTime < 0.05)
        let thumbnail = try #require(player.thumbnailAtCurrentTime())
        #expect(thumbnail.size == VideoSize(width: 320, height: 240))
        #expect(FramePattern.frameNumber(in: thumbnail) == 0)
    }

    @Test("anamorphic video has its display size 480x240")
    func anamorphic() async throws {
        let player = try makePlayer("anamorphic.mp4")
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        #expect(await watcher.prepared())
        #expect(player.naturalSize == VideoSize(width: 480, height: 240))
        #expect(watcher.all.contains(.naturalSizeAvailable(VideoSize(width: 480, height: 240))))
        #expect(player.thumbnailAtCurrentTime()?.size == VideoSize(width: 480, height: 240))
    }

    @Test("audio only: prepared without a size or a thumbnail")
    func audioOnly() async throws {
        let player = try makePlayer("audio-only.m4a")
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        #expect(await watcher.prepared())
        #expect(abs(player.duration - 6) < 0.1)
        #expect(player.naturalSize == .zero)
        #expect(player.thumbnailAtCurrentTime() == nil)
    }

    @Test("playing with the null audio output runs at real time")
    func realTimeClock() async throws {
        let frames = FrameLog()
        let player = try makePlayer("frames.mp4", video: .frames(viewport: nil, handler: { frames.add($0) }))
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        #expect(await watcher.prepared())
        let start = frames.all.count
        player.play()
        // About 2.4 s of frames at 25 per second.
        await frames.wait(forCount: start + 60, timeout: 6)
        let played = Array(frames.all.dropFirst(start + 5))  // past the start-up
        try #require(played.count >= 40, "only \(played.count) frames arrived")
        let wall = played.last!.wall - played.first!.wall
        let media = played.last!.frame.presentationTime - played.first!.frame.presentationTime
        let ratio = media / wall
        print("mpv real-time ratio: media \(media) s over wall \(wall) s = \(ratio)")
        #expect(abs(ratio - 1) <= 0.1)
        #expect(player.currentPlaybackTime > 1.5)
        #expect(player.isPlaying)
    }

    @Test("accurate seek to 5.0 shows frame 125 and stays paused")
    func accurateSeek() async throws {
        let player = try makePlayer("frames.mp4")
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        #expect(await watcher.prepared())
        let mark = watcher.count
        player.currentPlaybackTime = 5.0
        let reached = try #require(await watcher.seekCompleted(from: mark))
        #expect(abs(reached - 5.0) <= frameTolerance)
        let thumbnail = try #require(player.thumbnailAtCurrentTime())
        #expect(FramePattern.frameNumber(in: thumbnail) == 125)
        #expect(abs(thumbnail.presentationTime - 5.0) <= frameTolerance)
        #expect(player.playbackState == .paused)
    }

    @Test("seeks while paused stay paused and show each new frame")
    func seeksWhilePaused() async throws {
        let player = try makePlayer("frames.mp4")
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        #expect(await watcher.prepared())
        for target in [2.0, 7.52, 0.4, 9.0, 9.98, 0.0] {
            let mark = watcher.count
            player.currentPlaybackTime = target
            let reached = try #require(await watcher.seekCompleted(from: mark), "no seekCompleted for \(target)")
            #expect(abs(reached - target) <= frameTolerance)
            let thumbnail = try #require(player.thumbnailAtCurrentTime())
            #expect(FramePattern.frameNumber(in: thumbnail) == FramePattern.frame(at: target), "at \(target)")
            #expect(player.playbackState == .paused)
        }
        #expect(!watcher.all.contains(.playbackStateChanged(.playing)))
    }

    @Test("a seek while playing keeps playing from the target")
    func seekWhilePlaying() async throws {
        let frames = FrameLog()
        let player = try makePlayer("frames.mp4", video: .frames(viewport: nil, handler: { frames.add($0) }))
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        #expect(await watcher.prepared())
        player.play()
        await frames.wait(forCount: 15, timeout: 3)
        let mark = watcher.count
        player.currentPlaybackTime = 6.0
        let reached = try #require(await watcher.seekCompleted(from: mark))
        #expect(abs(reached - 6.0) <= frameTolerance)
        #expect(player.isPlaying)
        let shown = try #require(player.thumbnailAtCurrentTime().flatMap(FramePattern.frameNumber(in:)))
        #expect(shown >= 150 && shown <= 153, "frame \(shown) after seeking to frame 150")
        let seen = frames.all.count
        await frames.wait(forCount: seen + 12, timeout: 3)
        let later = try #require(frames.all.last?.frame)
        #expect(later.presentationTime > 6.2)
        #expect(FramePattern.frameNumber(in: later).map { $0 > 150 } == true)
        #expect(abs(player.currentPlaybackTime - later.presentationTime) < 0.2)
    }

    @Test("playback rate 2 plays twice as fast; buffer figures are reported")
    func rateAndBuffer() async throws {
        let frames = FrameLog()
        let player = try makePlayer("frames.mp4", video: .frames(viewport: nil, handler: { frames.add($0) }))
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        #expect(await watcher.prepared())
        #expect(player.numberOfBytesTransferred > 0)
        #expect(player.playableDuration > 0)
        player.playbackRate = 2
        player.playbackVolume = 0.5
        player.play()
        let start = frames.all.count
        await frames.wait(forCount: start + 40, timeout: 4)
        let played = Array(frames.all.dropFirst(start + 5))
        try #require(played.count >= 20)
        let ratio = (played.last!.frame.presentationTime - played.first!.frame.presentationTime) / (played.last!.wall - played.first!.wall)
        print("mpv rate 2 ratio: \(ratio)")
        #expect(abs(ratio - 2) <= 0.25)
    }

    @Test("keyframe seek lands on the keyframe before the target")
    func keyframeSeek() async throws {
        let player = try makePlayer("frames.mp4") { $0.accurateSeek = false }
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        #expect(await watcher.prepared())
        let mark = watcher.count
        player.currentPlaybackTime = 5.0
        let reached = try #require(await watcher.seekCompleted(from: mark))
        #expect(reached <= 5.0 + frameTolerance)
        let frame = try #require(player.thumbnailAtCurrentTime().flatMap(FramePattern.frameNumber(in:)))
        #expect(frame % 50 == 0, "frame \(frame) is not a keyframe of the 50-frame GOP")
        #expect(abs(FramePattern.time(ofFrame: frame) - reached) <= frameTolerance)
    }

    @Test("playing short.mp4 to the end finishes exactly once, and play restarts it")
    func playToEnd() async throws {
        let player = try makePlayer("short.mp4")
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        #expect(await watcher.prepared())
        player.play()
        let reason = await watcher.finished(timeout: 8)
        #expect(reason == .playbackEnded)
        #expect(player.playbackState == .stopped)
        #expect(abs(player.currentPlaybackTime - 3) < 0.1)
        // No second finish turns up.
        let afterEnd = watcher.count
        let again = await watcher.finished(from: afterEnd, timeout: 1)
        #expect(again == nil)
        #expect(watcher.all.filter { $0 == .finished(.playbackEnded) }.count == 1)
        // play() after the end restarts from 0 and plays.
        player.play()
        let playing = await watcher.wait(from: afterEnd, timeout: 3) { $0 == .playbackStateChanged(.playing) }
        #expect(playing != nil)
        let restartFrames = await watcher.seekCompleted(from: afterEnd)
        #expect(restartFrames.map { $0 < 0.1 } == true)
        let second = await watcher.finished(from: afterEnd, timeout: 8)
        #expect(second == .playbackEnded)
    }

    @Test("a seek after the end shows the frame there and plays on from it")
    func seekAfterEnd() async throws {
        let player = try makePlayer("short.mp4")
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        #expect(await watcher.prepared())
        player.currentPlaybackTime = 2.6
        _ = await watcher.seekCompleted(from: 0)
        player.play()
        #expect(await watcher.finished(timeout: 5) == .playbackEnded)
        let mark = watcher.count
        player.currentPlaybackTime = 1.0
        let reached = try #require(await watcher.seekCompleted(from: mark))
        #expect(abs(reached - 1.0) <= frameTolerance)
        #expect(player.thumbnailAtCurrentTime().flatMap(FramePattern.frameNumber(in:)) == 25)
        player.play()
        #expect(await watcher.finished(from: mark, timeout: 5) == .playbackEnded)
        #expect(watcher.all.filter { $0 == .finished(.playbackEnded) }.count == 2)
    }

    @Test("audio only plays at real time and ends")
    func audioOnlyPlays() async throws {
        let player = try makePlayer("audio-only.m4a")
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        #expect(await watcher.prepared())
        let mark = watcher.count
        player.currentPlaybackTime = 4.5
        let reached = try #require(await watcher.seekCompleted(from: mark))
        #expect(abs(reached - 4.5) < 0.05)
        let wallStart = Date()
        player.play()
        #expect(await watcher.finished(from: mark, timeout: 5) == .playbackEnded)
        let wall = Date().timeIntervalSince(wallStart)
        print("mpv audio-only: 1.5 s of media took \(wall) s")
        #expect(abs(wall - 1.5) < 0.3)
    }

    @Test("bad input fails with unsupportedFormat within a few seconds", arguments: ["truncated.mp4", "random.mp4", "text.mp4", "empty.mp4"])
    func badInput(name: String) async throws {
        let player = try makePlayer(name)
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        let started = Date()
        player.prepareToPlay()
        let reason = try #require(await watcher.finished(timeout: 5), "\(name): no finish within 5 s")
        guard case .playbackError(let error) = reason else {
            Issue.record("\(name) finished with \(reason)")
            return
        }
        #expect(error.code == .unsupportedFormat, "\(name): \(error)")
        print("mpv \(name): \(error)")
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(!watcher.all.contains(.finished(.playbackEnded)))
        #expect(!watcher.all.contains(.preparedToPlay))
    }

    @Test("a missing file fails with sourceNotFound")
    func missingFile() async throws {
        let url = fixturesFolder.appendingPathComponent("no-such-file.mp4")
        let player = try MPVBackend().makePlayer(url: url, options: PlaybackOptions(audioOutput: .null))
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        let reason = await watcher.finished(timeout: 5)
        guard case .playbackError(let error)? = reason else {
            Issue.record("finished with \(String(describing: reason))")
            return
        }
        #expect(error.code == .sourceNotFound)
    }

    @Test("an unreachable server fails with network")
    func unreachableServer() async throws {
        let url = try #require(URL(string: "http://127.0.0.1:9/missing.mp4"))
        let player = try MPVBackend().makePlayer(url: url, options: PlaybackOptions(audioOutput: .null))
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        let reason = await watcher.finished(timeout: 10)
        guard case .playbackError(let error)? = reason else {
            Issue.record("finished with \(String(describing: reason))")
            return
        }
        #expect(error.code == .network, "\(error)")
        #expect(error.message.contains("127.0.0.1:9"), "\(error)")
    }

    @Test("stop, then prepare again; a small read-ahead cap still plays")
    func stopAndReopen() async throws {
        let player = try makePlayer("frames.mp4") { $0.maxBufferBytes = 64 * 1024 }
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        #expect(await watcher.prepared())
        let mark = watcher.count
        player.stop()
        #expect(await watcher.finished(from: mark, timeout: 3) == .userExited)
        #expect(player.thumbnailAtCurrentTime() == nil)
        let again = watcher.count
        player.currentPlaybackTime = 3.0
        player.prepareToPlay()
        let prepared = await watcher.wait(from: again, timeout: 10) { $0 == .preparedToPlay }
        #expect(prepared != nil)
        #expect(abs(player.currentPlaybackTime - 3.0) <= frameTolerance)
        let shown = player.thumbnailAtCurrentTime().flatMap(FramePattern.frameNumber(in:))
        #expect(shown == 75)
    }

    @Test("httpHeaders reach the server; bytes are counted over HTTP")
    func httpHeaders() async throws {
        let server = try MPVTestHTTPServer(serving: try fixture("frames.mp4"))
        defer { server.stop() }
        var options = PlaybackOptions(audioOutput: .null)
        options.httpHeaders = ["X-PlaybackKit-Test": "present", "User-Agent": "PlaybackKitTests/mpv"]
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/frames.mp4"))
        let player = try MPVBackend().makePlayer(url: url, options: options)
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        #expect(await watcher.prepared())
        #expect(abs(player.duration - 10) <= frameTolerance)
        let first = try #require(server.receivedHeaders.first)
        #expect(first.contains("X-PlaybackKit-Test: present"), "\(first)")
        #expect(first.filter { $0.lowercased().hasPrefix("user-agent:") } == ["User-Agent: PlaybackKitTests/mpv"], "\(first)")
        #expect(player.numberOfBytesTransferred > 0)
        #expect(FramePattern.frameNumber(in: try #require(player.thumbnailAtCurrentTime())) == 0)
    }

    @Test("players that are shut down leave no threads behind")
    func noThreadLeak() async throws {
        let baseline = processThreadCount()
        for _ in 0..<3 {
            let player = try makePlayer("short.mp4")
            let watcher = EventWatcher(player)
            player.prepareToPlay()
            #expect(await watcher.prepared())
            player.play()
            _ = await watcher.wait(timeout: 2) { $0 == .playbackStateChanged(.playing) }
            player.shutdown()
        }
        // Each core is torn down on its own event thread after shutdown: wait for that.
        await waitForThreads(atMost: baseline + 2)
        #expect(processThreadCount() <= baseline + 2, "\(processThreadCount()) threads, \(baseline) before")
    }

    @Test("frames output delivers natural-size RGBA frames with rising presentation times")
    func framesOutput() async throws {
        let frames = FrameLog()
        let player = try makePlayer("short.mp4", video: .frames(viewport: nil, handler: { frames.add($0) }))
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        #expect(await watcher.prepared())
        player.play()
        await frames.wait(forCount: 30, timeout: 5)
        let received = frames.all.map(\.frame)
        try #require(received.count >= 30)
        #expect(received.allSatisfy { $0.size == VideoSize(width: 320, height: 240) })
        let times = received.map(\.presentationTime)
        // The first picture may be handed over again when playback starts; nothing else repeats.
        #expect(zip(times, times.dropFirst()).enumerated().allSatisfy { $0.offset == 0 ? $0.element.0 <= $0.element.1 : $0.element.0 < $0.element.1 },
                "times do not rise: \(times)")
        #expect(times.last! > times.first! + 0.5)
        // Frame numbers rise too, and the picture is RGBA (red bottom-left, blue bottom-right).
        let numbers = received.compactMap(FramePattern.frameNumber(in:))
        #expect(numbers.count == received.count)
        #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $0 <= $1 })
        let sample = received.last!
        let left = sample.pixel(x: 40, y: 220), right = sample.pixel(x: 280, y: 220)
        #expect(left.r > 150 && left.b < 100, "bottom left is not red: \(left)")
        #expect(right.b > 150 && right.r < 100, "bottom right is not blue: \(right)")
        #expect(sample.pixel(x: 10, y: 10).a == 255)
        // Presentation times agree with the frame numbers drawn in them.
        for frame in received {
            if let number = FramePattern.frameNumber(in: frame) {
                #expect(abs(FramePattern.time(ofFrame: number) - frame.presentationTime) <= 0.021,
                        "frame \(number) stamped \(frame.presentationTime)")
            }
        }
    }

    @Test("window output plays into an X11 window (needs DISPLAY)",
          .enabled(if: ProcessInfo.processInfo.environment["DISPLAY"] != nil))
    func windowOutput() async throws {
        // The display's root window stands in for an application's window.
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/xwininfo")
        probe.arguments = ["-root"]
        let output = Pipe()
        probe.standardOutput = output
        try probe.run()
        probe.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let idText = try #require(text.split(separator: " ").first { $0.hasPrefix("0x") })
        let handle = try #require(UInt(idText.dropFirst(2), radix: 16))
        let baseline = processThreadCount()

        let player = try makePlayer("frames.mp4", video: .window(handle: handle))
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        #expect(await watcher.prepared())
        #expect(player.naturalSize == VideoSize(width: 320, height: 240))
        player.scalingMode = .aspectFill
        player.scalingMode = .aspectFit
        let mark = watcher.count
        player.currentPlaybackTime = 5.0
        _ = try #require(await watcher.seekCompleted(from: mark))
        let thumbnail = try #require(player.thumbnailAtCurrentTime())
        #expect(thumbnail.size == VideoSize(width: 320, height: 240))
        #expect(FramePattern.frameNumber(in: thumbnail) == 125)
        player.play()
        #expect(await watcher.finished(from: mark, timeout: 8) == .playbackEnded)

        player.shutdown()

        let anamorphic = try makePlayer("anamorphic.mp4", video: .window(handle: handle))
        let anamorphicWatcher = EventWatcher(anamorphic)
        anamorphic.prepareToPlay()
        #expect(await anamorphicWatcher.prepared())
        #expect(anamorphic.thumbnailAtCurrentTime()?.size == VideoSize(width: 480, height: 240))
        anamorphic.shutdown()
        await waitForThreads(atMost: baseline + 2)
    }

    @Test("size change mid-stream is announced")
    func sizeChange() async throws {
        let player = try makePlayer("size-change.ts")
        defer { player.shutdown() }
        let watcher = EventWatcher(player)
        player.prepareToPlay()
        #expect(await watcher.prepared())
        #expect(player.naturalSize == VideoSize(width: 320, height: 240))
        player.play()
        let changed = await watcher.wait(timeout: 6) { $0 == .naturalSizeAvailable(VideoSize(width: 480, height: 360)) }
        #expect(changed != nil)
        _ = await watcher.finished(timeout: 6)
        #expect(player.thumbnailAtCurrentTime() == nil || player.naturalSize == VideoSize(width: 480, height: 360))
    }
}
#endif

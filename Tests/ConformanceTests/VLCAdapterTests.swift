#if VLC
import Foundation
import PlaybackConformance
import PlaybackKit
import Testing
import VLCPlayback

// MARK: - Helpers

/// Keeps every event of one player and lets a test wait, with a timeout, for one that matches.
private final class VLCTestEvents: @unchecked Sendable {
    // @unchecked: `received` and `waiters` are touched only with `lock` held.
    private struct Waiter {
        let id: Int
        let since: Int
        let match: @Sendable (PlaybackEvent) -> Bool
        let continuation: CheckedContinuation<PlaybackEvent?, Never>
    }

    private let lock = NSLock()
    private var received: [PlaybackEvent] = []
    private var waiters: [Waiter] = []
    private var nextID = 0
    private var reader: Task<Void, Never>?

    init(_ player: any MediaPlayback) {
        let stream = player.events
        reader = Task.detached { [weak self] in
            for await event in stream { self?.receive(event) }
        }
    }

    deinit { reader?.cancel() }

    /// Events so far; pass the count as `since` to wait only for later ones.
    var all: [PlaybackEvent] { lock.withLock { received } }
    var count: Int { lock.withLock { received.count } }

    private func receive(_ event: PlaybackEvent) {
        let woken: [CheckedContinuation<PlaybackEvent?, Never>] = lock.withLock {
            received.append(event)
            let index = received.count - 1
            let matching = waiters.filter { index >= $0.since && $0.match(event) }
            waiters.removeAll { waiter in matching.contains { $0.id == waiter.id } }
            return matching.map(\.continuation)
        }
        woken.forEach { $0.resume(returning: event) }
    }

    /// The first event at index `since` or later that `match` accepts, or nil after `timeout` s.
    func next(since: Int = 0, timeout: TimeInterval, _ match: @escaping @Sendable (PlaybackEvent) -> Bool) async -> PlaybackEvent? {
        await withCheckedContinuation { continuation in
            let found: PlaybackEvent?? = lock.withLock {
                if let event = received.dropFirst(since).first(where: match) { return .some(event) }
                nextID += 1
                waiters.append(Waiter(id: nextID, since: since, match: match, continuation: continuation))
                let id = nextID
                Task.detached { [weak self] in
                    try? await Task.sleep(for: .seconds(timeout))
                    self?.expire(id)
                }
                return .none
            }
            if case .some(let event) = found { continuation.resume(returning: event) }
        }
    }

    private func expire(_ id: Int) {
        let expired = lock.withLock { () -> CheckedContinuation<PlaybackEvent?, Never>? in
            guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return waiters.remove(at: index).continuation
        }
        expired?.resume(returning: nil)
    }

    /// Waits for `.preparedToPlay` (true) or a finish (false).
    func prepared(timeout: TimeInterval = 10) async -> Bool {
        let event = await next(timeout: timeout) { event in
            if case .preparedToPlay = event { return true }
            if case .finished = event { return true }
            return false
        }
        return event == .preparedToPlay
    }

    /// Waits for the next `.seekCompleted` from `since` on and returns its position.
    func seekCompleted(since: Int, timeout: TimeInterval = 8) async -> TimeInterval? {
        let event = await next(since: since, timeout: timeout) { event in
            if case .seekCompleted = event { return true }
            return false
        }
        if case .seekCompleted(let position)? = event { return position }
        return nil
    }

    /// Waits for a `.finished` event and returns its reason.
    func finished(since: Int = 0, timeout: TimeInterval) async -> FinishReason? {
        let event = await next(since: since, timeout: timeout) { event in
            if case .finished = event { return true }
            return false
        }
        if case .finished(let reason)? = event { return reason }
        return nil
    }
}

/// Collects the pictures a `.frames` output hands on.
private final class VLCTestFrames: @unchecked Sendable {
    // @unchecked: `stamps` is touched only with `lock` held.
    private let lock = NSLock()
    private var stamps: [(time: TimeInterval, number: Int?)] = []

    var received: [(time: TimeInterval, number: Int?)] { lock.withLock { stamps } }

    func take(_ frame: VideoFrame) {
        let number = FramePattern.frameNumber(in: frame)
        lock.withLock { stamps.append((frame.presentationTime, number)) }
    }
}

private func makeVLCPlayer(_ name: String, video: VideoOutput = .none) throws -> any MediaPlayback {
    try VLCBackend().makePlayer(url: try TestFixtures.file(name), options: PlaybackOptions(videoOutput: video, audioOutput: .null))
}

/// The root window of $DISPLAY, from `xwininfo -root`.
private func rootWindowID() -> UInt? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/xwininfo")
    process.arguments = ["-root"]
    let pipe = Pipe()
    process.standardOutput = pipe
    guard (try? process.run()) != nil else { return nil }
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard let range = output.range(of: "Window id: 0x") else { return nil }
    let hex = output[range.upperBound...].prefix { $0.isHexDigit }
    return UInt(hex, radix: 16)
}

private func frameNumberOnScreen(_ player: any MediaPlayback) -> Int? {
    player.thumbnailAtCurrentTime().flatMap { FramePattern.frameNumber(in: $0) }
}

// MARK: - Tests

@Suite("VLC adapter", .serialized)
struct VLCAdapterTests {
    @Test("the backend names libVLC 3")
    func backendIdentity() {
        let backend = VLCBackend()
        #expect(backend.name == "vlc")
        #expect(backend.engineVersion.hasPrefix("libVLC 3.0."))
    }

    @Test("prepare reports 10 s, 320x240 and shows frame 0, paused")
    func prepareReportsDurationAndSize() async throws {
        let player = try makeVLCPlayer("frames.mp4")
        defer { player.shutdown() }
        let events = VLCTestEvents(player)
        player.prepareToPlay()
        #expect(await events.prepared())
        #expect(abs(player.duration - 10) < 0.05)
        #expect(player.naturalSize == VideoSize(width: 320, height: 240))
        #expect(player.playbackState == .paused)
        #expect(events.all.contains(.naturalSizeAvailable(VideoSize(width: 320, height: 240))))
        let thumbnail = try #require(player.thumbnailAtCurrentTime())
        #expect(thumbnail.size == VideoSize(width: 320, height: 240))
        #expect(FramePattern.frameNumber(in: thumbnail) == 0)
        // RGBA, not BGRA: the bottom left is red.
        let pixel = thumbnail.pixel(x: 40, y: 230)
        #expect(pixel.r > 180 && pixel.b < 80)
        #expect(player.numberOfBytesTransferred > 0)
    }

    @Test("an anamorphic clip is 480x240 with its pixel aspect applied")
    func anamorphicSize() async throws {
        let player = try makeVLCPlayer("anamorphic.mp4")
        defer { player.shutdown() }
        let events = VLCTestEvents(player)
        player.prepareToPlay()
        #expect(await events.prepared())
        #expect(player.naturalSize == VideoSize(width: 480, height: 240))
        let thumbnail = try #require(player.thumbnailAtCurrentTime())
        #expect(thumbnail.size == VideoSize(width: 480, height: 240))
        #expect(FramePattern.frameNumber(in: thumbnail) == 0)
    }

    @Test("playback with null audio runs at real time")
    func realTimeWithNullAudio() async throws {
        let player = try makeVLCPlayer("frames.mp4")
        defer { player.shutdown() }
        let events = VLCTestEvents(player)
        player.prepareToPlay()
        #expect(await events.prepared())
        let mark = events.count
        player.play()
        _ = await events.next(since: mark, timeout: 5) { $0 == .playbackStateChanged(.playing) }
        let startMedia = player.currentPlaybackTime
        let startWall = Date()
        // The measurement interval itself: media time must advance as much as wall time.
        try await Task.sleep(for: .seconds(2))
        let media = player.currentPlaybackTime - startMedia
        let wall = Date().timeIntervalSince(startWall)
        #expect(abs(media - wall) < wall * 0.1, "media advanced \(media) s in \(wall) s")
        let shown = try #require(frameNumberOnScreen(player))
        let expected = FramePattern.frame(at: player.currentPlaybackTime)
        #expect(abs(shown - expected) <= 3, "frame \(shown) on screen at \(player.currentPlaybackTime) s")
    }

    @Test("an accurate seek to 5.0 s shows frame 125 and stays paused")
    func accurateSeekWhilePaused() async throws {
        let player = try makeVLCPlayer("frames.mp4")
        defer { player.shutdown() }
        let events = VLCTestEvents(player)
        player.prepareToPlay()
        #expect(await events.prepared())
        var mark = events.count
        player.currentPlaybackTime = 5.0
        let reached = try #require(await events.seekCompleted(since: mark))
        #expect(abs(reached - 5.0) < 0.05)
        #expect(frameNumberOnScreen(player) == 125)
        #expect(player.playbackState == .paused)
        #expect(abs(player.currentPlaybackTime - 5.0) < 0.05)

        mark = events.count
        player.currentPlaybackTime = 7.32
        #expect(await events.seekCompleted(since: mark) != nil)
        #expect(frameNumberOnScreen(player) == 183)
        mark = events.count
        player.currentPlaybackTime = 2.0
        #expect(await events.seekCompleted(since: mark) != nil)
        #expect(frameNumberOnScreen(player) == 50)
        #expect(player.playbackState == .paused)
        #expect(!events.all.dropFirst(mark).contains(.playbackStateChanged(.playing)))
    }

    @Test("paused seeks land on the exact frame, also just either side of a frame boundary and near a keyframe")
    func pausedSeekSweep() async throws {
        let player = try makeVLCPlayer("frames.mp4")
        defer { player.shutdown() }
        let events = VLCTestEvents(player)
        player.prepareToPlay()
        #expect(await events.prepared())
        // frames.mp4: 25 fps, keyframes every 2 s; 2.039 and 2.041 straddle the start of frame 51.
        for target in [1.96, 2.0, 2.039, 2.041, 2.08, 0.08, 0.04, 0.05, 6.52, 3.999, 9.96, 4.0] {
            let mark = events.count
            player.currentPlaybackTime = target
            #expect(await events.seekCompleted(since: mark) != nil, "no .seekCompleted for \(target) s")
            #expect(frameNumberOnScreen(player) == FramePattern.frame(at: target), "seek to \(target) s")
            #expect(player.playbackState == .paused)
        }
    }

    @Test("a seek while playing keeps playing from the target")
    func seekWhilePlaying() async throws {
        let player = try makeVLCPlayer("frames.mp4")
        defer { player.shutdown() }
        let events = VLCTestEvents(player)
        player.prepareToPlay()
        #expect(await events.prepared())
        player.play()
        let mark = events.count
        player.currentPlaybackTime = 6.0
        let reached = try #require(await events.seekCompleted(since: mark))
        #expect(abs(reached - 6.0) < 0.05)
        #expect(player.playbackState == .playing)
        let shown = try #require(frameNumberOnScreen(player))
        #expect(shown >= 150 && shown <= 153, "frame \(shown) after seeking to 6.0 s")
        print("seek while playing showed frame \(shown)")
        _ = await events.next(since: events.count, timeout: 0.5) { _ in false }
        #expect(player.currentPlaybackTime > 6.2)
    }

    @Test("pause and resume twice: the picture follows the position and playback goes on")
    func pauseResume() async throws {
        let player = try makeVLCPlayer("frames.mp4")
        defer { player.shutdown() }
        let events = VLCTestEvents(player)
        player.prepareToPlay()
        #expect(await events.prepared())
        for stop in [1.2, 2.5] {
            let mark = events.count
            player.play()
            _ = await events.next(since: mark, timeout: 3) { $0 == .playbackStateChanged(.playing) }
            // Waits for the position (there is no event for it), checking every 50 ms.
            let deadline = Date().addingTimeInterval(5)
            while player.currentPlaybackTime < stop, Date() < deadline {
                _ = await events.next(since: events.count, timeout: 0.05) { _ in false }
            }
            #expect(player.currentPlaybackTime >= stop, "position \(player.currentPlaybackTime) did not reach \(stop)")
            player.pause()
            _ = await events.next(since: mark, timeout: 3) { $0 == .playbackStateChanged(.paused) }
            let position = player.currentPlaybackTime
            let shown = try #require(frameNumberOnScreen(player))
            #expect(abs(shown - FramePattern.frame(at: position)) <= 1, "paused at \(position) s the picture is frame \(shown)")
        }
    }

    @Test("playing to the end finishes once, then play() restarts from 0")
    func endAndRestart() async throws {
        let player = try makeVLCPlayer("short.mp4")
        defer { player.shutdown() }
        let events = VLCTestEvents(player)
        player.prepareToPlay()
        #expect(await events.prepared())
        player.play()
        let reason = await events.finished(timeout: 8)
        #expect(reason == .playbackEnded)
        #expect(player.playbackState == .stopped)
        #expect(abs(player.currentPlaybackTime - 3) < 0.1)
        let mark = events.count
        player.play()
        #expect(await events.next(since: mark, timeout: 5) { $0 == .playbackStateChanged(.playing) } != nil)
        #expect(await events.seekCompleted(since: mark) != nil)
        _ = await events.next(since: events.count, timeout: 0.6) { _ in false }
        let position = player.currentPlaybackTime
        #expect(position > 0.2 && position < 1.5, "position \(position) after restarting")
        let finishes = events.all.filter { if case .finished = $0 { return true } else { return false } }
        #expect(finishes.count == 1)
        let shown = try #require(frameNumberOnScreen(player))
        #expect(shown < 40, "frame \(shown) after restarting")
    }

    @Test("a seek after the end plays from there")
    func seekAfterEnd() async throws {
        let player = try makeVLCPlayer("short.mp4")
        defer { player.shutdown() }
        let events = VLCTestEvents(player)
        player.prepareToPlay()
        #expect(await events.prepared())
        player.currentPlaybackTime = 2.6
        _ = await events.seekCompleted(since: 0)
        player.play()
        #expect(await events.finished(timeout: 5) == .playbackEnded)
        let mark = events.count
        player.currentPlaybackTime = 1.0
        #expect(await events.seekCompleted(since: mark) != nil)
        #expect(frameNumberOnScreen(player) == 25)
        #expect(player.playbackState == .paused)
    }

    @Test("broken files end in a playback error with the right code", arguments: [
        ("random.mp4", PlaybackError.Code.unsupportedFormat),
        ("text.mp4", .unsupportedFormat),
        ("truncated.mp4", .unsupportedFormat),
        ("empty.mp4", .unsupportedFormat),
        ("directory.mp4", .sourceNotFound),
    ])
    func brokenFiles(name: String, code: PlaybackError.Code) async throws {
        let player = try makeVLCPlayer(name)
        defer { player.shutdown() }
        let events = VLCTestEvents(player)
        player.prepareToPlay()
        let reason = try #require(await events.finished(timeout: 5))
        guard case .playbackError(let error) = reason else {
            Issue.record("\(name) finished with \(reason)")
            return
        }
        #expect(error.code == code, "\(name): \(error)")
        #expect(!events.all.contains(.preparedToPlay))
    }

    @Test("a missing file is sourceNotFound")
    func missingFile() async throws {
        let player = try VLCBackend().makePlayer(url: URL(fileURLWithPath: "/nonexistent/clip.mp4"), options: PlaybackOptions(audioOutput: .null))
        defer { player.shutdown() }
        let events = VLCTestEvents(player)
        player.prepareToPlay()
        let reason = await events.finished(timeout: 5)
        guard case .playbackError(let error)? = reason else {
            Issue.record("finished with \(String(describing: reason))")
            return
        }
        #expect(error.code == .sourceNotFound)
    }

    @Test("a seek back to 0 while paused shows frame 0")
    func seekBackToStart() async throws {
        let player = try makeVLCPlayer("frames.mp4")
        defer { player.shutdown() }
        let events = VLCTestEvents(player)
        player.prepareToPlay()
        #expect(await events.prepared())
        var mark = events.count
        player.currentPlaybackTime = 3.0
        #expect(await events.seekCompleted(since: mark) != nil)
        #expect(frameNumberOnScreen(player) == 75)
        mark = events.count
        player.currentPlaybackTime = -5
        let reached = try #require(await events.seekCompleted(since: mark))
        #expect(reached == 0)
        #expect(frameNumberOnScreen(player) == 0)
        #expect(player.playbackState == .paused)
    }

    @Test("a mid-stream size change is announced with the new picture, undistorted")
    func sizeChange() async throws {
        let collected = VLCTestFrames()
        let sizes = Locked<[VideoSize]>([])
        let player = try makeVLCPlayer("size-change.ts", video: .frames(viewport: nil) { frame in
            collected.take(frame)
            sizes.withLock { if $0.last != frame.size { $0.append(frame.size) } }
        })
        defer { player.shutdown() }
        let events = VLCTestEvents(player)
        player.prepareToPlay()
        #expect(await events.prepared())
        #expect(player.naturalSize == VideoSize(width: 320, height: 240))
        let mark = events.count
        player.play()
        let second = VideoSize(width: 480, height: 360)
        #expect(await events.next(since: mark, timeout: 6) { $0 == .naturalSizeAvailable(second) } != nil)
        #expect(player.currentPlaybackTime >= 1.5)
        // Waits for a picture of the new size (frames have no event), checking every 50 ms.
        let deadline = Date().addingTimeInterval(3)
        while sizes.get().last != second, Date() < deadline {
            _ = await events.next(since: events.count, timeout: 0.05) { _ in false }
        }
        #expect(sizes.get() == [VideoSize(width: 320, height: 240), second])
        let thumbnail = try #require(player.thumbnailAtCurrentTime())
        #expect(thumbnail.size == second)
        // Undistorted: the red/blue band is the bottom quarter.
        let bottom = thumbnail.pixel(x: 20, y: 360 * 3 / 4 + 4)
        let above = thumbnail.pixel(x: 20, y: 360 * 3 / 4 - 4)
        #expect(bottom.r > 180 && above.r < 180, "bottom band at the wrong height")
    }

    @Test("half speed advances the position at half the wall clock")
    func halfRate() async throws {
        let player = try makeVLCPlayer("frames.mp4")
        defer { player.shutdown() }
        let events = VLCTestEvents(player)
        player.prepareToPlay()
        #expect(await events.prepared())
        player.playbackRate = 0.5
        player.play()
        // libVLC 3 holds the picture for about a second after a rate change: let it settle.
        _ = await events.next(since: events.count, timeout: 1.5) { _ in false }
        let startMedia = player.currentPlaybackTime
        let startWall = Date()
        _ = await events.next(since: events.count, timeout: 2) { _ in false }
        let pace = (player.currentPlaybackTime - startMedia) / Date().timeIntervalSince(startWall)
        #expect(abs(pace - 0.5) < 0.075, "pace \(pace)")
    }

    @Test(".frames delivers natural-size pictures with rising timestamps")
    func framesRise() async throws {
        let collected = VLCTestFrames()
        let player = try makeVLCPlayer("frames.mp4", video: .frames(viewport: nil) { collected.take($0) })
        defer { player.shutdown() }
        let events = VLCTestEvents(player)
        player.prepareToPlay()
        #expect(await events.prepared())
        player.play()
        _ = await events.next(since: events.count, timeout: 1.5) { _ in false }
        player.pause()
        let stamps = collected.received
        #expect(stamps.count >= 25, "\(stamps.count) frames in 1.5 s")
        for (earlier, later) in zip(stamps, stamps.dropFirst()) {
            #expect(later.time > earlier.time, "\(earlier.time) then \(later.time)")
        }
        // Each stamp names the picture it came with (within two frames).
        for stamp in stamps {
            guard let number = stamp.number else { continue }
            #expect(abs(number - FramePattern.frame(at: stamp.time)) <= 2, "frame \(number) stamped \(stamp.time)")
        }
    }

    @Test("window output plays into an X11 window (needs DISPLAY, e.g. under xvfb-run)",
          .enabled(if: ProcessInfo.processInfo.environment["DISPLAY"] != nil))
    func windowOutput() async throws {
        let root = try #require(rootWindowID(), "xwininfo -root gave no window id")
        let options = PlaybackOptions(videoOutput: .window(handle: root), audioOutput: .null)
        let player = try VLCBackend().makePlayer(url: try TestFixtures.file("frames.mp4"), options: options)
        defer { player.shutdown() }
        let events = VLCTestEvents(player)
        player.prepareToPlay()
        #expect(await events.prepared())
        #expect(player.naturalSize == VideoSize(width: 320, height: 240))
        player.play()
        for mode in ScalingMode.allCases {
            player.scalingMode = mode
            _ = await events.next(since: events.count, timeout: 0.3) { _ in false }
        }
        #expect(player.currentPlaybackTime > 0.8)
        #expect(!events.all.contains { if case .finished = $0 { return true } else { return false } })
    }

    @Test("audio only: duration known, no picture, plays")
    func audioOnly() async throws {
        let player = try makeVLCPlayer("audio-only.m4a")
        defer { player.shutdown() }
        let events = VLCTestEvents(player)
        player.prepareToPlay()
        #expect(await events.prepared())
        #expect(abs(player.duration - 6) < 0.1)
        #expect(player.naturalSize == .zero)
        #expect(player.thumbnailAtCurrentTime() == nil)
        player.play()
        _ = await events.next(since: events.count, timeout: 1) { _ in false }
        #expect(player.currentPlaybackTime > 0.7)
    }
}
#endif

#if VLC
import Foundation
import PlaybackConformance
import PlaybackKit
import Testing
import VLCPlayback

// MARK: - Helpers

// Events and frames are recorded with PlaybackConformance's EventRecorder and FrameCollector.

/// How long a test waits for a `.seekCompleted`.
private let seekTimeout: TimeInterval = 8

/// A VLC player on a fixture (made by scripts/make-fixtures.sh), with null audio.
private func makeVLCPlayer(_ name: String, video: VideoOutput = .none) throws -> any MediaPlayback {
    try VLCBackend().makePlayer(url: try TestFixtures.file(name), options: PlaybackOptions(videoOutput: video, audioOutput: .null))
}

/// True for `.seekCompleted`.
private func isSeekCompleted(_ event: PlaybackEvent) -> Bool {
    if case .seekCompleted = event { true } else { false }
}

/// True for `.finished`.
private func isFinished(_ event: PlaybackEvent) -> Bool {
    if case .finished = event { true } else { false }
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

/// The frame number in the player's current picture, if it has one with a readable number.
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
        let recorder = try await EventRecorder.prepared(player)
        #expect(abs(player.duration - 10) < 0.05)
        #expect(player.naturalSize == VideoSize(width: 320, height: 240))
        #expect(player.playbackState == .paused)
        #expect(recorder.events().contains(.naturalSizeAvailable(VideoSize(width: 320, height: 240))))
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
        _ = try await EventRecorder.prepared(player)
        #expect(player.naturalSize == VideoSize(width: 480, height: 240))
        let thumbnail = try #require(player.thumbnailAtCurrentTime())
        #expect(thumbnail.size == VideoSize(width: 480, height: 240))
        #expect(FramePattern.frameNumber(in: thumbnail) == 0)
    }

    @Test("playback with null audio runs at real time")
    func realTimeWithNullAudio() async throws {
        let player = try makeVLCPlayer("frames.mp4")
        defer { player.shutdown() }
        let recorder = try await EventRecorder.prepared(player)
        let mark = recorder.mark
        player.play()
        try await recorder.waitFor(".playing", since: mark, timeout: 5) { $0 == .playbackStateChanged(.playing) }
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
        let recorder = try await EventRecorder.prepared(player)
        var mark = recorder.mark
        player.currentPlaybackTime = 5.0
        let reached = try await recorder.waitForSeekCompleted(since: mark, timeout: seekTimeout)
        #expect(abs(reached - 5.0) < 0.05)
        #expect(frameNumberOnScreen(player) == 125)
        #expect(player.playbackState == .paused)
        #expect(abs(player.currentPlaybackTime - 5.0) < 0.05)

        mark = recorder.mark
        player.currentPlaybackTime = 7.32
        try await recorder.waitForSeekCompleted(since: mark, timeout: seekTimeout)
        #expect(frameNumberOnScreen(player) == 183)
        mark = recorder.mark
        player.currentPlaybackTime = 2.0
        try await recorder.waitForSeekCompleted(since: mark, timeout: seekTimeout)
        #expect(frameNumberOnScreen(player) == 50)
        #expect(player.playbackState == .paused)
        // Paused through all three seeks: playback never started.
        #expect(!recorder.events().contains(.playbackStateChanged(.playing)))
    }

    @Test("paused seeks land on the exact frame, also just either side of a frame boundary and near a keyframe")
    func pausedSeekSweep() async throws {
        let player = try makeVLCPlayer("frames.mp4")
        defer { player.shutdown() }
        let recorder = try await EventRecorder.prepared(player)
        // frames.mp4: 25 fps, keyframes every 2 s; 2.039 and 2.041 straddle the start of frame 51.
        for target in [1.96, 2.0, 2.039, 2.041, 2.08, 0.08, 0.04, 0.05, 6.52, 3.999, 9.96, 4.0] {
            let mark = recorder.mark
            player.currentPlaybackTime = target
            try await recorder.waitFor(".seekCompleted for \(target) s", since: mark, timeout: seekTimeout, isSeekCompleted)
            #expect(frameNumberOnScreen(player) == FramePattern.frame(at: target), "seek to \(target) s")
            #expect(player.playbackState == .paused)
        }
    }

    @Test("a seek while playing keeps playing from the target")
    func seekWhilePlaying() async throws {
        let player = try makeVLCPlayer("frames.mp4")
        defer { player.shutdown() }
        let recorder = try await EventRecorder.prepared(player)
        player.play()
        let mark = recorder.mark
        player.currentPlaybackTime = 6.0
        let reached = try await recorder.waitForSeekCompleted(since: mark, timeout: seekTimeout)
        #expect(abs(reached - 6.0) < 0.05)
        #expect(player.playbackState == .playing)
        let shown = try #require(frameNumberOnScreen(player))
        #expect(shown >= 150 && shown <= 153, "frame \(shown) after seeking to 6.0 s")
        print("seek while playing showed frame \(shown)")
        // Half a second of playing, measured by the position.
        try await Task.sleep(for: .milliseconds(500))
        #expect(player.currentPlaybackTime > 6.2)
    }

    /// A seek while playing completes on the target's picture (or one just after, when libVLC
    /// dropped the target's as late), never on a picture the decoder made from what it read
    /// before the seek (libVLC 3 shows that one at once as the seek's first when the seek
    /// comes while it decodes), and every `.frames` picture carries its own time: swept over
    /// the moment after `play()` the seek is sent at, and over seeks back and forth, onto
    /// keyframes and between them, while playing on.
    @Test("a seek while playing completes on the target's picture, whenever after play() it is sent", arguments: [0, 5, 10, 20, 30, 40, 60, 90])
    func seekWhilePlayingSweep(delayMilliseconds: Int) async throws {
        let frames = FrameCollector()
        let player = try makeVLCPlayer("frames.mp4", video: .frames(viewport: nil, handler: frames.handler))
        defer { player.shutdown() }
        let recorder = try await EventRecorder.prepared(player)
        player.play()
        if delayMilliseconds > 0 { try await Task.sleep(for: .milliseconds(delayMilliseconds)) }
        for (index, target) in [6.0, 2.52, 8.0, 4.4].enumerated() {
            if index > 0 {
                // While playing on: a picture or two past the last seek's.
                try await Task.sleep(for: .milliseconds(30 + 17 * index))
            }
            let mark = recorder.mark
            player.currentPlaybackTime = target
            _ = try await recorder.waitForSeekCompleted(since: mark, timeout: seekTimeout)
            let shown = try #require(frameNumberOnScreen(player))
            let expected = FramePattern.frame(at: target)
            #expect((expected...(expected + 3)).contains(shown), "frame \(shown) after seeking to \(target) s while playing, \(delayMilliseconds) ms after play()")
        }
        player.pause()
        for record in frames.records {
            guard let number = record.number else { continue }
            #expect(abs(number - FramePattern.frame(at: record.presentationTime)) <= 1, "frame \(number) stamped \(record.presentationTime)")
        }
    }

    @Test("pause and resume twice: the picture follows the position and playback goes on")
    func pauseResume() async throws {
        let player = try makeVLCPlayer("frames.mp4")
        defer { player.shutdown() }
        let recorder = try await EventRecorder.prepared(player)
        for stop in [1.2, 2.5] {
            let playMark = recorder.mark
            player.play()
            try await recorder.waitFor(".playing", since: playMark, timeout: 3) { $0 == .playbackStateChanged(.playing) }
            // Waits for the position (there is no event for it), reading it every 50 ms.
            let deadline = Date().addingTimeInterval(5)
            while player.currentPlaybackTime < stop, Date() < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(player.currentPlaybackTime >= stop, "position \(player.currentPlaybackTime) did not reach \(stop)")
            let pauseMark = recorder.mark
            player.pause()
            try await recorder.waitFor(".paused", since: pauseMark, timeout: 3) { $0 == .playbackStateChanged(.paused) }
            let position = player.currentPlaybackTime
            let shown = try #require(frameNumberOnScreen(player))
            #expect(abs(shown - FramePattern.frame(at: position)) <= 1, "paused at \(position) s the picture is frame \(shown)")
        }
    }

    @Test("playing to the end finishes once, then play() restarts from 0")
    func endAndRestart() async throws {
        let player = try makeVLCPlayer("short.mp4")
        defer { player.shutdown() }
        let recorder = try await EventRecorder.prepared(player)
        player.play()
        let reason = try await recorder.waitForFinish(timeout: 8)
        #expect(reason == .playbackEnded)
        #expect(player.playbackState == .stopped)
        #expect(abs(player.currentPlaybackTime - 3) < 0.1)
        let mark = recorder.mark
        player.play()
        try await recorder.waitFor(".playing", since: mark, timeout: 5) { $0 == .playbackStateChanged(.playing) }
        try await recorder.waitForSeekCompleted(since: mark, timeout: seekTimeout)
        // A little playing after the restart, measured by the position.
        try await Task.sleep(for: .milliseconds(600))
        let position = player.currentPlaybackTime
        #expect(position > 0.2 && position < 1.5, "position \(position) after restarting")
        #expect(recorder.events().filter(isFinished).count == 1)
        let shown = try #require(frameNumberOnScreen(player))
        #expect(shown < 40, "frame \(shown) after restarting")
    }

    @Test("a seek after the end plays from there")
    func seekAfterEnd() async throws {
        let player = try makeVLCPlayer("short.mp4")
        defer { player.shutdown() }
        let recorder = try await EventRecorder.prepared(player)
        let nearEnd = recorder.mark
        player.currentPlaybackTime = 2.6
        try await recorder.waitForSeekCompleted(since: nearEnd, timeout: seekTimeout)
        player.play()
        let reason = try await recorder.waitForFinish(since: nearEnd, timeout: 5)
        #expect(reason == .playbackEnded)
        let mark = recorder.mark
        player.currentPlaybackTime = 1.0
        try await recorder.waitForSeekCompleted(since: mark, timeout: seekTimeout)
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
        let recorder = EventRecorder(player)
        player.prepareToPlay()
        let reason = try await recorder.waitForFinish(timeout: 5)
        guard case .playbackError(let error) = reason else {
            Issue.record("\(name) finished with \(reason)")
            return
        }
        #expect(error.code == code, "\(name): \(error)")
        #expect(!recorder.events().contains(.preparedToPlay))
    }

    @Test("a missing file is sourceNotFound")
    func missingFile() async throws {
        let player = try VLCBackend().makePlayer(url: URL(fileURLWithPath: "/nonexistent/clip.mp4"), options: PlaybackOptions(audioOutput: .null))
        defer { player.shutdown() }
        let recorder = EventRecorder(player)
        player.prepareToPlay()
        let reason = try await recorder.waitForFinish(timeout: 5)
        guard case .playbackError(let error) = reason else {
            Issue.record("finished with \(reason)")
            return
        }
        #expect(error.code == .sourceNotFound)
    }

    @Test("a seek back to 0 while paused shows frame 0")
    func seekBackToStart() async throws {
        let player = try makeVLCPlayer("frames.mp4")
        defer { player.shutdown() }
        let recorder = try await EventRecorder.prepared(player)
        var mark = recorder.mark
        player.currentPlaybackTime = 3.0
        try await recorder.waitForSeekCompleted(since: mark, timeout: seekTimeout)
        #expect(frameNumberOnScreen(player) == 75)
        mark = recorder.mark
        player.currentPlaybackTime = -5
        let reached = try await recorder.waitForSeekCompleted(since: mark, timeout: seekTimeout)
        #expect(reached == 0)
        #expect(frameNumberOnScreen(player) == 0)
        #expect(player.playbackState == .paused)
    }

    @Test("a mid-stream size change is announced with the new picture, undistorted")
    func sizeChange() async throws {
        let frames = FrameCollector()
        let player = try makeVLCPlayer("size-change.ts", video: .frames(viewport: nil, handler: frames.handler))
        defer { player.shutdown() }
        let recorder = try await EventRecorder.prepared(player)
        let first = VideoSize(width: 320, height: 240), second = VideoSize(width: 480, height: 360)
        #expect(player.naturalSize == first)
        let mark = recorder.mark
        player.play()
        try await recorder.waitFor(".naturalSizeAvailable(480x360)", since: mark, timeout: 6) { $0 == .naturalSizeAvailable(second) }
        #expect(player.currentPlaybackTime >= 1.5)
        try await frames.waitFor("a 480x360 picture", timeout: 3) { $0.size == second }
        // The sizes in delivery order, each run of one size once: 320x240, then 480x360 only.
        let sizes = frames.records.map(\.size).reduce(into: [VideoSize]()) { runs, size in
            if runs.last != size { runs.append(size) }
        }
        #expect(sizes == [first, second])
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
        _ = try await EventRecorder.prepared(player)
        player.playbackRate = 0.5
        player.play()
        // libVLC 3 holds the picture for about a second after a rate change: let it settle.
        try await Task.sleep(for: .milliseconds(1500))
        let startMedia = player.currentPlaybackTime
        let startWall = Date()
        try await Task.sleep(for: .seconds(2))  // the interval being measured
        let pace = (player.currentPlaybackTime - startMedia) / Date().timeIntervalSince(startWall)
        #expect(abs(pace - 0.5) < 0.075, "pace \(pace)")
    }

    @Test(".frames delivers natural-size pictures with rising timestamps")
    func framesRise() async throws {
        let frames = FrameCollector()
        let player = try makeVLCPlayer("frames.mp4", video: .frames(viewport: nil, handler: frames.handler))
        defer { player.shutdown() }
        _ = try await EventRecorder.prepared(player)
        player.play()
        try await Task.sleep(for: .milliseconds(1500))  // the interval whose frames are counted
        player.pause()
        let records = frames.records
        #expect(records.count >= 25, "\(records.count) frames in 1.5 s")
        for (earlier, later) in zip(records, records.dropFirst()) {
            #expect(later.presentationTime > earlier.presentationTime, "\(earlier.presentationTime) then \(later.presentationTime)")
        }
        // Each timestamp names the picture it came with (within two frames).
        for record in records {
            guard let number = record.number else { continue }
            #expect(abs(number - FramePattern.frame(at: record.presentationTime)) <= 2, "frame \(number) stamped \(record.presentationTime)")
        }
    }

    @Test("window output plays into an X11 window (needs DISPLAY, e.g. under xvfb-run)",
          .enabled(if: ProcessInfo.processInfo.environment["DISPLAY"] != nil))
    func windowOutput() async throws {
        let root = try #require(rootWindowID(), "xwininfo -root gave no window id")
        let options = PlaybackOptions(videoOutput: .window(handle: root), audioOutput: .null)
        let player = try VLCBackend().makePlayer(url: try TestFixtures.file("frames.mp4"), options: options)
        defer { player.shutdown() }
        let recorder = try await EventRecorder.prepared(player)
        #expect(player.naturalSize == VideoSize(width: 320, height: 240))
        player.play()
        for mode in ScalingMode.allCases {
            player.scalingMode = mode
            try await Task.sleep(for: .milliseconds(300))  // plays a while in each mode
        }
        #expect(player.currentPlaybackTime > 0.8)
        #expect(!recorder.events().contains(where: isFinished))
    }

    @Test("audio only: duration known, no picture, plays")
    func audioOnly() async throws {
        let player = try makeVLCPlayer("audio-only.m4a")
        defer { player.shutdown() }
        _ = try await EventRecorder.prepared(player)
        #expect(abs(player.duration - 6) < 0.1)
        #expect(player.naturalSize == .zero)
        #expect(player.thumbnailAtCurrentTime() == nil)
        player.play()
        try await Task.sleep(for: .seconds(1))  // a second of playing, measured by the position
        #expect(player.currentPlaybackTime > 0.7)
    }
}
#endif

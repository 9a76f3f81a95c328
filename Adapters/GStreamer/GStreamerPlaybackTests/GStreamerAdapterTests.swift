#if GStreamer
import Foundation
import GStreamerPlayback
import PlaybackConformance
import PlaybackKit
import Testing

// MARK: - Helpers

/// A GStreamer player on a fixture (made by scripts/make-fixtures.sh), silent by default,
/// with its events recorded.
private func gstPlayer(_ name: String, video: VideoOutput = .none, accurateSeek: Bool = true) throws -> (any MediaPlayback, EventRecorder) {
    var options = PlaybackOptions(videoOutput: video, audioOutput: .null)
    options.accurateSeek = accurateSeek
    let player = try GStreamerBackend().makePlayer(url: try TestFixtures.file(name), options: options)
    return (player, EventRecorder(player))
}

/// Waits, up to `timeout` seconds, until `condition` holds, looking every 20 ms.
private func eventually(timeout: TimeInterval, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}

// MARK: - Tests

@Suite("GStreamer adapter", .serialized)
struct GStreamerAdapterTests {
    @Test("backend names itself and its GStreamer version")
    func backendIdentity() {
        let backend = GStreamerBackend()
        #expect(backend.name == "gstreamer")
        #expect(backend.engineVersion.hasPrefix("GStreamer 1."))
    }

    @Test("prepare reports duration 10 s, size 320x240, paused on frame 0")
    func prepareReportsDurationAndSize() async throws {
        let (player, log) = try gstPlayer("frames.mp4")
        defer { player.shutdown() }
        try await player.prepare()
        #expect(abs(player.duration - 10) < 0.1)
        #expect(player.naturalSize == VideoSize(width: 320, height: 240))
        try await log.waitFor(".naturalSizeAvailable(320x240)", timeout: 2) { $0 == .naturalSizeAvailable(VideoSize(width: 320, height: 240)) }
        #expect(player.playbackState == .paused)
        let frame = try #require(player.thumbnailAtCurrentTime())
        #expect(frame.size == VideoSize(width: 320, height: 240))
        #expect(FramePattern.frameNumber(in: frame) == 0)
        #expect(abs(frame.presentationTime) < 0.02)
        // Red bottom left, blue bottom right: the channels are in RGBA order.
        let left = frame.pixel(x: 40, y: 230), right = frame.pixel(x: 280, y: 230)
        #expect(left.r > 180 && left.b < 80)
        #expect(right.b > 180 && right.r < 80)
    }

    @Test("anamorphic video is 480x240 with pixel aspect applied, thumbnails too")
    func anamorphicSize() async throws {
        let (player, _) = try gstPlayer("anamorphic.mp4")
        defer { player.shutdown() }
        try await player.prepare()
        #expect(player.naturalSize == VideoSize(width: 480, height: 240))
        let frame = try #require(player.thumbnailAtCurrentTime())
        #expect(frame.size == VideoSize(width: 480, height: 240))
    }

    @Test("a turned picture's thumbnail is upright also while a subtitle is drawn (taken from before the overlay and videoflip)")
    func turnedThumbnailUnderSubtitles() async throws {
        var options = PlaybackOptions(videoOutput: .frames(viewport: nil, handler: { _ in }), audioOutput: .null)
        options.subtitleURLs = [try TestFixtures.file("tracks/cues.srt")]
        let player = try GStreamerBackend().makePlayer(url: try TestFixtures.file("turned-90.mp4"), options: options)
        defer { player.shutdown() }
        let log = EventRecorder(player)
        try await player.prepare()
        #expect(player.tracks.contains { $0.kind == .subtitle && $0.isSelected })
        player.currentPlaybackTime = 0.6
        try await log.waitFor(".seekCompleted", timeout: 5) { if case .seekCompleted = $0 { true } else { false } }
        let frame = try #require(player.thumbnailAtCurrentTime())
        #expect(frame.size == VideoSize(width: 240, height: 320))
        // ffmpeg shows turned-90.mp4's green marker top left and its red one bottom left.
        let topLeft = frame.pixel(x: 21, y: 21), bottomLeft = frame.pixel(x: 21, y: 298)
        #expect(topLeft.g > 150 && topLeft.r < 110 && topLeft.b < 110, "top left is \(topLeft)")
        #expect(bottomLeft.r > 150 && bottomLeft.g < 110 && bottomLeft.b < 110, "bottom left is \(bottomLeft)")
    }

    @Test("audio only: duration, no size, no thumbnail")
    func audioOnly() async throws {
        let (player, _) = try gstPlayer("audio-only.m4a")
        defer { player.shutdown() }
        try await player.prepare()
        #expect(abs(player.duration - 6) < 0.1)
        #expect(player.naturalSize == .zero)
        #expect(player.thumbnailAtCurrentTime() == nil)
    }

    @Test("plays in real time with null audio (within 10 %)")
    func realTimePlayback() async throws {
        let (player, log) = try gstPlayer("frames.mp4")
        defer { player.shutdown() }
        try await player.prepare()
        let mark = log.mark
        player.play()
        try await log.waitFor(".playing", since: mark, timeout: 5) { $0 == .playbackStateChanged(.playing) }
        // Measure from the first picture after the start so start-up latency does not count.
        #expect(await eventually(timeout: 5) { (player.thumbnailAtCurrentTime()?.presentationTime ?? 0) > 0.2 })
        let first = try #require(player.thumbnailAtCurrentTime())
        let wallStart = Date()
        try await Task.sleep(for: .seconds(2))  // the interval being measured
        let last = try #require(player.thumbnailAtCurrentTime())
        let wall = Date().timeIntervalSince(wallStart)
        let media = last.presentationTime - first.presentationTime
        #expect(abs(media / wall - 1) < 0.1, "media advanced \(media) s in \(wall) s")
        #expect(abs(player.currentPlaybackTime - last.presentationTime) < 0.25)
        #expect(!log.events().contains { if case .finished = $0 { return true }; return false })
    }

    @Test("accurate seek to 5.0 shows frame 125")
    func accurateSeek() async throws {
        let (player, log) = try gstPlayer("frames.mp4")
        defer { player.shutdown() }
        try await player.prepare()
        let mark = log.mark
        player.currentPlaybackTime = 5.0
        let reached = try await log.waitForSeekCompleted(since: mark)
        #expect(abs(reached - 5.0) < 0.05)
        let frame = try #require(player.thumbnailAtCurrentTime())
        #expect(FramePattern.frameNumber(in: frame) == 125)
        #expect(abs(frame.presentationTime - 5.0) < 0.02)
    }

    @Test("keyframe seek lands on the keyframe at or before the target")
    func keyframeSeek() async throws {
        let (player, log) = try gstPlayer("frames.mp4", accurateSeek: false)
        defer { player.shutdown() }
        try await player.prepare()
        let mark = log.mark
        player.currentPlaybackTime = 5.0
        let reached = try await log.waitForSeekCompleted(since: mark)
        let frame = try #require(player.thumbnailAtCurrentTime())
        let number = try #require(FramePattern.frameNumber(in: frame))
        #expect(number <= 125 && number >= 75, "landed on frame \(number)")
        #expect(abs(reached - FramePattern.time(ofFrame: number)) < 0.05)
    }

    @Test("a seek while paused stays paused and shows the new frame")
    func seekWhilePaused() async throws {
        let (player, log) = try gstPlayer("frames.mp4")
        defer { player.shutdown() }
        try await player.prepare()
        for target in [3.0, 7.48, 1.0] {
            let mark = log.mark
            player.currentPlaybackTime = target
            let reached = try await log.waitForSeekCompleted(since: mark)
            #expect(abs(reached - target) < 0.05)
            #expect(player.playbackState == .paused)
            let frame = try #require(player.thumbnailAtCurrentTime())
            #expect(FramePattern.frameNumber(in: frame) == FramePattern.frame(at: target))
            #expect(!log.events(since: mark).contains(.playbackStateChanged(.playing)))
        }
        // Still paused: the picture does not move.
        let before = player.thumbnailAtCurrentTime().flatMap { FramePattern.frameNumber(in: $0) }
        try await Task.sleep(for: .milliseconds(300))
        #expect(player.thumbnailAtCurrentTime().flatMap { FramePattern.frameNumber(in: $0) } == before)
    }

    @Test("quick seeks: the last one wins and completes")
    func quickSeeks() async throws {
        let (player, log) = try gstPlayer("frames.mp4")
        defer { player.shutdown() }
        try await player.prepare()
        let mark = log.mark
        for target in [1.0, 2.0, 8.0, 4.0, 6.0] { player.currentPlaybackTime = target }
        try await log.waitFor(".seekCompleted near 6.0", since: mark, timeout: 10) {
            if case .seekCompleted(let t) = $0 { return abs(t - 6.0) < 0.05 }
            return false
        }
        let frame = try #require(player.thumbnailAtCurrentTime())
        #expect(FramePattern.frameNumber(in: frame) == 150)
    }

    @Test("short.mp4 ends once, then play() restarts from 0")
    func endAndRestart() async throws {
        let (player, log) = try gstPlayer("short.mp4")
        defer { player.shutdown() }
        try await player.prepare()
        player.play()
        let reason = try await log.waitForFinish(timeout: 10)
        #expect(reason == .playbackEnded)
        #expect(player.playbackState == .stopped)
        #expect(abs(player.currentPlaybackTime - player.duration) < 0.2)
        let mark = log.mark
        player.play()
        let restart = try await log.waitForSeekCompleted(since: mark)
        #expect(restart < 0.05)
        try await log.waitFor(".playing", since: mark, timeout: 5) { $0 == .playbackStateChanged(.playing) }
        #expect(await eventually(timeout: 5) {
            guard let frame = player.thumbnailAtCurrentTime() else { return false }
            return frame.presentationTime > 0.3 && frame.presentationTime < 2.0
        })
        let endings = log.events().filter { $0 == .finished(.playbackEnded) }.count
        #expect(endings == 1)
        // And it reaches the end again.
        let second = try await log.waitForFinish(since: mark, timeout: 10)
        #expect(second == .playbackEnded)
    }

    @Test("bad input ends in .finished(.playbackError) with the fitting code",
          arguments: [("truncated.mp4", PlaybackError.Code.unsupportedFormat),
                      ("random.mp4", .unsupportedFormat),
                      ("text.mp4", .unsupportedFormat),
                      ("empty.mp4", .unsupportedFormat),
                      ("no-such-file.mp4", .sourceNotFound)])
    func badInput(name: String, code: PlaybackError.Code) async throws {
        let url = try TestFixtures.ensure().appendingPathComponent(name)
        let player = try GStreamerBackend().makePlayer(url: url, options: PlaybackOptions(audioOutput: .null))
        defer { player.shutdown() }
        let log = EventRecorder(player)
        player.prepareToPlay()
        let reason = try await log.waitForFinish(timeout: 10)
        guard case .playbackError(let error) = reason else {
            Issue.record("\(name): expected an error, got \(String(describing: reason))")
            return
        }
        #expect(error.code == code, "\(name): \(error)")
        #expect(!error.message.isEmpty)
    }

    /// GIF and NUT have no demuxer in GStreamer but gst-libav's, which before 1.24 may read
    /// on at the end of a file forever (a GIF never ended; a NUT file never opened, and one
    /// of raw pictures crashed the demuxer's thread). Either the file plays to its end, or it
    /// is refused at once as a format the engine cannot play: never a hang, never a crash.
    @Test("a GIF or NUT file ends (played to its end, or refused as .unsupportedFormat) within 10 s",
          arguments: [("gif", ["-pix_fmt", "pal8"]), ("nut", ["-c:v", "rawvideo", "-pix_fmt", "bgr0"]),
                      ("nut", ["-c:v", "libx264"])])
    func libavOnlyContainers(fileExtension: String, codecOptions: [String]) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gst-libav-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("clip.\(fileExtension)")
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        ffmpeg.arguments = ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=96x60:rate=10:duration=1"] + codecOptions + [file.path]
        try ffmpeg.run()
        ffmpeg.waitUntilExit()
        try #require(ffmpeg.terminationStatus == 0, "ffmpeg could not make \(file.lastPathComponent)")
        let player = try GStreamerBackend().makePlayer(url: file, options: PlaybackOptions(audioOutput: .null))
        defer { player.shutdown() }
        let log = EventRecorder(player)
        player.play()
        let reason = try await log.waitForFinish(timeout: 10)
        switch reason {
        case .playbackEnded:
            break
        case .playbackError(let error):
            #expect(error.code == .unsupportedFormat, "\(file.lastPathComponent): \(error)")
        case .userExited:
            Issue.record("\(file.lastPathComponent): finished with userExited")
        }
    }

    @Test("size-change.ts announces 480x360 when the size changes")
    func sizeChange() async throws {
        let (player, log) = try gstPlayer("size-change.ts")
        defer { player.shutdown() }
        try await player.prepare()
        #expect(player.naturalSize == VideoSize(width: 320, height: 240))
        player.play()
        try await log.waitFor(".naturalSizeAvailable(480x360)", timeout: 8) { $0 == .naturalSizeAvailable(VideoSize(width: 480, height: 360)) }
        #expect(player.naturalSize == VideoSize(width: 480, height: 360))
        // The size is announced as the new caps arrive, just before their first picture shows.
        #expect(await eventually(timeout: 1) { player.thumbnailAtCurrentTime()?.size == VideoSize(width: 480, height: 360) })
    }

    @Test(".frames delivers natural-size pictures with rising timestamps")
    func framesOutput() async throws {
        let collector = FrameCollector()
        let (player, _) = try gstPlayer("frames.mp4", video: .frames(viewport: nil, handler: collector.handler))
        defer { player.shutdown() }
        try await player.prepare()
        player.play()
        #expect(await collector.waitUntil(count: 30, timeout: 8))
        player.pause()
        let frames = collector.records
        #expect(frames.first?.number == 0)
        for (previous, next) in zip(frames, frames.dropFirst()) {
            #expect(next.presentationTime > previous.presentationTime, "timestamps \(previous.presentationTime) then \(next.presentationTime)")
        }
        for frame in frames {
            #expect(frame.size == VideoSize(width: 320, height: 240))
            #expect(frame.number == FramePattern.frame(at: frame.presentationTime), "frame \(String(describing: frame.number)) at \(frame.presentationTime)")
        }
        let thumbnail = try #require(player.thumbnailAtCurrentTime())
        #expect(thumbnail.size == VideoSize(width: 320, height: 240))
    }

    @Test(".frames on anamorphic video delivers 480x240 pictures")
    func anamorphicFrames() async throws {
        let collector = FrameCollector(readsNumbers: false)
        let (player, _) = try gstPlayer("anamorphic.mp4", video: .frames(viewport: nil, handler: collector.handler))
        defer { player.shutdown() }
        try await player.prepare()
        #expect(await collector.waitUntil(count: 1, timeout: 5))
        #expect(collector.records.allSatisfy { $0.size == VideoSize(width: 480, height: 240) })
    }

    @Test("playback rate 2 plays twice as fast")
    func doubleRate() async throws {
        let (player, log) = try gstPlayer("frames.mp4")
        defer { player.shutdown() }
        try await player.prepare()
        player.playbackRate = 2
        player.play()
        try await log.waitFor(".playing", timeout: 5) { $0 == .playbackStateChanged(.playing) }
        #expect(await eventually(timeout: 5) { (player.thumbnailAtCurrentTime()?.presentationTime ?? 0) > 0.3 })
        let first = try #require(player.thumbnailAtCurrentTime())
        let wallStart = Date()
        try await Task.sleep(for: .seconds(1.5))  // the interval being measured
        let last = try #require(player.thumbnailAtCurrentTime())
        let ratio = (last.presentationTime - first.presentationTime) / Date().timeIntervalSince(wallStart)
        #expect(abs(ratio - 2) < 0.25, "ratio \(ratio)")
    }

    @Test("a seek and a rate change (done with a seek) in either order: one completion at the target, then the new rate")
    func seekAndRateChange() async throws {
        let (player, log) = try gstPlayer("frames.mp4")
        defer { player.shutdown() }
        try await player.prepare()
        player.play()
        try await log.waitFor(".playing", timeout: 5) { $0 == .playbackStateChanged(.playing) }
        for (rate, target) in [(Float(2), 2.0), (Float(1), 6.0)] {
            let mark = log.mark
            if rate == 2 {
                // The rate seek is in flight when the seek comes.
                player.playbackRate = rate
                player.currentPlaybackTime = target
            } else {
                // The seek is in flight when the rate changes.
                player.currentPlaybackTime = target
                player.playbackRate = rate
            }
            let reached = try await log.waitForSeekCompleted(since: mark)
            #expect(abs(reached - target) < 0.05, "rate \(rate): landed at \(reached), asked for \(target)")
            #expect(await eventually(timeout: 5) { (player.thumbnailAtCurrentTime()?.presentationTime ?? 0) > target + 0.3 })
            let first = try #require(player.thumbnailAtCurrentTime())
            let wallStart = Date()
            try await Task.sleep(for: .seconds(1))  // the interval being measured
            let last = try #require(player.thumbnailAtCurrentTime())
            let pace = (last.presentationTime - first.presentationTime) / Date().timeIntervalSince(wallStart)
            #expect(abs(pace - Double(rate)) < 0.2 * Double(rate), "rate \(rate): the picture advanced at \(pace)x")
            let completions = log.events(since: mark).filter { if case .seekCompleted = $0 { true } else { false } }
            #expect(completions.count == 1, "rate \(rate): \(completions)")
        }
    }

    @Test("buffer figures: bytes read and playable duration")
    func bufferFigures() async throws {
        let (player, log) = try gstPlayer("short.mp4")
        defer { player.shutdown() }
        try await player.prepare()
        #expect(await eventually(timeout: 3) { player.numberOfBytesTransferred > 0 })
        #expect(player.playableDuration > 0)
        #expect((0...100).contains(player.bufferingProgress))
        // Played to the end, every byte of the file has been read (some more than once).
        player.play()
        #expect(try await log.waitForFinish(timeout: 10) == .playbackEnded)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: TestFixtures.file("short.mp4").path)[.size] as? Int)
        let read = player.numberOfBytesTransferred
        #expect(read >= Int64(size) * 9 / 10 && read <= Int64(size) * 3, "\(read) bytes read of \(size)")
    }

    @Test("httpHeaders reach the server; bytes are counted over HTTP")
    func httpHeaders() async throws {
        let server = try LocalHTTPServer()
        defer { server.stop() }
        server.route("/frames.mp4", .content(try .file(try TestFixtures.file("frames.mp4"))))
        var options = PlaybackOptions(audioOutput: .null)
        options.httpHeaders = ["X-PlaybackKit-Test": "present", "User-Agent": "PlaybackKitTests/1"]
        options.maxBufferBytes = 256 * 1024
        let player = try GStreamerBackend().makePlayer(url: server.url("/frames.mp4"), options: options)
        defer { player.shutdown() }
        try await player.prepare()
        #expect(abs(player.duration - 10) < 0.1)
        let first = try #require(server.requests.first)
        #expect(first.header("X-PlaybackKit-Test") == "present", "\(first.headers)")
        #expect(first.headers.filter { $0.name.lowercased() == "user-agent" }.map(\.value) == ["PlaybackKitTests/1"], "\(first.headers)")
        #expect(await eventually(timeout: 3) { player.numberOfBytesTransferred > 0 })
    }
    @Test(".window draws into an X11 window (needs DISPLAY)",
          .enabled(if: ProcessInfo.processInfo.environment["DISPLAY"] != nil))
    func windowOutput() async throws {
        // The root window of the display stands in for an application's window.
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
        let (player, log) = try gstPlayer("short.mp4", video: .window(handle: handle))
        defer { player.shutdown() }
        try await player.prepare()
        #expect(player.naturalSize == VideoSize(width: 320, height: 240))
        player.scalingMode = .fill
        player.scalingMode = .aspectFit
        let mark = log.mark
        player.currentPlaybackTime = 1.0
        try await log.waitForSeekCompleted(since: mark)
        let frame = try #require(player.thumbnailAtCurrentTime())
        #expect(FramePattern.frameNumber(in: frame) == 25)
        player.play()
        #expect(try await log.waitForFinish(timeout: 10) == .playbackEnded)
    }
    @Test("players that are shut down leave no threads behind")
    func noThreadLeak() async throws {
        func threadCount() -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
        }
        // One player first, so GStreamer's own process-wide threads exist before counting.
        do {
            let (player, _) = try gstPlayer("short.mp4")
            try await player.prepare()
            player.shutdown()
        }
        // Wait for the count to settle (thread pools wind down on their own schedule).
        var before = threadCount(), steady = 0
        for _ in 0..<50 where steady < 5 {
            try await Task.sleep(for: .milliseconds(100))
            let now = threadCount()
            steady = now == before ? steady + 1 : 0
            before = now
        }
        for _ in 0..<12 {
            let (player, _) = try gstPlayer("short.mp4")
            try await player.prepare()
            player.play()
            player.shutdown()
        }
        // Teardown runs on each player's loop thread after shutdown(): wait for it to finish.
        let settled = await eventually(timeout: 10) { threadCount() <= before + 2 }
        #expect(settled, "\(before) threads before, \(threadCount()) after")
    }
    @Test("pause then an immediate seek: the seek completes at its target, the picture holds")
    func pauseThenSeek() async throws {
        let (player, log) = try gstPlayer("frames.mp4")
        defer { player.shutdown() }
        try await player.prepare()
        for round in 0..<3 {
            var mark = log.mark
            player.play()
            try await log.waitFor(".playing", since: mark, timeout: 5) { $0 == .playbackStateChanged(.playing) }
            let start = Double(round) * 1.1
            #expect(await eventually(timeout: 5) { (player.thumbnailAtCurrentTime()?.presentationTime ?? 0) > start + 0.3 })
            mark = log.mark
            player.pause()
            try await log.waitFor(".paused", since: mark, timeout: 5) { $0 == .playbackStateChanged(.paused) }
            // Paused: the picture kept does not change between two looks.
            let first = player.thumbnailAtCurrentTime().flatMap { FramePattern.frameNumber(in: $0) }
            let second = player.thumbnailAtCurrentTime().flatMap { FramePattern.frameNumber(in: $0) }
            #expect(first != nil && first == second)
            // A seek at once after the pause is not mistaken for the pause settling.
            let target = 6.2 + Double(round) * 0.4
            mark = log.mark
            player.currentPlaybackTime = target
            let reached = try await log.waitForSeekCompleted(since: mark)
            #expect(abs(reached - target) < 0.05)
            let frame = try #require(player.thumbnailAtCurrentTime())
            #expect(FramePattern.frameNumber(in: frame) == FramePattern.frame(at: target))
            mark = log.mark
            player.currentPlaybackTime = Double(round + 1) * 1.1
            try await log.waitForSeekCompleted(since: mark)
        }
    }
}
#endif

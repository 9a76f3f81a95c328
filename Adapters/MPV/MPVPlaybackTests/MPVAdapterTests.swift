#if MPV
import Foundation
import MPVPlayback
import PlaybackConformance
import PlaybackKit
import Testing

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
        let player = try mpvPlayer("frames.mp4")
        defer { player.shutdown() }
        _ = try await EventRecorder.prepared(player)
        #expect(abs(player.duration - 10) <= mpvFrameTolerance)
        #expect(player.naturalSize == VideoSize(width: 320, height: 240))
        #expect(player.playbackState == .paused)
        #expect(player.currentPlaybackTime < 0.05)
        let thumbnail = try #require(player.thumbnailAtCurrentTime())
        #expect(thumbnail.size == VideoSize(width: 320, height: 240))
        #expect(FramePattern.frameNumber(in: thumbnail) == 0)
    }

    @Test("the timeline starts at the first picture: WebM whose Opus starts 7 ms before it, MPEG-TS 21 ms after the sound")
    func timelineStartsAtFirstPicture() async throws {
        for name in ["formats/vp9-opus.webm", "formats/h264-aac.ts"] {
            let player = try mpvPlayer(name)
            defer { player.shutdown() }
            let events = try await EventRecorder.prepared(player)
            let first = try #require(player.thumbnailAtCurrentTime(), "\(name): no picture once prepared")
            #expect(first.presentationTime == 0, "\(name): the first picture is at \(first.presentationTime) s")
            // A seek to a picture's own time shows that picture, as on every engine (mpv's own
            // time of frame 25 is 7 or 21 ms later).
            let mark = events.mark
            player.currentPlaybackTime = 1.0
            let reached = try await events.waitForSeekCompleted(since: mark, timeout: 5)
            #expect(abs(reached - 1.0) <= 0.002, "\(name): the seek to 1 s reached \(reached) s")
            let shown = try #require(player.thumbnailAtCurrentTime())
            #expect(FramePattern.frameNumber(in: shown) == 25, "\(name): at 1 s the picture is frame \(FramePattern.frameNumber(in: shown) ?? -1)")
            #expect(abs(shown.presentationTime - 1.0) <= 0.002, "\(name): the picture at 1 s says \(shown.presentationTime) s")
        }
    }

    @Test("anamorphic video has its display size 480x240")
    func anamorphic() async throws {
        let player = try mpvPlayer("anamorphic.mp4")
        defer { player.shutdown() }
        let watcher = try await EventRecorder.prepared(player)
        #expect(player.naturalSize == VideoSize(width: 480, height: 240))
        #expect(watcher.events().contains(.naturalSizeAvailable(VideoSize(width: 480, height: 240))))
        #expect(player.thumbnailAtCurrentTime()?.size == VideoSize(width: 480, height: 240))
    }

    @Test("audio only: prepared without a size or a thumbnail")
    func audioOnly() async throws {
        let player = try mpvPlayer("audio-only.m4a")
        defer { player.shutdown() }
        _ = try await EventRecorder.prepared(player)
        #expect(abs(player.duration - 6) < 0.1)
        #expect(player.naturalSize == .zero)
        #expect(player.thumbnailAtCurrentTime() == nil)
    }

    @Test("playing with the null audio output runs at real time")
    func realTimeClock() async throws {
        let frames = FrameCollector()
        let player = try mpvPlayer("frames.mp4", video: .frames(viewport: nil, handler: frames.handler))
        defer { player.shutdown() }
        _ = try await EventRecorder.prepared(player)
        let start = frames.count
        player.play()
        // About 2.4 s of frames at 25 per second.
        _ = await frames.waitUntil(count: start + 60, timeout: 6)
        let played = Array(frames.records.dropFirst(start + 5))  // past the start-up
        try #require(played.count >= 40, "only \(played.count) frames arrived")
        let wall = played.last!.arrival - played.first!.arrival
        let media = played.last!.presentationTime - played.first!.presentationTime
        let ratio = media / wall
        print("mpv real-time ratio: media \(media) s over wall \(wall) s = \(ratio)")
        #expect(abs(ratio - 1) <= 0.1)
        #expect(player.currentPlaybackTime > 1.5)
        #expect(player.isPlaying)
    }

    @Test("accurate seek to 5.0 shows frame 125 and stays paused")
    func accurateSeek() async throws {
        let player = try mpvPlayer("frames.mp4")
        defer { player.shutdown() }
        let watcher = try await EventRecorder.prepared(player)
        let mark = watcher.mark
        player.currentPlaybackTime = 5.0
        let reached = try await watcher.waitForSeekCompleted(since: mark, timeout: 5)
        #expect(abs(reached - 5.0) <= mpvFrameTolerance)
        let thumbnail = try #require(player.thumbnailAtCurrentTime())
        #expect(FramePattern.frameNumber(in: thumbnail) == 125)
        #expect(abs(thumbnail.presentationTime - 5.0) <= mpvFrameTolerance)
        #expect(player.playbackState == .paused)
    }

    @Test("seeks while paused stay paused and show each new frame")
    func seeksWhilePaused() async throws {
        let player = try mpvPlayer("frames.mp4")
        defer { player.shutdown() }
        let watcher = try await EventRecorder.prepared(player)
        for target in [2.0, 7.52, 0.4, 9.0, 9.98, 0.0] {
            let mark = watcher.mark
            player.currentPlaybackTime = target
            let reached = try await watcher.waitForSeekCompleted(since: mark, timeout: 5)
            #expect(abs(reached - target) <= mpvFrameTolerance)
            let thumbnail = try #require(player.thumbnailAtCurrentTime())
            #expect(FramePattern.frameNumber(in: thumbnail) == FramePattern.frame(at: target), "at \(target)")
            #expect(player.playbackState == .paused)
        }
        #expect(!watcher.events().contains(.playbackStateChanged(.playing)))
    }

    @Test("a seek while playing keeps playing from the target")
    func seekWhilePlaying() async throws {
        let frames = FrameCollector()
        let player = try mpvPlayer("frames.mp4", video: .frames(viewport: nil, handler: frames.handler))
        defer { player.shutdown() }
        let watcher = try await EventRecorder.prepared(player)
        player.play()
        _ = await frames.waitUntil(count: 15, timeout: 3)
        let mark = watcher.mark
        player.currentPlaybackTime = 6.0
        let reached = try await watcher.waitForSeekCompleted(since: mark, timeout: 5)
        #expect(abs(reached - 6.0) <= mpvFrameTolerance)
        #expect(player.isPlaying)
        let shown = try #require(player.thumbnailAtCurrentTime().flatMap(FramePattern.frameNumber(in:)))
        #expect(shown >= 150 && shown <= 153, "frame \(shown) after seeking to frame 150")
        let seen = frames.count
        _ = await frames.waitUntil(count: seen + 12, timeout: 3)
        let later = try #require(frames.records.last)
        #expect(later.presentationTime > 6.2)
        #expect(later.number.map { $0 > 150 } == true)
        #expect(abs(player.currentPlaybackTime - later.presentationTime) < 0.2)
    }

    @Test("playback rate 2 plays twice as fast; buffer figures are reported")
    func rateAndBuffer() async throws {
        let frames = FrameCollector()
        let player = try mpvPlayer("frames.mp4", video: .frames(viewport: nil, handler: frames.handler))
        defer { player.shutdown() }
        _ = try await EventRecorder.prepared(player)
        #expect(player.numberOfBytesTransferred > 0)
        #expect(player.playableDuration > 0)
        player.playbackRate = 2
        player.playbackVolume = 0.5
        player.play()
        let start = frames.count
        _ = await frames.waitUntil(count: start + 40, timeout: 4)
        let played = Array(frames.records.dropFirst(start + 5))
        try #require(played.count >= 20)
        let ratio = (played.last!.presentationTime - played.first!.presentationTime) / (played.last!.arrival - played.first!.arrival)
        print("mpv rate 2 ratio: \(ratio)")
        #expect(abs(ratio - 2) <= 0.25)
    }

    @Test("keyframe seek lands on the keyframe before the target")
    func keyframeSeek() async throws {
        let player = try mpvPlayer("frames.mp4") { $0.accurateSeek = false }
        defer { player.shutdown() }
        let watcher = try await EventRecorder.prepared(player)
        let mark = watcher.mark
        player.currentPlaybackTime = 5.0
        let reached = try await watcher.waitForSeekCompleted(since: mark, timeout: 5)
        #expect(reached <= 5.0 + mpvFrameTolerance)
        let frame = try #require(player.thumbnailAtCurrentTime().flatMap(FramePattern.frameNumber(in:)))
        #expect(frame % 50 == 0, "frame \(frame) is not a keyframe of the 50-frame GOP")
        #expect(abs(FramePattern.time(ofFrame: frame) - reached) <= mpvFrameTolerance)
    }

    @Test("playing short.mp4 to the end finishes exactly once, and play restarts it")
    func playToEnd() async throws {
        let player = try mpvPlayer("short.mp4")
        defer { player.shutdown() }
        let watcher = try await EventRecorder.prepared(player)
        player.play()
        let reason = try await watcher.waitForFinish(timeout: 8)
        #expect(reason == .playbackEnded)
        #expect(player.playbackState == .stopped)
        #expect(abs(player.currentPlaybackTime - 3) < 0.1)
        // No second finish turns up.
        let afterEnd = watcher.mark
        let again = await watcher.first(since: afterEnd, timeout: 1) { if case .finished = $0 { true } else { false } }
        #expect(again == nil)
        #expect(watcher.events().filter { $0 == .finished(.playbackEnded) }.count == 1)
        // play() after the end restarts from 0 and plays.
        player.play()
        try await watcher.waitFor(".playing", since: afterEnd, timeout: 3) { $0 == .playbackStateChanged(.playing) }
        let restart = try await watcher.waitForSeekCompleted(since: afterEnd, timeout: 5)
        #expect(restart < 0.1)
        let second = try await watcher.waitForFinish(since: afterEnd, timeout: 8)
        #expect(second == .playbackEnded)
    }

    @Test("a seek after the end shows the frame there and plays on from it")
    func seekAfterEnd() async throws {
        let player = try mpvPlayer("short.mp4")
        defer { player.shutdown() }
        let watcher = try await EventRecorder.prepared(player)
        player.currentPlaybackTime = 2.6
        _ = await watcher.first(timeout: 5) { if case .seekCompleted = $0 { true } else { false } }
        player.play()
        #expect(try await watcher.waitForFinish(timeout: 5) == .playbackEnded)
        let mark = watcher.mark
        player.currentPlaybackTime = 1.0
        let reached = try await watcher.waitForSeekCompleted(since: mark, timeout: 5)
        #expect(abs(reached - 1.0) <= mpvFrameTolerance)
        #expect(player.thumbnailAtCurrentTime().flatMap(FramePattern.frameNumber(in:)) == 25)
        player.play()
        #expect(try await watcher.waitForFinish(since: mark, timeout: 5) == .playbackEnded)
        #expect(watcher.events().filter { $0 == .finished(.playbackEnded) }.count == 2)
    }

    @Test("audio only plays at real time and ends")
    func audioOnlyPlays() async throws {
        let player = try mpvPlayer("audio-only.m4a")
        defer { player.shutdown() }
        let watcher = try await EventRecorder.prepared(player)
        let mark = watcher.mark
        player.currentPlaybackTime = 4.5
        let reached = try await watcher.waitForSeekCompleted(since: mark, timeout: 5)
        #expect(abs(reached - 4.5) < 0.05)
        let wallStart = Date()
        player.play()
        #expect(try await watcher.waitForFinish(since: mark, timeout: 5) == .playbackEnded)
        let wall = Date().timeIntervalSince(wallStart)
        print("mpv audio-only: 1.5 s of media took \(wall) s")
        #expect(abs(wall - 1.5) < 0.3)
    }

    @Test("bad input fails with unsupportedFormat within a few seconds", arguments: ["truncated.mp4", "random.mp4", "text.mp4", "empty.mp4"])
    func badInput(name: String) async throws {
        let player = try mpvPlayer(name)
        defer { player.shutdown() }
        let watcher = EventRecorder(player)
        let started = Date()
        player.prepareToPlay()
        let reason = try await watcher.waitForFinish(timeout: 5)
        guard case .playbackError(let error) = reason else {
            Issue.record("\(name) finished with \(reason)")
            return
        }
        #expect(error.code == .unsupportedFormat, "\(name): \(error)")
        print("mpv \(name): \(error)")
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(!watcher.events().contains(.finished(.playbackEnded)))
        #expect(!watcher.events().contains(.preparedToPlay))
    }

    @Test("a missing file fails with sourceNotFound")
    func missingFile() async throws {
        let url = try TestFixtures.ensure().appendingPathComponent("no-such-file.mp4")
        let player = try MPVBackend().makePlayer(url: url, options: PlaybackOptions(audioOutput: .null))
        defer { player.shutdown() }
        let watcher = EventRecorder(player)
        player.prepareToPlay()
        let reason = try await watcher.waitForFinish(timeout: 5)
        guard case .playbackError(let error) = reason else {
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
        let watcher = EventRecorder(player)
        player.prepareToPlay()
        let reason = try await watcher.waitForFinish(timeout: 10)
        guard case .playbackError(let error) = reason else {
            Issue.record("finished with \(String(describing: reason))")
            return
        }
        #expect(error.code == .network, "\(error)")
        #expect(error.message.contains("127.0.0.1:9"), "\(error)")
    }

    @Test("stop, then prepare again; a small read-ahead cap still plays")
    func stopAndReopen() async throws {
        let player = try mpvPlayer("frames.mp4") { $0.maxBufferBytes = 64 * 1024 }
        defer { player.shutdown() }
        let watcher = try await EventRecorder.prepared(player)
        let mark = watcher.mark
        player.stop()
        #expect(try await watcher.waitForFinish(since: mark, timeout: 3) == .userExited)
        #expect(player.thumbnailAtCurrentTime() == nil)
        let again = watcher.mark
        player.currentPlaybackTime = 3.0
        player.prepareToPlay()
        try await watcher.waitForPrepared(since: again, timeout: 10)
        #expect(abs(player.currentPlaybackTime - 3.0) <= mpvFrameTolerance)
        let shown = player.thumbnailAtCurrentTime().flatMap(FramePattern.frameNumber(in:))
        #expect(shown == 75)
    }

    @Test("httpHeaders reach the server; bytes are counted over HTTP")
    func httpHeaders() async throws {
        let server = try LocalHTTPServer()
        defer { server.stop() }
        server.route("/frames.mp4", .content(try .file(try TestFixtures.file("frames.mp4"))))
        var options = PlaybackOptions(audioOutput: .null)
        options.httpHeaders = ["X-PlaybackKit-Test": "present", "User-Agent": "PlaybackKitTests/mpv"]
        let player = try MPVBackend().makePlayer(url: server.url("/frames.mp4"), options: options)
        defer { player.shutdown() }
        _ = try await EventRecorder.prepared(player)
        #expect(abs(player.duration - 10) <= mpvFrameTolerance)
        let first = try #require(server.requests.first)
        #expect(first.header("X-PlaybackKit-Test") == "present", "\(first.headers)")
        #expect(first.headers.filter { $0.name.lowercased() == "user-agent" }.map(\.value) == ["PlaybackKitTests/mpv"], "\(first.headers)")
        #expect(player.numberOfBytesTransferred > 0)
        #expect(FramePattern.frameNumber(in: try #require(player.thumbnailAtCurrentTime())) == 0)
    }

    @Test("players that are shut down leave no threads behind")
    func noThreadLeak() async throws {
        let baseline = mpvThreadCount()
        for _ in 0..<3 {
            let player = try mpvPlayer("short.mp4")
            let watcher = try await EventRecorder.prepared(player)
            player.play()
            _ = await watcher.first(timeout: 2) { $0 == .playbackStateChanged(.playing) }
            player.shutdown()
        }
        // Each core is torn down on its own event thread after shutdown: wait for that.
        await mpvWaitForThreads(atMost: baseline + 2)
        #expect(mpvThreadCount() <= baseline + 2, "\(mpvThreadCount()) threads, \(baseline) before")
    }

    @Test("frames output delivers natural-size RGBA frames with rising presentation times")
    func framesOutput() async throws {
        let frames = FrameCollector()
        let player = try mpvPlayer("short.mp4", video: .frames(viewport: nil, handler: frames.handler))
        defer { player.shutdown() }
        _ = try await EventRecorder.prepared(player)
        player.play()
        _ = await frames.waitUntil(count: 30, timeout: 5)
        let received = frames.records
        try #require(received.count >= 30)
        #expect(received.allSatisfy { $0.size == VideoSize(width: 320, height: 240) })
        let times = received.map(\.presentationTime)
        // The first picture may be handed over again when playback starts; nothing else repeats.
        #expect(zip(times, times.dropFirst()).enumerated().allSatisfy { $0.offset == 0 ? $0.element.0 <= $0.element.1 : $0.element.0 < $0.element.1 },
                "times do not rise: \(times)")
        #expect(times.last! > times.first! + 0.5)
        // Frame numbers rise too, and the picture is RGBA (red bottom-left, blue bottom-right).
        let numbers = received.compactMap(\.number)
        #expect(numbers.count == received.count)
        #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $0 <= $1 })
        let sample = try #require(frames.latest)
        let left = sample.pixel(x: 40, y: 220), right = sample.pixel(x: 280, y: 220)
        #expect(left.r > 150 && left.b < 100, "bottom left is not red: \(left)")
        #expect(right.b > 150 && right.r < 100, "bottom right is not blue: \(right)")
        #expect(sample.pixel(x: 10, y: 10).a == 255)
        // Presentation times agree with the frame numbers drawn in them.
        for frame in received {
            if let number = frame.number {
                #expect(abs(FramePattern.time(ofFrame: number) - frame.presentationTime) <= 0.021,
                        "frame \(number) stamped \(frame.presentationTime)")
            }
        }
    }

    @Test("thumbnails taken while .frames plays each show the frame their time names (the one render buffer is never read mid-draw)")
    func thumbnailsWhileFramesPlay() async throws {
        let frames = FrameCollector()
        let player = try mpvPlayer("frames.mp4", video: .frames(viewport: nil, handler: frames.handler))
        defer { player.shutdown() }
        _ = try await EventRecorder.prepared(player)
        player.play()
        #expect(await frames.waitUntil(count: 5, timeout: 5))
        // As many thumbnails as one thread can take in 2 s of playback, about 50 frames drawn.
        let deadline = Date().addingTimeInterval(2)
        var taken = 0, numbers = Set<Int>(), wrongCount = 0, wrong: [String] = []
        func mismatch(_ what: String) {
            wrongCount += 1
            if wrong.count < 5 { wrong.append(what) }
        }
        while Date() < deadline {
            taken += 1
            guard let thumbnail = player.thumbnailAtCurrentTime() else {
                mismatch("nil")
                continue
            }
            guard let number = FramePattern.frameNumber(in: thumbnail) else {
                mismatch("unreadable at \(thumbnail.presentationTime)")
                continue
            }
            numbers.insert(number)
            if abs(FramePattern.time(ofFrame: number) - thumbnail.presentationTime) > 0.021 {
                mismatch("frame \(number) stamped \(thumbnail.presentationTime)")
            }
        }
        #expect(wrongCount == 0, "\(wrongCount) of \(taken) thumbnails wrong, the first: \(wrong)")
        #expect(numbers.count >= 30, "the thumbnails showed only \(numbers.count) frames in 2 s of playback")
    }

    // Opt-in (MPV_WINDOW_TEST=1 and DISPLAY): one window player per process works, but a
    // second player with an X11 output in the same process (the anamorphic one below) often
    // ends the process with an Xlib fatal I/O error on its connection (cause not found yet;
    // mpv installs a process-wide Xlib error handler), which would take other tests with it.
    @Test("window output plays into an X11 window (needs DISPLAY and MPV_WINDOW_TEST=1)",
          .enabled(if: ProcessInfo.processInfo.environment["DISPLAY"] != nil
                   && ProcessInfo.processInfo.environment["MPV_WINDOW_TEST"] == "1"))
    func windowOutput() async throws {
        // The display's root window stands in for an application's window. (Read through
        // popen: a Foundation Pipe may close its descriptor again after the number was reused,
        // here by mpv's X connection.)
        let stream = try #require(popen("/usr/bin/xwininfo -root", "r"))
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while true {
            let count = fread(&chunk, 1, chunk.count, stream)
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        pclose(stream)
        let text = String(decoding: bytes, as: UTF8.self)
        let idText = try #require(text.split(separator: " ").first { $0.hasPrefix("0x") })
        let handle = try #require(UInt(idText.dropFirst(2), radix: 16))
        let baseline = mpvThreadCount()

        let player = try mpvPlayer("frames.mp4", video: .window(handle: handle))
        let watcher = try await EventRecorder.prepared(player)
        #expect(player.naturalSize == VideoSize(width: 320, height: 240))
        player.scalingMode = .aspectFill
        player.scalingMode = .aspectFit
        let mark = watcher.mark
        player.currentPlaybackTime = 5.0
        try await watcher.waitForSeekCompleted(since: mark, timeout: 5)
        let thumbnail = try #require(player.thumbnailAtCurrentTime())
        #expect(thumbnail.size == VideoSize(width: 320, height: 240))
        #expect(FramePattern.frameNumber(in: thumbnail) == 125)
        player.play()
        #expect(try await watcher.waitForFinish(since: mark, timeout: 8) == .playbackEnded)

        player.shutdown()

        let anamorphic = try mpvPlayer("anamorphic.mp4", video: .window(handle: handle))
        _ = try await EventRecorder.prepared(anamorphic)
        #expect(anamorphic.thumbnailAtCurrentTime()?.size == VideoSize(width: 480, height: 240))
        anamorphic.shutdown()
        await mpvWaitForThreads(atMost: baseline + 2)
    }

    @Test("size change mid-stream is announced")
    func sizeChange() async throws {
        let player = try mpvPlayer("size-change.ts")
        defer { player.shutdown() }
        let watcher = try await EventRecorder.prepared(player)
        #expect(player.naturalSize == VideoSize(width: 320, height: 240))
        player.play()
        try await watcher.waitFor(".naturalSizeAvailable(480x360)", timeout: 6) { $0 == .naturalSizeAvailable(VideoSize(width: 480, height: 360)) }
        _ = await watcher.first(timeout: 6) { if case .finished = $0 { true } else { false } }
        #expect(player.thumbnailAtCurrentTime() == nil || player.naturalSize == VideoSize(width: 480, height: 360))
    }
}
#endif

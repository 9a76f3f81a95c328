#if FFmpeg
import FFmpegPlayback
import Foundation
import PlaybackConformance
import PlaybackKit
import Testing

// MARK: - Fixtures

private func player(_ name: String, video: VideoOutput = .none, audio: AudioOutput = .null,
                    configure: (inout PlaybackOptions) -> Void = { _ in }) throws -> any MediaPlayback {
    var options = PlaybackOptions(videoOutput: video, audioOutput: audio)
    configure(&options)
    return try FFmpegBackend().makePlayer(url: try TestFixtures.file(name), options: options)
}

/// Plays `player` for about `seconds` of wall time and returns (media advanced, wall elapsed).
private func measureAdvance(_ player: any MediaPlayback, seconds: Double) async throws -> (media: Double, wall: Double) {
    // A measurement over real time: the interval is the point, not a wait for an event.
    try await Task.sleep(for: .milliseconds(300))
    let mediaStart = player.currentPlaybackTime
    let wallStart = ProcessInfo.processInfo.systemUptime
    try await Task.sleep(for: .seconds(seconds))
    let media = player.currentPlaybackTime - mediaStart
    let wall = ProcessInfo.processInfo.systemUptime - wallStart
    return (media, wall)
}

private let oneFrame = 1.0 / FramePattern.frameRate + 0.001

/// A copy of frames.mp4 whose media data is zeroed: it opens (the index is intact) but no
/// frame decodes.
private func undecodableCopy() throws -> URL {
    var data = try Data(contentsOf: try TestFixtures.file("frames.mp4"))
    var offset = 0
    while offset + 8 <= data.count {
        let size = data[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        let type = String(decoding: data[offset + 4..<offset + 8], as: UTF8.self)
        guard size >= 8 else { break }
        if type == "mdat" {
            data.replaceSubrange(offset + 8..<offset + size, with: Data(count: size - 8))
        }
        offset += size
    }
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("ffmpeg-undecodable-\(getpid()).mp4")
    try data.write(to: url)
    return url
}

// MARK: - Tests

@Suite("FFmpeg engine", .serialized)
struct FFmpegEngineTests {
    @Test("backend is named ffmpeg and reports its FFmpeg and libavformat versions")
    func identity() {
        let backend = FFmpegBackend()
        #expect(backend.name == "ffmpeg")
        #expect(backend.engineVersion.hasPrefix("FFmpeg "))
        #expect(backend.engineVersion.contains("(libavformat 59."))
    }

    @Test("prepare reports duration 10 s and size 320x240, paused at frame 0")
    func prepare() async throws {
        let player = try player("frames.mp4")
        defer { player.shutdown() }
        _ = try await EventRecorder.prepared(player)
        #expect(abs(player.duration - 10) <= oneFrame)
        #expect(player.naturalSize == VideoSize(width: 320, height: 240))
        #expect(player.playbackState == .paused)
        #expect(player.currentPlaybackTime < 0.05)
        let picture = try #require(player.thumbnailAtCurrentTime())
        #expect(picture.size == VideoSize(width: 320, height: 240))
        #expect(FramePattern.frameNumber(in: picture) == 0)
        // Bottom quarter: red on the left, blue on the right (RGBA, not BGRA).
        let left = picture.pixel(x: 40, y: 220), right = picture.pixel(x: 280, y: 220)
        #expect(left.r > 150 && left.b < 100)
        #expect(right.b > 150 && right.r < 100)
    }

    @Test("anamorphic video is reported at its display size 480x240")
    func anamorphic() async throws {
        let player = try player("anamorphic.mp4")
        defer { player.shutdown() }
        _ = try await EventRecorder.prepared(player)
        #expect(player.naturalSize == VideoSize(width: 480, height: 240))
        #expect(player.thumbnailAtCurrentTime()?.size == VideoSize(width: 480, height: 240))
    }

    @Test("audio only: prepared with no size and no thumbnail")
    func audioOnly() async throws {
        let player = try player("audio-only.m4a")
        defer { player.shutdown() }
        _ = try await EventRecorder.prepared(player)
        #expect(abs(player.duration - 6) < 0.1)
        #expect(player.naturalSize == .zero)
        #expect(player.thumbnailAtCurrentTime() == nil)
    }

    @Test("plays at real time with the null audio output", arguments: ["frames.mp4", "video-only.mp4", "audio-only.m4a"])
    func realTime(_ name: String) async throws {
        let player = try player(name)
        defer { player.shutdown() }
        _ = try await EventRecorder.prepared(player)
        player.play()
        let (media, wall) = try await measureAdvance(player, seconds: 2)
        let ratio = media / wall
        #expect(abs(ratio - 1) <= 0.1, "\(name): media advanced \(media) s in \(wall) s")
        #expect(player.playbackState == .playing)
    }

    @Test("pause holds the position, resume goes on from it, a seek while playing lands and keeps playing")
    func pauseResumeSeekWhilePlaying() async throws {
        let player = try player("frames.mp4")
        defer { player.shutdown() }
        let events = try await EventRecorder.prepared(player)
        player.play()
        try await Task.sleep(for: .milliseconds(700))
        player.pause()
        try await Task.sleep(for: .milliseconds(200))
        let held = player.currentPlaybackTime
        try await Task.sleep(for: .milliseconds(400))
        #expect(abs(player.currentPlaybackTime - held) < 0.001)
        player.play()
        try await Task.sleep(for: .milliseconds(500))
        #expect(player.currentPlaybackTime > held + 0.3 && player.currentPlaybackTime < held + 0.8)
        let mark = events.mark
        player.currentPlaybackTime = 6.0
        let reached = try await events.waitForSeekCompleted(since: mark, timeout: 5)
        #expect(abs(reached - 6.0) <= oneFrame)
        #expect(player.playbackState == .playing)
        try await Task.sleep(for: .milliseconds(500))
        #expect(player.currentPlaybackTime > 6.2 && player.currentPlaybackTime < 6.9)
    }

    /// Opt-in (PLAYBACK_TEST_SYSTEM_AUDIO=1): opening the system's audio libraries inside the
    /// shared test process prints their complaints on machines without sound. Run it with
    /// SDL_AUDIODRIVER=dummy to exercise the SDL device path without a sound card.
    @Test("the system audio output plays at real time, pauses and seeks (a machine without a device consumes silently)",
          .enabled(if: ProcessInfo.processInfo.environment["PLAYBACK_TEST_SYSTEM_AUDIO"] == "1"))
    func systemAudio() async throws {
        let player = try player("frames.mp4", audio: .system)
        defer { player.shutdown() }
        let events = try await EventRecorder.prepared(player)
        player.playbackVolume = 0.5
        player.play()
        let (media, wall) = try await measureAdvance(player, seconds: 2)
        #expect(abs(media / wall - 1) <= 0.1, "media advanced \(media) s in \(wall) s")
        player.pause()
        try await Task.sleep(for: .milliseconds(200))
        let held = player.currentPlaybackTime
        try await Task.sleep(for: .milliseconds(400))
        #expect(abs(player.currentPlaybackTime - held) < 0.001)
        let mark = events.mark
        player.play()
        player.currentPlaybackTime = 1.0
        let reached = try await events.waitForSeekCompleted(since: mark, timeout: 5)
        #expect(abs(reached - 1.0) <= oneFrame)
        #expect(player.playbackState == .playing)
    }

    @Test("rate 2.0 plays twice as fast", arguments: ["frames.mp4", "video-only.mp4"])
    func doubleRate(_ name: String) async throws {
        let player = try player(name)
        defer { player.shutdown() }
        _ = try await EventRecorder.prepared(player)
        player.playbackRate = 2
        player.play()
        let (media, wall) = try await measureAdvance(player, seconds: 1.5)
        let ratio = media / wall
        #expect(abs(ratio - 2) <= 0.2, "\(name): media advanced \(media) s in \(wall) s at rate 2")
    }

    @Test("accurate seek to 5.0 shows frame 125")
    func accurateSeek() async throws {
        let player = try player("frames.mp4")
        defer { player.shutdown() }
        let events = try await EventRecorder.prepared(player)
        let mark = events.mark
        player.currentPlaybackTime = 5.0
        let reached = try await events.waitForSeekCompleted(since: mark, timeout: 5)
        #expect(abs(reached - 5.0) <= oneFrame)
        let picture = try #require(player.thumbnailAtCurrentTime())
        #expect(FramePattern.frameNumber(in: picture) == 125)
    }

    @Test("accurate seek in audio-only media lands on the target sample")
    func audioAccurateSeek() async throws {
        let player = try player("audio-only.m4a")
        defer { player.shutdown() }
        let events = try await EventRecorder.prepared(player)
        let mark = events.mark
        player.currentPlaybackTime = 2.01
        let reached = try await events.waitForSeekCompleted(since: mark, timeout: 5)
        #expect(abs(reached - 2.01) < 0.001)
    }

    @Test("keyframe seek lands on the keyframe before the target")
    func keyframeSeek() async throws {
        let player = try player("frames.mp4") { $0.accurateSeek = false }
        defer { player.shutdown() }
        let events = try await EventRecorder.prepared(player)
        let mark = events.mark
        player.currentPlaybackTime = 5.0
        let reached = try await events.waitForSeekCompleted(since: mark, timeout: 5)
        // GOP 50 at 25 fps: keyframes at 0, 2, 4, ... seconds.
        #expect(abs(reached - 4.0) <= oneFrame)
        let picture = try #require(player.thumbnailAtCurrentTime())
        #expect(FramePattern.frameNumber(in: picture) == 100)
    }

    @Test("a seek while paused stays paused and shows the new frame")
    func seekWhilePaused() async throws {
        let player = try player("frames.mp4")
        defer { player.shutdown() }
        let events = try await EventRecorder.prepared(player)
        player.play()
        try await Task.sleep(for: .milliseconds(500))
        player.pause()
        let mark = events.mark
        player.currentPlaybackTime = 7.2
        try await events.waitForSeekCompleted(since: mark, timeout: 5)
        #expect(player.playbackState == .paused)
        let picture = try #require(player.thumbnailAtCurrentTime())
        #expect(FramePattern.frameNumber(in: picture) == 180)
        let held = player.currentPlaybackTime
        try await Task.sleep(for: .milliseconds(400))
        #expect(abs(player.currentPlaybackTime - held) < 0.001)
        #expect(FramePattern.frameNumber(in: try #require(player.thumbnailAtCurrentTime())) == 180)
    }

    @Test("short clip plays to the end once, then play() starts it again")
    func endAndRestart() async throws {
        let player = try player("short.mp4")
        defer { player.shutdown() }
        let events = try await EventRecorder.prepared(player)
        player.play()
        let reason = try await events.waitForFinish(timeout: 8)
        #expect(reason == .playbackEnded)
        #expect(player.playbackState == .stopped)
        #expect(abs(player.currentPlaybackTime - 3) < 0.1)
        let mark = events.mark
        player.play()
        _ = await events.first(since: mark, timeout: 5) { $0 == .playbackStateChanged(.playing) }
        try await Task.sleep(for: .milliseconds(800))
        #expect(player.playbackState == .playing)
        #expect(player.currentPlaybackTime > 0.3 && player.currentPlaybackTime < 1.5)
        let finishes = events.events().filter { if case .finished = $0 { true } else { false } }
        #expect(finishes.count == 1)
    }

    @Test("bad input ends in an error with the right code", arguments: [
        ("missing.mp4", PlaybackError.Code.sourceNotFound), ("directory.mp4", .sourceNotFound),
        ("empty.mp4", .unsupportedFormat), ("random.mp4", .unsupportedFormat),
        ("text.mp4", .unsupportedFormat), ("truncated.mp4", .unsupportedFormat),
    ])
    func badInput(_ name: String, _ code: PlaybackError.Code) async throws {
        let url = try TestFixtures.ensure().appendingPathComponent(name)
        let player = try FFmpegBackend().makePlayer(url: url, options: PlaybackOptions(audioOutput: .null))
        defer { player.shutdown() }
        let events = EventRecorder(player)
        player.prepareToPlay()
        let reason = try await events.waitForFinish(timeout: 10)
        guard case .playbackError(let error) = reason else {
            Issue.record("\(name): expected an error, got \(String(describing: reason))")
            return
        }
        #expect(error.code == code, "\(name): \(error)")
    }

    @Test("a seek past the picture's end, into the sound after it, shows the last picture: opened there, and paused")
    func seekPastPictureEnd() async throws {
        let p = try player("video-ends-early.mp4")
        defer { p.shutdown() }
        let events = EventRecorder(p)
        // Asked before prepare, the engine opens there: it waited without end for a picture
        // after the target while the sound filled its queue.
        p.currentPlaybackTime = 2.5
        p.prepareToPlay()
        _ = try await events.waitForPrepared(timeout: 5)
        let opened = try #require(p.thumbnailAtCurrentTime())
        #expect(FramePattern.frameNumber(in: opened) == 49, "opened at 2.5 s the picture is frame \(FramePattern.frameNumber(in: opened) ?? -1)")
        #expect(abs(opened.presentationTime - FramePattern.time(ofFrame: 49)) < 0.002, "opened at 2.5 s: \(opened.presentationTime) s")
        var mark = events.mark
        p.currentPlaybackTime = 1.0
        _ = try await events.waitForSeekCompleted(since: mark, timeout: 5)
        #expect(p.thumbnailAtCurrentTime().flatMap { FramePattern.frameNumber(in: $0) } == 25)
        // Paused: nothing takes the sound after the target either.
        mark = events.mark
        p.currentPlaybackTime = 2.6
        _ = try await events.waitForSeekCompleted(since: mark, timeout: 5)
        let paused = try #require(p.thumbnailAtCurrentTime())
        #expect(FramePattern.frameNumber(in: paused) == 49, "paused at 2.6 s the picture is frame \(FramePattern.frameNumber(in: paused) ?? -1), the one before the seek was 25")
    }

    @Test("a file that opens but where nothing decodes fails with a decode error")
    func nothingDecodes() async throws {
        let url = try undecodableCopy()
        defer { try? FileManager.default.removeItem(at: url) }
        let player = try FFmpegBackend().makePlayer(url: url, options: PlaybackOptions(audioOutput: .null))
        defer { player.shutdown() }
        let events = EventRecorder(player)
        player.prepareToPlay()
        let reason = try await events.waitForFinish(timeout: 10)
        guard case .playbackError(let error) = reason else {
            Issue.record("expected a decode error, got \(String(describing: reason))")
            return
        }
        #expect(error.code == .decode, "\(error)")
        #expect(error.message.hasPrefix("decode: "))
    }

    @Test("HTTP: headers from the options are sent; a 404 is a network error")
    func httpHeadersAndNotFound() async throws {
        let server = try LocalHTTPServer()
        defer { server.stop() }
        server.route("/missing.mp4", .status(404))
        var options = PlaybackOptions(audioOutput: .null)
        options.httpHeaders = ["X-Playback-Test": "ffmpeg engine"]
        let player = try FFmpegBackend().makePlayer(url: server.url("/missing.mp4"), options: options)
        defer { player.shutdown() }
        let events = EventRecorder(player)
        player.prepareToPlay()
        let reason = try await events.waitForFinish(timeout: 10)
        guard case .playbackError(let error) = reason else {
            Issue.record("expected a network error, got \(String(describing: reason))")
            return
        }
        #expect(error.code == .network, "\(error)")
        #expect(error.message.hasPrefix("open: "))
        let request = try #require(server.requests.first)
        #expect(request.header("X-Playback-Test") == "ffmpeg engine", "request: \(request.headers)")
    }

    @Test("frames output delivers natural-size RGBA pictures with rising timestamps")
    func framesOutput() async throws {
        let collector = FrameCollector()
        let player = try player("frames.mp4", video: .frames(viewport: nil, handler: collector.handler))
        defer { player.shutdown() }
        _ = try await EventRecorder.prepared(player)
        player.play()
        try await Task.sleep(for: .seconds(1.5))
        player.pause()
        let frames = collector.records
        #expect(frames.count >= 25)
        #expect(frames.allSatisfy { $0.size == VideoSize(width: 320, height: 240) })
        let times = frames.map(\.presentationTime)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
        for frame in frames.suffix(10) {
            #expect(frame.number == FramePattern.frame(at: frame.presentationTime))
        }
    }

    @Test("stop, then prepare again")
    func stopAndReprepare() async throws {
        let player = try player("frames.mp4")
        defer { player.shutdown() }
        let events = try await EventRecorder.prepared(player)
        player.play()
        player.stop()
        #expect(try await events.waitForFinish(timeout: 5) == .userExited)
        let mark = events.mark
        player.prepareToPlay()
        try await events.waitForPrepared(since: mark, timeout: 10)
    }
}
#endif

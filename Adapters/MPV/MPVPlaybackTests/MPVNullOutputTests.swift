#if MPV
import Foundation
import MPVPlayback
import PlaybackConformance
import PlaybackKit
import Testing

/// `VideoOutput.none` on mpv: no picture is drawn while playing; a thumbnail is a screenshot of
/// the frame mpv's null video output holds. It must be exactly the frame at the position a
/// prepare or a seek reported, and say that frame's time.
@Suite("MPV adapter, no video output", .serialized)
struct MPVNullOutputTests {
    /// The number painted into `thumbnail`, which must match its presentation time.
    private func checkedNumber(_ thumbnail: VideoFrame, _ context: String) throws -> Int {
        let number = try #require(FramePattern.frameNumber(in: thumbnail), "no frame number \(context)")
        let expectedTime = FramePattern.time(ofFrame: number)
        #expect(abs(thumbnail.presentationTime - expectedTime) <= 0.002,
                "frame \(number) says presentationTime \(thumbnail.presentationTime) \(context)")
        return number
    }

    @Test("right after each prepare the thumbnail is frame 0 at time 0")
    func thumbnailAfterPrepare() async throws {
        for run in 0..<5 {
            let player = try mpvPlayer("frames.mp4")
            defer { player.shutdown() }
            _ = try await EventRecorder.prepared(player)
            let thumbnail = try #require(player.thumbnailAtCurrentTime(), "run \(run)")
            #expect(thumbnail.size == VideoSize(width: 320, height: 240))
            #expect(try checkedNumber(thumbnail, "after prepare, run \(run)") == 0)
        }
    }

    @Test("right after each paused seek the thumbnail is exactly the frame at the reached position")
    func thumbnailAfterPausedSeeks() async throws {
        let player = try mpvPlayer("frames.mp4")
        defer { player.shutdown() }
        let watcher = try await EventRecorder.prepared(player)
        // Frame times, times between frames, across keyframes (every 2 s), backwards and forwards.
        let targets = [2.0, 7.52, 0.4, 9.0, 9.9, 0.0, 3.99, 4.0, 4.01, 1.234, 6.66, 5.5, 2.02, 8.039, 0.04]
        for target in targets {
            let mark = watcher.mark
            player.currentPlaybackTime = target
            let reached = try await watcher.waitForSeekCompleted(since: mark, timeout: 5)
            #expect(FramePattern.frame(at: reached) == FramePattern.frame(at: target), "seek to \(target) reached \(reached)")
            let thumbnail = try #require(player.thumbnailAtCurrentTime(), "no thumbnail at \(target)")
            let shown = try checkedNumber(thumbnail, "after the seek to \(target)")
            #expect(shown == FramePattern.frame(at: target), "seek to \(target): frame \(shown)")
            #expect(abs(thumbnail.presentationTime - reached) <= 0.002, "seek to \(target): picture at \(thumbnail.presentationTime), reached \(reached)")
            #expect(player.playbackState == .paused)
        }
        // Once the video has ended (the last frame, 9.96, shows until the audio ends at 10.005)
        // mpv's position follows the audio, so only the picture is checked there.
        let mark = watcher.mark
        player.currentPlaybackTime = 9.98
        try await watcher.waitForSeekCompleted(since: mark, timeout: 5)
        let last = try #require(player.thumbnailAtCurrentTime().flatMap(FramePattern.frameNumber(in:)))
        #expect(last == 249)
    }

    @Test("keyframe seeks: the thumbnail is the frame where the seek landed")
    func thumbnailAfterKeyframeSeeks() async throws {
        let player = try mpvPlayer("frames.mp4") { $0.accurateSeek = false }
        defer { player.shutdown() }
        let watcher = try await EventRecorder.prepared(player)
        for target in [5.3, 1.0, 8.7, 2.2] {
            let mark = watcher.mark
            player.currentPlaybackTime = target
            let reached = try await watcher.waitForSeekCompleted(since: mark, timeout: 5)
            let thumbnail = try #require(player.thumbnailAtCurrentTime())
            let shown = try checkedNumber(thumbnail, "after the keyframe seek to \(target)")
            #expect(shown == FramePattern.frame(at: reached), "keyframe seek to \(target) reached \(reached), shows frame \(shown)")
        }
    }

    @Test("while playing, each thumbnail says the time of the frame it shows, near the position")
    func thumbnailWhilePlaying() async throws {
        let player = try mpvPlayer("frames.mp4")
        defer { player.shutdown() }
        _ = try await EventRecorder.prepared(player)
        player.play()
        var previous = -1
        for index in 0..<30 {
            try await Task.sleep(for: .milliseconds(60))
            let thumbnail = try #require(player.thumbnailAtCurrentTime(), "thumbnail \(index)")
            let shown = try checkedNumber(thumbnail, "while playing, thumbnail \(index)")
            #expect(shown >= previous, "the picture went back from frame \(previous) to \(shown)")
            #expect(abs(thumbnail.presentationTime - player.currentPlaybackTime) <= 0.15,
                    "picture at \(thumbnail.presentationTime), position \(player.currentPlaybackTime)")
            previous = shown
        }
        #expect(previous > 25)
    }

    @Test("after a size change mid-stream the thumbnail has the new size")
    func thumbnailAfterSizeChange() async throws {
        let player = try mpvPlayer("size-change.ts")
        defer { player.shutdown() }
        let watcher = try await EventRecorder.prepared(player)
        #expect(player.thumbnailAtCurrentTime()?.size == VideoSize(width: 320, height: 240))
        let second = VideoSize(width: 480, height: 360)
        let mark = watcher.mark
        player.play()
        try await watcher.waitFor(".naturalSizeAvailable(\(second))", since: mark, timeout: 8) { $0 == .naturalSizeAvailable(second) }
        // A few frames into the new size (the change is at 2 s), polled against a deadline.
        let deadline = ContinuousClock.now + .seconds(5)
        while player.currentPlaybackTime < 2.3, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(player.currentPlaybackTime >= 2.3)
        for index in 0..<5 {
            #expect(player.thumbnailAtCurrentTime()?.size == second, "thumbnail \(index) after the size change")
        }
    }
}
#endif

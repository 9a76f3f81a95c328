import Foundation
import Testing
@testable import PlaybackKit

/// The frame-step rules of `EnginePlayer` (`stepFrames`, `nominalFrameRate`), on the scripted
/// engine and the manual clock.
extension EnginePlayerRuleTests {
    // MARK: - Frame steps

    /// The scripted media at 25 frames a second.
    static let at25 = EngineMediaInfo(duration: 10, naturalSize: VideoSize(width: 320, height: 240),
                                      hasVideo: true, hasAudio: true, frameRate: 25)

    /// A prepared rig on the 25 fps media, paused at `position` (a completed seek), calls forgotten.
    func steppingRig(at position: TimeInterval, configure: (inout PlaybackOptions) -> Void = { _ in }) -> ScriptedRig {
        let rig = ScriptedRig(configure: configure)
        rig.prepare(Self.at25)
        rig.player.currentPlaybackTime = position
        rig.completeSeek(at: position)
        rig.engine.clearCalls()
        _ = rig.takeEvents()
        return rig
    }

    @Test func aStepSeeksAccuratelyHalfWayIntoTheNextOrPreviousFrame() {
        let rig = steppingRig(at: 2.0) { $0.accurateSeek = false }
        #expect(rig.player.nominalFrameRate == 25)
        rig.player.stepFrames(1)
        rig.settle()
        #expect(rig.engine.drivingCalls == [.seek(51.5 / 25, accurate: true)], "frame 51 from frame 50, accurately")
        rig.completeSeek(at: 2.04)  // the engine reports the frame's own time
        #expect(rig.seekCompletions == [2.04])
        #expect(rig.player.currentPlaybackTime == 2.04)
        rig.player.stepFrames(-1)
        rig.settle()
        #expect(rig.engine.drivingCalls.last == .seek(50.5 / 25, accurate: true))
        rig.completeSeek(at: 50.5 / 25)
        rig.player.stepFrames(-3)
        rig.settle()
        #expect(rig.engine.drivingCalls.last == .seek(47.5 / 25, accurate: true))
        #expect(rig.player.playbackState == .paused)
    }

    @Test func aStepCountsFromTheFrameShownBetweenFramesOrReportedEarly() {
        let rig = steppingRig(at: 2.03)  // within frame 50 (2.00 ..< 2.04)
        rig.player.stepFrames(1)
        rig.settle()
        #expect(rig.engine.drivingCalls == [.seek(51.5 / 25, accurate: true)])
        rig.completeSeek(at: 2.039)  // frame 51 at 2.04, reported a millisecond early
        rig.player.stepFrames(1)
        rig.settle()
        #expect(rig.engine.drivingCalls.last == .seek(52.5 / 25, accurate: true), "2.039 s is frame 51")
        rig.completeSeek(at: 52.5 / 25)
        #expect(FrameTiming(rate: 25).frame(at: 2.039) == 51)
        #expect(FrameTiming(rate: 25).frame(at: 2.03) == 50)
    }

    @Test func stepsStayWithinTheFirstAndLastFrames() {
        let rig = steppingRig(at: 0)
        rig.player.stepFrames(-1)
        rig.settle()
        #expect(rig.engine.drivingCalls == [.seek(0, accurate: true)], "before frame 0 is frame 0")
        rig.completeSeek(at: 0)
        rig.player.currentPlaybackTime = 9.97  // frame 249, the last of 10 s
        rig.completeSeek(at: 9.97)
        rig.engine.clearCalls()
        rig.player.stepFrames(3)
        rig.settle()
        #expect(rig.engine.drivingCalls == [.seek(249.5 / 25, accurate: true)], "past the last frame is the last frame")
        rig.completeSeek(at: 249.5 / 25)
        #expect(rig.finishes.isEmpty, "a step finished the play")
        #expect(rig.player.playbackState == .paused)
    }

    /// A rig on the 25 fps media that has played 0.8 s (the position says frame 20), calls
    /// and events forgotten.
    func playedRig() -> ScriptedRig {
        let rig = ScriptedRig()
        rig.prepare(Self.at25)
        rig.player.play()
        rig.settle()
        rig.advance(by: 0.8)
        rig.engine.clearCalls()
        _ = rig.takeEvents()
        return rig
    }

    @Test func aStepWhilePlayingPausesFirst() {
        let rig = playedRig()
        rig.player.stepFrames(1)
        rig.settle()
        #expect(rig.engine.drivingCalls == [.pause, .seek(21.5 / 25, accurate: true)])
        #expect(rig.events == [.playbackStateChanged(.paused)])
        rig.completeSeek(at: 0.84)
        rig.advance(by: 1)
        #expect(rig.player.currentPlaybackTime == 0.84, "the position ran on after a step while playing")
        #expect(rig.player.playbackState == .paused)
    }

    @Test func afterPlayingAStepCountsFromThePictureOnScreenAfterASeekFromThePosition() {
        let rig = playedRig()
        rig.player.pause()
        rig.settle()
        rig.engine.show(pictureAt: 0.84)  // the engine stopped on frame 21
        rig.engine.clearCalls()
        rig.player.stepFrames(1)
        rig.settle()
        #expect(rig.engine.drivingCalls == [.seek(22.5 / 25, accurate: true)], "counted from the held position (frame 20), not the picture shown (frame 21)")
        rig.completeSeek(at: 22.5 / 25)
        // Once a seek landed, the position is the picture's: a stale stamp does not count.
        rig.engine.show(pictureAt: 5)
        rig.player.stepFrames(1)
        rig.settle()
        #expect(rig.engine.drivingCalls.last == .seek(23.5 / 25, accurate: true))
    }

    @Test func quickStepsLetTheLastWinEachCountingFromTheOneBefore() {
        let rig = steppingRig(at: 2.0)
        for _ in 0..<3 { rig.player.stepFrames(1) }
        rig.settle()
        #expect(rig.engine.drivingCalls == [.seek(51.5 / 25, accurate: true)], "more than one seek in flight")
        rig.completeSeek(at: 51.5 / 25)
        #expect(rig.engine.drivingCalls.last == .seek(53.5 / 25, accurate: true))
        #expect(rig.seekCompletions.isEmpty, "a superseded step was reported")
        rig.completeSeek(at: 53.5 / 25)
        #expect(rig.seekCompletions == [53.5 / 25])
    }

    @Test func aStepWithoutAFrameRateOrBeforePrepareDoesNothing() {
        let early = ScriptedRig()
        early.player.stepFrames(1)
        early.settle()
        #expect(early.player.nominalFrameRate == 0)
        #expect(early.engine.drivingCalls.isEmpty)
        let rig = ScriptedRig()
        rig.prepareAndPlay()  // the scripted media's rate is unknown
        rig.engine.clearCalls()
        _ = rig.takeEvents()
        rig.player.stepFrames(1)
        rig.player.stepFrames(-1)
        rig.settle()
        #expect(rig.player.nominalFrameRate == 0)
        #expect(rig.engine.drivingCalls.isEmpty, "a step without a frame rate drove the engine")
        #expect(rig.events.isEmpty)
        #expect(rig.player.playbackState == .playing)
    }
}

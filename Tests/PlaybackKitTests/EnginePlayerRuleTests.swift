import Foundation
import Testing
@testable import PlaybackKit

/// Every rule `EnginePlayer` owns, on a scripted engine and a manual clock: no real engine,
/// no sleeps, each test in milliseconds.
@Suite struct EnginePlayerRuleTests {
    // MARK: - Seeks

    @Test func aSeekBeforePrepareIsCarriedOutBeforePreparedIsAnnounced() {
        let rig = ScriptedRig()
        rig.player.currentPlaybackTime = 4
        rig.settle()
        #expect(rig.player.currentPlaybackTime == 4)
        rig.prepare()
        #expect(rig.engine.drivingCalls == [.open(start: nil), .seek(4, accurate: true)])
        #expect(!rig.events.contains(.preparedToPlay), "prepared announced before the seek landed")
        rig.completeSeek(at: 4)
        let order = rig.events.filter { [.seekCompleted(4), .preparedToPlay, .playbackStateChanged(.paused)].contains($0) }
        #expect(order == [.seekCompleted(4), .preparedToPlay, .playbackStateChanged(.paused)])
        #expect(rig.player.currentPlaybackTime == 4)
    }

    @Test func anEngineThatOpensAtAPositionGetsTheSeekInOpen() {
        let rig = ScriptedRig(opensAtStart: true)
        rig.player.currentPlaybackTime = 6
        var info = ScriptedRig.info
        info.startPosition = 6
        rig.prepare(info)
        #expect(rig.engine.drivingCalls == [.open(start: 6)])
        #expect(rig.seekCompletions == [6])
        #expect(rig.events.contains(.preparedToPlay))
    }

    @Test func aSeekBeforePrepareToTheEndFinishesThereOnce() {
        let rig = ScriptedRig()
        rig.player.currentPlaybackTime = 25
        rig.prepare()
        #expect(!rig.engine.drivingCalls.contains { if case .seek = $0 { true } else { false } })
        #expect(rig.seekCompletions == [10])
        #expect(rig.finishes == [.playbackEnded])
        #expect(rig.player.currentPlaybackTime == 10)
    }

    @Test func theLastSeekWinsAndEarlierOnesNeverCompleteAfterIt() {
        let rig = ScriptedRig()
        rig.prepare()
        rig.engine.clearCalls()
        _ = rig.takeEvents()
        rig.player.currentPlaybackTime = 2
        rig.player.currentPlaybackTime = 5
        rig.player.currentPlaybackTime = 7
        rig.settle()
        #expect(rig.engine.drivingCalls == [.seek(2, accurate: true)], "more than one seek in flight")
        #expect(rig.player.currentPlaybackTime == 7)
        rig.completeSeek(at: 2)
        #expect(rig.engine.drivingCalls == [.seek(2, accurate: true), .seek(7, accurate: true)])
        #expect(rig.seekCompletions.isEmpty, "a superseded seek was reported")
        rig.completeSeek(at: 7)
        #expect(rig.seekCompletions == [7])
        // A stray completion afterwards is not a second one.
        rig.completeSeek(at: 5)
        #expect(rig.seekCompletions == [7])
    }

    @Test func aKeyframeSeekIsAskedForWhenAccurateSeekIsOff() {
        let rig = ScriptedRig { $0.accurateSeek = false }
        rig.prepare()
        rig.player.currentPlaybackTime = 3
        rig.settle()
        #expect(rig.engine.drivingCalls.last == .seek(3, accurate: false))
    }

    @Test func negativeAndNonFiniteSeeksAreClampedOrIgnored() {
        let rig = ScriptedRig()
        rig.prepare()
        rig.engine.clearCalls()
        rig.player.currentPlaybackTime = .nan
        rig.player.currentPlaybackTime = .infinity
        rig.settle()
        #expect(rig.engine.drivingCalls.isEmpty)
        rig.player.currentPlaybackTime = -3
        rig.settle()
        #expect(rig.engine.drivingCalls == [.seek(0, accurate: true)])
    }

    // MARK: - The end

    @Test func theEndIsReportedOnceAndPlayRestartsFromTheStart() {
        let rig = ScriptedRig()
        rig.prepareAndPlay()
        rig.engine.sink.ended()
        rig.engine.sink.ended()
        rig.settle()
        #expect(rig.finishes == [.playbackEnded])
        #expect(rig.player.playbackState == .stopped)
        #expect(rig.player.currentPlaybackTime == 10)
        rig.engine.clearCalls()
        rig.player.play()
        rig.settle()
        #expect(rig.engine.drivingCalls == [.seek(0, accurate: true), .play])
        #expect(rig.player.playbackState == .playing)
        rig.completeSeek(at: 0)
        #expect(rig.seekCompletions == [0])
        #expect(rig.player.currentPlaybackTime < 0.01)
    }

    @Test func aSeekAfterTheEndPlaysOnFromThere() {
        let rig = ScriptedRig()
        rig.prepareAndPlay()
        rig.engine.sink.ended()
        rig.settle()
        rig.engine.clearCalls()
        rig.player.currentPlaybackTime = 3
        rig.settle()
        #expect(rig.engine.drivingCalls == [.seek(3, accurate: true)])
        #expect(rig.player.playbackState == .paused)
        rig.completeSeek(at: 3)
        #expect(rig.player.currentPlaybackTime == 3)
        // A seek to the end again, while at the end already, changes nothing.
        rig.player.currentPlaybackTime = 10
        rig.settle()
        #expect(rig.finishes == [.playbackEnded, .playbackEnded])
    }

    // MARK: - Stop, prepare again, generations

    @Test func stopClosesTheEngineAndAPrepareOpensItAgain() {
        let rig = ScriptedRig()
        rig.prepare()
        rig.player.stop()
        rig.settle()
        #expect(rig.engine.drivingCalls.suffix(1) == [.close])
        #expect(rig.finishes == [.userExited])
        #expect(rig.player.playbackState == .stopped)
        #expect(!rig.player.isPreparedToPlay)
        #expect(rig.player.duration == 0)
        rig.prepare()
        #expect(rig.engine.drivingCalls.filter { $0 == .open(start: nil) }.count == 2)
        #expect(rig.player.isPreparedToPlay)
        #expect(rig.events.filter { $0 == .preparedToPlay }.count == 2)
    }

    @Test func aReportFromAClosedSessionIsDropped() {
        let rig = ScriptedRig()
        rig.prepare()
        let stale = rig.engine.sink
        rig.player.stop()
        rig.prepare()
        #expect(!stale.isCurrent)
        #expect(rig.engine.sink.isCurrent)
        _ = rig.takeEvents()
        stale.ended()
        stale.failed(PlaybackError(code: .decode, message: "late"))
        stale.seekCompleted(3)
        stale.durationChanged(99)
        rig.settle()
        #expect(rig.events.isEmpty, "a stale report reached the app: \(rig.events)")
        #expect(rig.player.duration == 10)
    }

    @Test func aSeekWhileStoppedWaitsForTheNextPrepare() {
        let rig = ScriptedRig()
        rig.prepare()
        rig.player.stop()
        rig.settle()
        rig.engine.clearCalls()
        rig.player.currentPlaybackTime = 5
        rig.settle()
        #expect(rig.engine.drivingCalls.isEmpty, "an engine call after close")
        rig.prepare()
        #expect(rig.engine.drivingCalls == [.open(start: nil), .seek(5, accurate: true)])
    }

    // MARK: - Opening

    @Test func anOpenThatTakesLongerThanTheTimeoutFails() {
        let rig = ScriptedRig { $0.openTimeout = 20 }
        rig.player.prepareToPlay()
        rig.settle()
        rig.advance(by: 19.9)
        #expect(rig.finishes.isEmpty)
        rig.advance(by: 0.2)
        guard case .playbackError(let error)? = rig.finishes.first else {
            Issue.record("no failure after the open timeout: \(rig.events)")
            return
        }
        #expect(error.code == .engine)
        #expect(error.message.contains("did not open within 20 s"))
        #expect(rig.engine.drivingCalls.last == .close)
        // The engine's late answer is dropped.
        rig.engine.sink.prepared(ScriptedRig.info)
        rig.settle()
        #expect(!rig.player.isPreparedToPlay)
    }

    @Test func aRemoteSourceThatDoesNotOpenInTimeIsANetworkError() {
        let rig = ScriptedRig(url: URL(string: "http://127.0.0.1:9/clip.mp4")!) { $0.openTimeout = 5 }
        rig.player.prepareToPlay()
        rig.settle()
        rig.advance(by: 5.1)
        guard case .playbackError(let error)? = rig.finishes.first else {
            Issue.record("no failure: \(rig.events)")
            return
        }
        #expect(error.code == .network)
    }

    @Test func theOpenTimeoutEndsOncePrepared() {
        let rig = ScriptedRig { $0.openTimeout = 2 }
        rig.prepare()
        rig.advance(by: 60)
        #expect(rig.finishes.isEmpty)
        #expect(rig.player.isPreparedToPlay)
        #expect(rig.time.pendingCount == 0)
    }

    @Test func aForbiddenSchemeNeverReachesTheEngine() {
        let rig = ScriptedRig(url: URL(string: "ftp://127.0.0.1/clip.mp4")!)
        rig.player.prepareToPlay()
        rig.settle()
        #expect(rig.engine.calls.isEmpty)
        guard case .playbackError(let error)? = rig.finishes.first else {
            Issue.record("no failure: \(rig.events)")
            return
        }
        #expect(error.code == .forbiddenURL)
    }

    // MARK: - Stalls and URL policy

    @Test func aStallWhilePlayingLongerThanTheStallTimeoutIsANetworkError() {
        let rig = ScriptedRig(url: URL(string: "http://127.0.0.1:9/clip.mp4")!) { $0.stallTimeout = 8 }
        rig.prepareAndPlay()
        rig.engine.sink.stalled(true)
        rig.settle()
        #expect(rig.player.loadState == [.stalled])
        rig.advance(by: 7.9)
        #expect(rig.finishes.isEmpty)
        rig.advance(by: 0.2)
        guard case .playbackError(let error)? = rig.finishes.first else {
            Issue.record("no failure after the stall timeout: \(rig.events)")
            return
        }
        #expect(error.code == .network)
        #expect(error.message.contains("sent no data for 8 s"))
        #expect(rig.engine.drivingCalls.last == .close)
    }

    @Test func theStallLimitRunsOnlyWhilePlaying() {
        let rig = ScriptedRig(url: URL(string: "http://127.0.0.1:9/clip.mp4")!) { $0.stallTimeout = 8 }
        rig.prepareAndPlay()
        rig.engine.sink.stalled(true)
        rig.settle()
        rig.advance(by: 6)
        rig.player.pause()
        rig.settle()
        rig.advance(by: 60)
        #expect(rig.finishes.isEmpty, "failed while paused: \(rig.events)")
        rig.player.play()
        rig.settle()
        rig.advance(by: 7)
        #expect(rig.finishes.isEmpty, "playing again the limit starts afresh")
        rig.engine.sink.stalled(false)
        rig.settle()
        rig.advance(by: 60)
        #expect(rig.finishes.isEmpty)
        #expect(rig.player.loadState == [.playable, .playthroughOK])
        #expect(rig.time.pendingCount == 0)
    }

    @Test func playableDurationStaysWithinPositionAndDuration() {
        let rig = ScriptedRig()
        rig.prepare()
        rig.player.currentPlaybackTime = 6
        rig.settle()
        rig.completeSeek(at: 6)
        // A report from before the seek lags behind the position.
        rig.engine.sink.bufferChanged(EngineBufferStatus(playableDuration: 2, bufferingProgress: 10, bytesTransferred: 1))
        #expect(rig.player.playableDuration == 6)
        rig.engine.sink.bufferChanged(EngineBufferStatus(playableDuration: 8, bufferingProgress: 50, bytesTransferred: 2))
        #expect(rig.player.playableDuration == 8)
        rig.engine.sink.bufferChanged(EngineBufferStatus(playableDuration: 12, bufferingProgress: 100, bytesTransferred: 3))
        #expect(rig.player.playableDuration == 10)
    }

    @Test func anUnreadableCertificateAuthorityFileNeverReachesTheEngine() {
        let rig = ScriptedRig(url: URL(string: "https://127.0.0.1:9/clip.mp4")!) {
            $0.tlsCertificateAuthorities = URL(fileURLWithPath: "/nonexistent/authorities.pem")
        }
        rig.player.prepareToPlay()
        rig.settle()
        #expect(rig.engine.calls.isEmpty)
        guard case .playbackError(let error)? = rig.finishes.first else {
            Issue.record("no failure: \(rig.events)")
            return
        }
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("tlsCertificateAuthorities"))
    }

    @Test func remoteMediaMayReferenceOnlyRemoteResources() {
        var options = PlaybackOptions()
        let remote = MediaSource(URL(string: "https://example.com/list.m3u8")!)
        let policy = ReferencePolicy(source: remote, options: options)
        #expect(policy.confinesToRemote)
        for allowed in ["https://cdn.example.com/a.ts", "http://example.com/b.ts", "crypto+https://example.com/c.ts", "HTTP://EXAMPLE.COM/D.TS"] {
            #expect(policy.refusal(of: allowed) == nil, "\(allowed)")
        }
        for local in ["file:///etc/passwd", "/etc/passwd", "segment.ts", "concat:/a.ts|/b.ts", "subfile,,start,0,end,1,,:/etc/passwd",
                      "crypto:file:///etc/key", "data:text/plain,x", "httpx://example.com/", "http:/etc/passwd"] {
            #expect(policy.refusal(of: local)?.code == .forbiddenURL, "\(local)")
        }
        options.remoteMayReferenceLocalFiles = true
        #expect(ReferencePolicy(source: remote, options: options).refusal(of: "file:///etc/passwd") == nil)
        let local = MediaSource(URL(fileURLWithPath: "/media/list.m3u8"))
        #expect(ReferencePolicy(source: local, options: PlaybackOptions()).refusal(of: "/media/a.ts") == nil)
    }

    @Test func anEngineFailureEndsThePlayWithItsError() {
        let rig = ScriptedRig()
        rig.player.prepareToPlay()
        rig.settle()
        rig.engine.sink.failed(PlaybackError(code: .unsupportedFormat, message: "open: not media"))
        rig.settle()
        #expect(rig.finishes == [.playbackError(PlaybackError(code: .unsupportedFormat, message: "open: not media"))])
        #expect(rig.engine.drivingCalls.last == .close)
    }

    // MARK: - Autoplay, rate, volume

    @Test func autoplayPlaysOncePrepared() {
        let rig = ScriptedRig()
        rig.player.shouldAutoplay = true
        rig.prepare()
        #expect(rig.engine.drivingCalls.last == .play)
        #expect(rig.player.playbackState == .playing)
        #expect(rig.events.suffix(2) == [.preparedToPlay, .playbackStateChanged(.playing)])
    }

    @Test func withoutAutoplayThePlayerWaitsPaused() {
        let rig = ScriptedRig()
        rig.prepare()
        #expect(!rig.engine.drivingCalls.contains(.play))
        #expect(rig.player.playbackState == .paused)
    }

    @Test func playBeforePrepareOpensAndPlays() {
        let rig = ScriptedRig()
        rig.player.play()
        rig.settle()
        #expect(rig.engine.drivingCalls == [.open(start: nil)])
        rig.engine.sink.prepared(ScriptedRig.info)
        rig.settle()
        #expect(rig.engine.drivingCalls.last == .play)
        #expect(rig.player.isPlaying)
    }

    @Test func rateAndVolumeSetBeforePrepareReachTheEngineOncePrepared() {
        let rig = ScriptedRig()
        rig.player.playbackRate = 2
        rig.player.playbackVolume = 7  // clamped to 1
        #expect(rig.player.playbackVolume == 1)
        rig.player.playbackVolume = 0.5
        rig.player.playbackRate = -1   // ignored
        rig.settle()
        #expect(rig.engine.calls.isEmpty, "an engine call before open")
        rig.prepare()
        #expect(rig.engine.drivingCalls == [.open(start: nil), .rate(2), .volume(0.5)])
        #expect(rig.player.playbackRate == 2)
        #expect(rig.player.playbackVolume == 0.5)
    }

    // MARK: - Shutdown

    @Test func shutdownBeforeOpeningTouchesNoEngine() async {
        let rig = ScriptedRig()
        rig.player.shutdown()
        rig.player.prepareToPlay()
        rig.player.play()
        rig.settle()
        #expect(rig.engine.calls.isEmpty)
        await expectEventsFinish(rig.player)
    }

    @Test func shutdownWhileOpeningClosesTheEngineAndDropsItsAnswer() async {
        let rig = ScriptedRig()
        rig.player.prepareToPlay()
        rig.settle()
        rig.player.shutdown()
        rig.settle()
        #expect(rig.engine.drivingCalls == [.open(start: nil), .close])
        rig.engine.sink.prepared(ScriptedRig.info)
        rig.settle()
        #expect(!rig.player.isPreparedToPlay)
        #expect(!rig.events.contains(.preparedToPlay))
        await expectEventsFinish(rig.player)
    }

    @Test func shutdownDuringASeekClosesOnceAndNothingFollows() async {
        let rig = ScriptedRig()
        rig.prepare()
        rig.player.currentPlaybackTime = 3
        rig.settle()
        rig.player.shutdown()
        rig.player.shutdown()
        rig.settle()
        #expect(rig.engine.drivingCalls.filter { $0 == .close }.count == 1)
        _ = rig.takeEvents()
        rig.engine.sink.seekCompleted(3)
        rig.player.play()
        rig.player.currentPlaybackTime = 1
        rig.settle()
        #expect(rig.events.isEmpty)
        #expect(rig.engine.drivingCalls.last == .close)
        await expectEventsFinish(rig.player)
    }

    @Test func shutdownWhilePlayingStopsWithoutAFinishedEvent() async {
        let rig = ScriptedRig()
        rig.prepareAndPlay()
        _ = rig.takeEvents()
        rig.player.shutdown()
        rig.settle()
        #expect(rig.engine.drivingCalls.last == .close)
        #expect(rig.player.playbackState == .stopped)
        #expect(rig.finishes.isEmpty)
        await expectEventsFinish(rig.player)
    }

    /// A stream opened now ends at once: the player finished its events at shutdown.
    private func expectEventsFinish(_ player: EnginePlayer) async {
        var count = 0
        for await _ in player.events { count += 1 }
        #expect(count == 0)
    }

    // MARK: - The position clock, through the player

    @Test func thePositionRunsWithTheClockHoldsWhenPausedAndDoesNotJumpOnResume() {
        let rig = ScriptedRig()
        rig.prepareAndPlay()
        rig.advance(by: 0.5)
        #expect(abs(rig.player.currentPlaybackTime - 0.5) < 1e-9)
        rig.engine.sink.position(0.5)
        rig.settle()
        rig.advance(by: 0.5)
        #expect(abs(rig.player.currentPlaybackTime - 1.0) < 1e-9)
        rig.player.pause()
        rig.settle()
        let held = rig.player.currentPlaybackTime
        rig.advance(by: 3)
        #expect(rig.player.currentPlaybackTime == held)
        rig.player.play()
        rig.settle()
        #expect(rig.player.currentPlaybackTime == held, "the position jumped on resume")
        rig.advance(by: 0.25)
        #expect(abs(rig.player.currentPlaybackTime - (held + 0.25)) < 1e-9)
    }

    @Test func thePositionNeverRunsBackwardsOnALateSample() {
        let rig = ScriptedRig()
        rig.prepareAndPlay()
        rig.advance(by: 0.8)
        let before = rig.player.currentPlaybackTime
        rig.engine.sink.position(0.3)
        rig.settle()
        #expect(rig.player.currentPlaybackTime >= before)
    }

    @Test func aJumpOfThePictureWhilePlayingSetsThePositionOutrightAndNotWhilePaused() {
        let rig = ScriptedRig()
        rig.prepareAndPlay()
        rig.advance(by: 0.2)
        rig.engine.sink.positionJumped(to: 1.04)
        rig.settle()
        #expect(abs(rig.player.currentPlaybackTime - 1.04) < 1e-9, "a jump of 0.84 s was eased in")
        rig.advance(by: 0.1)
        #expect(abs(rig.player.currentPlaybackTime - 1.14) < 1e-9)
        rig.player.pause()
        rig.settle()
        let held = rig.player.currentPlaybackTime
        rig.engine.sink.positionJumped(to: 5)
        rig.settle()
        #expect(rig.player.currentPlaybackTime == held, "a jump reported while paused moved the position")
    }

    @Test func thePositionRunsAtThePlaybackRate() {
        let rig = ScriptedRig()
        rig.player.playbackRate = 2
        rig.prepareAndPlay()
        rig.advance(by: 0.4)
        #expect(abs(rig.player.currentPlaybackTime - 0.8) < 1e-9)
    }

    @Test func thePositionHoldsWhileStalled() {
        let rig = ScriptedRig()
        rig.prepareAndPlay()
        rig.engine.sink.stalled(true)
        rig.settle()
        #expect(rig.player.loadState == [.stalled])
        let held = rig.player.currentPlaybackTime
        rig.advance(by: 2)
        #expect(rig.player.currentPlaybackTime == held)
        rig.engine.sink.stalled(false)
        rig.settle()
        #expect(rig.player.loadState == [.playable, .playthroughOK])
        #expect(rig.events.filter { if case .loadStateChanged = $0 { true } else { false } }.count == 3)
    }

    @Test func thePositionStopsPastTheLastSampleByTheMaximumLead() {
        let rig = ScriptedRig()
        rig.prepareAndPlay()
        rig.advance(by: 5)
        #expect(abs(rig.player.currentPlaybackTime - PositionClock.maximumLead) < 1e-9)
    }
}

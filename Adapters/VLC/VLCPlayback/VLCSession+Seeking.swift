#if VLC
import CVLC
import Dispatch
import FoundationEssentials
import PlaybackKit

// MARK: - Seeking
//
// libVLC 3 seeks accurately (input-fast-seek off) but shows the result unreliably, and its
// picture callbacks carry no timestamp. A seek while paused shows the first picture its
// preroll lets through, which can be a few frames before the target (the preroll ends on a
// decode time), or nothing (a video output made while paused drops it as late). So a paused
// seek with pictures to watch lands, paused, two frames before the target; once it buffered
// the input is resumed (muted): libVLC restarts its clock at the resume, which is known from
// its Playing event, so each picture's media time follows from when it is shown; the one at
// the target is kept and the input paused again (later pictures are ignored). Without
// pictures to watch, a paused seek plays muted from a little before the target. A seek while
// playing seeks to the target and completes on the first new picture shown once libVLC's
// decoders are ready, which its clock times (`VLCVideoCallbacks.Watch.seekTimed`). In an
// adaptive stream (HLS, DASH) a paused seek is done playing, muted, and pauses on the picture
// at the target (`seekPlayingToPause`).

extension VLCSession {
    /// Seconds per video frame (25 fps when unknown).
    var frameDuration: Double { 1 / (tracks.frameRate ?? 25) }

    /// The start time of the frame shown at `time` (the last one starting at or before it).
    func frameStart(at time: TimeInterval) -> TimeInterval {
        VLCPictureTimes.frameStart(at: time, frameDuration: frameDuration)
    }

    /// True when the frame shown at `time` is the first one.
    func isFirstFrame(_ time: TimeInterval) -> Bool { frameStart(at: time) < frameDuration / 2 }

    func seek(to target: TimeInterval) {
        guard phase == .ready, let player else { return }
        token += 1
        let target = max(0, target)
        pictureTimes.enter(.settling, at: target)
        let firstFrame = expectsPicture && video != nil && isFirstFrame(target)
        if isAdaptive, !ended, !steppedNearEnd, !wantsPlaying, !firstFrame, expectsPicture, video != nil {
            seekPlayingToPause(to: target)
        } else if ended || steppedNearEnd || (!wantsPlaying && firstFrame) {
            // libVLC's Ended state cannot seek, and the first frame shows reliably only when
            // opening: start the input again (it opens paused).
            restartInput(for: SeekOperation(target: target, stage: .restarting, token: token))
        } else if wantsPlaying {
            seekOperation = SeekOperation(target: target, stage: .buffering, token: token)
            sendSeek()
        } else if expectsPicture, video != nil {
            // Paused, or pausing: pausing again is harmless and comes before the seek.
            seekOperation = SeekOperation(target: target, stage: .landing, token: token)
            setMuted(true)
            player.setPaused(true)
            sendPausedSeek()
        } else {
            // Paused, or pausing (a Paused event may still come before the Playing one).
            seekOperation = SeekOperation(target: target, stage: .resuming, token: token)
            setMuted(true)
            player.setPaused(false)
            resumeFallback()
        }
        let current = token
        queue.asyncAfter(deadline: .now() + 8) { [weak self] in
            guard let self, let operation = self.seekOperation, operation.token == current else { return }
            PlaybackLog.log(.warning, "vlc", "seek to \(operation.target) s did not settle; reporting it done\(self.detail())")
            self.finishSeek()
        }
    }

    /// Sends the seek of the operation in flight to the (playing) input: to the target while
    /// playing; a little before it, muted, for a paused seek without pictures to watch.
    func sendSeek() {
        guard var operation = seekOperation, let player else { return }
        operation.stage = .buffering
        operation.sawBufferingStart = false
        seekOperation = operation
        let start: TimeInterval
        if wantsPlaying {
            start = operation.target
            video?.watchPlayingSeek(target: start, rate: Double(rate), frameDuration: frameDuration)
        } else if operation.playsToPause {
            // A frame and a half before the target frame (more after an overshoot), or 0:
            // libVLC shows first a frame at or after the time it seeks to, give or take a few
            // milliseconds (an adaptive stream's timeline is placed by the first timestamp
            // read after the seek, audio or video), and the pictures time the rest.
            // Near the end, from a few frames before the last one (`stepToTarget`).
            let targetStart = frameStart(at: operation.target)
            let lastStart = duration > 0 ? frameStart(at: duration - frameDuration / 2) : .infinity
            let anchor = min(targetStart, lastStart - Self.stepFramesBeforeEnd * frameDuration)
            let lead = (1.5 + Double(operation.retries)) * frameDuration
            start = max(0, ((anchor - lead) * 1000).rounded(.down) / 1000)
            video?.watchHeldSeek(start: start, target: targetStart, rate: Double(rate), frameDuration: frameDuration,
                                 stepsToTarget: anchor < targetStart)
        } else {
            start = max(0, operation.target - Self.runUp)
            setMuted(true)
        }
        player.setTime(Int64((start * 1000).rounded()))
    }

    /// A paused seek in an adaptive stream (HLS, DASH), done playing, muted. Each seek there
    /// makes new decoders and a new video output, which libVLC 3 leaves unpaused when the
    /// input is paused, while it sets its clock from the time the pause began: the new
    /// decoder runs ahead and the output drops what it decodes as late, so a paused seek
    /// would show a picture past the target. Playing, libVLC sets its clock once the new
    /// decoder holds its first picture, shows that one at once and the next ones when due,
    /// which tells the picture at the target (`VLCVideoCallbacks.watchHeldSeek`); the input
    /// pauses on it (later pictures are ignored). The seek is sent before the resume, so that
    /// libVLC flushes the old pictures while still paused, and buffers the new ones playing.
    private func seekPlayingToPause(to target: TimeInterval) {
        guard let player else { return }
        var operation = SeekOperation(target: target, stage: .buffering, token: token)
        operation.playsToPause = true
        seekOperation = operation
        setMuted(true)
        sendSeek()
        player.setPaused(false)
    }

    /// Sends the paused seek of the operation in flight: to just before the start of the frame
    /// `operation.runUpFrames` before the target frame (milliseconds, rounded down, so that this
    /// frame is the first one at or after it), but not before 1 ms: a seek to 0 has no preroll,
    /// and libVLC's clock then starts at the first decode time, before 0 with B-frames.
    func sendPausedSeek() {
        guard var operation = seekOperation, let player, let video else { return }
        operation.stage = .landing
        seekOperation = operation
        let targetStart = frameStart(at: operation.target)
        let milliseconds = max(1, ((targetStart - operation.runUpFrames * frameDuration) * 1000).rounded(.down) - 1)
        video.watchPausedSeek(start: milliseconds / 1000, target: targetStart, rate: Double(rate), frameDuration: frameDuration)
        player.setTime(Int64(milliseconds))
        let current = operation.token
        // If libVLC reports no buffering, resume anyway: the timing is then less exact.
        whenStill(.landing, token: current, after: 1.5) { session, operation in
            PlaybackLog.log(.warning, "vlc", "libVLC did not report buffering after the paused seek to \(operation.target) s; resuming anyway")
            session.resumeToTarget()
        }
    }

    /// Near the end of the media libVLC's buffering after a paused seek can stop short of
    /// 100 % until the input plays: resume if no report follows the one numbered `reports`
    /// for a while.
    func resumeIfBufferingStalls(reports: Int) {
        guard let operation = seekOperation else { return }
        whenStill(.landing, token: operation.token, after: 0.25) { session, operation in
            guard operation.bufferingReports == reports else { return }
            PlaybackLog.log(.debug, "vlc", "buffering after the paused seek to \(operation.target) s stopped at \(Int(session.bufferingPercent)) %; resuming")
            session.resumeToTarget()
        }
    }

    /// The paused seek buffered. libVLC does not wait for its decoder while paused: when its
    /// video output knows it is paused, the picture it shows once the decoder is done is
    /// awaited (for a second at most) so that the pictures after the resume come on time;
    /// otherwise the input is resumed at once (an overshoot then lands again further ahead).
    func pausedSeekBuffered() {
        guard let operation = seekOperation, operation.stage == .landing else { return }
        guard outputKnowsPause else {
            resumeToTarget()
            return
        }
        let current = operation.token
        whenStill(.landing, token: current, after: 1) { session, operation in
            session.resumeToTarget()
        }
    }

    /// The paused seek shows its picture: the decoder is done.
    func landingPictureShown() {
        guard let operation = seekOperation, operation.stage == .landing else { return }
        resumeToTarget()
    }

    /// Resumes the input (muted) after a paused seek; libVLC takes the resume after it set
    /// its clock for the seek, and the pictures time the target from the resume
    /// (`seekPictureShown`).
    func resumeToTarget() {
        guard var operation = seekOperation, operation.stage == .landing, let player, let video else { return }
        operation.stage = .runningToTarget
        seekOperation = operation
        video.awaitResume()
        let sentAt = monotonicSeconds()
        player.setPaused(false)
        let current = operation.token
        // Without a Playing event (the input was still playing: its Paused event had not
        // come), time from the request. An input that reported Paused sends Playing when it
        // takes the resume, which can be late (restarting decoders): wait longer for it.
        let assumeAfter = vlcPlaying ? 0.4 : Self.resumeConfirmationLimit
        whenStill(.runningToTarget, token: current, after: assumeAfter) { session, _ in session.video?.assumeResumed(at: sentAt) }
        // If the target picture never comes (nothing left to show), settle anyway.
        whenStill(.runningToTarget, token: current, after: assumeAfter + (operation.runUpFrames + 1) * frameDuration / Double(max(0.05, rate)) + 1.5) { session, operation in
            session.scheduleSeekSettle(after: 0)
        }
    }

    /// The input was started again and is paused. To the first frame: seek to 0 while paused,
    /// which decodes and shows it (as when opening); elsewhere: resume it, muted, and seek.
    func restartedPaused() {
        guard var operation = seekOperation, operation.stage == .restarting, let player else { return }
        if isAdaptive, !wantsPlaying, expectsPicture, let video, isFirstFrame(operation.target) {
            // An adaptive stream makes its streams once it reads: as at the start, play it
            // muted from the start; the pictures tell frame 0 (libVLC may pass over it: then
            // start again, `seekPictureShown`).
            operation.stage = .buffering
            operation.sawBufferingStart = false
            operation.playsToPause = true
            seekOperation = operation
            video.watchHeldSeek(start: 0, target: 0, rate: Double(rate), frameDuration: frameDuration)
            player.setPaused(false)
            return
        }
        if isAdaptive, !wantsPlaying, expectsPicture, let video {
            // After the end: play muted to the first picture, then seek on from there
            // (`firstPictureShownForSeek`): a seek before the streams are made is not accurate.
            operation.stage = .playingToFirstPicture
            seekOperation = operation
            video.holdFirstPicture()
            player.setPaused(false)
            whenStill(.playingToFirstPicture, token: operation.token, after: 6) { session, operation in
                PlaybackLog.log(.warning, "vlc", "no picture after restarting for the seek to \(operation.target) s; pausing there")
                session.scheduleSeekSettle(after: 0)
            }
            return
        }
        if expectsPicture, let video, isFirstFrame(operation.target) {
            operation.stage = .firstPicture
            seekOperation = operation
            video.holdFirstPicture()
            player.setTime(0)
            let current = operation.token
            whenStill(.firstPicture, token: current, after: 2) { session, operation in
                session.finishSeek()
            }
        } else if expectsPicture, video != nil {
            seekOperation = operation
            sendPausedSeek()
        } else {
            operation.stage = .resuming
            seekOperation = operation
            player.setPaused(false)
            resumeFallback()
        }
    }

    /// The first frame is shown after a restart; or, an adaptive stream restarted after the
    /// end played to its first picture: seek on from there, playing.
    func firstPictureShownForSeek() {
        guard var operation = seekOperation else { return }
        switch operation.stage {
        case .firstPicture:
            finishSeek()
        case .playingToFirstPicture:
            operation.stage = .buffering
            operation.playsToPause = true
            seekOperation = operation
            sendSeek()
        default:
            break
        }
    }

    /// If libVLC sends no Playing event (it was still playing: a pause it had not taken
    /// yet was undone), seek anyway.
    private func resumeFallback() {
        guard let operation = seekOperation else { return }
        let current = operation.token
        whenStill(.resuming, token: current, after: 0.4) { session, operation in
            session.resumedForSeek()
        }
    }

    /// The input plays again for a paused seek or a restart: seek now.
    func resumedForSeek() {
        guard let operation = seekOperation, operation.stage == .resuming else { return }
        sendSeek()
    }

    /// libVLC buffered at the seek position.
    func seekBuffered() {
        guard var operation = seekOperation, operation.stage == .buffering, operation.sawBufferingStart else { return }
        let current = operation.token
        if expectsPicture, video != nil {
            // The pictures time the rest (seekPictureShown); if none comes (nothing left to
            // show), settle anyway.
            operation.stage = .awaitingPicture
            seekOperation = operation
            settleWithoutPicture(token: current, after: Self.runUp + 1.5)
        } else {
            seekOperation = operation
            // Without pictures to watch: after buffering, libVLC plays from the target at
            // once (the run-up is played through muted).
            let runUp = wantsPlaying ? 0 : min(Self.runUp, operation.target)
            scheduleSeekSettle(after: runUp / Double(rate) + 0.025)
        }
    }

    /// Settles the seek awaiting its picture `delay` from now should none come, but not while
    /// libVLC's decoders are still getting ready for it (`VLCVideoCallbacks.isAwaitingSeekPicture`):
    /// until then the pictures libVLC shows were made before the seek (slow decoding shows
    /// them for a second or more).
    func settleWithoutPicture(token: Int, after delay: Double) {
        whenStill(.awaitingPicture, token: token, after: delay) { session, operation in
            if session.video?.isAwaitingSeekPicture == true {
                session.settleWithoutPicture(token: token, after: 0.25)
            } else {
                session.scheduleSeekSettle(after: 0)
            }
        }
    }

    /// A picture before the target of a held seek to one of the last pictures is on screen,
    /// and the target is known to be a few pictures later: pause there (the first such
    /// picture), then step once paused (`paused` calls `stepToTarget`).
    func steppingPictureShown() {
        guard var operation = seekOperation, let player else { return }
        switch operation.stage {
        case .awaitingPicture, .buffering:
            operation.stage = .stepping
            seekOperation = operation
            player.setPaused(true)
            whenStill(.stepping, token: operation.token, after: 1.5) { session, operation in
                PlaybackLog.log(.warning, "vlc", "libVLC did not pause before the target of the seek to \(operation.target) s; settling")
                session.scheduleSeekSettle(after: 0)
            }
        case .stepping:
            stepToTarget()
        default:
            break
        }
    }

    /// Shows the next picture of the paused input while the target of a held seek is still
    /// to come (each one shown calls `steppingPictureShown`, the target `seekPictureShown`).
    ///
    /// A step lets the paused decoder take one more block, and shows the next decoded picture
    /// if there is one already: at the end of the stream the last pictures come out of the
    /// decoder only as it drains, a step later. A step that shows nothing is done again.
    func stepToTarget() {
        guard var operation = seekOperation, operation.stage == .stepping, !vlcPlaying, let player, let video,
              video.isSteppingToTarget else { return }
        guard operation.steps < Self.stepLimit else {
            PlaybackLog.log(.warning, "vlc", "libVLC showed no next picture on the way to \(operation.target) s; settling there")
            finishSeek()
            return
        }
        operation.stage = .stepping
        operation.steps += 1
        seekOperation = operation
        steppedNearEnd = true
        player.showNextFrame()
        whenStill(.stepping, token: operation.token, after: Self.stepWait) { session, _ in session.stepToTarget() }
    }

    /// The watched picture is on screen: the target (paused seek) or the first after a seek
    /// while playing, which the target follows within a moment. `overshoot`: the paused
    /// seek's picture came a frame or more after the target (dropped as late while the
    /// decoder caught up for that long): land again further ahead, so that the decoder is
    /// done when the target is due. `framesPastTarget`: the picture of a seek while playing
    /// was timed from libVLC's clock, and is that many frames after the target's.
    func seekPictureShown(overshoot: Double?, framesPastTarget: Int?) {
        guard var operation = seekOperation,
              [.awaitingPicture, .buffering, .runningToTarget, .stepping].contains(operation.stage) else { return }
        if operation.stage == .stepping {
            // Paused on the target; or the pause sent on the way is still to come.
            if vlcPlaying {
                operation.stage = .pausing
                seekOperation = operation
            } else {
                finishSeek()
            }
            return
        }
        if overshoot != nil, operation.playsToPause, operation.retries < Self.overshootRetries {
            operation.retries += 1
            PlaybackLog.log(.debug, "vlc", "paused seek to \(operation.target) s showed a picture past it first; seeking again from further ahead")
            if isFirstFrame(operation.target) {
                // Nothing is ahead of the first frame: start again.
                operation.stage = .restarting
                restartInput(for: operation)
            } else {
                seekOperation = operation
                sendSeek()
            }
            return
        }
        if let overshoot, operation.stage == .runningToTarget, operation.retries < Self.overshootRetries, let player {
            let lagFrames = ((overshoot + 0.05) * Double(rate) / frameDuration).rounded(.up)
            operation.runUpFrames = max(operation.runUpFrames * 3, lagFrames + Self.runUpFrames)
            operation.retries += 1
            seekOperation = operation
            PlaybackLog.log(.debug, "vlc", "paused seek to \(operation.target) s overshot (decoder \(Int(overshoot * 1000)) ms behind); landing \(Int(operation.runUpFrames)) frames ahead")
            player.setPaused(true)
            sendPausedSeek()
            return
        }
        if wantsPlaying, let framesPastTarget {
            // This picture is the one the seek landed on: settled.
            let target = operation.target
            operation.timedPicture = framesPastTarget == 0 ? target : frameStart(at: target) + Double(framesPastTarget) * frameDuration
            seekOperation = operation
            scheduleSeekSettle(after: 0)
        } else if wantsPlaying {
            scheduleSeekSettle(after: VLCVideoCallbacks.settleTime(frameDuration: frameDuration) + 0.005)
        } else {
            scheduleSeekSettle(after: 0)
        }
    }

    func scheduleSeekSettle(after delay: Double) {
        guard var operation = seekOperation else { return }
        operation.stage = .settling
        seekOperation = operation
        let current = operation.token
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self, self.seekOperation?.token == current else { return }
            self.seekSettled()
        }
    }

    private func seekSettled() {
        guard var operation = seekOperation, operation.stage == .settling, let player else { return }
        if wantsPlaying {
            finishSeek()
        } else {
            operation.stage = .pausing
            seekOperation = operation
            player.setPaused(true)
        }
    }

    func finishSeek() {
        guard let operation = seekOperation else { return }
        seekOperation = nil
        setMuted(false)
        if wantsPlaying {
            video?.releaseHold()
            if vlcPlaying, let shownAt = operation.timedPicture {
                pictureTimes.runAfterSeek(at: shownAt, settleTime: 0) { presentKeptPicture(at: shownAt) }
            } else if vlcPlaying {
                pictureTimes.runAfterSeek(at: operation.target, settleTime: VLCVideoCallbacks.settleTime(frameDuration: frameDuration)) {
                    presentKeptPicture(at: operation.target)
                }
            } else {
                pictureTimes.enter(watchesPictures ? .resuming : .running, at: operation.target)
                player?.play()
            }
        } else {
            if vlcPlaying { player?.setPaused(true) }
            pictureTimes.enter(.paused, at: operation.target)
            presentShownPicture(at: operation.target)
        }
        if !operation.silent { sink.seekCompleted(operation.target) }
    }

    /// Runs `action` after `delay` seconds if the seek with `token` is still at `stage`, in the
    /// step it is in now (the fallbacks for libVLC reports that may not come; one scheduled
    /// for a paused seek's landing must not cut short the landing done again after it).
    func whenStill(_ stage: SeekStage, token: Int, after delay: Double, _ action: @escaping @Sendable (VLCSession, SeekOperation) -> Void) {
        let step = seekOperation?.step
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self, let operation = self.seekOperation, operation.token == token, operation.stage == stage,
                  operation.step == step else { return }
            action(self, operation)
        }
    }

    // MARK: - Recovering

    /// libVLC 3 can get stuck after a pause or resume: its video decoder waits for a picture
    /// buffer that its paused video output never frees, and the input stops taking commands
    /// (it recovers by itself only seconds later). A play or pause not confirmed in time
    /// restarts the input at the current position, keeping the wanted state.
    func recoverIfStuck() {
        guard let sent = stateChangeSentAt, phase == .ready, seekOperation == nil, !ended,
              player != nil, monotonicSeconds() - sent > Self.confirmationTimeout else { return }
        stateChangeSentAt = nil
        let position = pictureTimes.shownTime
        PlaybackLog.log(.warning, "vlc", "libVLC did not confirm \(wantsPlaying ? "play" : "pause") in time; restarting the input at \(position) s")
        token += 1
        pictureTimes.enter(.settling, at: position)
        var operation = SeekOperation(target: position, stage: .restarting, token: token)
        operation.silent = true
        restartInput(for: operation)
    }

    /// Stops the input and starts it again (it opens paused, muted) for `operation`, whose
    /// stage is `.restarting`: libVLC's Paused event goes on with it (`restartedPaused`).
    func restartInput(for operation: SeekOperation) {
        guard let player else { return }
        ended = false
        soundTail = nil
        steppedNearEnd = false
        player.stop()
        video?.releaseHold()
        setMuted(true)
        seekOperation = operation
        player.play()
    }
}
#endif

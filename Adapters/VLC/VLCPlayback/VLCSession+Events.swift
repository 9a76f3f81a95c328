#if VLC
import CVLC
import Dispatch
import FoundationEssentials
import PlaybackKit

// MARK: - libVLC events

extension VLCSession {
    func handle(_ event: VLCEvent) {
        guard phase != .finished else { return }
        if PlaybackLog.enabled(.debug), !event.isTimeReport {
            PlaybackLog.log(.debug, "vlc", "event \(event)")
        }
        switch event {
        case .parsed(let status): parsed(status: status)
        case .opening: break
        case .buffering(let percent): buffering(percent)
        case .playing: playing()
        case .paused: paused()
        case .stopped: vlcPlaying = false
        case .endReached: endReached()
        case .encounteredError: encounteredError()
        case .lengthChanged(let milliseconds):
            guard milliseconds > 0, probedDuration == nil else { return }
            duration = Double(milliseconds) / 1000
            if phase == .ready { sink.durationChanged(duration) }
        case .timeChanged(let milliseconds):
            if phase == .starting, milliseconds > 0 { startAdvanced() }
            timeReported(Double(milliseconds) / 1000)
        case .videoOutputs(let count):
            outputKnowsPause = false
            if count > 0, phase == .ready { videoOutputChanged() }
        case .streamAdded(let kind):
            streamKinds.insert(kind)
            streamAppeared()
        }
    }

    private func playing() {
        vlcPlaying = true
        confirmState(playing: true)
        if let operation = seekOperation, operation.stage == .resuming {
            resumedForSeek()
        } else if phase == .ready, seekOperation == nil, !ended, pictureTimes.mode != .running, pictureTimes.mode != .resuming {
            // With pictures, running starts with the first new one.
            pictureTimes.resume(watchingPictures: watchesPictures)
        }
    }

    private func paused() {
        if vlcPlaying, phase == .ready { outputKnowsPause = true }
        vlcPlaying = false
        confirmState(playing: false)
        if phase == .starting {
            switch startStage {
            case .awaitingPause: startPaused()
            case .pausing: finishStart()
            default: break
            }
        } else if let operation = seekOperation {
            switch operation.stage {
            case .restarting: restartedPaused()
            case .pausing: finishSeek()
            case .stepping: stepToTarget()
            default: break
            }
        } else if phase == .ready, pictureTimes.mode == .running || pictureTimes.mode == .resuming {
            pictureTimes.enterPaused()
        }
    }

    /// libVLC reported it is playing (or paused): the wanted state is confirmed when it is the
    /// same; otherwise a change libVLC has still to make is awaited (`recoverIfStuck`), e.g. a
    /// pause it takes just before the play that follows it.
    private func confirmState(playing: Bool) {
        if wantsPlaying == playing {
            stateChangeSentAt = nil
        } else if stateChangeSentAt == nil {
            stateChangeSentAt = monotonicSeconds()
        }
    }

    private func buffering(_ percent: Float) {
        bufferingPercent = percent
        if percent < 100 {
            if var operation = seekOperation {
                operation.sawBufferingStart = true
                operation.bufferingReports += 1
                seekOperation = operation
                if operation.stage == .landing { resumeIfBufferingStalls(reports: operation.bufferingReports) }
            } else if phase == .starting {
                startSawBufferingStart = true
            }
            return
        }
        if phase == .starting {
            startBuffered()
        } else if seekOperation != nil {
            seekBuffered()
        }
    }

    private func endReached() {
        let tail = phase == .ready && seekOperation == nil ? soundStillPlaying() : 0
        vlcPlaying = false
        switch phase {
        case .parsing, .starting:
            let code: PlaybackError.Code = source.isFile ? .unsupportedFormat : .network
            fail(PlaybackError(code: code, message: "open: libVLC reached the end of \(source.url.absoluteString) before any picture or sound was played: not playable media\(detail())"))
        case .ready:
            if var operation = seekOperation, operation.playsToPause, operation.retries < Self.overshootRetries {
                // A paused seek done playing met the end before its picture: again, from the
                // start (`restartedPaused`), a little further ahead.
                PlaybackLog.log(.debug, "vlc", "the paused seek to \(operation.target) s reached the end; seeking again")
                operation.retries += 1
                operation.stage = .restarting
                restartInput(for: operation)
                return
            }
            if let operation = seekOperation, !operation.silent {
                // The end came before the seek settled: it is done (on the last picture), so
                // that no one waits for it.
                PlaybackLog.log(.debug, "vlc", "the seek to \(operation.target) s met the end before it settled")
                sink.seekCompleted(operation.target)
            }
            ended = true
            token += 1
            seekOperation = nil
            setMuted(false)
            pictureTimes.enter(.paused, at: duration)
            pictureTimes.markPresentedWhilePaused()
            guard tail > 0.05 else {
                sink.ended()
                return
            }
            // The sound's last part was handed to the memory output ahead of time (libVLC's
            // audio output takes samples up to two seconds before they are due, and the memory
            // output takes them at once): the end is reported when that part has played.
            PlaybackLog.log(.debug, "vlc", "end reached; the sound plays \(tail) s more")
            reportEnd(after: tail)
        case .finished:
            break
        }
    }

    /// Sound alone still to be heard after libVLC ended its input; the end is reported once it
    /// has played.
    enum SoundTail {
        /// Playing: the end is due at this moment (monotonic seconds).
        case playing(endsAt: Double)
        /// Paused: this many seconds are still to be heard once playing again.
        case held(remaining: Double)
    }

    /// Reports the end once `tail` seconds of sound alone have played, unless a pause (which
    /// holds the rest), a seek or a stop comes first (they change `token`).
    func reportEnd(after tail: TimeInterval) {
        let current = token
        soundTail = .playing(endsAt: monotonicSeconds() + tail)
        queue.asyncAfter(deadline: .now() + tail) { [weak self] in
            guard let self, self.token == current, self.ended else { return }
            self.soundTail = nil
            self.sink.ended()
        }
    }

    /// Seconds of sound still to be heard when libVLC ends the input of media with sound alone
    /// while playing: the rest of the duration from the position carried forward from
    /// libVLC's last time report. libVLC's audio output takes samples at most 2 s ahead; a
    /// larger rest means the time reports were off (in Ogg they fall to 0 once the file is
    /// read), and the end is taken as it comes.
    private func soundStillPlaying() -> TimeInterval {
        guard wantsPlaying, vlcPlaying, tracks.hasAudio, !expectsPicture, duration > 0 else { return 0 }
        let remaining = (duration - pictureTimes.currentTime()) / Double(max(0.01, rate))
        return remaining <= Self.audioOutputLead ? max(0, remaining) : 0
    }

    /// How far ahead of their time libVLC 3's audio output takes samples (its longest
    /// preparation), with a little room.
    static let audioOutputLead: TimeInterval = 2.1

    private func encounteredError() {
        let code: PlaybackError.Code
        if !source.isFile {
            code = .network
        } else if phase == .ready || !streamKinds.isEmpty {
            code = .decode
        } else {
            code = .unsupportedFormat
        }
        let step = phase == .ready ? "play" : "open"
        fail(PlaybackError(code: code, message: "\(step): libVLC could not play \(source.url.absoluteString)\(detail())"))
    }

    // MARK: - Size, pictures, outputs

    func refreshTracks() {
        guard let player else { return }
        let summary = player.trackSummary()
        if summary.hasVideo || summary.hasAudio { tracks = summary }
    }

    /// The display size libVLC knows now (tracks, else its video output's visible size with
    /// the tracks' sample aspect), or nil; also keeps it as the size hint for new outputs.
    func knownNaturalSize() -> VideoSize? {
        refreshTracks()
        var storage = tracks.storageSize
        var display = tracks.displaySize
        if storage == nil, let output = player?.videoOutputSize {
            storage = output
            display = VideoSize.display(storage: output, pixelAspect: tracks.sampleAspect.0, tracks.sampleAspect.1)
        }
        if storage == nil, let probed = probe?.streams.first(where: { $0.kind == .video }) {
            // A local file whose streams libVLC does not list (MPEG program streams): the
            // container's sizes, as libavformat read them (libVLC draws the picture padded).
            storage = probed.pictureSize?.turned(by: probed.rotation)
            display = probed.displaySize
        }
        guard let storage, let display else { return nil }
        video?.setSizeHint(storage: storage, display: display)
        return display
    }

    /// The display size: as libVLC knows it, else the size pictures are drawn at.
    func currentNaturalSize() -> VideoSize {
        if let known = knownNaturalSize() {
            if let video { video.correct(drawn: video.pictureSize, to: known) }
            return known
        }
        return video?.pictureSize ?? .zero
    }

    /// A video output showed its first picture, drawn at `drawn`: the display size may have
    /// changed (announced now, when the picture is on screen, not when libVLC made the output).
    func newPictureSize(_ drawn: VideoSize, attempt: Int) {
        guard phase == .ready || phase == .starting else { return }
        guard let known = knownNaturalSize(), describes(drawn, display: known) else {
            if attempt < 20 {
                queue.asyncAfter(deadline: .now() + 0.05) { [weak self] in self?.newPictureSize(drawn, attempt: attempt + 1) }
            }
            return
        }
        video?.correct(drawn: drawn, to: known)
        guard phase == .ready, known != naturalSize else { return }
        naturalSize = known
        correctStoredPicture(to: known)
        sink.naturalSizeChanged(known)
    }

    /// True when pictures drawn at `drawn` show the stream libVLC describes now: drawn at its
    /// display size, or at its storage size padded by the decoder.
    private func describes(_ drawn: VideoSize, display: VideoSize) -> Bool {
        if drawn == display { return true }
        guard let storage = tracks.storageSize ?? player?.videoOutputSize else { return false }
        return (storage.width...(storage.width + 64)).contains(drawn.width)
            && (storage.height...(storage.height + 64)).contains(drawn.height)
    }

    private func videoOutputChanged() {
        // A new output was made (before its pictures are due): learn its size early so that
        // its first pictures are delivered at the display size.
        if let video, let known = knownNaturalSize() { video.correct(drawn: video.pictureSize, to: known) }
    }

    /// Brings the kept picture to the display size (it may have been drawn padded).
    func correctStoredPicture(to display: VideoSize) {
        frames.correct(to: display)
    }

    /// Stamps the picture on screen with `time` and hands it to the `.frames` handler or the
    /// window (once, while paused); without either nothing is converted.
    func presentShownPicture(at time: TimeInterval) {
        guard frames.hasPicture else { return }
        pictureTimes.markPresentedWhilePaused()
        presentKeptPicture(at: time)
    }

    /// Hands the picture kept from the last display on, stamped `time`: to the window, the
    /// `.yuvFrames` or the `.frames` handler.
    func presentKeptPicture(at time: TimeInterval) {
        guard frames.hasPicture else { return }
        frames.setPresentationTime(time)
        if let windowPresenter {
            let frames = frames
            windowPresenter.show { draw in frames.withKeptPicture(draw) }
            return
        }
        if sink.wantsYUVFrames {
            frames.presentKept(to: sink)
            return
        }
        guard sink.frames != nil, let frame = frames.latest() else { return }
        frame.pixels.withUnsafeBytes { bytes in
            sink.presentFrame(bytes, size: frame.size, bytesPerRow: frame.bytesPerRow, presentationTime: time)
        }
    }

    func setMuted(_ mute: Bool) {
        guard let player else { return }
        muted = mute
        player.setMuted(mute)
        if !mute { player.setVolume(Int((volume * 100).rounded())) }
        readBackVolume()
    }

    // MARK: - Reports

    func startTimer() {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.tickInterval, repeating: Self.tickInterval)
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
        self.timer = timer
    }

    private func tick() {
        guard phase == .ready || phase == .starting else { return }
        reportBuffer()
        readBackVolume()
        recoverIfStuck()
        guard phase == .ready else { return }
        if ended {
            // Sound alone plays on after libVLC's end (`endReached`): the position runs to the
            // duration with it.
            if case .playing(let endsAt)? = soundTail {
                sink.position(duration - max(0, endsAt - monotonicSeconds()) * Double(rate))
            }
            return
        }
        if let operation = seekOperation {
            // The input is restarted on its own (`recoverIfStuck`) while the player plays on:
            // until it plays again, playback is at the picture it restarts from.
            if operation.silent, wantsPlaying { sink.position(operation.target) }
            return
        }
        guard vlcPlaying else { return }
        // libVLC 3 does not buffer again when data stops coming mid-stream: it just stops.
        // No new picture or time report for a while means it waits for data.
        let waiting = pictureTimes.secondsWithoutProgress() > Self.stallAfter
        if waiting != stalled {
            stalled = waiting
            sink.stalled(waiting)
        }
        // libVLC reports its time two to four times a second (its input thread's statistics
        // pace), and the player's clock takes a quarter of a sample's difference per sample,
        // which suits a position timer's pace: with the reports alone, a difference after a
        // hold or a restart took seconds to go (measured: the position 0.25 s behind libVLC's
        // time at picture.size-change, 2 frames ahead of the picture after a restart). So
        // between reports the last one is passed on carried forward to now, and while
        // resuming (libVLC holds the paused picture, up to a second after a rate change, and
        // reports no time) the held picture's time.
        sink.position(pictureTimes.currentTime())
    }

    /// libVLC's time report (TimeChanged): the media time presented now, two to four times a
    /// second. The player gets it as it is while playing.
    func timeReported(_ seconds: TimeInterval) {
        guard phase == .ready, vlcPlaying, seekOperation == nil, !ended else { return }
        // An adaptive stream's reports lag its pictures: the clock they were fed to says more.
        sink.position(pictureTimes.followsWallClock ? pictureTimes.currentTime() : seconds)
    }

    func reportBuffer() {
        guard let player else { return }
        let position = pictureTimes.shownTime
        let playable = source.isFile ? max(duration, position) : position + (stalled ? 0 : 1)
        sink.bufferChanged(EngineBufferStatus(
            playableDuration: playable, bufferingProgress: Int(min(100, max(0, bufferingPercent))),
            bytesTransferred: player.bytesRead))
    }
}

extension VLCEvent {
    /// The frequent time reports, left out of the debug log.
    var isTimeReport: Bool {
        if case .timeChanged = self { return true }
        return false
    }
}
#endif


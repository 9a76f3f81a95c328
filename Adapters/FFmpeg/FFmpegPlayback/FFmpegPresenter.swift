#if FFmpeg
import CFFmpeg
import FoundationEssentials
import PictureConversion
import PlaybackKit
import SubtitleOverlay
import WindowPresentation

// MARK: - The presenter thread

/// What the presenter thread keeps between steps (thread-confined).
final class PresenterState {
    /// Converts the picture on screen for `.frames` output (reused buffer).
    let converter = PictureConverter()
    /// Hands the decoded pictures to a `.yuvFrames` output.
    let yuv = FFmpegYUVOutput()
    /// Draws into an X11 window for `.window` output.
    var window: X11PictureWindow?
    var lastPositionWall = 0.0
    var lastPosition = 0.0
    var droppedFrames = 0
    /// The time of the late picture for which the presenter last waited for the next one.
    var awaitedNextAfter: Double?
}

extension FFmpegSession {
    /// Shows pictures when the master clock reaches them (at once for the first picture and
    /// after a seek, also while paused), drops late ones, reports position samples, prepared,
    /// seek completion, stalls and the end.
    func presentLoop() {
        let state = PresenterState()
        if case .window(let handle) = options.videoOutput, hasVideo {
            state.window = X11PictureWindow(handle: handle)
            if state.window == nil {
                PlaybackLog.log(.warning, "ffmpeg", "window output: cannot open X11 window 0x\(String(handle, radix: 16)); not drawing")
            }
        }
        lock.lock()
        while !aborted {
            presenterStep(state)
        }
        lock.unlock()
        if state.droppedFrames > 0 {
            PlaybackLog.log(.debug, "ffmpeg", "dropped \(state.droppedFrames) late frames")
        }
    }

    /// One decision of the presenter (lock held; may wait or let go of the lock).
    private func presenterStep(_ state: PresenterState) {
        if failureReported {
            lock.wait(presenterWake)
            return
        }
        var dropped = false
        while let slot = videoFrames.peek(), slot.serial != serial {
            videoFrames.pop(into: nil)
            dropped = true
        }
        if dropped { videoFrameSpace.broadcast() }

        // The first picture, and the picture at a seek target, are shown at once, paused or not.
        let seekHere = seekInProgress.flatMap { $0.serial == serial ? $0 : nil }
        if hasVideo, let slot = videoFrames.peek(), !firstPictureShown || seekHere != nil {
            show(slot, state: state)
            firstPictureShown = true
            // show() lets go of the lock to convert: only finish a seek that is still current.
            guard slot.serial == serial else { return }
            // A picture that ended before an accurate seek's target is the last one, held where
            // the sound goes on after the picture ends: the seek lands on the target.
            var landing = slot.time
            if let seekHere, seekHere.accurate, slot.duration > 0, slot.time + slot.duration <= seekHere.target {
                landing = landingWithoutPicture(seekHere.target)
            }
            clock.set(landing)
            if let seekHere, seekInProgress?.serial == seekHere.serial { completeSeek(at: landing, state: state) }
            return
        }
        if let seek = seekHere {
            if !hasVideo, let slot = audioFrames.peek(), slot.serial == audioSerial {
                clock.set(slot.time)
                completeSeek(at: slot.time, state: state)
                return
            }
            // Nothing decodes after the target: every stream ended, or the video did. The sound
            // after the video's end is not waited for: before prepared or paused nothing takes
            // it, and its decoder stops once the queue is full.
            if videoDrained, hasVideo || (readerAtEnd && audioDecoderDoneOrAbsent) {
                if !prepared {
                    // Opened at a position after the last frame: open at the start instead
                    // (prepare then reports no start position and the player seeks).
                    seekInProgress = nil
                    openingFellBack = true
                    seekRequest = SeekRequest(target: 0, accurate: false)
                    readerWake.broadcast()
                    lock.wait(presenterWake)
                    return
                }
                // Nothing decodes after the target: land on the end.
                let reached = landingWithoutPicture(seek.target)
                clock.set(reached)
                completeSeek(at: reached, state: state)
                return
            }
        }
        if !prepared {
            prepareIfReady(state)
            return
        }
        if paused, seekHere == nil, let window = state.window {
            // Paused into a window: draw again when the window was exposed or resized, or the
            // scaling mode changed. The window's events come on its own connection, read here
            // every 50 ms (the lock's condition cannot wait on the X connection too).
            if window.needsRedraw(mode: scalingMode) {
                redrawWindow(state)
            } else {
                lock.wait(presenterWake, until: monotonicSeconds() + 0.05)
            }
            return
        }
        if paused || seekHere != nil {
            lock.wait(presenterWake)
            return
        }
        if readerAtEnd, videoDrained, audioDrained {
            finishIfDone(state)
            return
        }
        if updateStall() {
            lock.wait(presenterWake)
            return
        }
        guard hasVideo else {
            reportPosition(state)
            lock.wait(presenterWake, until: monotonicSeconds() + 0.1)
            return
        }
        guard let slot = videoFrames.peek() else {
            reportPosition(state)
            lock.wait(presenterWake, until: monotonicSeconds() + 0.1)
            return
        }
        let now = clock.now()
        let delay = (slot.time - now) / max(clock.speed, 0.01)
        if delay > 0.001 {
            reportPosition(state)
            lock.wait(presenterWake, until: monotonicSeconds() + min(delay, 0.25))
            return
        }
        if let next = videoFrames.peek(1), next.serial == serial, next.time <= now {
            // Late: the next picture is due as well, so this one is never shown.
            videoFrames.pop(into: nil)
            videoFrameSpace.broadcast()
            state.droppedFrames += 1
            return
        }
        if videoFrames.peek(1) == nil, slot.duration > 0, slot.time + slot.duration <= now,
           videoDecoderFinished != serial, state.awaitedNextAfter != slot.time {
            // Late by a whole picture (the `.frames` handler or the machine was slow), and the
            // next one, due already, is still being decoded: it is waited for briefly, once,
            // so that it is shown instead. Else only one late picture would be left out per
            // picture shown, and a handler slower than the frame rate would fall ever
            // further behind the clock.
            state.awaitedNextAfter = slot.time
            lock.wait(presenterWake, until: monotonicSeconds() + Self.nextPictureWait)
            return
        }
        show(slot, state: state)
        reportPosition(state)
    }

    /// How long a late picture waits for the next one to be decoded (see `presenterStep`).
    static let nextPictureWait = 0.02

    // MARK: - Milestones

    /// Where a seek to `target` lands when no picture starts at or after it: the target, not
    /// past the end.
    private func landingWithoutPicture(_ target: Double) -> Double {
        duration > 0 ? min(target, duration) : target
    }

    private var videoDrained: Bool {
        !hasVideo || (videoDecoderFinished == serial && videoFrames.isEmpty)
    }

    private var audioDecoderDoneOrAbsent: Bool {
        !hasAudio || (audioDecoderFinished == audioSerial && audioFrames.isEmpty)
    }

    private var audioDrained: Bool { audioDecoderDoneOrAbsent && !audioOutputBusy }

    private func completeSeek(at reached: Double, state: PresenterState) {
        seekInProgress = nil
        state.lastPosition = reached
        state.lastPositionWall = monotonicSeconds()
        guard prepared else {
            // The seek of an open at a position: prepare reports where it landed.
            if !openingFellBack { openedAt = max(0, reached) }
            return
        }
        sink.seekCompleted(max(0, reached))
        audioOutputWake.broadcast()
    }

    /// Reports prepared once the first picture is shown and audio is primed; fails with a
    /// decode error when the streams ended without a single frame.
    private func prepareIfReady(_ state: PresenterState) {
        let videoReady = !hasVideo || firstPictureShown || videoDecoderFinished == serial
        // Audio that cannot arrive within the read-ahead bound (a badly interleaved file) does
        // not hold prepare up once the picture is there.
        let audioReady = !hasAudio || !audioFrames.isEmpty || audioDecoderFinished == audioSerial
            || (firstPictureShown && videoPackets.bytes + audioPackets.bytes >= maxBufferBytes)
        guard videoReady, audioReady else {
            lock.wait(presenterWake)
            return
        }
        if !firstPictureShown, audioFrames.isEmpty {
            failureReported = true
            let reason = lastDecodeError < 0 ? " (last error: \(FFmpegErrors.text(lastDecodeError)))" : ""
            let error = PlaybackError(code: .decode, message: "decode: \(location): no frame could be decoded\(reason)")
            lock.unlock()
            fail(error)
            lock.lock()
            return
        }
        if !hasVideo, let slot = audioFrames.peek() { clock.set(slot.time) }
        prepared = true
        clock.setRunning(!paused)
        state.lastPosition = clock.now()
        let size = firstPictureShown ? pictureLock.withLock { naturalSize } : .zero
        sink.prepared(EngineMediaInfo(duration: duration, naturalSize: size,
                                      hasVideo: firstPictureShown, hasAudio: hasAudio,
                                      startPosition: openedAt, frameRate: firstPictureShown ? videoFrameRate : nil))
        audioOutputWake.broadcast()
    }

    /// At the end of input: waits out the last picture's duration, then reports the end once.
    private func finishIfDone(_ state: PresenterState) {
        guard !endedReported else {
            lock.wait(presenterWake)
            return
        }
        if hasVideo {
            let end = shownTime + shownDuration
            let remaining = (end - clock.now()) / max(clock.speed, 0.01)
            if remaining > 0.001 {
                reportPosition(state)
                lock.wait(presenterWake, until: monotonicSeconds() + min(remaining, 0.25))
                return
            }
        }
        endedReported = true
        reportPosition(state, force: true)
        sink.ended()
    }

    /// Enters or leaves the stalled state (playing, queues dry, input not at its end).
    /// Returns true while stalled.
    private func updateStall() -> Bool {
        let dry: Bool
        let refilled: Bool
        if hasVideo {
            dry = videoFrames.isEmpty && videoPackets.isEmpty
            refilled = videoPackets.duration >= 1 || !videoFrames.isEmpty && videoPackets.count > 0
        } else {
            dry = audioFrames.isEmpty && audioPackets.isEmpty && !audioOutputBusy
            refilled = audioPackets.duration >= 1
        }
        let full = videoPackets.bytes + audioPackets.bytes >= maxBufferBytes / 2
        if stalled {
            if readerAtEnd || refilled || full {
                stalled = false
                clock.setRunning(!paused)
                sink.stalled(false)
                return false
            }
            return true
        }
        if dry, !readerAtEnd {
            stalled = true
            clock.setRunning(false)
            sink.stalled(true)
            return true
        }
        return false
    }

    /// Sends a position sample from the master clock, at most ten a second (lock held).
    private func reportPosition(_ state: PresenterState, force: Bool = false) {
        let wall = monotonicSeconds()
        guard force || wall - state.lastPositionWall >= 0.1 else { return }
        state.lastPositionWall = wall
        let position = max(state.lastPosition, clock.now())
        state.lastPosition = position
        sink.position(max(0, position))
    }

    // MARK: - Showing a picture

    /// Makes `slot` the picture on screen: moves it into `displayed` (and updates the
    /// natural size), then converts it only for an output that wants pixels.
    private func show(_ slot: FrameQueue.Slot, state: PresenterState) {
        var newSize: VideoSize?
        pictureLock.lock()
        videoFrames.pop(into: displayed.frame)
        displayedTime = slot.time
        let frame = displayed.frame.pointee
        let aspect = videoAspect.num > 0 ? videoAspect : frame.sample_aspect_ratio
        let size = Self.displaySize(width: frame.width, height: frame.height, aspect: aspect)
        if size != naturalSize {
            naturalSize = size
            newSize = size
        }
        pictureLock.unlock()
        videoFrameSpace.broadcast()
        shownTime = slot.time
        shownDuration = slot.duration
        if let newSize, prepared { sink.naturalSizeChanged(newSize) }
        let framesWanted = sink.frames != nil
        if sink.wantsYUVFrames, !videoHidden {
            // The decoded frame itself, without the session lock: only this thread writes `displayed`.
            lock.unlock()
            state.yuv.present(displayed.frame, displaySize: size, time: max(0, slot.time), sink: sink)
            lock.lock()
            return
        }
        guard framesWanted || state.window != nil, !videoHidden else { return }
        let mode = scalingMode
        // Convert without the session lock: only this thread writes `displayed`.
        lock.unlock()
        let subtitles = self.subtitles
        if framesWanted {
            // Converted straight into the handler's frame, the selected subtitle drawn on it.
            sink.presentFrame(SourcePicture(frame: displayed.frame), naturalSize: size, presentationTime: max(0, slot.time),
                              converter: state.converter) { pixels, width, height, bytesPerRow in
                subtitles.draw(at: slot.time, onto: pixels, width: width, height: height, bytesPerRow: bytesPerRow, order: .rgba)
            }
        }
        state.window?.draw(SourcePicture(frame: displayed.frame), naturalSize: size, mode: mode) { pixels, width, height, bytesPerRow in
            subtitles.draw(at: slot.time, onto: pixels, width: width, height: height, bytesPerRow: bytesPerRow, order: .bgra)
        }
        lock.lock()
    }

    /// Draws the picture on screen into the window again (lock held; let go while drawing).
    private func redrawWindow(_ state: PresenterState) {
        guard let window = state.window, !videoHidden else { return }
        pictureLock.lock()
        let ready = displayed.hasData
        let size = naturalSize, time = displayedTime
        pictureLock.unlock()
        let mode = scalingMode
        guard ready, !size.isEmpty else {
            window.clear(mode: mode)
            return
        }
        lock.unlock()
        let subtitles = self.subtitles
        window.draw(SourcePicture(frame: displayed.frame), naturalSize: size, mode: mode) { pixels, width, height, bytesPerRow in
            subtitles.draw(at: time, onto: pixels, width: width, height: height, bytesPerRow: bytesPerRow, order: .bgra)
        }
        lock.lock()
    }

    // MARK: - Thumbnail

    /// The picture on screen as RGBA at natural size (converted now, on the caller's thread).
    func thumbnail() -> VideoFrame? {
        pictureLock.lock()
        defer { pictureLock.unlock() }
        guard displayed.hasData, !naturalSize.isEmpty else { return nil }
        return thumbnailConverter.rgbaFrame(SourcePicture(frame: displayed.frame), size: naturalSize,
                                            presentationTime: max(0, displayedTime))
    }
}
#endif

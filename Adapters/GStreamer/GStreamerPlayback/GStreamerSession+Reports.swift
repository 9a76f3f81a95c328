#if GStreamer
import FoundationEssentials
import PictureConversion
import PlaybackKit
import WindowPresentation

// Reports a session sends on its own: position and buffer figures, video size and frames,
// and the watch on demuxers while opening.
extension GStreamerSession {
    // MARK: - Demuxers while opening

    /// decodebin drops the errors of an element it is still plugging; a demuxer that fails
    /// at once (a file cut short) can lose its error that way and leave preroll waiting
    /// forever. A demuxer whose streaming task stopped before it exposed any stream is that
    /// case: report it once seen twice in a row. Returns false once there is nothing more to
    /// watch.
    func checkDemuxers() -> Bool {
        guard phase == .opening else {
            demuxerCheck = nil  // this tick returns false: the timer ends
            return false
        }
        guard let stopped = pipeline?.stoppedDemuxer() else {
            stoppedDemuxerSeen = false
            return true
        }
        if stoppedDemuxerSeen {
            fail(PlaybackError(code: .unsupportedFormat, message: "playback: \(stopped): stopped before finding any stream (the file is damaged or cut short)"))
            return true
        }
        stoppedDemuxerSeen = true
        return true
    }

    // MARK: - Position and buffer reports

    func startPositionTimer() {
        guard positionTimer == nil else { return }
        positionTimer = loop.addTimer(milliseconds: Self.positionInterval) { [weak self] in
            self?.positionTick()
            return true
        }
    }

    func stopPositionTimer() {
        positionTimer?.cancel()
        positionTimer = nil
    }

    func stopDemuxerCheck() {
        demuxerCheck?.cancel()
        demuxerCheck = nil
    }

    func positionTick() {
        if starvedPause {
            resumeIfRefilled()
            return
        }
        guard phase == .ready, wantsPlaying, seekInFlight == nil, !atEnd, !buffering else {
            starvation.reset()
            return
        }
        if let position = pipeline?.position() {
            sink.position(position)
            if !source.isFile, starvation.observe(position, at: monotonicSeconds(), speed: rate) { pauseForData() }
        }
        ticks += 1
        if ticks % 8 == 0 {
            refreshBufferStatus()
            if duration <= 0 { durationMayHaveChanged() }
        }
    }

    /// Re-reads the duration: on DURATION_CHANGED, and every quarter second while it is
    /// unknown (some demuxers can tell it only once they have read further).
    func durationMayHaveChanged() {
        guard phase == .ready, !durationFromProbe, let value = pipeline?.duration(), value > 0, value != duration else { return }
        PlaybackLog.log(.debug, "gstreamer", "duration now \(value) s")
        duration = value
        sink.durationChanged(value)
    }

    /// Playback crawls for want of data (see `StarvationWatch`): hold it paused, as
    /// buffering does, until `resumeIfRefilled` finds enough came in.
    func pauseForData() {
        guard let pipeline else { return }
        PlaybackLog.log(.debug, "gstreamer", "playback crawls: pausing until more is loaded")
        starvedPause = true
        starvedAt = (pipeline.bufferFigures().bytesRead, monotonicSeconds())
        buffering = true
        sink.stalled(true)
        pipeline.setState(.paused)
    }

    /// Ends the pause of `pauseForData` once `StarvationWatch.refill` seconds of media came
    /// in since (by bytes, at the source's average bitrate; by time when its size is not
    /// known), or all the rest.
    func resumeIfRefilled() {
        guard phase == .ready, let pipeline else { return }
        let figures = pipeline.bufferFigures()
        let arrived = figures.bytesRead - starvedAt.bytes
        let refilled: Bool
        if let size = figures.sourceSize, duration > 0 {
            refilled = figures.bytesRead >= size || Double(arrived) >= StarvationWatch.refill * Double(size) / duration
        } else {
            refilled = monotonicSeconds() - starvedAt.time >= StarvationWatch.refill * 2
        }
        guard refilled else { return }
        PlaybackLog.log(.debug, "gstreamer", "\(arrived) bytes came in: playing on")
        starvedPause = false
        buffering = false
        starvation.reset()
        sink.stalled(false)
        applyWantedState()
    }

    /// Bytes read (counted on the source's pad), buffered-up-to time and progress from a
    /// buffering query on the pipeline, with the source's byte position and size to fall
    /// back on when nothing answers it.
    func refreshBufferStatus(progress reported: Int? = nil) {
        guard let pipeline else { return }
        let figures = pipeline.bufferFigures()
        var progress = reported ?? 0
        var playable = 0.0
        if figures.answered {
            if reported == nil { progress = figures.percent }
            switch figures.reach {
            case .time(let seconds)?: playable = seconds
            case .share(let share)?: playable = duration * share
            case .bytes(let bytes)?: if let size = figures.sourceSize { playable = duration * Double(bytes) / Double(size) }
            case nil: break
            }
        } else if let size = figures.sourceSize {
            // Nothing buffers (a local file read on demand): as far as the bytes read reach.
            progress = reported ?? Int(100 * figures.sourceOffset / size)
            playable = duration * Double(figures.sourceOffset) / Double(size)
        }
        playable = max(playable, pipeline.position() ?? 0)
        if duration > 0 { playable = min(playable, duration) }
        sink.bufferChanged(EngineBufferStatus(playableDuration: playable, bufferingProgress: min(100, max(0, progress)),
                                              bytesTransferred: figures.bytesRead))
    }

    // MARK: - Video

    func videoCapsChanged() {
        guard phase == .ready, let pipeline else { return }
        pipeline.watchVideoStream()
        guard let size = pipeline.currentNaturalSize(), size != naturalSize else { return }
        naturalSize = size
        sizeSubtitleFont()
        sink.naturalSizeChanged(size)
    }

    /// Hands an appsink picture to the frame output (streaming thread). The prerolled picture
    /// comes again as the first sample once playing: it is presented once.
    func present(_ sample: PipelineSample, preroll: Bool) {
        if let windowPresenter {
            // Kept (a reference) to draw again on expose, resize or a new mode.
            let kept = sample.retained(), converter = yuvConverter
            windowPresenter.show { draw in
                kept.withYUVFrame(converter: converter) { frame in draw(SourcePicture(frame), frame.displaySize) }
            }
            return
        }
        guard sink.frames != nil || sink.wantsYUVFrames, sink.isCurrent else { return }
        let time = sample.presentationTime ?? 0
        let repeated = frameState.withLock { state -> Bool in
            defer {
                state.lastTime = time
                state.lastWasPreroll = preroll
            }
            return !preroll && state.lastWasPreroll && state.lastTime == time
        }
        guard !repeated else { return }
        if sink.wantsYUVFrames {
            sample.withYUVFrame(converter: yuvConverter) { sink.presentYUVFrame($0) }
            return
        }
        // Converted once, from the decoder's own format, into the handler's frame.
        sample.withSourcePicture { picture, display in
            sink.presentFrame(picture, naturalSize: display, presentationTime: time, converter: frameConverter)
        }
    }
}

/// What the frame output remembers between pictures (streaming threads).
struct FrameState {
    var lastTime: TimeInterval = -1
    var lastWasPreroll = false
}

#endif

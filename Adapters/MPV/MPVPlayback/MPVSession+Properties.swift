#if MPV
import CMPV
import Dispatch
import FoundationEssentials
import MediaProbe
import PlaybackKit

// MARK: - Properties

/// What the event thread does with the properties it observes: the position, pause, the end,
/// the duration, the picture's size and the buffer figures.
extension MPVSession {
    /// Handles a change of an observed property (event thread).
    func propertyChanged(_ observed: Observed, _ property: mpv_event_property) {
        let data = property.data
        switch observed {
        case .timePos:
            guard property.format == MPV_FORMAT_DOUBLE, let data else { return }
            let time = data.load(as: Double.self)
            frameTimes.record(time)
            // Once the last audio is handed to the output mpv jumps time-pos to the end, while
            // the output still plays its buffer: that is no position of what is heard.
            let endJump = hasAudio && duration > 0 && time >= duration - 0.001
            if prepared, !paused, !eofReached, !endJump, shared.get().seek == nil {
                lastPlayedPosition = time
                lastPlayedAt = monotonicSeconds()
                sink.position(mediaTime(time))
            }
        case .pause:
            guard property.format == MPV_FORMAT_FLAG, let data else { return }
            paused = data.load(as: Int32.self) != 0
        case .eofReached:
            let reached = property.format == MPV_FORMAT_FLAG && data.map { $0.load(as: Int32.self) != 0 } == true
            // A seek to a time before the end that ran into it (a demuxer's landing with no
            // keyframe after it) is sent again from further back: the end counts once that
            // seek is done, if mpv is still there (`checkWaits`).
            let seekingBeforeEnd = shared.get().seek.map { $0.target < duration - 0.001 } ?? false
            if reached, !eofReached, prepared {
                if seekingBeforeEnd { endAfterSeek = true } else { reachedEnd() }
            }
            if !reached {
                endDue = nil
                endAfterSeek = false
            }
            eofReached = reached
        case .duration:
            guard property.format == MPV_FORMAT_DOUBLE, let data else { return }
            let seconds = data.load(as: Double.self)
            if prepared, abs(seconds - duration) > 0.001 { sink.durationChanged(seconds) }
            duration = seconds
        case .displayWidth, .displayHeight:
            updateNaturalSize()
        case .cacheState:
            guard property.format == MPV_FORMAT_NODE, let data else { return }
            let state = MPVValue(data.load(as: mpv_node.self))
            if let end = state["cache-end"]?.double { buffer.playableDuration = end }
            reportBuffer()
        case .bufferingState:
            guard property.format == MPV_FORMAT_INT64, let data else { return }
            buffer.bufferingProgress = min(100, max(0, Int(data.load(as: Int64.self))))
            reportBuffer()
        case .pausedForCache:
            guard property.format == MPV_FORMAT_FLAG, let data else { return }
            let stalled = data.load(as: Int32.self) != 0
            // Before the report: a thumbnail asked for once the stall is known waits only
            // briefly (`stillWait`) before the last screenshot stands in, as the picture holds.
            let changed = shared.withLock { state -> Bool in
                defer { state.pausedForCache = stalled }
                return state.pausedForCache != stalled
            }
            // A screenshot of the picture the stall holds is begun (the one before it stands in
            // meanwhile: a stalled source can keep the core from answering for long).
            if changed { refreshScreenshots(invalidating: false) }
            if prepared { sink.stalled(stalled) }
        case .trackList:
            if prepared { reportTracks() }
        case .metadata:
            if prepared { sink.metadataChanged(MPVTracks.tags(handle)) }
        case .chapterList:
            if prepared { sink.chaptersChanged(MPVTracks.chapters(handle)) }
        case .subText:
            // Only when the cues could not be read ahead (remote media): mpv changes sub-text
            // when it shows a frame, up to a frame after the cue's time.
            if prepared, shared.get().cuesReadFor == nil, let cue = MPVTracks.currentCue(handle) { sink.subtitleCue(cue) }
        case .streamPosition:
            guard property.format == MPV_FORMAT_INT64, let data else { return }
            // Bytes read so far: the furthest the stream has been read to.
            buffer.bytesTransferred = max(buffer.bytesTransferred, data.load(as: Int64.self))
            reportBuffer()
        }
    }

    /// Reports mpv's track list, and notes whether a subtitle is shown.
    func reportTracks() {
        let tracks = MPVTracks.engineTracks(handle)
        shared.withLock { $0.subtitleSelected = tracks.contains { $0.kind == .subtitle && $0.isSelected } }
        sink.tracksChanged(tracks)
        readCues()
    }

    /// Reads every cue of the selected subtitle track from its file ahead of time (local media
    /// and files), on a utility queue, so that the player's cue clock announces each at its
    /// time; reports them unless another track was selected meanwhile.
    func readCues() {
        let cueSource = MPVTracks.cueSource(handle, media: source)
        let current = shared.get().cuesReadFor
        guard cueSource?.id != current else { return }
        shared.withLock { $0.cuesReadFor = cueSource?.id }
        guard let cueSource else { return }
        let sink = sink, shared = shared
        DispatchQueue.global(qos: .utility).async {
            guard let cues = try? SubtitleCueReader.cues(in: cueSource.url, subtitleIndex: cueSource.subtitleIndex) else {
                // Unreadable here (a format only mpv reads): cues come from sub-text instead.
                shared.withLock { if $0.cuesReadFor == cueSource.id { $0.cuesReadFor = nil } }
                return
            }
            guard shared.get().cuesReadFor == cueSource.id else { return }
            sink.subtitleCuesReset()
            for cue in cues { sink.subtitleCue(cue) }
        }
    }

    func reportBuffer() {
        var status = buffer
        status.playableDuration = mediaTime(status.playableDuration)
        sink.bufferChanged(status)
    }

    /// The display size of pictures stored at `stored` and shown at `display` (pixel aspect
    /// applied, height kept) once turned upright by `rotation`, as every engine gives it
    /// (`VideoSize.display(storage:pixelAspect:_:turnedBy:)`, the pixel aspect being the ratio
    /// of the two widths).
    static func uprightDisplaySize(display: VideoSize, stored: VideoSize?, rotation: Int) -> VideoSize {
        guard (rotation / 90) % 2 == 1 else { return display }
        guard let stored, !stored.isEmpty, display.width > 0 else { return display.turned(by: rotation) }
        return VideoSize.display(storage: stored, pixelAspect: display.width, stored.width, turnedBy: rotation)
    }

    /// Reads the display size (pixel aspect applied) and passes it on when it changed.
    func updateNaturalSize() {
        // The decoder's output parameters are known before the video output is configured
        // (dwidth/dheight only after), and the renderer needs the size for the first frame.
        let decoded = handle.getInt("video-params/dw").flatMap { width in
            handle.getInt("video-params/dh").map { VideoSize(width: width, height: $0) }
        }
        let stored = handle.getInt("video-params/w").flatMap { width in
            handle.getInt("video-params/h").map { VideoSize(width: width, height: $0) }
        }
        // The decoder's parameters are the stored picture's, before it is turned upright: by
        // the adapter's filter (`uprightTurn`), or else by mpv itself (`rotate`).
        let rotation = decoded == nil ? 0 : uprightTurn ?? handle.getInt("video-params/rotate") ?? 0
        // mpv's own display size stretches the height of a picture whose pixels are narrower
        // than tall (720x480 at 8:9 is 720x540 to mpv); the contract, as the other engines,
        // keeps the height and shrinks the width (640x480): the size comes from the stored
        // size and the pixel aspect when mpv gives it.
        let pixelAspect = decoded == nil ? nil : handle.getDouble("video-params/par")
        let size: VideoSize
        if let stored, !stored.isEmpty, let pixelAspect, pixelAspect > 0 {
            size = VideoSize.display(storage: stored, pixelAspect: pixelAspect, turnedBy: rotation)
        } else {
            size = decoded.map { Self.uprightDisplaySize(display: $0, stored: stored, rotation: rotation) }
                ?? VideoSize(width: handle.getInt("dwidth") ?? 0, height: handle.getInt("dheight") ?? 0)
        }
        guard !size.isEmpty else { return }
        guard size != naturalSize else { return }
        naturalSize = size
        shared.withLock { $0.naturalSize = size }
        if let yuvOutput {
            // YUV pictures are drawn at the stored size (mpv stretches them, keepaspect=no).
            yuvOutput.displaySize.set(size)
            renderer?.setTargetSize(stored?.turned(by: rotation) ?? size)
        } else {
            renderer?.setTargetSize(size)
        }
        // A screenshot of the old size no longer stands in for the picture shown.
        screenshots.invalidate()
        if prepared { sink.naturalSizeChanged(size) }
    }
}
#endif

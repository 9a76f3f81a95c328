#if GStreamer
import CGStreamer
import FoundationEssentials
import PlaybackKit

// Reports a session sends on its own: position and buffer figures, video size and frames,
// source and element set-up, and the watch on demuxers while opening.
extension GStreamerSession {
    // MARK: - Demuxers while opening

    /// decodebin drops the errors of an element it is still plugging; a demuxer that fails
    /// at once (a file cut short) can lose its error that way and leave preroll waiting
    /// forever. A demuxer whose streaming task stopped before it exposed any stream is that
    /// case: report it. Returns false once there is nothing more to watch.
    func checkDemuxers() -> Bool {
        guard phase == .opening else {
            demuxerCheck.map(g_source_unref)
            demuxerCheck = nil
            return false
        }
        let stopped = demuxers.withLock { list -> String? in
            for held in list {
                guard let element = held.element, element.pointee.numsrcpads == 0,
                      let pad = gst_element_get_static_pad(element, "sink") else { continue }
                defer { gst_object_unref(pad) }
                if gst_pad_get_task_state(pad) == GST_TASK_PAUSED {
                    return GStreamerErrors.objectName(pk_gst_object(element))
                }
            }
            return nil
        }
        guard let stopped else {
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
        positionTimer.map(destroySource)
        positionTimer = nil
    }

    func stopDemuxerCheck() {
        demuxerCheck.map(destroySource)
        demuxerCheck = nil
    }

    func destroySource(_ source: UnsafeMutablePointer<GSource>) {
        g_source_destroy(source)
        g_source_unref(source)
    }

    func positionTick() {
        guard phase == .ready, wantsPlaying, seekInFlight == nil, !atEnd, !buffering else { return }
        if let position = queryPosition() { sink.position(position) }
        ticks += 1
        if ticks % 8 == 0 {
            refreshBufferStatus()
            if duration <= 0 { durationMayHaveChanged() }
        }
    }

    /// Re-reads the duration: on DURATION_CHANGED, and every quarter second while it is
    /// unknown (some demuxers can tell it only once they have read further).
    func durationMayHaveChanged() {
        guard phase == .ready, let value = queryDuration(), value > 0, value != duration else { return }
        PlaybackLog.log(.debug, "gstreamer", "duration now \(value) s")
        duration = value
        sink.durationChanged(value)
    }

    func queryPosition() -> TimeInterval? {
        guard let element = pipeline?.element else { return nil }
        var value: gint64 = -1
        guard gst_element_query_position(element, GST_FORMAT_TIME, &value) != 0, value >= 0 else { return nil }
        return GStreamerFrames.seconds(GstClockTime(value))
    }

    func queryDuration() -> TimeInterval? {
        guard let element = pipeline?.element else { return nil }
        var value: gint64 = -1
        guard gst_element_query_duration(element, GST_FORMAT_TIME, &value) != 0, value >= 0 else { return nil }
        return GStreamerFrames.seconds(GstClockTime(value))
    }

    /// Bytes read (counted on the source's pad), buffered-up-to time and progress from a
    /// buffering query on the pipeline, with the source's byte position and size to fall
    /// back on when nothing answers it.
    func refreshBufferStatus(progress reported: Int? = nil) {
        guard let element = pipeline?.element else { return }
        let bytesRead = pipeline?.bytesRead ?? 0
        var totalBytes: Int64 = -1
        var readOffset: Int64 = 0
        sourceElement.withLock { held in
            guard let source = held.element else { return }
            var value: gint64 = 0
            if gst_element_query_position(source, GST_FORMAT_BYTES, &value) != 0, value > 0 { readOffset = Int64(value) }
            if gst_element_query_duration(source, GST_FORMAT_BYTES, &value) != 0, value > 0 { totalBytes = Int64(value) }
        }
        var progress = reported ?? 0
        var playable = 0.0
        let query = gst_query_new_buffering(GST_FORMAT_TIME)!
        if gst_element_query(element, query) != 0 {
            var busy: gboolean = 0
            var percent: gint = 0
            gst_query_parse_buffering_percent(query, &busy, &percent)
            if reported == nil { progress = Int(percent) }
            var format = GST_FORMAT_UNDEFINED
            var stop: gint64 = -1
            gst_query_parse_buffering_range(query, &format, nil, &stop, nil)
            if stop > 0 {
                switch format {
                case GST_FORMAT_TIME: playable = GStreamerFrames.seconds(GstClockTime(stop))
                case GST_FORMAT_PERCENT: playable = duration * Double(stop) / Double(pk_gst_format_percent_max())
                case GST_FORMAT_BYTES where totalBytes > 0: playable = duration * Double(stop) / Double(totalBytes)
                default: break
                }
            }
        } else if totalBytes > 0 {
            // Nothing buffers (a local file read on demand): as far as the bytes read reach.
            progress = reported ?? Int(100 * readOffset / totalBytes)
            playable = duration * Double(readOffset) / Double(totalBytes)
        }
        gst_query_unref(query)
        playable = max(playable, queryPosition() ?? 0)
        if duration > 0 { playable = min(playable, duration) }
        sink.bufferChanged(EngineBufferStatus(playableDuration: playable, bufferingProgress: min(100, max(0, progress)),
                                              bytesTransferred: bytesRead))
    }

    // MARK: - Video

    func currentNaturalSize() -> VideoSize? {
        guard let caps = pipeline?.currentVideoCaps() else { return nil }
        defer { gst_caps_unref(caps) }
        return GStreamerFrames.naturalSize(of: caps)
    }

    func videoCapsChanged() {
        guard phase == .ready else { return }
        pipeline?.watchVideoStream()
        guard let size = currentNaturalSize(), size != naturalSize else { return }
        naturalSize = size
        sharedNaturalSize.set(size)
        sink.naturalSizeChanged(size)
    }

    /// Hands an appsink picture to the frame output (streaming thread). The prerolled picture
    /// comes again as the first sample once playing: it is presented once.
    func present(_ sample: OpaquePointer, preroll: Bool) {
        guard sink.frames != nil, sink.isCurrent else { return }
        let time = GStreamerFrames.presentationTime(of: sample) ?? 0
        let repeated = frameState.withLock { state -> Bool in
            defer {
                state.lastTime = time
                state.lastWasPreroll = preroll
            }
            return !preroll && state.lastWasPreroll && state.lastTime == time
        }
        guard !repeated else { return }
        GStreamerFrames.withRGBAPixels(of: sample) { pixels, size, stride in
            sink.presentFrame(pixels, size: size, bytesPerRow: stride, presentationTime: time)
        }
    }

    // MARK: - Source and element set-up

    /// HTTP headers go to the source (souphttpsrc's extra-headers); the source is kept for
    /// byte counts.
    func configureSource(_ element: UnsafeMutablePointer<GstElement>) {
        sourceElement.withLock { held in
            held.release()
            held.element = pk_gst_element(gst_object_ref(element))
        }
        guard !options.httpHeaders.isEmpty, pk_gst_has_property(element, "extra-headers") != 0 else { return }
        let headers = gst_structure_new_empty("extra-headers")!
        for (name, value) in options.httpHeaders {
            // souphttpsrc sends its own User-Agent: replace it rather than send two.
            if name.lowercased() == "user-agent", pk_gst_has_property(element, "user-agent") != 0 {
                pk_gst_set_string(element, "user-agent", value)
            } else {
                pk_gst_structure_set_string(headers, name, value)
            }
        }
        pk_gst_set_structure(element, "extra-headers", headers)
        gst_structure_free(headers)
    }

    /// Remembers demuxers (for `checkDemuxers`) and caps the queues playbin makes on the
    /// read-ahead bound. Called on the thread that plugs the element.
    func configureElement(_ element: UnsafeMutablePointer<GstElement>) {
        if let klass = pk_gst_element_klass(element), strstr(klass, "Demux") != nil {
            demuxers.withLock { $0.append(ElementRef(element: pk_gst_element(gst_object_ref(element)))) }
        }
        guard let cap = options.maxBufferBytes, cap > 0,
              let factory = pk_gst_element_factory_name(element).map({ String(cString: $0) }) else { return }
        switch factory {
        case "decodebin", "queue2", "multiqueue":
            if pk_gst_has_property(element, "max-size-bytes") != 0 {
                pk_gst_set_uint(element, "max-size-bytes", guint(clamping: cap))
                PlaybackLog.log(.debug, "gstreamer", "\(factory): max-size-bytes \(cap)")
            }
        default:
            break
        }
    }
}

/// What the frame output remembers between pictures (streaming threads).
struct FrameState {
    var lastTime: TimeInterval = -1
    var lastWasPreroll = false
}

/// A GstElement reference owned by whoever holds this value.
struct ElementRef: @unchecked Sendable {
    // @unchecked: only ever used inside a Locked, which serialises every access.
    var element: UnsafeMutablePointer<GstElement>?
    mutating func release() {
        if let element { gst_object_unref(element) }
        element = nil
    }
}
#endif

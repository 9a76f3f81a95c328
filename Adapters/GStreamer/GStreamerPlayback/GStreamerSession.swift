#if GStreamer
import CGStreamer
import Foundation
import PlaybackKit

/// One opened source: a playbin driven on its own GLib loop thread. Everything the engine asks
/// for is posted to that loop; bus messages, timers and the state machine run there alone.
/// `close()` ends the loop, after which the pipeline is torn down on the loop thread.
final class GStreamerSession: @unchecked Sendable {
    // @unchecked: the state under "Loop-thread state" is touched only on the loop thread (work
    // posted through `loop`, the bus watch and timers); other threads reach the pipeline only
    // through `sharedPipeline` (Locked), and `frameState` and `sourceElement` are Locked
    // because streaming threads use them.

    private let loop: GLibLoopThread
    private let source: MediaSource
    private let options: PlaybackOptions
    private let sink: EngineSink
    private let frameState = Locked(FrameState())
    private let sourceElement = Locked(ElementRef())
    /// Demuxers playbin plugged, watched while opening (see `checkDemuxers`).
    private let demuxers = Locked<[ElementRef]>([])
    /// The pipeline for other threads (thumbnails); the loop thread uses `pipeline`.
    private let sharedPipeline = Locked<GStreamerPipeline?>(nil)

    // MARK: - Loop-thread state

    private enum Phase { case opening, ready, failed }
    private enum SeekKind { case user, rate }
    private struct SeekRequest { var seconds: TimeInterval; var accurate: Bool }

    private var pipeline: GStreamerPipeline?
    private var phase = Phase.opening
    private var wantsPlaying = false
    private var isLive = false
    private var buffering = false
    private var atEnd = false
    private var rate = 1.0
    private var duration: TimeInterval = 0
    private var naturalSize = VideoSize.zero
    private var seekInFlight: SeekKind?
    private var pendingSeek: SeekRequest?
    private var pendingRate = false
    private var owedSeekCompletions = 0
    private var positionTimer: UnsafeMutablePointer<GSource>?
    private var failureCheck: UnsafeMutablePointer<GSource>?
    private var demuxerCheck: UnsafeMutablePointer<GSource>?
    private var stoppedDemuxerSeen = false
    private var ticks = 0

    /// Position samples per second while playing.
    private static let positionInterval: UInt32 = 33

    init(source: MediaSource, options: PlaybackOptions, sink: EngineSink) {
        self.source = source
        self.options = options
        self.sink = sink
        self.loop = GLibLoopThread(name: "gstreamer.loop")
    }

    // MARK: - Called by the engine (any thread): post and return

    /// Starts the loop thread and opens the source there.
    func start() {
        loop.start(finish: { [self] in teardown() })
        loop.post { [self] in open() }
    }

    func play() { loop.post { [self] in setWantsPlaying(true) } }
    func pause() {
        // The picture stops now rather than when the loop gets to it, since the player reports
        // "paused" as soon as this returns (gst_element_set_state is thread-safe). Going to
        // PAUSED the sinks preroll on the buffer they were waiting to show; wait briefly for
        // that so the picture kept is settled (it is queued already: this takes microseconds).
        sharedPipeline.get()?.withPlaybin { playbin in
            if gst_element_set_state(playbin, GST_STATE_PAUSED) == GST_STATE_CHANGE_ASYNC {
                gst_element_get_state(playbin, nil, nil, Self.pauseSettleTimeout)
            }
        }
        loop.post { [self] in setWantsPlaying(false) }
    }

    /// How long `pause()` waits for the sinks to settle at most.
    private static let pauseSettleTimeout: GstClockTime = 100_000_000
    func seek(to seconds: TimeInterval, accurate: Bool) {
        loop.post { [self] in requestSeek(SeekRequest(seconds: seconds, accurate: accurate)) }
    }
    func setRate(_ rate: Float) { loop.post { [self] in requestRate(Double(rate)) } }
    func setVolume(_ volume: Float) {
        loop.post { [self] in
            if let element = pipeline?.element { pk_gst_set_double(element, "volume", Double(volume)) }
        }
    }
    func setScalingMode(_ mode: ScalingMode) {
        guard case .window = options.videoOutput else { return }
        loop.post { [self] in
            guard let element = pipeline?.element else { return }
            // Overlay sinks can letterbox or stretch; crop and 1:1 fall back to letterboxing.
            pk_gst_set_bool(element, "force-aspect-ratio", mode == .fill ? 0 : 1)
            pk_gst_overlay_expose(element)
        }
    }

    /// Ends the loop; the pipeline is then set to NULL and released on the loop thread.
    func close() { loop.stop() }

    /// The picture shown now at natural size, from the video sink's last sample. Any thread.
    func thumbnail() -> VideoFrame? {
        sharedPipeline.get()?.withPlaybin { playbin -> VideoFrame? in
            guard let sample = pk_gst_get_sample(playbin, "sample") else { return nil }
            defer { gst_sample_unref(sample) }
            return GStreamerFrames.thumbnail(of: sample)
        } ?? nil
    }

    // MARK: - Opening

    private func open() {
        guard let context = loop.mainContext else { return }
        let callbacks = PipelineCallbacks(
            message: { [weak self] message in self?.handle(message) },
            videoCapsChanged: { [weak self] in
                guard let self else { return }
                loop.post { [self] in videoCapsChanged() }
            },
            sample: { [weak self] sample, preroll in self?.present(sample, preroll: preroll) },
            sourceSetup: { [weak self] element in self?.configureSource(element) },
            elementSetup: { [weak self] element in self?.configureElement(element) })
        do {
            pipeline = try GStreamerPipeline(uri: source.url.absoluteString, options: options,
                                             context: context, callbacks: callbacks)
        } catch let error as PlaybackError {
            fail(error)
            return
        } catch {
            fail(PlaybackError(code: .engine, message: "open: \(error)"))
            return
        }
        sharedPipeline.set(pipeline)
        guard let element = pipeline?.element else { return }
        switch gst_element_set_state(element, GST_STATE_PAUSED) {
        case GST_STATE_CHANGE_FAILURE:
            // The error message is on the bus; should none come, say so after a moment.
            failureCheck = loop.addTimer(milliseconds: 2000) { [weak self] in
                self?.fail(PlaybackError(code: .engine, message: "open: the pipeline refused to start"))
                return false
            }
        case GST_STATE_CHANGE_NO_PREROLL:
            // A live source does not preroll in PAUSED: play until the sinks have data.
            isLive = true
            gst_element_set_state(element, GST_STATE_PLAYING)
        default:
            break  // ASYNC: ASYNC_DONE follows once the first picture and sound are decoded.
        }
        demuxerCheck = loop.addTimer(milliseconds: 200) { [weak self] in
            self?.checkDemuxers() ?? false
        }
    }

    /// decodebin drops the errors of an element it is still plugging; a demuxer that fails
    /// at once (a file cut short) can lose its error that way and leave preroll waiting
    /// forever. A demuxer whose streaming task stopped before it exposed any stream is that
    /// case: report it. Returns false once there is nothing more to watch.
    private func checkDemuxers() -> Bool {
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

    /// Prerolled: paused on the first frame. Reads duration and size, reports prepared.
    private func finishOpening() {
        guard let element = pipeline?.element else { return }
        phase = .ready
        stopDemuxerCheck()
        if isLive, !wantsPlaying { gst_element_set_state(element, GST_STATE_PAUSED) }
        duration = queryDuration() ?? 0
        naturalSize = currentNaturalSize() ?? .zero
        let hasVideo = pk_gst_get_int(element, "n-video") > 0
        let hasAudio = pk_gst_get_int(element, "n-audio") > 0
        PlaybackLog.log(.info, "gstreamer", "prerolled \(source.url.lastPathComponent): \(duration) s, \(naturalSize), video \(hasVideo), audio \(hasAudio)")
        sink.prepared(EngineMediaInfo(duration: duration, naturalSize: naturalSize, hasVideo: hasVideo, hasAudio: hasAudio))
        refreshBufferStatus()
        if !startPendingWork() { applyWantedState() }
    }

    // MARK: - Play, pause, rate

    private func setWantsPlaying(_ playing: Bool) {
        wantsPlaying = playing
        guard phase == .ready else { return }
        if !playing, let element = pipeline?.element {
            gst_element_set_state(element, GST_STATE_PAUSED)
            stopPositionTimer()
            return
        }
        applyWantedState()
    }

    /// Brings the pipeline to the wanted state unless buffering holds it paused.
    private func applyWantedState() {
        guard phase == .ready, let element = pipeline?.element else { return }
        if wantsPlaying, !buffering {
            gst_element_set_state(element, GST_STATE_PLAYING)
            startPositionTimer()
        } else {
            gst_element_set_state(element, GST_STATE_PAUSED)
            stopPositionTimer()
        }
    }

    private func requestRate(_ newRate: Double) {
        guard newRate > 0, newRate != rate else { return }
        rate = newRate
        guard phase == .ready, seekInFlight == nil, pendingSeek == nil else {
            pendingRate = true
            return
        }
        startRateSeek()
    }

    /// A flushing seek to where playback is, at the new rate.
    private func startRateSeek() {
        guard let element = pipeline?.element else { return }
        pendingRate = false
        let position = queryPosition() ?? 0
        let flags = GstSeekFlags(rawValue: GST_SEEK_FLAG_FLUSH.rawValue | GST_SEEK_FLAG_ACCURATE.rawValue)
        if sendSeek(element, to: position, flags: flags) {
            seekInFlight = .rate
        } else {
            PlaybackLog.log(.warning, "gstreamer", "rate \(rate) refused")
        }
    }

    // MARK: - Seeking

    private func requestSeek(_ request: SeekRequest) {
        guard phase != .failed else { return }
        owedSeekCompletions += 1
        atEnd = false
        if phase == .opening || seekInFlight != nil {
            pendingSeek = request  // the last one wins; done after the next ASYNC_DONE
            return
        }
        startSeek(request)
    }

    private func startSeek(_ request: SeekRequest) {
        guard let element = pipeline?.element else { return }
        pendingSeek = nil
        let mode = request.accurate
            ? GST_SEEK_FLAG_ACCURATE.rawValue
            : GST_SEEK_FLAG_KEY_UNIT.rawValue | GST_SEEK_FLAG_SNAP_BEFORE.rawValue
        let flags = GstSeekFlags(rawValue: GST_SEEK_FLAG_FLUSH.rawValue | mode)
        if sendSeek(element, to: request.seconds, flags: flags) {
            seekInFlight = .user
        } else {
            PlaybackLog.log(.warning, "gstreamer", "seek to \(request.seconds) refused")
            completeSeeks(at: queryPosition() ?? request.seconds)
        }
    }

    /// Sends a flushing seek from `seconds` on at the current rate; false if refused.
    private func sendSeek(_ element: UnsafeMutablePointer<GstElement>, to seconds: TimeInterval, flags: GstSeekFlags) -> Bool {
        PlaybackLog.log(.debug, "gstreamer", "seek to \(seconds) at rate \(rate)")
        return gst_element_seek(element, rate, GST_FORMAT_TIME, flags, GST_SEEK_TYPE_SET,
                                GStreamerFrames.nanoseconds(seconds), GST_SEEK_TYPE_NONE, -1) != 0
    }

    /// Starts a stored seek or rate change; false when there was none.
    private func startPendingWork() -> Bool {
        if let request = pendingSeek {
            startSeek(request)
            if seekInFlight != nil { return true }
        }
        if pendingRate {
            startRateSeek()
            return seekInFlight != nil
        }
        return false
    }

    /// Reports every seek asked for since the last report as landed at `position`.
    private func completeSeeks(at position: TimeInterval) {
        let owed = owedSeekCompletions
        owedSeekCompletions = 0
        for _ in 0..<owed { sink.seekCompleted(position) }
    }

    /// Prerolled (ASYNC_DONE), or the pipeline changed state: finishes opening, or a seek
    /// once the pipeline has settled after it.
    ///
    /// An ASYNC_DONE alone does not say which operation finished: one left over from a pause
    /// may be read after a seek was sent (the pipeline-level message keeps neither the seek's
    /// seqnum nor its running-time reset). A flushing seek puts the pipeline in an async
    /// state change before gst_element_seek returns, so the seek has landed when the
    /// pipeline reports no pending state change any more.
    private func asyncDone() {
        switch phase {
        case .opening:
            failureCheck.map(destroySource)
            failureCheck = nil
            finishOpening()
        case .ready:
            guard let finished = seekInFlight, let element = pipeline?.element else { return }
            let settled = gst_element_get_state(element, nil, nil, 0)
            guard settled == GST_STATE_CHANGE_SUCCESS || settled == GST_STATE_CHANGE_NO_PREROLL else { return }
            seekInFlight = nil
            if finished == .user, pendingSeek == nil {
                completeSeeks(at: queryPosition() ?? 0)
            }
            refreshBufferStatus()
            if !startPendingWork() { applyWantedState() }
        case .failed:
            break
        }
    }

    // MARK: - Bus

    private func handle(_ message: UnsafeMutablePointer<GstMessage>) {
        guard phase != .failed, let element = pipeline?.element else { return }
        PlaybackLog.log(.debug, "gstreamer", "bus: \(String(cString: gst_message_type_get_name(pk_gst_message_type(message)))) from \(GStreamerErrors.objectName(pk_gst_message_src(message)))")
        switch pk_gst_message_type(message) {
        case GST_MESSAGE_ERROR:
            fail(GStreamerErrors.playbackError(from: message, sourceIsRemote: source.isHTTP))
        case GST_MESSAGE_WARNING:
            logWarning(message)
        case GST_MESSAGE_EOS:
            guard phase == .ready else { return }
            atEnd = true
            stopPositionTimer()
            sink.ended()
        case GST_MESSAGE_ASYNC_DONE:
            asyncDone()
        case GST_MESSAGE_STATE_CHANGED:
            guard pk_gst_message_src(message) == pk_gst_object(element) else { return }
            var old = GST_STATE_VOID_PENDING, new = GST_STATE_VOID_PENDING, pending = GST_STATE_VOID_PENDING
            gst_message_parse_state_changed(message, &old, &new, &pending)
            PlaybackLog.log(.debug, "gstreamer", "state \(stateName(old)) -> \(stateName(new)) (pending \(stateName(pending)))")
            if phase == .ready, seekInFlight != nil { asyncDone() }
        case GST_MESSAGE_DURATION_CHANGED:
            guard phase == .ready, let value = queryDuration(), value != duration else { return }
            duration = value
            sink.durationChanged(value)
        case GST_MESSAGE_BUFFERING:
            var percent: gint = 0
            gst_message_parse_buffering(message, &percent)
            bufferingChanged(Int(percent))
        case GST_MESSAGE_CLOCK_LOST:
            // The clock went away (an audio device closed): pick a new one.
            guard phase == .ready, wantsPlaying, !buffering else { return }
            gst_element_set_state(element, GST_STATE_PAUSED)
            gst_element_set_state(element, GST_STATE_PLAYING)
        default:
            break
        }
    }

    private func bufferingChanged(_ percent: Int) {
        guard !isLive else { return }
        refreshBufferStatus(progress: percent)
        guard phase == .ready else { return }
        if percent < 100, !buffering {
            buffering = true
            sink.stalled(true)
            if wantsPlaying, let element = pipeline?.element {
                gst_element_set_state(element, GST_STATE_PAUSED)
            }
        } else if percent >= 100, buffering {
            buffering = false
            sink.stalled(false)
            applyWantedState()
        }
    }

    private func fail(_ error: PlaybackError) {
        guard phase != .failed else { return }
        phase = .failed
        stopPositionTimer()
        stopDemuxerCheck()
        failureCheck.map(destroySource)
        failureCheck = nil
        sink.failed(error)
    }

    private func logWarning(_ message: UnsafeMutablePointer<GstMessage>) {
        guard PlaybackLog.enabled(.warning) else { return }
        var error: UnsafeMutablePointer<GError>?
        var debug: UnsafeMutablePointer<gchar>?
        gst_message_parse_warning(message, &error, &debug)
        let text = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "warning"
        PlaybackLog.log(.warning, "gstreamer", "\(GStreamerErrors.objectName(pk_gst_message_src(message))): \(text)")
        if let error { g_error_free(error) }
        if let debug { g_free(debug) }
    }

    private func stateName(_ state: GstState) -> String {
        String(cString: gst_element_state_get_name(state))
    }

    // MARK: - Position and buffer reports

    private func startPositionTimer() {
        guard positionTimer == nil else { return }
        positionTimer = loop.addTimer(milliseconds: Self.positionInterval) { [weak self] in
            self?.positionTick()
            return true
        }
    }

    private func stopPositionTimer() {
        positionTimer.map(destroySource)
        positionTimer = nil
    }

    private func stopDemuxerCheck() {
        demuxerCheck.map(destroySource)
        demuxerCheck = nil
    }

    private func destroySource(_ source: UnsafeMutablePointer<GSource>) {
        g_source_destroy(source)
        g_source_unref(source)
    }

    private func positionTick() {
        guard phase == .ready, wantsPlaying, seekInFlight == nil, !atEnd, !buffering else { return }
        if let position = queryPosition() { sink.position(position) }
        ticks += 1
        if ticks % 8 == 0 { refreshBufferStatus() }
    }

    private func queryPosition() -> TimeInterval? {
        guard let element = pipeline?.element else { return nil }
        var value: gint64 = -1
        guard gst_element_query_position(element, GST_FORMAT_TIME, &value) != 0, value >= 0 else { return nil }
        return GStreamerFrames.seconds(GstClockTime(value))
    }

    private func queryDuration() -> TimeInterval? {
        guard let element = pipeline?.element else { return nil }
        var value: gint64 = -1
        guard gst_element_query_duration(element, GST_FORMAT_TIME, &value) != 0, value >= 0 else { return nil }
        return GStreamerFrames.seconds(GstClockTime(value))
    }

    /// Bytes read, buffered-up-to time and progress from a buffering query on the pipeline
    /// and a position query in bytes on the source element.
    private func refreshBufferStatus(progress reported: Int? = nil) {
        guard let element = pipeline?.element else { return }
        var bytesRead: Int64 = 0
        var totalBytes: Int64 = -1
        sourceElement.withLock { held in
            guard let source = held.element else { return }
            var value: gint64 = 0
            if gst_element_query_position(source, GST_FORMAT_BYTES, &value) != 0, value > 0 { bytesRead = Int64(value) }
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
            progress = reported ?? Int(100 * bytesRead / totalBytes)
            playable = duration * Double(bytesRead) / Double(totalBytes)
        }
        gst_query_unref(query)
        playable = max(playable, queryPosition() ?? 0)
        if duration > 0 { playable = min(playable, duration) }
        sink.bufferChanged(EngineBufferStatus(playableDuration: playable, bufferingProgress: min(100, max(0, progress)),
                                              bytesTransferred: bytesRead))
    }

    // MARK: - Video

    private func currentNaturalSize() -> VideoSize? {
        guard let caps = pipeline?.currentVideoCaps() else { return nil }
        defer { gst_caps_unref(caps) }
        return GStreamerFrames.naturalSize(of: caps)
    }

    private func videoCapsChanged() {
        guard phase == .ready, let size = currentNaturalSize(), size != naturalSize else { return }
        naturalSize = size
        sink.naturalSizeChanged(size)
    }

    /// Hands an appsink picture to the frame output (streaming thread). The prerolled picture
    /// comes again as the first sample once playing: it is presented once.
    private func present(_ sample: OpaquePointer, preroll: Bool) {
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
    private func configureSource(_ element: UnsafeMutablePointer<GstElement>) {
        sourceElement.withLock { held in
            held.release()
            held.element = pk_gst_element(gst_object_ref(element))
        }
        guard !options.httpHeaders.isEmpty, pk_gst_has_property(element, "extra-headers") != 0 else { return }
        let headers = gst_structure_new_empty("extra-headers")!
        for (name, value) in options.httpHeaders { pk_gst_structure_set_string(headers, name, value) }
        pk_gst_set_structure(element, "extra-headers", headers)
        gst_structure_free(headers)
    }

    /// Remembers demuxers (for `checkDemuxers`) and caps the queues playbin makes on the
    /// read-ahead bound. Called on the thread that plugs the element.
    private func configureElement(_ element: UnsafeMutablePointer<GstElement>) {
        if let klass = pk_gst_element_klass(element), strstr(klass, "Demux") != nil {
            demuxers.withLock { $0.append(ElementRef(element: pk_gst_element(gst_object_ref(element)))) }
        }
        guard let cap = options.maxBufferBytes, cap > 0,
              let factory = pk_gst_element_factory_name(element).map({ String(cString: $0) }) else { return }
        switch factory {
        case "decodebin", "queue2", "multiqueue":
            if pk_gst_has_property(element, "max-size-bytes") != 0 {
                pk_gst_set_uint(element, "max-size-bytes", guint(clamping: cap))
            }
        default:
            break
        }
    }

    // MARK: - Teardown

    /// On the loop thread once the loop ended: timers off, pipeline to NULL and released.
    private func teardown() {
        stopPositionTimer()
        stopDemuxerCheck()
        demuxers.withLock { list in
            for index in list.indices { list[index].release() }
            list = []
        }
        failureCheck.map(destroySource)
        failureCheck = nil
        sharedPipeline.set(nil)
        pipeline?.destroy()
        pipeline = nil
        sourceElement.withLock { $0.release() }
    }
}

/// What the frame output remembers between pictures (streaming threads).
private struct FrameState {
    var lastTime: TimeInterval = -1
    var lastWasPreroll = false
}

/// A GstElement reference owned by whoever holds this value.
private struct ElementRef: @unchecked Sendable {
    // @unchecked: only ever used inside a Locked, which serialises every access.
    var element: UnsafeMutablePointer<GstElement>?
    mutating func release() {
        if let element { gst_object_unref(element) }
        element = nil
    }
}
#endif

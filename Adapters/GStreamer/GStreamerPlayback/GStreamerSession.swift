#if GStreamer
import CGStreamer
import FoundationEssentials
import PlaybackKit

/// One opened source: a playbin driven on its own GLib loop thread. Everything the engine asks
/// for is posted to that loop; bus messages, timers and the state machine run there alone.
/// `close()` ends the loop, after which the pipeline is torn down on the loop thread.
final class GStreamerSession: @unchecked Sendable {
    // @unchecked: the state under "Loop-thread state" is touched only on the loop thread (work
    // posted through `loop`, the bus watch and timers); other threads reach the pipeline only
    // through `sharedPipeline` (Locked); `frameState`, `sourceElement`, `demuxers` and
    // `sharedNaturalSize` are Locked because streaming threads or thumbnail callers use them.

    let loop: GLibLoopThread
    let source: MediaSource
    let options: PlaybackOptions
    let sink: EngineSink
    let frameState = Locked(FrameState())
    let sourceElement = Locked(ElementRef())
    /// Demuxers playbin plugged, watched while opening (see `checkDemuxers`).
    let demuxers = Locked<[ElementRef]>([])
    /// The pipeline for other threads (thumbnails); the loop thread uses `pipeline`.
    let sharedPipeline = Locked<GStreamerPipeline?>(nil)
    /// The natural size for other threads (thumbnails of a window sink's scaled pictures).
    let sharedNaturalSize = Locked(VideoSize.zero)

    // MARK: - Loop-thread state

    enum Phase { case opening, ready, failed }
    enum SeekKind { case user, rate }
    struct SeekRequest { var seconds: TimeInterval; var accurate: Bool }

    var pipeline: GStreamerPipeline?
    var phase = Phase.opening
    var wantsPlaying = false
    var isLive = false
    var buffering = false
    var atEnd = false
    var rate = 1.0
    var duration: TimeInterval = 0
    var naturalSize = VideoSize.zero
    var seekInFlight: SeekKind?
    var pendingSeek: SeekRequest?
    var pendingRate = false
    var owedSeekCompletions = 0
    var positionTimer: UnsafeMutablePointer<GSource>?
    var failureCheck: UnsafeMutablePointer<GSource>?
    var demuxerCheck: UnsafeMutablePointer<GSource>?
    var seekSettleTimer: UnsafeMutablePointer<GSource>?
    var stoppedDemuxerSeen = false
    var ticks = 0

    /// Position samples per second while playing.
    static let positionInterval: UInt32 = 33

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

    /// Plays once prerolled and not buffering.
    func play() { loop.post { [self] in setWantsPlaying(true) } }

    /// Pauses now, keeping the picture.
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
    static let pauseSettleTimeout: GstClockTime = 100_000_000

    /// A flushing seek; reported through `sink.seekCompleted` once the pipeline settled there.
    func seek(to seconds: TimeInterval, accurate: Bool) {
        loop.post { [self] in requestSeek(SeekRequest(seconds: seconds, accurate: accurate)) }
    }

    /// A rate change: a flushing seek to the current position at the new rate.
    func setRate(_ rate: Float) { loop.post { [self] in requestRate(Double(rate)) } }

    /// playbin's "volume" (0...1, linear).
    func setVolume(_ volume: Float) {
        loop.post { [self] in
            if let element = pipeline?.element { pk_gst_set_double(element, "volume", Double(volume)) }
        }
    }
    /// force-aspect-ratio on the window sink (through playbin); frames are composed by
    /// PlaybackKit instead.
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
            // A window sink keeps pictures scaled to the window: bring them to natural size.
            if case .window = options.videoOutput {
                return GStreamerFrames.thumbnail(of: sample, size: sharedNaturalSize.get())
            }
            return GStreamerFrames.thumbnail(of: sample)
        } ?? nil
    }

    // MARK: - Opening

    func open() {
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

    /// Prerolled: paused on the first frame. Reads duration and size, reports prepared.
    func finishOpening() {
        guard let element = pipeline?.element else { return }
        phase = .ready
        stopDemuxerCheck()
        if isLive, !wantsPlaying { gst_element_set_state(element, GST_STATE_PAUSED) }
        duration = queryDuration() ?? 0
        pipeline?.watchVideoStream()
        naturalSize = currentNaturalSize() ?? .zero
        sharedNaturalSize.set(naturalSize)
        let hasVideo = pk_gst_get_int(element, "n-video") > 0
        let hasAudio = pk_gst_get_int(element, "n-audio") > 0
        PlaybackLog.log(.info, "gstreamer", "prerolled \(source.url.lastPathComponent): \(duration) s, \(naturalSize), video \(hasVideo), audio \(hasAudio)")
        sink.prepared(EngineMediaInfo(duration: duration, naturalSize: naturalSize, hasVideo: hasVideo, hasAudio: hasAudio))
        refreshBufferStatus()
        if !startPendingWork() { applyWantedState() }
    }

    // MARK: - Play, pause, rate

    func setWantsPlaying(_ playing: Bool) {
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
    func applyWantedState() {
        guard phase == .ready, let element = pipeline?.element else { return }
        if wantsPlaying, !buffering {
            gst_element_set_state(element, GST_STATE_PLAYING)
            startPositionTimer()
        } else {
            gst_element_set_state(element, GST_STATE_PAUSED)
            stopPositionTimer()
        }
    }

    func requestRate(_ newRate: Double) {
        guard newRate > 0, newRate != rate else { return }
        rate = newRate
        guard phase == .ready, seekInFlight == nil, pendingSeek == nil else {
            pendingRate = true
            return
        }
        startRateSeek()
    }

    /// A flushing seek to where playback is, at the new rate.
    func startRateSeek() {
        guard let element = pipeline?.element else { return }
        pendingRate = false
        let position = queryPosition() ?? 0
        let flags = GstSeekFlags(rawValue: GST_SEEK_FLAG_FLUSH.rawValue | GST_SEEK_FLAG_ACCURATE.rawValue)
        if sendSeek(element, to: position, flags: flags) {
            seekInFlight = .rate
            watchSeekSettling()
        } else {
            PlaybackLog.log(.warning, "gstreamer", "rate \(rate) refused")
        }
    }

    // MARK: - Seeking

    func requestSeek(_ request: SeekRequest) {
        guard phase != .failed else { return }
        owedSeekCompletions += 1
        atEnd = false
        if phase == .opening || seekInFlight != nil {
            pendingSeek = request  // the last one wins; done after the next ASYNC_DONE
            return
        }
        startSeek(request)
    }

    func startSeek(_ request: SeekRequest) {
        guard let element = pipeline?.element else { return }
        pendingSeek = nil
        let mode = request.accurate
            ? GST_SEEK_FLAG_ACCURATE.rawValue
            : GST_SEEK_FLAG_KEY_UNIT.rawValue | GST_SEEK_FLAG_SNAP_BEFORE.rawValue
        let flags = GstSeekFlags(rawValue: GST_SEEK_FLAG_FLUSH.rawValue | mode)
        if sendSeek(element, to: request.seconds, flags: flags) {
            seekInFlight = .user
            watchSeekSettling()
        } else {
            PlaybackLog.log(.warning, "gstreamer", "seek to \(request.seconds) refused")
            completeSeeks(at: queryPosition() ?? request.seconds)
        }
    }

    /// Sends a flushing seek from `seconds` on at the current rate; false if refused.
    func sendSeek(_ element: UnsafeMutablePointer<GstElement>, to seconds: TimeInterval, flags: GstSeekFlags) -> Bool {
        PlaybackLog.log(.debug, "gstreamer", "seek to \(seconds) at rate \(rate)")
        return gst_element_seek(element, rate, GST_FORMAT_TIME, flags, GST_SEEK_TYPE_SET,
                                GStreamerFrames.nanoseconds(seconds), GST_SEEK_TYPE_NONE, -1) != 0
    }

    /// Starts a stored seek or rate change; false when there was none.
    func startPendingWork() -> Bool {
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
    func completeSeeks(at position: TimeInterval) {
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
    func asyncDone() {
        switch phase {
        case .opening:
            failureCheck.map(destroySource)
            failureCheck = nil
            finishOpening()
        case .ready:
            settleSeekIfDone()
        case .failed:
            break
        }
    }

    /// Completes the seek in flight if the pipeline has settled after it; then starts what
    /// was stored meanwhile.
    func settleSeekIfDone() {
        guard let finished = seekInFlight, let element = pipeline?.element else { return }
        let settled = gst_element_get_state(element, nil, nil, 0)
        guard settled == GST_STATE_CHANGE_SUCCESS || settled == GST_STATE_CHANGE_NO_PREROLL else { return }
        seekInFlight = nil
        stopSeekSettleTimer()
        if finished == .user, pendingSeek == nil {
            completeSeeks(at: queryPosition() ?? 0)
        }
        refreshBufferStatus()
        if !startPendingWork() { applyWantedState() }
    }

    /// Looks again every 100 ms while a seek is in flight, in case the message that ends it
    /// was read before the pipeline settled.
    func watchSeekSettling() {
        guard seekSettleTimer == nil else { return }
        seekSettleTimer = loop.addTimer(milliseconds: 100) { [weak self] in
            self?.settleSeekIfDone()
            return true  // the timer is destroyed once the seek settled
        }
    }

    func stopSeekSettleTimer() {
        seekSettleTimer.map(destroySource)
        seekSettleTimer = nil
    }

    // MARK: - Bus

    func handle(_ message: UnsafeMutablePointer<GstMessage>) {
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
            durationMayHaveChanged()
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

    func bufferingChanged(_ percent: Int) {
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

    func fail(_ error: PlaybackError) {
        guard phase != .failed else { return }
        phase = .failed
        stopPositionTimer()
        stopSeekSettleTimer()
        stopDemuxerCheck()
        failureCheck.map(destroySource)
        failureCheck = nil
        sink.failed(error)
    }

    func logWarning(_ message: UnsafeMutablePointer<GstMessage>) {
        guard PlaybackLog.enabled(.warning) else { return }
        var error: UnsafeMutablePointer<GError>?
        var debug: UnsafeMutablePointer<gchar>?
        gst_message_parse_warning(message, &error, &debug)
        let text = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "warning"
        PlaybackLog.log(.warning, "gstreamer", "\(GStreamerErrors.objectName(pk_gst_message_src(message))): \(text)")
        if let error { g_error_free(error) }
        if let debug { g_free(debug) }
    }

    func stateName(_ state: GstState) -> String {
        String(cString: gst_element_state_get_name(state))
    }

    // MARK: - Teardown

    /// On the loop thread once the loop ended: timers off, pipeline to NULL and released.
    func teardown() {
        stopPositionTimer()
        stopSeekSettleTimer()
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

#endif

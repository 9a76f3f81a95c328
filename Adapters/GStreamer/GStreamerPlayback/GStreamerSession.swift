#if GStreamer
import FoundationEssentials
import HTTPRelay
import MediaProbe
import PictureConversion
import PlaybackKit
import WindowPresentation

/// One opened source: a `GStreamerPipeline` driven on its own GLib loop thread. Everything the
/// engine asks for is posted to that loop; bus messages, timers and the state machine run
/// there alone. `close()` ends the loop, after which the pipeline is torn down on the loop
/// thread. The session relies on what `EnginePlayer` guarantees an engine: no seek before it
/// reported prepared and at most one seek in flight.
final class GStreamerSession: @unchecked Sendable {
    // @unchecked: the state under "Loop-thread state" is touched only on the loop thread (work
    // posted through `loop`, the bus watch and timers); other threads reach the pipeline only
    // through `sharedPipeline` (Locked); `frameState` is Locked because streaming threads use
    // it, and `windowPresenter` guards itself.

    let loop: GLibLoopThread
    let source: MediaSource
    let options: PlaybackOptions
    let sink: EngineSink
    let frameState = Locked(FrameState())
    /// Serves `YUVFrame.rgbaFrame(size:)` for the pictures of a `.yuvFrames` output.
    let yuvConverter = YUVFrameConverter()
    /// Converts thumbnails (any thread; it has a lock of its own).
    let thumbnailConverter = YUVFrameConverter()
    /// Converts the pictures for the `.frames` handler; used only inside the frame
    /// presenter's `present`, whose lock serializes the streaming threads.
    let frameConverter = PictureConverter()
    /// The pipeline for other threads (pause, thumbnails); the loop thread uses `pipeline`.
    let sharedPipeline = Locked<GStreamerPipeline?>(nil)
    /// The loopback relay playbin reads a remote source through when the app gave request
    /// headers: hlsdemux fetches variant playlists and keys with a downloader of its own that
    /// sends none of them (and every source when `relaysEveryRemoteSource`). Stopped by
    /// `close()`, from any thread.
    let relay = Locked<HTTPRelay?>(nil)
    /// Every http(s) source goes through the relay (`GStreamerBackend.relaysEveryRemoteSource`).
    let relaysEveryRemoteSource: Bool

    // MARK: - Loop-thread state

    enum Phase { case opening, ready, failed }
    /// What the seek in flight was sent for: the engine's seek (reported once it landed) or a
    /// rate change (GStreamer changes the rate with a seek to where playback is; not reported).
    enum SeekKind { case user, rate }

    var pipeline: GStreamerPipeline?
    var phase = Phase.opening
    var wantsPlaying = false
    var isLive = false
    var buffering = false
    var atEnd = false
    var rate = 1.0
    var duration: TimeInterval = 0
    /// The duration is the probe's: playbin did not know it when prerolled (its later
    /// estimates are not taken).
    var durationFromProbe = false
    var naturalSize = VideoSize.zero
    var seekInFlight: SeekKind?
    /// The rate changed while opening or while a seek was in flight: a rate seek follows.
    var rateSeekOwed = false
    /// Another text stream is shown: a seek to where playback is follows once playing
    /// (`restartTextStream`).
    var textRestartOwed = false
    /// An audio switch asked for while the pipeline is not playing (`.some(nil)`: audio off),
    /// carried out as it starts playing: a flushing seek while paused after playbin switched
    /// its audio stream never completes. Listed as selected meanwhile.
    var pendingAudioSwitch: Int??
    var positionTimer: LoopTimer?
    /// Playback that crawls for want of data without queue2 saying so (see `StarvationWatch`).
    var starvation = StarvationWatch()
    /// Held paused by `pauseForData` (with `buffering` set) until enough came in.
    var starvedPause = false
    /// The bytes read and the time when `pauseForData` began.
    var starvedAt: (bytes: Int64, time: Double) = (0, 0)
    var failureCheck: LoopTimer?
    var demuxerCheck: LoopTimer?
    var seekSettleTimer: LoopTimer?
    /// Draws the `.window` output's pictures (the appsink's, at natural size) into the
    /// app's window by the scaling mode, and again on expose and resize; stopped at teardown.
    let windowPresenter: X11WindowPresenter?
    var stoppedDemuxerSeen = false
    var ticks = 0
    /// What libavformat read of a local file (streams, tags, chapters); nil otherwise.
    var probe: StreamProbe?
    /// The subtitle file playing as playbin's "suburi", if any (a local copy of one over http).
    var externalSubtitle: URL?
    /// The opening subtitle file over http(s) has been fetched (`openingSubtitleCopy` is its
    /// copy; nil when it could not be).
    var openingSubtitleFetched = false
    var openingSubtitleCopy: URL?
    /// The session's folder for copies of subtitle files over http(s), removed at teardown.
    var subtitleCopies: URL?
    /// Where to go back to, and the streams to play, once the pipeline, restarted for a new
    /// subtitle file, prerolled.
    var resumeAfterReopen: (position: TimeInterval, streams: [TrackKind: Int?])?

    /// Position samples per second while playing.
    static let positionInterval: UInt32 = 33
    /// How long `pause()` waits for the sinks to settle at most.
    static let pauseSettleTimeout: TimeInterval = 0.1

    init(source: MediaSource, options: PlaybackOptions, relaysEveryRemoteSource: Bool = false, sink: EngineSink) {
        self.relaysEveryRemoteSource = relaysEveryRemoteSource
        self.source = source
        self.options = options
        self.sink = sink
        self.loop = GLibLoopThread(name: "gstreamer.loop")
        windowPresenter = X11WindowPresenter.forOutput(options.videoOutput, engine: "gstreamer")
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
        // "paused" as soon as this returns (state changes are thread-safe). Going to PAUSED the
        // sinks preroll on the buffer they were waiting to show; wait briefly for that so the
        // picture kept is settled (it is queued already: this takes microseconds).
        if let pipeline = sharedPipeline.get(), pipeline.setState(.paused) == .async {
            _ = pipeline.waitForState(timeout: Self.pauseSettleTimeout)
        }
        loop.post { [self] in setWantsPlaying(false) }
    }

    /// A flushing seek; reported through `sink.seekCompleted` once the pipeline settled there.
    func seek(to seconds: TimeInterval, accurate: Bool) {
        loop.post { [self] in startSeek(to: seconds, mode: accurate ? .accurate : .keyframe) }
    }

    /// A rate change: a flushing seek to the current position at the new rate.
    func setRate(_ rate: Float) { loop.post { [self] in requestRate(Double(rate)) } }

    /// playbin's "volume" (0...1, linear).
    func setVolume(_ volume: Float) {
        loop.post { [self] in pipeline?.setVolume(Double(volume)) }
    }

    /// Lays the window output's pictures out by `mode`, the one shown at once (frames are
    /// composed by PlaybackKit instead).
    func setScalingMode(_ mode: ScalingMode) {
        windowPresenter?.setScalingMode(mode)
    }

    /// Plays track `engineID` of `kind` (none when nil); see GStreamerSession+Tracks.swift.
    func selectTrack(kind: TrackKind, engineID: String?) {
        loop.post { [self] in selectTrackNow(kind: kind, engineID: engineID) }
    }

    /// Adds a subtitle file (playbin takes one); see GStreamerSession+Tracks.swift.
    func addSubtitle(_ url: URL) {
        loop.post { [self] in addSubtitleNow(url) }
    }

    /// Draws subtitles `seconds` later.
    func setSubtitleDelay(_ seconds: TimeInterval) {
        loop.post { [self] in pipeline?.setTextOffset(seconds) }
    }

    /// The volume playbin applies now. Any thread.
    var appliedVolume: Float? { sharedPipeline.get()?.volume().map { Float($0) } }

    /// Ends the loop; the pipeline is then set to NULL and released on the loop thread.
    func close() {
        relay.get()?.stop()
        loop.stop()
    }

    /// The picture shown now at natural size, from the video sink's last sample. Any thread.
    func thumbnail() -> VideoFrame? {
        sharedPipeline.get()?.thumbnail(converter: thumbnailConverter)
    }

    // MARK: - Opening

    func open() {
        guard let context = loop.mainContext else { return }
        if let remote = options.subtitleURLs.first, !remote.isFileURL, !openingSubtitleFetched {
            // playbin must be given it when it starts, as a file it can typefind (see
            // `fetchSubtitle`): the pipeline is made once it is here.
            fetchSubtitle(remote) { [weak self] copy in
                guard let self else { return }
                openingSubtitleFetched = true
                openingSubtitleCopy = copy
                open()
            }
            return
        }
        prepareMediaModel()
        let made: GStreamerPipeline
        do {
            var uri = source.url.absoluteString
            if source.isHTTP, relaysEveryRemoteSource || !options.httpHeaders.isEmpty {
                let started = try HTTPRelay(source: source, options: options)
                relay.set(started)
                uri = started.location
            }
            // A local file the probe read turns its pictures only when a video stream says
            // so; anything else (remote, or unreadable to the probe) may.
            let turnsUpright = probe.map { $0.streams.contains { $0.kind == .video && $0.rotation != 0 } } ?? true
            made = try GStreamerPipeline(
                uri: uri, options: options, sourceIsRemote: source.isHTTP, turnsUpright: turnsUpright,
                policy: ReferencePolicy(source: source, options: options), loopContext: context,
                onMessage: { [weak self] message in self?.handle(message) },
                onVideoCapsChanged: { [weak self] in
                    guard let self else { return }
                    loop.post { [self] in videoCapsChanged() }
                },
                onSample: { [weak self] sample, preroll in self?.present(sample, preroll: preroll) })
        } catch let error as PlaybackError {
            fail(error)
            return
        } catch {
            fail(PlaybackError(code: .engine, message: "open: \(error)"))
            return
        }
        pipeline = made
        sharedPipeline.set(made)
        if let externalSubtitle { made.setSubtitleFile(externalSubtitle) }
        switch made.setState(.paused) {
        case .failure:
            // The error message is on the bus; should none come, say so after a moment.
            failureCheck = loop.addTimer(milliseconds: 2000) { [weak self] in
                self?.fail(PlaybackError(code: .engine, message: "open: the pipeline refused to start"))
                return false
            }
        case .noPreroll:
            // A live source does not preroll in PAUSED: play until the sinks have data.
            isLive = true
            made.setState(.playing)
        case .async, .success:
            break  // ASYNC_DONE follows once the first picture and sound are decoded.
        }
        demuxerCheck = loop.addTimer(milliseconds: 200) { [weak self] in
            self?.checkDemuxers() ?? false
        }
    }

    /// Prerolled: paused on the first frame. Reads duration and size, reports prepared.
    func finishOpening() {
        guard let pipeline else { return }
        phase = .ready
        stopDemuxerCheck()
        if isLive, !wantsPlaying { pipeline.setState(.paused) }
        pipeline.measureTimelineOrigin(live: isLive)
        duration = pipeline.duration() ?? 0
        if duration <= 0, let probed = probe?.duration {
            // A stream with no index (ADTS AAC, AC-3, MP2, an MP3 without an Info tag):
            // playbin tells its length only once it has read on, the probe of a local file
            // at once (as libavformat does for the other engines).
            duration = probed
            durationFromProbe = true
        }
        pipeline.watchVideoStream()
        naturalSize = pipeline.currentNaturalSize() ?? .zero
        sizeSubtitleFont()
        let streams = pipeline.streamCounts()
        let hasVideo = streams.video > 0, hasAudio = streams.audio > 0
        reportMediaModel()
        PlaybackLog.log(.info, "gstreamer", "prerolled \(source.url.lastPathComponent): \(duration) s, \(naturalSize), video \(hasVideo), audio \(hasAudio)")
        // The decoder's caps say the rate; the container's (local files) stands in without one.
        let frameRate = hasVideo ? pipeline.currentFrameRate() ?? probe?.streams.first(where: { $0.kind == .video })?.frameRate : nil
        sink.prepared(EngineMediaInfo(duration: duration, naturalSize: naturalSize, hasVideo: hasVideo, hasAudio: hasAudio,
                                      frameRate: frameRate))
        refreshBufferStatus()
        if !startOwedRateSeek() { applyWantedState() }
    }

    // MARK: - Play, pause, rate

    func setWantsPlaying(_ playing: Bool) {
        wantsPlaying = playing
        guard phase == .ready else { return }
        if !playing {
            pipeline?.setState(.paused)
            stopPositionTimer()
            return
        }
        applyWantedState()
    }

    /// Brings the pipeline to the wanted state unless buffering holds it paused.
    func applyWantedState() {
        guard phase == .ready, let pipeline else { return }
        if wantsPlaying, !buffering {
            if let pending = pendingAudioSwitch {
                pendingAudioSwitch = nil
                pipeline.selectStream(.audio, index: pending)
            }
            pipeline.setState(.playing)
            startPositionTimer()
            if textRestartOwed, seekInFlight == nil {
                textRestartOwed = false
                startRateSeek()
            }
        } else {
            pipeline.setState(.paused)
            // Held for want of data, the timer looks for the refill.
            if starvedPause { startPositionTimer() } else { stopPositionTimer() }
        }
    }

    /// A new rate; the rate seek waits for the end of opening or of the seek in flight.
    func requestRate(_ newRate: Double) {
        guard newRate > 0, newRate != rate else { return }
        rate = newRate
        guard phase == .ready, seekInFlight == nil else {
            rateSeekOwed = phase != .failed
            return
        }
        startRateSeek()
    }

    /// Starts the rate seek owed, if any; true when one is now in flight.
    func startOwedRateSeek() -> Bool {
        guard rateSeekOwed else { return false }
        startRateSeek()
        return seekInFlight != nil
    }

    /// A flushing seek to where playback is, at the new rate.
    func startRateSeek() {
        guard let pipeline else { return }
        rateSeekOwed = false
        let position = pipeline.position() ?? 0
        PlaybackLog.log(.debug, "gstreamer", "rate \(rate) from \(position)")
        if pipeline.seek(to: position, rate: rate, mode: .accurate) {
            seekInFlight = .rate
            watchSeekSettling()
        } else {
            PlaybackLog.log(.warning, "gstreamer", "rate \(rate) refused")
        }
    }

    // MARK: - Seeking

    /// The engine's seek: sent at once, at the current rate. It replaces a rate seek in flight
    /// or owed (it carries the rate too), so that one seek settles and is reported once.
    func startSeek(to seconds: TimeInterval, mode: SeekMode) {
        // EnginePlayer seeks only once prepared; a failed pipeline takes no seek.
        guard phase == .ready, let pipeline else { return }
        atEnd = false
        resumeAfterReopen = nil
        textRestartOwed = false
        PlaybackLog.log(.debug, "gstreamer", "seek to \(seconds) at rate \(rate)")
        if pipeline.seek(to: seconds, rate: rate, mode: mode) {
            seekInFlight = .user
            rateSeekOwed = false
            watchSeekSettling()
        } else {
            PlaybackLog.log(.warning, "gstreamer", "seek to \(seconds) refused")
            sink.seekCompleted(pipeline.position() ?? seconds)
        }
    }

    /// Prerolled (ASYNC_DONE), or the pipeline changed state: finishes opening, or a seek
    /// once the pipeline has settled after it.
    ///
    /// An ASYNC_DONE alone does not say which operation finished: one left over from a pause
    /// may be read after a seek was sent (the pipeline-level message keeps neither the seek's
    /// seqnum nor its running-time reset). A flushing seek puts the pipeline in an async
    /// state change before it returns, so the seek has landed when the pipeline reports no
    /// pending state change any more.
    func asyncDone() {
        switch phase {
        case .opening:
            failureCheck?.cancel()
            failureCheck = nil
            finishOpening()
        case .ready:
            if resumeAfterReopen != nil {
                resumeAfterReopening()
            } else {
                settleSeekIfDone()
            }
        case .failed:
            break
        }
    }

    /// Completes the seek in flight if the pipeline has settled after it (reporting it once
    /// when it was the engine's); then starts a rate seek owed meanwhile.
    func settleSeekIfDone() {
        guard let finished = seekInFlight, let pipeline, pipeline.waitForState(timeout: 0).isSettled else { return }
        seekInFlight = nil
        stopSeekSettleTimer()
        if finished == .user { sink.seekCompleted(pipeline.position() ?? 0) }
        refreshBufferStatus()
        if !startOwedRateSeek() { applyWantedState() }
    }

    /// Looks again every 100 ms while a seek is in flight, in case the message that ends it
    /// was read before the pipeline settled.
    func watchSeekSettling() {
        guard seekSettleTimer == nil else { return }
        seekSettleTimer = loop.addTimer(milliseconds: 100) { [weak self] in
            self?.settleSeekIfDone()
            return true  // the timer is cancelled once the seek settled
        }
    }

    func stopSeekSettleTimer() {
        seekSettleTimer?.cancel()
        seekSettleTimer = nil
    }

    // MARK: - Bus

    func handle(_ message: PipelineMessage) {
        guard phase != .failed, let pipeline else { return }
        switch message {
        case .error(let error):
            fail(error)
        case .warning(let text):
            PlaybackLog.log(.warning, "gstreamer", text)
        case .endOfStream:
            guard phase == .ready else { return }
            atEnd = true
            stopPositionTimer()
            sink.ended()
        case .asyncDone:
            asyncDone()
        case .stateChanged(let old, let new, let pending, let fromPipeline):
            guard fromPipeline else { return }
            PlaybackLog.log(.debug, "gstreamer", "state \(old) -> \(new) (pending \(pending))")
            if phase == .ready, seekInFlight != nil { settleSeekIfDone() }
        case .durationChanged:
            durationMayHaveChanged()
        case .buffering(let percent):
            bufferingChanged(percent)
        case .clockLost:
            // Pick a new clock.
            guard phase == .ready, wantsPlaying, !buffering else { return }
            pipeline.setState(.paused)
            pipeline.setState(.playing)
        }
    }

    func bufferingChanged(_ percent: Int) {
        guard !isLive else { return }
        refreshBufferStatus(progress: percent)
        guard phase == .ready else { return }
        if percent < 100, !buffering {
            buffering = true
            sink.stalled(true)
            if wantsPlaying { pipeline?.setState(.paused) }
        } else if percent >= 100, buffering {
            buffering = false
            starvedPause = false
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
        failureCheck?.cancel()
        failureCheck = nil
        let relayed = relay.get()
        relayed?.stop()
        sink.failed(relayed?.explaining(error) ?? error)
    }

    // MARK: - Teardown

    /// On the loop thread once the loop ended: timers off, pipeline to NULL and released.
    func teardown() {
        stopPositionTimer()
        stopSeekSettleTimer()
        stopDemuxerCheck()
        failureCheck?.cancel()
        failureCheck = nil
        sharedPipeline.set(nil)
        pipeline?.destroy()
        pipeline = nil
        if let subtitleCopies { try? FileManager.default.removeItem(at: subtitleCopies) }
        windowPresenter?.stop()
    }
}

#endif

import Dispatch
import FoundationEssentials

/// The `MediaPlayback` every built-in adapter returns: it owns the contract's semantics once
/// for all engines and drives a `PlaybackEngine` on its own serial queue.
///
/// Public calls only post work to the queue (or read guarded state) and return. Engine reports
/// arrive through an `EngineSink` and are handled on the same queue, so events are produced in
/// one place, in order.
public final class EnginePlayer: EngineReportingPlayback, @unchecked Sendable {
    // @unchecked: the session variables below are touched only on `queue`; what other threads
    // read lives in `published`, `clock`, `buffer` and `engineSlot`, which are Locked.

    // MARK: - State other threads read

    struct Published {
        var isShutDown = false
        var isPrepared = false
        var state: PlaybackState = .stopped
        var loadState: LoadState = []
        var duration: TimeInterval = 0
        var naturalSize: VideoSize = .zero
        var frameRate: Double = 0
        var scalingMode: ScalingMode = .aspectFit
        var shouldAutoplay = false
        var rate: Float = 1
        var volume: Float = 1
        var generation = 0
        var tracks: [MediaTrack] = []
        var engineReportedTracks: [MediaTrack] = []
        var metadata = MediaMetadata.empty
        var chapters: [Chapter] = []
        var currentSubtitle: SubtitleCue?
        var subtitleDelay: TimeInterval = 0
    }

    let published = Locked(Published())
    let clock: PositionClock
    let time: any TimeSource
    private let buffer = Locked(EngineBufferStatus(playableDuration: 0, bufferingProgress: 0, bytesTransferred: 0))
    private let engineSlot: Locked<ThumbnailSource?>
    let hub = EventHub()
    let queue: DispatchQueue
    private let presenter: FramePresenter?
    /// The `.yuvFrames` handler, if that is the output.
    private var yuvHandler: (@Sendable (YUVFrame) -> Void)? {
        if case .yuvFrames(let handler) = options.videoOutput { return handler }
        return nil
    }

    /// The source as resolved.
    public let source: MediaSource
    /// The options the player was made with.
    public let options: PlaybackOptions
    /// The backend's name, as the player was made with it (`label`).
    public let backendName: String

    // MARK: - Session state (queue only)

    enum Phase { case idle, opening, prepared }
    private enum SeekTarget: Equatable { case time(TimeInterval), end }

    /// The engine, reached only on `queue` (see `engine`).
    private var confinedEngine: (any PlaybackEngine)?
    /// The engine this player drives. Every call into it is made on `queue`, the one rule that
    /// keeps an engine single-threaded; a debug build stops at any read from another thread
    /// (`thumbnail()` and `appliedVolume` go through `engineSlot` instead).
    var engine: (any PlaybackEngine)? {
        get {
            assertOnQueue()
            return confinedEngine
        }
        set {
            assertOnQueue()
            confinedEngine = newValue
        }
    }

    /// In a debug build, stops the program unless the caller runs on the player's queue.
    @inline(__always)
    func assertOnQueue() {
        #if DEBUG
        dispatchPrecondition(condition: .onQueue(queue))
        #endif
    }

    var phase = Phase.idle
    private var ended = false
    private var wantsPlay = false
    private var pendingSeek: SeekTarget?      // asked for before prepared
    private var seekInFlight: SeekTarget?     // handed to the engine
    var isSeeking: Bool { seekInFlight != nil }
    private var queuedSeek: SeekTarget?       // asked for while one was in flight: the last wins
    private var queuedSeekIsAccurate = true   // how `queuedSeek` seeks (a frame step: always accurately)
    private var seekDuringPrepare = false
    private var openedAtStart: TimeInterval?  // a seek before prepare handed to engine.open
    private var stalled = false
    /// Played since the last seek landed: the held position may be off the picture shown.
    var playedSinceSeek = false
    private var openTimeout: ScheduledWork?
    /// Tracks, metadata, chapters and cues of the session (see EnginePlayer+Tracks.swift).
    var trackSession = TrackSession()
    private var stallLimit: ScheduledWork?      // runs while stalled and playing

    /// A player driving `engine` on `source`. `label` is the backend's name: what
    /// `backendName` reports, and the name of the player's queue.
    public convenience init(engine: any PlaybackEngine, url: URL, options: PlaybackOptions, label: String) {
        self.init(engine: engine, url: url, options: options, label: label, time: SystemTimeSource())
    }

    /// A player whose position clock and deadlines read `time` (the core's tests drive one by hand).
    package init(engine: any PlaybackEngine, url: URL, options: PlaybackOptions, label: String, time: any TimeSource) {
        self.backendName = label
        self.confinedEngine = engine
        self.time = time
        self.clock = PositionClock(time: time)
        self.engineSlot = Locked(ThumbnailSource(engine: engine))
        self.source = MediaSource(url)
        self.options = options
        self.queue = DispatchQueue(label: "playback.\(label)")
        self.presenter = FramePresenter(output: options.videoOutput, mode: .aspectFit)
    }

    deinit {
        // Last reference gone without shutdown(): release the engine here; nothing else can
        // reach it any more.
        if !published.get().isShutDown {
            confinedEngine?.close()
            hub.finish()
        }
    }

    // MARK: - MediaPlayback: lifecycle

    public func prepareToPlay() {
        post { $0.startOpening() }
    }

    public func play() {
        post { player in
            player.wantsPlay = true
            switch player.phase {
            case .idle: player.startOpening()
            case .opening: break
            case .prepared: player.resume()
            }
        }
    }

    public func pause() {
        post { $0.pauseNow() }
    }

    /// Pauses a playing session at once (queue only).
    func pauseNow() {
        wantsPlay = false
        guard phase == .prepared, currentState == .playing else { return }
        engine?.pause()
        clock.setRunning(false)
        setState(.paused)
        updateStallLimit()
    }

    public func stop() {
        post { player in
            guard player.phase != .idle else { return }
            player.closeSession()
            player.setState(.stopped)
            player.hub.send(.finished(.userExited))
        }
    }

    public func shutdown() {
        let first = published.withLock { p -> Bool in
            defer { p.isShutDown = true }
            return !p.isShutDown
        }
        guard first else { return }
        queue.async { [self] in
            if phase != .idle { closeSession() }
            published.withLock {
                $0.state = .stopped
                $0.isPrepared = false
            }
            engine = nil
            engineSlot.set(nil)
            hub.finish()
        }
    }

    // MARK: - MediaPlayback: properties

    public var isPreparedToPlay: Bool { published.get().isPrepared }
    public var isPlaying: Bool { published.get().state == .playing }
    public var playbackState: PlaybackState { published.get().state }
    public var loadState: LoadState { published.get().loadState }
    public var duration: TimeInterval { published.get().duration }
    public var naturalSize: VideoSize { published.get().naturalSize }
    /// What the engine reports loaded, kept within [position, duration] once prepared: what
    /// plays has been loaded (a report from before the last seek lags behind it), and nothing
    /// lies past the end.
    public var playableDuration: TimeInterval {
        let reported = buffer.get().playableDuration
        let state = published.get()
        guard state.isPrepared else { return reported }
        let loaded = max(reported, clock.read())
        return state.duration > 0 ? min(loaded, state.duration) : loaded
    }
    public var bufferingProgress: Int { buffer.get().bufferingProgress }
    public var numberOfBytesTransferred: Int64 { buffer.get().bytesTransferred }

    public var currentPlaybackTime: TimeInterval {
        get { clock.read() }
        set {
            guard newValue.isFinite else { return }
            let target = max(0, newValue)
            post { $0.requestSeek(target) }
        }
    }

    public var scalingMode: ScalingMode {
        get { published.get().scalingMode }
        set {
            guard !published.get().isShutDown else { return }
            published.withLock { $0.scalingMode = newValue }
            presenter?.scalingMode = newValue
            post { $0.engine?.setScalingMode(newValue) }
        }
    }

    public var shouldAutoplay: Bool {
        get { published.get().shouldAutoplay }
        set {
            guard !published.get().isShutDown else { return }
            published.withLock { $0.shouldAutoplay = newValue }
        }
    }

    public var playbackRate: Float {
        get { published.get().rate }
        set {
            guard newValue.isFinite, newValue > 0, !published.get().isShutDown else { return }
            published.withLock { $0.rate = newValue }
            post { player in
                player.clock.setRate(Double(newValue))
                if player.phase != .idle { player.engine?.setRate(newValue) }
            }
        }
    }

    public var playbackVolume: Float {
        get { published.get().volume }
        set {
            guard newValue.isFinite, !published.get().isShutDown else { return }
            let volume = min(1, max(0, newValue))
            published.withLock { $0.volume = volume }
            post { player in
                if player.phase != .idle { player.engine?.setVolume(volume) }
            }
        }
    }

    public func thumbnailAtCurrentTime() -> VideoFrame? {
        guard let engine = engineSlot.get()?.engine, isPreparedToPlay else { return nil }
        return engine.thumbnail()
    }

    public var events: AsyncStream<PlaybackEvent> { hub.makeStream() }

    public var engineReportedVolume: Float? {
        guard isPreparedToPlay else { return nil }
        return engineSlot.get()?.engine.appliedVolume
    }

    // MARK: - For the core's tests

    /// Calls `observer` with every event as it is sent, on the sending thread.
    package func observeEvents(_ observer: @escaping @Sendable (PlaybackEvent) -> Void) { hub.observe(observer) }

    /// Returns once everything posted to the player's queue so far has run (never call it from
    /// an event observer: that runs on the queue).
    package func waitUntilIdle() { queue.sync {} }

    // MARK: - Queue plumbing

    /// Runs `work` on the queue unless the player is shut down.
    func post(_ work: @escaping @Sendable (EnginePlayer) -> Void) {
        guard !published.get().isShutDown else { return }
        queue.async { [self] in
            guard !published.get().isShutDown else { return }
            work(self)
        }
    }

    var currentState: PlaybackState { published.get().state }

    private func setState(_ state: PlaybackState) {
        let changed = published.withLock { p -> Bool in
            defer { p.state = state }
            return p.state != state
        }
        if changed { hub.send(.playbackStateChanged(state)) }
    }

    private func setLoadState(_ state: LoadState) {
        let changed = published.withLock { p -> Bool in
            defer { p.loadState = state }
            return p.loadState != state
        }
        if changed { hub.send(.loadStateChanged(state)) }
    }

    // MARK: - Opening

    private func startOpening() {
        guard phase == .idle, let engine else { return }
        if let error = source.precheck(options: options) {
            fail(error)
            return
        }
        let generation = published.withLock { p -> Int in
            p.generation += 1
            return p.generation
        }
        phase = .opening
        buffer.set(EngineBufferStatus(playableDuration: 0, bufferingProgress: 0, bytesTransferred: 0))
        let sink = EngineSink(
            generation: generation, frames: presenter, yuvFrames: yuvHandler, bufferStatus: buffer,
            currentGeneration: { [weak self] in self?.published.get().generation ?? -1 },
            deliver: { [weak self] report, generation in
                guard let self else { return }
                self.queue.async { self.handle(report, generation: generation) }
            })
        openTimeout = time.schedule(after: options.openTimeout, on: queue) { [weak self] in
            guard let self, self.phase == .opening, self.published.get().generation == generation else { return }
            let code: PlaybackError.Code = self.source.isFile ? .engine : .network
            self.fail(PlaybackError(code: code, message: "open: \(self.source.url.absoluteString) did not open within \(Self.seconds(self.options.openTimeout)) s"))
        }
        let openOptions = optionsForOpening()
        if case .time(let start)? = pendingSeek, start > 0, engine.opensAtStartPosition {
            pendingSeek = nil
            openedAtStart = start
            engine.open(source, options: openOptions, startingAt: start, sink: sink)
        } else {
            openedAtStart = nil
            engine.open(source, options: openOptions, sink: sink)
        }
    }

    private func handle(_ report: EngineSink.Report, generation: Int) {
        assertOnQueue()
        guard !published.get().isShutDown, generation == published.get().generation, phase != .idle else { return }
        switch report {
        case .prepared(let info): enginePrepared(info)
        case .failed(let error): fail(error)
        case .position(let seconds):
            if phase == .prepared, seekInFlight == nil, !ended { clock.sample(seconds) }
        case .positionJumped(let seconds):
            if phase == .prepared, seekInFlight == nil, !ended, currentState == .playing { clock.jump(to: seconds, running: !stalled) }
        case .seekCompleted(let seconds): engineSeekCompleted(seconds)
        case .ended: engineEnded()
        case .naturalSize(let size): updateNaturalSize(size, announce: phase == .prepared)
        case .duration(let seconds):
            published.withLock { $0.duration = max(0, seconds) }
            clock.setDuration(seconds)
        case .stalled(let waiting): updateStalled(waiting)
        case .tracks(let tracks): engineTracksChanged(tracks)
        case .metadata(let tags): engineMetadataChanged(tags)
        case .chapters(let chapters): published.withLock { $0.chapters = chapters }
        case .subtitleCue(let cue): engineSubtitleCue(cue)
        case .subtitleCuesReset: engineSubtitleCuesReset()
        }
    }

    private func enginePrepared(_ info: EngineMediaInfo) {
        guard phase == .opening, !seekDuringPrepare else { return }
        openTimeout?.cancel()
        openTimeout = nil
        applyInitialTracks()
        published.withLock {
            $0.duration = info.duration
            $0.frameRate = info.frameRate.map { $0.isFinite && $0 > 0 ? $0 : 0 } ?? 0
        }
        clock.setDuration(info.duration)
        updateNaturalSize(info.naturalSize, announce: false)
        let settings = published.get()
        if settings.rate != 1 { engine?.setRate(settings.rate) }
        if settings.volume != 1 { engine?.setVolume(settings.volume) }
        engine?.setScalingMode(settings.scalingMode)
        if let start = openedAtStart {
            openedAtStart = nil
            if let reached = info.startPosition, pendingSeek == nil {
                // Opened at the seek asked for before prepare: that seek is done.
                clock.jump(to: reached, running: false)
                hub.send(.seekCompleted(clock.read()))
                finishPrepare()
                return
            }
            // Opened at the start instead, or another seek came while opening: seek now.
            if info.startPosition == nil, pendingSeek == nil { pendingSeek = .time(start) }
        }
        if case .time(let target)? = pendingSeek, info.duration <= 0 || target < info.duration {
            pendingSeek = nil
            seekDuringPrepare = true
            seekInFlight = .time(target)
            clock.jump(to: target, running: false)
            engine?.seek(to: target, accurate: options.accurateSeek)
        } else {
            finishPrepare()
        }
    }

    private func finishPrepare() {
        phase = .prepared
        let autoplay = wantsPlay || published.get().shouldAutoplay
        published.withLock {
            $0.isPrepared = true
            $0.state = autoplay ? .playing : .paused
        }
        setLoadState([.playable, .playthroughOK])
        let size = naturalSize
        if !size.isEmpty { hub.send(.naturalSizeAvailable(size)) }
        hub.send(.preparedToPlay)
        hub.send(.playbackStateChanged(autoplay ? .playing : .paused))
        if pendingSeek != nil {
            // A target at or past the end was asked for before prepare: finish there.
            pendingSeek = nil
            finishAtEnd(reportSeek: true)
            return
        }
        if autoplay {
            engine?.play()
            clock.setRunning(true)
            playedSinceSeek = true
        }
        updateCue()
    }

    private func updateNaturalSize(_ size: VideoSize, announce: Bool) {
        let changed = published.withLock { p -> Bool in
            defer { p.naturalSize = size }
            return p.naturalSize != size
        }
        if changed, announce, !size.isEmpty { hub.send(.naturalSizeAvailable(size)) }
    }

    private func updateStalled(_ waiting: Bool) {
        guard phase == .prepared, waiting != stalled else { return }
        stalled = waiting
        setLoadState(waiting ? [.stalled] : [.playable, .playthroughOK])
        clock.setRunning(!waiting && currentState == .playing && seekInFlight == nil)
        updateStallLimit()
    }

    /// Runs the stall limit while playback waits for data and is meant to play: after
    /// `options.stallTimeout` of it the play fails (`.network` for remote sources). Pausing
    /// stops it; playing again starts it afresh.
    private func updateStallLimit() {
        let running = stalled && phase == .prepared && currentState == .playing
        guard running else {
            stallLimit?.cancel()
            stallLimit = nil
            return
        }
        guard stallLimit == nil else { return }
        let generation = published.get().generation
        stallLimit = time.schedule(after: options.stallTimeout, on: queue) { [weak self] in
            guard let self, self.published.get().generation == generation, self.stalled,
                  self.phase == .prepared, self.currentState == .playing else { return }
            self.stallLimit = nil
            let code: PlaybackError.Code = self.source.isFile ? .engine : .network
            self.fail(PlaybackError(code: code, message: "play: \(self.source.url.absoluteString) sent no data for \(Self.seconds(self.options.stallTimeout)) s while playing (stallTimeout)"))
        }
    }

    /// `seconds` for a message: whole numbers without decimals.
    private static func seconds(_ seconds: TimeInterval) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e9 ? String(Int(seconds)) : String(seconds)
    }

    // MARK: - Playing, ending, failing

    private func resume() {
        if ended {
            ended = false
            setState(.paused)
            startSeek(.time(0), accurate: options.accurateSeek)
        }
        guard currentState != .playing else { return }
        engine?.play()
        setState(.playing)
        playedSinceSeek = true
        if seekInFlight == nil, !stalled { clock.setRunning(true) }
        updateStallLimit()
    }

    private func engineEnded() {
        guard phase == .prepared, !ended else { return }
        if seekInFlight != nil, queuedSeek != nil { return }  // a later seek moves away from the end
        finishAtEnd(reportSeek: seekInFlight != nil)
    }

    /// The end of the media: one `.finished(.playbackEnded)`, state stopped, position at the end.
    private func finishAtEnd(reportSeek: Bool) {
        ended = true
        seekInFlight = nil
        queuedSeek = nil
        engine?.pause()
        let end = duration > 0 ? duration : clock.read()
        clock.jump(to: end, running: false)
        if reportSeek { hub.send(.seekCompleted(end)) }
        setState(.stopped)
        updateStallLimit()
        hub.send(.finished(.playbackEnded))
    }

    private func fail(_ error: PlaybackError) {
        PlaybackLog.log(.info, "playback", "failed: \(error)")
        if phase != .idle { closeSession() }
        setState(.stopped)
        hub.send(.finished(.playbackError(error)))
    }

    /// Ends the session with the engine; the player can be prepared again.
    private func closeSession() {
        published.withLock {
            $0.generation += 1
            $0.isPrepared = false
            $0.duration = 0
            $0.naturalSize = .zero
            $0.frameRate = 0
        }
        openTimeout?.cancel()
        openTimeout = nil
        stallLimit?.cancel()
        stallLimit = nil
        engine?.close()
        phase = .idle
        ended = false
        wantsPlay = false
        pendingSeek = nil
        seekInFlight = nil
        queuedSeek = nil
        seekDuringPrepare = false
        openedAtStart = nil
        stalled = false
        playedSinceSeek = false
        clock.setDuration(0)
        clock.jump(to: 0, running: false)
        setLoadState([])
        resetTracks()
    }

    // MARK: - Seeking

    /// Seeks to `target` by the contract's rules; `accurate` nil: as `options.accurateSeek` says.
    func requestSeek(_ target: TimeInterval, accurate: Bool? = nil) {
        let accurate = accurate ?? options.accurateSeek
        switch phase {
        case .idle, .opening:
            pendingSeek = .time(target)
            if !seekDuringPrepare { clock.jump(to: target, running: false) }
        case .prepared:
            let wanted: SeekTarget = (duration > 0 && target >= duration) ? .end : .time(target)
            if ended {
                if wanted == .end { return }
                ended = false
                setState(.paused)
            }
            if seekInFlight != nil {
                queuedSeek = wanted
                queuedSeekIsAccurate = accurate
                if case .time(let t) = wanted { clock.jump(to: t, running: false) }
            } else {
                startSeek(wanted, accurate: accurate)
            }
        }
    }

    private func startSeek(_ target: SeekTarget, accurate: Bool) {
        switch target {
        case .end:
            finishAtEnd(reportSeek: true)
        case .time(let seconds):
            seekInFlight = target
            clock.jump(to: seconds, running: false)
            engine?.seek(to: seconds, accurate: accurate)
        }
    }

    private func engineSeekCompleted(_ reached: TimeInterval) {
        guard seekInFlight != nil else { return }
        if seekDuringPrepare {
            if case .time(let next)? = pendingSeek, duration <= 0 || next < duration {
                pendingSeek = nil
                seekInFlight = .time(next)
                clock.jump(to: next, running: false)
                engine?.seek(to: next, accurate: options.accurateSeek)
                return
            }
            seekDuringPrepare = false
            seekInFlight = nil
            clock.jump(to: reached, running: false)
            hub.send(.seekCompleted(clock.read()))
            finishPrepare()
            return
        }
        if let next = queuedSeek {
            queuedSeek = nil
            startSeek(next, accurate: queuedSeekIsAccurate)
            return
        }
        seekInFlight = nil
        playedSinceSeek = currentState == .playing
        clock.jump(to: reached, running: currentState == .playing && !stalled)
        hub.send(.seekCompleted(clock.read()))
        updateCue()
    }
}

/// The engine as other threads reach it: for `thumbnail()` and `appliedVolume` only.
private struct ThumbnailSource: @unchecked Sendable {
    // @unchecked: only `thumbnail()` and `appliedVolume` are used through it, which
    // `PlaybackEngine` allows from any thread.
    let engine: any PlaybackEngine
}

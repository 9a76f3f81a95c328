import Dispatch
import FoundationEssentials

// MARK: - Making a player that falls back

extension Backends {
    /// Tries each named backend in order: when one fails to prepare the media (unsupportedFormat,
    /// decode, backendUnavailable, engine), the next is tried, and the app sees only the events of
    /// the one that plays. sourceNotFound, network and forbiddenURL end the play at once. An unknown
    /// or unavailable name is a failed try, not a throw: it throws only for an empty list
    /// (invalidArgument); every other failure arrives as .finished(.playbackError(...)).
    ///
    /// Nothing is tried before `prepareToPlay()` or `play()`. A seek, rate, volume, scaling mode
    /// or `shouldAutoplay` set before an engine is chosen applies to the one that plays. A failed
    /// try's player is shut down at once, and its pictures never reach a `.frames` handler. When
    /// every try fails, the error is the last one's (the last that is not `backendUnavailable`,
    /// when there is one), its message naming every try. Once an engine has prepared the media
    /// it stays: a later `stop()` and `prepareToPlay()` use it again.
    public static func makePlayer(backends: [String], url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        try makePlayer(trying: backends.map(candidate(named:)), url: url, options: options)
    }

    /// Like `makePlayer(backends:url:options:)`, over backends given as values (which need not
    /// be registered): tries each in order. Throws `PlaybackError(.invalidArgument)` only for an
    /// empty list.
    public static func makePlayer(trying backends: [any PlaybackBackend], url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        guard !backends.isEmpty else {
            throw PlaybackError(code: .invalidArgument, message: "makePlayer: the list of backends to try is empty")
        }
        return FallbackPlayer(candidates: backends, url: url, options: options)
    }
}

extension PlaybackError.Code {
    /// True for failures another engine may not have, after which the next backend of a list is
    /// tried: `unsupportedFormat`, `decode`, `backendUnavailable`, `engine`. The others are the
    /// same for every engine (the source, the network, the URL policy, the caller's arguments)
    /// and end the play at once.
    public var triesNextBackend: Bool {
        switch self {
        case .unsupportedFormat, .decode, .backendUnavailable, .engine: true
        case .sourceNotFound, .network, .forbiddenURL, .invalidArgument: false
        }
    }
}

// MARK: - The player

/// The player of `Backends.makePlayer(backends:url:options:)`: makes the player of each
/// backend in turn until one prepares the media, then forwards every call to it and passes on
/// its events. Until then it holds what the app set (seek target, rate, volume, scaling mode,
/// autoplay) and hands it to each try; the events of a try are held back until it prepares,
/// and dropped when it fails.
final class FallbackPlayer: EngineReportingPlayback, @unchecked Sendable {
    // @unchecked: the state of the tries (`attempt` and below) is touched only on `queue`; what
    // other threads read lives in `published`, which is Locked.

    // MARK: - State other threads read

    private struct Published {
        var isShutDown = false
        /// The player of the backend that prepared the media.
        var chosen: (any MediaPlayback)?
        var shouldAutoplay = false
        var rate: Float = 1
        var volume: Float = 1
        var scalingMode: ScalingMode = .aspectFit
        /// A seek asked for before an engine was chosen.
        var seekTarget: TimeInterval?
        /// Track selections and subtitle files asked for, in order: each try gets them.
        var trackRequests: [TrackRequest] = []
        var subtitleDelay: TimeInterval = 0
    }

    /// A track call made on the player, replayed to every try.
    private enum TrackRequest: Sendable {
        case select(String), deselect(TrackKind), addSubtitle(URL)

        func apply(to player: any MediaPlayback) {
            switch self {
            case .select(let id): player.selectTrack(id: id)
            case .deselect(let kind): player.deselectTrack(kind: kind)
            case .addSubtitle(let url): player.addSubtitle(url: url)
            }
        }
    }

    private let published = Locked(Published())
    private let hub = EventHub()
    private let queue = DispatchQueue(label: "playback.fallback")
    private let candidates: [any PlaybackBackend]
    private let url: URL
    private let options: PlaybackOptions

    // MARK: - The tries (queue only)

    /// One backend's player, tried or chosen.
    private struct Attempt {
        let number: Int
        let backend: String
        let player: any MediaPlayback
        /// Its pictures reach the app once it is chosen.
        let pictures: PictureGate
    }

    private var attempt: Attempt?
    /// True once `attempt` has prepared the media: it is the chosen one.
    private var isChosen = false
    private var nextCandidate = 0
    private var attemptsMade = 0
    /// The events of the try in progress, held until it prepares.
    private var heldBack: [PlaybackEvent] = []
    /// Each failed try of the current round, in order.
    private var failures: [(backend: String, error: PlaybackError)] = []
    private var wantsPlay = false

    /// A player that tries `candidates` in order on `url`.
    init(candidates: [any PlaybackBackend], url: URL, options: PlaybackOptions) {
        self.candidates = candidates
        self.url = url
        self.options = options
    }

    deinit {
        // Last reference gone without shutdown(): nothing else can reach the try any more.
        if !published.get().isShutDown {
            attempt?.player.shutdown()
            hub.finish()
        }
    }

    // MARK: - MediaPlayback: lifecycle

    func prepareToPlay() {
        post { player in
            if player.isChosen {
                player.attempt?.player.prepareToPlay()
            } else if player.attempt == nil {
                player.startTrying()
            }
        }
    }

    func play() {
        post { player in
            if player.isChosen {
                player.attempt?.player.play()
                return
            }
            player.wantsPlay = true
            if let attempt = player.attempt { attempt.player.play() } else { player.startTrying() }
        }
    }

    func pause() {
        post { player in
            if !player.isChosen { player.wantsPlay = false }
            player.attempt?.player.pause()
        }
    }

    func stop() {
        post { player in
            if player.isChosen {
                player.attempt?.player.stop()
            } else if player.attempt != nil {
                // Stopped while trying: the try ends, and so does this round.
                player.endAttempt()
                player.wantsPlay = false
                player.published.withLock { $0.seekTarget = nil }
                player.hub.send(.finished(.userExited))
            }
        }
    }

    func shutdown() {
        let first = published.withLock { p -> Bool in
            defer { p.isShutDown = true }
            return !p.isShutDown
        }
        guard first else { return }
        queue.async { [self] in
            attempt?.pictures.close()
            attempt?.player.shutdown()
            attempt = nil
            heldBack = []
            published.withLock { $0.chosen = nil }
            hub.finish()
        }
    }

    // MARK: - MediaPlayback: properties

    private var chosen: (any MediaPlayback)? { published.get().chosen }

    var isPreparedToPlay: Bool { chosen?.isPreparedToPlay ?? false }
    var isPlaying: Bool { chosen?.isPlaying ?? false }
    var playbackState: PlaybackState { chosen?.playbackState ?? .stopped }
    var loadState: LoadState { chosen?.loadState ?? [] }
    var duration: TimeInterval { chosen?.duration ?? 0 }
    var nominalFrameRate: Double { chosen?.nominalFrameRate ?? 0 }
    var playableDuration: TimeInterval { chosen?.playableDuration ?? 0 }
    var bufferingProgress: Int { chosen?.bufferingProgress ?? 0 }
    var numberOfBytesTransferred: Int64 { chosen?.numberOfBytesTransferred ?? 0 }
    var naturalSize: VideoSize { chosen?.naturalSize ?? .zero }
    var backendName: String { chosen?.backendName ?? "" }
    var events: AsyncStream<PlaybackEvent> { hub.makeStream() }

    func thumbnailAtCurrentTime() -> VideoFrame? { chosen?.thumbnailAtCurrentTime() }

    var currentPlaybackTime: TimeInterval {
        get {
            let state = published.get()
            return state.chosen?.currentPlaybackTime ?? state.seekTarget ?? 0
        }
        set {
            guard newValue.isFinite else { return }
            let target = max(0, newValue)
            published.withLock { if $0.chosen == nil, !$0.isShutDown { $0.seekTarget = target } }
            post { $0.attempt?.player.currentPlaybackTime = target }
        }
    }

    /// Steps on the chosen player; before one is chosen no frame rate is known: nothing to do.
    func stepFrames(_ count: Int) {
        post { player in
            guard player.isChosen else { return }
            player.attempt?.player.stepFrames(count)
        }
    }

    // Settings are kept here as the app set them (the getters read them at once) and handed,
    // in the order they were set, to the try in progress or the chosen player, and to each
    // later try when it starts.

    var scalingMode: ScalingMode {
        get { published.get().scalingMode }
        set {
            guard update({ $0.scalingMode = newValue }) else { return }
            post { $0.attempt?.player.scalingMode = newValue }
        }
    }

    var shouldAutoplay: Bool {
        get { published.get().shouldAutoplay }
        set {
            guard update({ $0.shouldAutoplay = newValue }) else { return }
            post { $0.attempt?.player.shouldAutoplay = newValue }
        }
    }

    var playbackRate: Float {
        get { published.get().rate }
        set {
            guard newValue.isFinite, newValue > 0, update({ $0.rate = newValue }) else { return }
            post { $0.attempt?.player.playbackRate = newValue }
        }
    }

    var playbackVolume: Float {
        get { published.get().volume }
        set {
            guard newValue.isFinite else { return }
            let volume = min(1, max(0, newValue))
            guard update({ $0.volume = volume }) else { return }
            post { $0.attempt?.player.playbackVolume = volume }
        }
    }

    // MARK: - Tracks, subtitles, metadata, chapters

    var tracks: [MediaTrack] { chosen?.tracks ?? [] }
    var currentSubtitle: SubtitleCue? { chosen?.currentSubtitle }
    var metadata: MediaMetadata { chosen?.metadata ?? .empty }
    var chapters: [Chapter] { chosen?.chapters ?? [] }

    func selectTrack(id: String) { request(.select(id)) }
    func deselectTrack(kind: TrackKind) { request(.deselect(kind)) }
    func addSubtitle(url: URL) { request(.addSubtitle(url)) }

    var subtitleDelay: TimeInterval {
        get { published.get().subtitleDelay }
        set {
            guard newValue.isFinite, update({ $0.subtitleDelay = newValue }) else { return }
            post { $0.attempt?.player.subtitleDelay = newValue }
        }
    }

    /// Remembers a track call for later tries and hands it to the one in progress.
    private func request(_ request: TrackRequest) {
        // Noted on the queue, where tries start: each try gets it exactly once.
        post { player in
            guard player.update({ $0.trackRequests.append(request) }) else { return }
            if let current = player.attempt?.player { request.apply(to: current) }
        }
    }

    var engineReportedVolume: Float? { (chosen as? any EngineReportingPlayback)?.engineReportedVolume }
    var engineReportedTracks: [MediaTrack] { (chosen as? any EngineReportingPlayback)?.engineReportedTracks ?? [] }

    /// Changes the published settings unless the player is shut down; whether it did.
    private func update(_ change: (inout Published) -> Void) -> Bool {
        published.withLock { p -> Bool in
            guard !p.isShutDown else { return false }
            change(&p)
            return true
        }
    }

    /// Runs `work` on the queue unless the player is shut down.
    private func post(_ work: @escaping @Sendable (FallbackPlayer) -> Void) {
        guard !published.get().isShutDown else { return }
        queue.async { [self] in
            guard !published.get().isShutDown else { return }
            work(self)
        }
    }

    // MARK: - Trying the backends

    /// Starts a round of tries from the first backend.
    private func startTrying() {
        nextCandidate = 0
        failures = []
        tryNext()
    }

    /// Makes the next backend's player, hands it the settings and prepares it (plays it, when
    /// play() was asked for); a backend that cannot make one is a failed try. Ends the round
    /// when no backend is left.
    private func tryNext() {
        while nextCandidate < candidates.count {
            let backend = candidates[nextCandidate]
            nextCandidate += 1
            attemptsMade += 1
            let number = attemptsMade
            let pictures = PictureGate()
            let player: any MediaPlayback
            do {
                player = try backend.makePlayer(url: url, options: pictures.gating(options))
            } catch {
                let failure = error as? PlaybackError ?? PlaybackError(code: .engine, message: "make player: \(error)")
                guard recordFailure(failure, of: backend.name) else { return }
                continue
            }
            let settings = published.get()
            player.scalingMode = settings.scalingMode
            player.shouldAutoplay = settings.shouldAutoplay
            if settings.rate != 1 { player.playbackRate = settings.rate }
            if settings.volume != 1 { player.playbackVolume = settings.volume }
            if let target = settings.seekTarget { player.currentPlaybackTime = target }
            if settings.subtitleDelay != 0 { player.subtitleDelay = settings.subtitleDelay }
            for request in settings.trackRequests { request.apply(to: player) }
            listen(to: player, attempt: number)
            attempt = Attempt(number: number, backend: backend.name, player: player, pictures: pictures)
            if wantsPlay { player.play() } else { player.prepareToPlay() }
            return
        }
        finishRound()
    }

    /// Hands the events of try `number`'s player to the queue.
    private func listen(to player: any MediaPlayback, attempt number: Int) {
        let stream = player.events
        Task { [weak self] in
            for await event in stream {
                guard let self else { return }
                self.queue.async { self.received(event, fromAttempt: number) }
            }
        }
    }

    private func received(_ event: PlaybackEvent, fromAttempt number: Int) {
        guard let attempt, attempt.number == number, !published.get().isShutDown else { return }
        if isChosen {
            hub.send(event)
            return
        }
        switch event {
        case .preparedToPlay:
            isChosen = true
            published.withLock {
                $0.chosen = attempt.player
                $0.seekTarget = nil
            }
            PlaybackLog.log(.info, "fallback", "\(attempt.backend) plays \(url.lastPathComponent)")
            attempt.pictures.open()
            for held in heldBack { hub.send(held) }
            heldBack = []
            hub.send(.preparedToPlay)
        case .finished(.playbackError(let error)):
            endAttempt()
            if recordFailure(error, of: attempt.backend) { tryNext() }
        case .finished(let reason):
            endAttempt()
            let error = PlaybackError(code: .engine, message: "prepare: the player finished (\(reason)) before it was prepared")
            if recordFailure(error, of: attempt.backend) { tryNext() }
        default:
            heldBack.append(event)
        }
    }

    /// Shuts the try in progress down and forgets it and its events.
    private func endAttempt() {
        attempt?.pictures.close()
        attempt?.player.shutdown()
        attempt = nil
        heldBack = []
    }

    /// Notes a failed try; returns true when the next backend may try, else ends the round.
    private func recordFailure(_ error: PlaybackError, of backend: String) -> Bool {
        PlaybackLog.log(.info, "fallback", "\(backend) cannot play \(url.lastPathComponent): \(error)")
        failures.append((backend, error))
        if error.code.triesNextBackend, nextCandidate < candidates.count { return true }
        finishRound()
        return false
    }

    /// Every try failed, or one failed in a way no other backend can mend: one
    /// `.finished(.playbackError)`; the player may be prepared again (a new round).
    private func finishRound() {
        wantsPlay = false
        published.withLock { $0.seekTarget = nil }
        let error: PlaybackError
        if failures.count == 1 {
            error = failures[0].error
        } else {
            let deciding = failures.last { $0.error.code != .backendUnavailable } ?? failures.last
            let tries = failures.map { "\($0.backend): \($0.error)" }.joined(separator: "; ")
            error = PlaybackError(code: deciding?.error.code ?? .backendUnavailable,
                                  message: "no backend could play \(url.lastPathComponent) (\(tries))")
        }
        failures = []
        hub.send(.finished(.playbackError(error)))
    }
}

import Dispatch
import FoundationEssentials
import PlaybackKit

// MARK: - The engines the fallback checks put beside the one under test

/// How many players a stand-in backend made, and how many of them were shut down (counted by
/// `RefusingPlayer` alone).
final class StandInCounts: Sendable {
    private let counts = Locked((made: 0, shutDown: 0))

    /// Players made so far.
    var made: Int { counts.get().made }
    /// Players shut down so far.
    var shutDown: Int { counts.get().shutDown }

    func countMade() { counts.withLock { $0.made += 1 } }
    func countShutDown() { counts.withLock { $0.shutDown += 1 } }
}

/// A backend that cannot play anything: a stand-in for an engine that fails on a file another
/// one plays. Each player, once asked to prepare or play, sends `decoys` (events a careless
/// fallback would let through) and then `.finished(.playbackError(.unsupportedFormat))`.
struct RefusingBackend: PlaybackBackend {
    static let backendName = "conformance-refusing"
    /// What the failed try sends before its error; none of it may reach the app.
    static let decoys: [PlaybackEvent] = [
        .loadStateChanged(.stalled), .naturalSizeAvailable(VideoSize(width: 7, height: 7)),
        .playbackStateChanged(.interrupted), .seekCompleted(7.7),
    ]

    let counts = StandInCounts()
    var name: String { Self.backendName }
    var engineVersion: String { "stand-in" }

    func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        counts.countMade()
        return RefusingPlayer(url: url, counts: counts)
    }
}

/// The player of `RefusingBackend`.
final class RefusingPlayer: PlaybackWithoutTracks, Sendable {
    private let url: URL
    private let counts: StandInCounts
    private let hub = StandInHub()
    private let state = Locked((shutDown: false, refused: false))

    init(url: URL, counts: StandInCounts) {
        self.url = url
        self.counts = counts
    }

    func prepareToPlay() { refuse() }
    func play() { refuse() }
    func pause() {}
    func stop() {}

    func shutdown() {
        let first = state.withLock { s -> Bool in
            defer { s.shutDown = true }
            return !s.shutDown
        }
        guard first else { return }
        counts.countShutDown()
        hub.finish()
    }

    /// The decoys and the error, once, on another thread (calls return at once).
    private func refuse() {
        let first = state.withLock { s -> Bool in
            defer { s.refused = true }
            return !s.refused && !s.shutDown
        }
        guard first else { return }
        let hub = hub, url = url
        DispatchQueue.global().async {
            for decoy in RefusingBackend.decoys { hub.send(decoy) }
            let error = PlaybackError(code: .unsupportedFormat,
                                      message: "\(RefusingBackend.backendName): refuses \(url.lastPathComponent) (a stand-in for an engine that cannot play it)")
            hub.send(.finished(.playbackError(error)))
        }
    }

    var isPreparedToPlay: Bool { false }
    var isPlaying: Bool { false }
    var playbackState: PlaybackState { .stopped }
    var loadState: LoadState { [] }
    var duration: TimeInterval { 0 }
    var nominalFrameRate: Double { 0 }
    var playableDuration: TimeInterval { 0 }
    var bufferingProgress: Int { 0 }
    var numberOfBytesTransferred: Int64 { 0 }
    var naturalSize: VideoSize { .zero }
    var backendName: String { RefusingBackend.backendName }
    var events: AsyncStream<PlaybackEvent> { hub.stream() }
    func thumbnailAtCurrentTime() -> VideoFrame? { nil }

    // It never prepares, so what is set does not matter: each reads as it is by default.
    var currentPlaybackTime: TimeInterval { get { 0 } set {} }
    var scalingMode: ScalingMode { get { .aspectFit } set {} }
    var shouldAutoplay: Bool { get { false } set {} }
    var playbackRate: Float { get { 1 } set {} }
    var playbackVolume: Float { get { 1 } set {} }
    func stepFrames(_ count: Int) {}
}

/// A backend that prepares anything at once (it reads nothing): a stand-in for an engine that
/// plays a file the one under test cannot. Its players are `EnginePlayer`s over
/// `StandInEngine`, with the contract's semantics of every built-in player.
struct StandInBackend: PlaybackBackend {
    static let backendName = "conformance-stand-in"
    /// The size its players report.
    static let size = VideoSize(width: 16, height: 16)

    let counts = StandInCounts()
    var name: String { Self.backendName }
    var engineVersion: String { "stand-in" }

    func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        counts.countMade()
        return EnginePlayer(engine: StandInEngine(), url: url, options: options, label: Self.backendName)
    }
}

/// The engine of `StandInBackend`: prepared at once with a 2 s duration; seeks land where asked.
final class StandInEngine: PlaybackEngine {
    private var sink: EngineSink?

    func open(_ source: MediaSource, options: PlaybackOptions, sink: EngineSink) {
        self.sink = sink
        sink.prepared(EngineMediaInfo(duration: 2, naturalSize: StandInBackend.size, hasVideo: true, hasAudio: false))
    }

    func play() {}
    func pause() {}
    func seek(to seconds: TimeInterval, accurate: Bool) { sink?.seekCompleted(seconds) }
    func setRate(_ rate: Float) {}
    func setVolume(_ volume: Float) {}
    func setScalingMode(_ mode: ScalingMode) {}
    func close() { sink = nil }
    func thumbnail() -> VideoFrame? { nil }
}

/// The event streams of a stand-in player.
final class StandInHub: Sendable {
    private let continuations = Locked<[AsyncStream<PlaybackEvent>.Continuation]?>([])

    /// A stream of the events sent from now on (finished at once after `finish()`).
    func stream() -> AsyncStream<PlaybackEvent> {
        let (stream, continuation) = AsyncStream<PlaybackEvent>.makeStream()
        let kept = continuations.withLock { list -> Bool in
            guard list != nil else { return false }
            list?.append(continuation)
            return true
        }
        if !kept { continuation.finish() }
        return stream
    }

    func send(_ event: PlaybackEvent) {
        for continuation in continuations.get() ?? [] { continuation.yield(event) }
    }

    func finish() {
        let list = continuations.withLock { list -> [AsyncStream<PlaybackEvent>.Continuation] in
            defer { list = nil }
            return list ?? []
        }
        for continuation in list { continuation.finish() }
    }
}

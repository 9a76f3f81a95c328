import Foundation
import PlaybackKit

/// A real backend's player with one deliberate fault, to prove the conformance checks catch
/// it. Everything not touched by the fault is passed through to the real player.
final class FaultyPlayer: MediaPlayback, Sendable {
    /// The deliberate faults.
    enum Fault: String, Sendable, CaseIterable {
        /// For 0.4 s after play() follows pause(), the position reads 1 s ahead.
        case jumpsAheadAfterResume
        /// A `.finished(.playbackError)` is reported as `.finished(.playbackEnded)`.
        case reportsEndForBrokenFile
        /// Seeks requested before the player is prepared are dropped.
        case ignoresSeekBeforePrepare
        /// While playing, the position reads 0.2 s behind every other 200 ms.
        case positionRunsBackwards
        /// `.seekCompleted` is never sent.
        case neverCompletesSeeks
        /// Setting `currentPlaybackTime` blocks until shutdown().
        case blocksInSeek
        /// `thumbnailAtCurrentTime()` waits 80 ms, as a synchronous round trip to the engine would.
        case slowThumbnail
        /// `.frames` output hands over each pair of frames in swapped order.
        case swapsFramePairs
        /// `.finished(.playbackEnded)` is sent twice.
        case endsTwice
        /// stop() sends no `.finished(.userExited)`.
        case stopsSilently
        /// playbackRate is remembered but never reaches the engine.
        case ignoresRate
        /// Making a player starts a thread that does not end with it (it ends 5 minutes later,
        /// long after the check).
        case leaksAThreadPerPlayer
        /// The first change of playbackVolume blocks 2 s, as a lock held across a slow engine
        /// round trip would while other calls come in.
        case slowCallsUnderLoad
        /// play() pauses the player that played before it, as an engine that owns one shared
        /// output would: only one plays at a time.
        case playsOneAtATime
        /// Released without shutdown(), the player keeps the real player alive (and playing)
        /// for 2 minutes instead of releasing it.
        case leaksInnerWhenReleased
        /// play() reaches the real player 0.5 s late, as an engine that prerolls on every
        /// start would: nothing moves for half a second after play().
        case slowStart
        /// backendName is "", as a player that does not know which engine it drives.
        case namesNoBackend
        /// A player that fails (`.finished(.playbackError)`) starts a thread that outlives it
        /// (by 5 minutes), as an engine whose failed open leaves its reader running.
        case leaksAThreadWhenItFails
    }

    let inner: any MediaPlayback
    let fault: Fault
    private let resumedAt = Locked<TimeInterval?>(nil)
    private let pausedByCall = Locked(false)
    private let storedRate = Locked<Float>(1)
    private let seekGate = DispatchSemaphore(value: 0)
    /// Whether shutdown() was called (`leaksInnerWhenReleased` leaks only without it).
    private let shutDownCalled = Locked(false)
    /// Whether playbackVolume was set before (`slowCallsUnderLoad` blocks the first time).
    private let volumeChanged = Locked(false)
    /// The `playsOneAtATime` player that played last.
    private static let lastPlayer = Locked<WeakFaultyPlayer?>(nil)

    /// A faulty player held without keeping it alive.
    private struct WeakFaultyPlayer: Sendable {
        /// The player, or nil once it is gone.
        weak let player: FaultyPlayer?
    }

    /// Makes the real player with `backend` (its options bent for the fault when needed) and
    /// wraps it.
    static func make(_ fault: Fault, backend: any PlaybackBackend, url: URL, options: PlaybackOptions) throws -> FaultyPlayer {
        var options = options
        if fault == .swapsFramePairs, case .frames(let viewport, let handler) = options.videoOutput {
            let held = Locked<VideoFrame?>(nil)
            options.videoOutput = .frames(viewport: viewport) { frame in
                let earlier = held.withLock { slot -> VideoFrame? in
                    if let earlier = slot {
                        slot = nil
                        return earlier
                    }
                    slot = frame
                    return nil
                }
                if let earlier {
                    handler(frame)
                    handler(earlier)
                }
            }
        }
        if fault == .leaksAThreadPerPlayer {
            Thread.detachNewThread { Thread.sleep(forTimeInterval: 300) }
        }
        let inner = try backend.makePlayer(url: url, options: options)
        if fault == .leaksAThreadWhenItFails {
            let events = inner.events
            Task {
                for await event in events {
                    guard case .finished(.playbackError) = event else { continue }
                    Thread.detachNewThread { Thread.sleep(forTimeInterval: 300) }
                }
            }
        }
        return FaultyPlayer(wrapping: inner, fault: fault)
    }

    init(wrapping inner: any MediaPlayback, fault: Fault) {
        self.inner = inner
        self.fault = fault
    }

    deinit {
        if fault == .leaksInnerWhenReleased, !shutDownCalled.get() {
            let inner = inner
            DispatchQueue.global().asyncAfter(deadline: .now() + 120) { inner.shutdown() }
        }
    }

    private static func now() -> TimeInterval { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    // MARK: - Lifecycle

    func prepareToPlay() { inner.prepareToPlay() }

    func play() {
        let resuming = pausedByCall.withLock { paused -> Bool in
            defer { paused = false }
            return paused
        }
        if resuming {
            resumedAt.set(Self.now())
        }
        if fault == .playsOneAtATime {
            let previous = Self.lastPlayer.withLock { last -> FaultyPlayer? in
                defer { last = WeakFaultyPlayer(player: self) }
                return last?.player
            }
            if let previous, previous !== self { previous.inner.pause() }
        }
        if fault == .slowStart {
            let inner = inner
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { inner.play() }
            return
        }
        inner.play()
    }

    func pause() {
        pausedByCall.set(true)
        inner.pause()
    }

    func stop() { inner.stop() }

    func shutdown() {
        shutDownCalled.set(true)
        inner.shutdown()
        for _ in 0..<64 { seekGate.signal() }
    }

    // MARK: - Properties

    var isPreparedToPlay: Bool { inner.isPreparedToPlay }
    var isPlaying: Bool { inner.isPlaying }
    var playbackState: PlaybackState { inner.playbackState }
    var loadState: LoadState { inner.loadState }

    var currentPlaybackTime: TimeInterval {
        get {
            let real = inner.currentPlaybackTime
            switch fault {
            case .jumpsAheadAfterResume:
                if let resumed = resumedAt.get(), Self.now() - resumed < 0.4 { return real + 1.0 }
                return real
            case .positionRunsBackwards:
                guard inner.isPlaying else { return real }
                return Int(Self.now() * 5) % 2 == 1 ? max(0, real - 0.2) : real
            default:
                return real
            }
        }
        set {
            switch fault {
            case .ignoresSeekBeforePrepare where !inner.isPreparedToPlay:
                return
            case .blocksInSeek:
                seekGate.wait()
                inner.currentPlaybackTime = newValue
            default:
                inner.currentPlaybackTime = newValue
            }
        }
    }

    var duration: TimeInterval { inner.duration }
    var playableDuration: TimeInterval { inner.playableDuration }
    var bufferingProgress: Int { inner.bufferingProgress }
    var numberOfBytesTransferred: Int64 { inner.numberOfBytesTransferred }
    var naturalSize: VideoSize { inner.naturalSize }
    var backendName: String { fault == .namesNoBackend ? "" : inner.backendName }

    var scalingMode: ScalingMode {
        get { inner.scalingMode }
        set { inner.scalingMode = newValue }
    }

    var shouldAutoplay: Bool {
        get { inner.shouldAutoplay }
        set { inner.shouldAutoplay = newValue }
    }

    var playbackRate: Float {
        get { fault == .ignoresRate ? storedRate.get() : inner.playbackRate }
        set {
            if fault == .ignoresRate { storedRate.set(newValue) } else { inner.playbackRate = newValue }
        }
    }

    var playbackVolume: Float {
        get { inner.playbackVolume }
        set {
            if fault == .slowCallsUnderLoad, !volumeChanged.withLock({ changed in defer { changed = true }; return changed }) {
                Thread.sleep(forTimeInterval: 2)
            }
            inner.playbackVolume = newValue
        }
    }

    func thumbnailAtCurrentTime() -> VideoFrame? {
        if fault == .slowThumbnail { Thread.sleep(forTimeInterval: 0.08) }
        return inner.thumbnailAtCurrentTime()
    }

    // MARK: - Events

    var events: AsyncStream<PlaybackEvent> {
        let source = inner.events
        let fault = self.fault
        return AsyncStream { continuation in
            let task = Task {
                for await event in source {
                    for changed in Self.apply(fault, to: event) { continuation.yield(changed) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    private static func apply(_ fault: Fault, to event: PlaybackEvent) -> [PlaybackEvent] {
        switch (fault, event) {
        case (.reportsEndForBrokenFile, .finished(.playbackError)): [.finished(.playbackEnded)]
        case (.neverCompletesSeeks, .seekCompleted): []
        case (.endsTwice, .finished(.playbackEnded)): [event, event]
        case (.stopsSilently, .finished(.userExited)): []
        default: [event]
        }
    }
}

import Dispatch
import Foundation
@testable import PlaybackKit

// MARK: - A time source the test moves by hand

/// A clock that stands still until the test advances it; deadlines scheduled on it run (on
/// their queue) once it has been advanced past them, in the order they fall due.
final class ManualTimeSource: TimeSource {
    private struct Pending {
        let due: Double
        let order: Int
        let queue: DispatchQueue
        let work: @Sendable () -> Void
        let handle: ScheduledWork
    }

    private struct State {
        var now: Double = 1_000
        var pending: [Pending] = []
        var order = 0
    }

    private let state = Locked(State())

    func now() -> Double { state.get().now }

    func schedule(after delay: Double, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let handle = ScheduledWork()
        state.withLock { s in
            s.pending.append(Pending(due: s.now + max(0, delay), order: s.order, queue: queue, work: work, handle: handle))
            s.order += 1
        }
        return handle
    }

    /// Moves the clock on by `seconds` and posts every deadline that fell due.
    func advance(by seconds: Double) {
        let due = state.withLock { s -> [Pending] in
            s.now += seconds
            let ready = s.pending.filter { $0.due <= s.now }.sorted { ($0.due, $0.order) < ($1.due, $1.order) }
            s.pending.removeAll { $0.due <= s.now }
            return ready
        }
        for item in due where !item.handle.isCancelled {
            item.queue.async { if !item.handle.isCancelled { item.work() } }
        }
    }

    /// Deadlines scheduled and not yet run or cancelled.
    var pendingCount: Int { state.get().pending.filter { !$0.handle.isCancelled }.count }
}

// MARK: - An engine the test drives

/// The smallest complete `PlaybackEngine`: it records every call `EnginePlayer` makes and
/// reports only what the test tells it to, through the sink of the last `open`.
final class ScriptedEngine: PlaybackEngine, @unchecked Sendable {
    // @unchecked: the player calls it on its queue and the test reads it from another thread;
    // every stored property is Locked.

    /// One call the player made.
    enum Call: Equatable, CustomStringConvertible {
        case open(start: TimeInterval?)
        case play, pause, close
        case seek(TimeInterval, accurate: Bool)
        case rate(Float), volume(Float), scaling(ScalingMode)
        case select(TrackKind, String?), addSubtitle(String), subtitleDelay(TimeInterval)

        var description: String {
            switch self {
            case .open(let start): start.map { "open@\($0)" } ?? "open"
            case .play: "play"
            case .pause: "pause"
            case .close: "close"
            case .seek(let t, let accurate): "seek(\(t)\(accurate ? "" : ", keyframe"))"
            case .rate(let r): "rate(\(r))"
            case .volume(let v): "volume(\(v))"
            case .scaling(let m): "scaling(\(m))"
            case .select(let kind, let id): "select(\(kind), \(id ?? "none"))"
            case .addSubtitle(let name): "addSubtitle(\(name))"
            case .subtitleDelay(let d): "subtitleDelay(\(d))"
            }
        }
    }

    private let recorded = Locked<[Call]>([])
    private let sinks = Locked<[EngineSink]>([])
    private let canOpenAtStart: Bool

    /// `opensAtStart`: whether it says it can open straight at a position.
    init(opensAtStart: Bool = false) { canOpenAtStart = opensAtStart }

    /// Every call so far, in order.
    var calls: [Call] { recorded.get() }
    /// The calls other than scaling-mode updates, which the player sends at every prepare.
    var drivingCalls: [Call] { calls.filter { if case .scaling = $0 { false } else { true } } }
    /// The sink of the latest `open`.
    var sink: EngineSink { sinks.get().last! }
    /// The sinks of every `open`, oldest first.
    var allSinks: [EngineSink] { sinks.get() }
    /// Forgets the calls so far.
    func clearCalls() { recorded.set([]) }

    private func record(_ call: Call) { recorded.withLock { $0.append(call) } }

    // MARK: PlaybackEngine

    var opensAtStartPosition: Bool { canOpenAtStart }

    func open(_ source: MediaSource, options: PlaybackOptions, sink: EngineSink) {
        subtitleNames.set(options.subtitleURLs.map(\.lastPathComponent))
        record(.open(start: nil))
        sinks.withLock { $0.append(sink) }
    }

    func open(_ source: MediaSource, options: PlaybackOptions, startingAt start: TimeInterval, sink: EngineSink) {
        record(.open(start: start))
        sinks.withLock { $0.append(sink) }
    }

    func play() { record(.play) }
    func pause() { record(.pause) }
    func seek(to seconds: TimeInterval, accurate: Bool) { record(.seek(seconds, accurate: accurate)) }
    func setRate(_ rate: Float) { record(.rate(rate)) }
    func setVolume(_ volume: Float) { record(.volume(volume)) }
    func setScalingMode(_ mode: ScalingMode) { record(.scaling(mode)) }
    func close() { record(.close) }
    func selectTrack(kind: TrackKind, engineID: String?) { record(.select(kind, engineID)) }
    func addSubtitle(_ url: URL) { record(.addSubtitle(url.lastPathComponent)) }
    func setSubtitleDelay(_ seconds: TimeInterval) { record(.subtitleDelay(seconds)) }
    /// The subtitle files `open` was handed, by name.
    var openedSubtitles: [String] { subtitleNames.get() }
    private let subtitleNames = Locked<[String]>([])
    /// The picture `thumbnail()` returns (nil: none); the test sets it.
    let shownPicture = Locked<VideoFrame?>(nil)
    func thumbnail() -> VideoFrame? { shownPicture.get() }

    /// Has `thumbnail()` return a 2x2 picture stamped `time`.
    func show(pictureAt time: TimeInterval) {
        shownPicture.set(VideoFrame(width: 2, height: 2, bytesPerRow: 8, pixels: [UInt8](repeating: 0, count: 16), presentationTime: time))
    }
}

// MARK: - A player on the scripted engine

/// An `EnginePlayer` over a `ScriptedEngine` and a `ManualTimeSource`, with its events
/// recorded as they are sent.
struct ScriptedRig {
    let engine: ScriptedEngine
    let time = ManualTimeSource()
    let player: EnginePlayer
    private let recordedEvents = Locked<[PlaybackEvent]>([])

    /// A media file that exists, so the player's precheck lets it through to the engine.
    static let mediaFile: URL = {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("scripted-engine-media.bin")
        if !FileManager.default.fileExists(atPath: url.path) {
            _ = FileManager.default.createFile(atPath: url.path, contents: Data([1, 2, 3, 4]))
        }
        return url
    }()

    init(opensAtStart: Bool = false, url: URL = ScriptedRig.mediaFile,
         configure: (inout PlaybackOptions) -> Void = { _ in }) {
        var options = PlaybackOptions(videoOutput: .none, audioOutput: .null)
        configure(&options)
        engine = ScriptedEngine(opensAtStart: opensAtStart)
        player = EnginePlayer(engine: engine, url: url, options: options, label: "scripted", time: time)
        let events = recordedEvents
        player.observeEvents { event in events.withLock { $0.append(event) } }
    }

    /// Every event so far.
    var events: [PlaybackEvent] { recordedEvents.get() }
    /// The events so far, forgetting them.
    func takeEvents() -> [PlaybackEvent] { recordedEvents.withLock { e in defer { e = [] }; return e } }
    /// The `.seekCompleted` positions so far.
    var seekCompletions: [TimeInterval] {
        events.compactMap { if case .seekCompleted(let t) = $0 { t } else { nil } }
    }
    /// The `.finished` reasons so far.
    var finishes: [FinishReason] { events.compactMap { if case .finished(let r) = $0 { r } else { nil } } }

    /// Waits until the player has handled everything posted so far.
    func settle() { player.waitUntilIdle() }

    /// What the media reports when the engine has opened it.
    static let info = EngineMediaInfo(duration: 10, naturalSize: VideoSize(width: 320, height: 240),
                                      hasVideo: true, hasAudio: true)

    /// Calls `prepareToPlay()` and has the engine report it opened the media (with `tracks`
    /// and `tags` first, as engines do).
    func prepare(_ info: EngineMediaInfo = ScriptedRig.info, tracks: [EngineTrack]? = nil, tags: [String: String]? = nil) {
        player.prepareToPlay()
        settle()
        if let tracks { engine.sink.tracksChanged(tracks) }
        if let tags { engine.sink.metadataChanged(tags) }
        engine.sink.prepared(info)
        settle()
    }

    /// The engine calls that select tracks, so far.
    var selections: [ScriptedEngine.Call] {
        engine.calls.filter { if case .select = $0 { true } else { false } }
    }
    /// The `.subtitleChanged` events so far.
    var cueEvents: [SubtitleCue?] {
        events.compactMap { if case .subtitleChanged(let cue) = $0 { .some(cue) } else { nil } }
    }

    /// Prepares, then plays.
    func prepareAndPlay() {
        prepare()
        player.play()
        settle()
    }

    /// Has the engine report that its seek landed at `seconds`.
    func completeSeek(at seconds: TimeInterval) {
        engine.sink.seekCompleted(seconds)
        settle()
    }

    /// Moves the manual clock on and lets the player handle what fell due.
    func advance(by seconds: Double) {
        time.advance(by: seconds)
        settle()
    }
}

import Foundation
@testable import PlaybackKit

// MARK: - A backend whose players follow a script

/// What a scripted player does when it is prepared.
enum Script: Sendable {
    /// Prepares at once and plays until the test ends it (`finishPlaying()`) or fails it.
    case plays
    /// Sends `decoys` (and presents a picture to a `.frames` handler), then fails with `error`.
    case fails(PlaybackError, decoys: [PlaybackEvent])
    /// Never prepares.
    case hangs
}

/// A backend of scripted players that write what is done to them into a shared `ScriptLog`.
/// `script` says what each player does for its URL.
struct ScriptedBackend: PlaybackBackend {
    let name: String
    let log: ScriptLog
    let script: @Sendable (URL) -> Script

    init(name: String, log: ScriptLog, script: @escaping @Sendable (URL) -> Script = { _ in .plays }) {
        self.name = name
        self.log = log
        self.script = script
    }

    var engineVersion: String { "scripted 1.0" }

    func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        let player = ScriptedPlayer(backend: name, url: url, script: script(url), options: options, log: log)
        log.made(player)
        return player
    }
}

/// The players scripted backends made and everything done to them, in order; tests wait on it.
final class ScriptLog: Sendable {
    private struct State: Sendable {
        var lines: [String] = []
        var players: [ScriptedPlayer] = []
    }
    private let state = Waitable(State())

    fileprivate func made(_ player: ScriptedPlayer) {
        state.update { $0.players.append(player) }
    }

    /// Notes `line` ("backend item: what").
    func note(_ line: String) { state.update { $0.lines.append(line) } }

    /// Every line so far.
    var lines: [String] { state.value.lines }

    /// The players made for the item named `item` (its file name), in order.
    func players(for item: String) -> [ScriptedPlayer] {
        state.value.players.filter { $0.url.lastPathComponent == item }
    }

    /// Every player made so far.
    var players: [ScriptedPlayer] { state.value.players }

    /// Waits until `holds` is true of the log (checked at each new line), at most `timeout`
    /// seconds; whether it was.
    func wait(timeout: TimeInterval = 5, until holds: @escaping @Sendable (ScriptLog) -> Bool) async -> Bool {
        await state.wait(timeout: timeout) { [self] _ in holds(self) }
    }
}

/// A player that does what its script says, at once, and notes every call in the log.
final class ScriptedPlayer: PlaybackWithoutTracks, Sendable {
    private struct State {
        var prepared = false
        var state: PlaybackState = .stopped
        var position: TimeInterval = 0
        var autoplay = false
        var rate: Float = 1
        var volume: Float = 1
        var scaling: ScalingMode = .aspectFit
        var shutDown = false
    }

    let backend: String
    let url: URL
    let script: Script
    private let options: PlaybackOptions
    private let log: ScriptLog
    private let state = Locked(State())
    private let hub = EventHub()

    init(backend: String, url: URL, script: Script, options: PlaybackOptions, log: ScriptLog) {
        self.backend = backend
        self.url = url
        self.script = script
        self.options = options
        self.log = log
    }

    private func note(_ what: String) { log.note("\(backend) \(url.lastPathComponent): \(what)") }

    // MARK: - What the test does

    /// Plays to the end: `.finished(.playbackEnded)`.
    func finishPlaying() {
        state.withLock { $0.state = .stopped }
        hub.send(.playbackStateChanged(.stopped))
        hub.send(.finished(.playbackEnded))
    }

    /// Fails while playing.
    func fail(_ error: PlaybackError) {
        state.withLock {
            $0.state = .stopped
            $0.prepared = false
        }
        hub.send(.finished(.playbackError(error)))
    }

    /// True once shutdown() was called.
    var isShutDown: Bool { state.get().shutDown }

    // MARK: - MediaPlayback

    func prepareToPlay() { open(play: false) }

    func play() {
        if state.get().prepared {
            setState(.playing)
            note("play")
        } else {
            note("play")
            open(play: true)
        }
    }

    /// Every change is made first and noted after, so that a test woken by the note sees it.
    private func open(play: Bool) {
        guard !state.get().prepared else { return }
        switch script {
        case .plays:
            let autoplay = state.withLock { s -> Bool in
                s.prepared = true
                s.state = (play || s.autoplay) ? .playing : .paused
                return play || s.autoplay
            }
            note("prepare")
            if case .frames(_, let handler) = options.videoOutput {
                handler(VideoFrame(width: 2, height: 2, bytesPerRow: 8, pixels: [UInt8](repeating: 9, count: 16), presentationTime: 0))
                note("picture")
            }
            hub.send(.loadStateChanged([.playable, .playthroughOK]))
            hub.send(.preparedToPlay)
            hub.send(.playbackStateChanged(autoplay ? .playing : .paused))
        case .fails(let error, let decoys):
            note("prepare")
            if case .frames(_, let handler) = options.videoOutput {
                handler(VideoFrame(width: 7, height: 7, bytesPerRow: 28, pixels: [UInt8](repeating: 1, count: 196), presentationTime: 0))
            }
            for decoy in decoys { hub.send(decoy) }
            hub.send(.finished(.playbackError(error)))
        case .hangs:
            note("prepare")
        }
    }

    func pause() {
        if state.get().state == .playing { setState(.paused) }
        note("pause")
    }

    func stop() {
        state.withLock {
            $0.prepared = false
            $0.state = .stopped
        }
        note("stop")
        hub.send(.playbackStateChanged(.stopped))
        hub.send(.finished(.userExited))
    }

    func shutdown() {
        state.withLock { $0.shutDown = true }
        note("shutdown")
        hub.finish()
    }

    private func setState(_ new: PlaybackState) {
        state.withLock { $0.state = new }
        hub.send(.playbackStateChanged(new))
    }

    var isPreparedToPlay: Bool { state.get().prepared }
    var isPlaying: Bool { state.get().state == .playing }
    var playbackState: PlaybackState { state.get().state }
    var loadState: LoadState { isPreparedToPlay ? [.playable] : [] }
    var duration: TimeInterval { isPreparedToPlay ? 10 : 0 }
    var nominalFrameRate: Double { isPreparedToPlay ? 25 : 0 }
    func stepFrames(_ count: Int) { note("step \(count)") }
    var playableDuration: TimeInterval { 0 }
    var bufferingProgress: Int { 0 }
    var numberOfBytesTransferred: Int64 { 0 }
    var naturalSize: VideoSize { .zero }
    var backendName: String { backend }
    var events: AsyncStream<PlaybackEvent> { hub.makeStream() }
    func thumbnailAtCurrentTime() -> VideoFrame? { nil }

    var currentPlaybackTime: TimeInterval {
        get { state.get().position }
        set { record("seek", \.position, newValue) }
    }
    var scalingMode: ScalingMode {
        get { state.get().scaling }
        set { record("scaling", \.scaling, newValue) }
    }
    var shouldAutoplay: Bool {
        get { state.get().autoplay }
        set { record("autoplay", \.autoplay, newValue) }
    }
    var playbackRate: Float {
        get { state.get().rate }
        set { record("rate", \.rate, newValue) }
    }
    var playbackVolume: Float {
        get { state.get().volume }
        set { record("volume", \.volume, newValue) }
    }

    /// Sets a setting, then notes "what value".
    private func record<Value: Sendable>(_ what: String, _ setting: WritableKeyPath<State, Value> & Sendable, _ value: Value) {
        state.withLock { $0[keyPath: setting] = value }
        note("\(what) \(value)")
    }
}

// MARK: - Waiting without blocking a thread

/// A value that changes, and async waits for a condition on it, each with a deadline. Waiters
/// are resumed by the change that makes the condition true (or by their deadline): no thread
/// blocks, so waits never starve the few threads the concurrency runtime has.
final class Waitable<Value: Sendable>: Sendable {
    private struct Waiter: Sendable {
        let condition: @Sendable (Value) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }
    private let state: Locked<(value: Value, waiters: [Int: Waiter], nextID: Int)>

    init(_ value: Value) { state = Locked((value, [:], 0)) }

    var value: Value { state.get().value }

    /// Changes the value and resumes every waiter whose condition now holds. The conditions are
    /// checked outside the lock, so they may read anything, this value included.
    func update(_ change: (inout Value) -> Void) {
        let (value, waiters) = state.withLock { s -> (Value, [Int: Waiter]) in
            change(&s.value)
            return (s.value, s.waiters)
        }
        for (id, waiter) in waiters where waiter.condition(value) { resume(id, with: true) }
    }

    /// Waits until `condition` holds, at most `timeout` seconds; whether it did.
    func wait(timeout: TimeInterval, until condition: @escaping @Sendable (Value) -> Bool) async -> Bool {
        await withCheckedContinuation { continuation in
            let id = state.withLock { s -> Int in
                s.nextID += 1
                s.waiters[s.nextID] = Waiter(condition: condition, continuation: continuation)
                return s.nextID
            }
            if condition(value) { resume(id, with: true) }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { self.resume(id, with: condition(self.value)) }
        }
    }

    private func resume(_ id: Int, with result: Bool) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: result)
    }
}

// MARK: - Waiting on a stream

/// Collects a stream's elements as they come; tests take them one by one, each with a deadline.
final class Inbox<Element: Sendable>: Sendable {
    private let received = Waitable<(items: [Element], ended: Bool)>(([], false))
    private let taken = Locked(0)

    init(_ stream: AsyncStream<Element>) {
        Task.detached { [received] in
            for await element in stream { received.update { $0.items.append(element) } }
            received.update { $0.ended = true }
        }
    }

    /// Everything received so far.
    var all: [Element] { received.value.items }

    /// The next element not yet taken, waiting at most `timeout` seconds; nil when none came
    /// or the stream ended.
    func next(timeout: TimeInterval = 5) async -> Element? {
        let index = taken.get()
        _ = await received.wait(timeout: timeout) { $0.items.count > index || $0.ended }
        let items = received.value.items
        guard index < items.count else { return nil }
        taken.set(index + 1)
        return items[index]
    }

    /// Waits until the stream ends, at most `timeout` seconds; whether it did.
    func waitForEnd(timeout: TimeInterval = 5) async -> Bool {
        await received.wait(timeout: timeout) { $0.ended }
    }
}

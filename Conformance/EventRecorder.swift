import FoundationEssentials
import PlaybackKit

// MARK: - Events

/// Records every event of one player from the moment it is made, with arrival times, and
/// waits on them with deadlines.
///
/// Adapter authors can use it in their own tests: make it before calling anything on the
/// player (`EventRecorder(player)`, or `EventRecorder.prepared(player)`, which also prepares),
/// note `mark` before an action, then wait for what the action should bring:
///
/// ```swift
/// let recorder = try await EventRecorder.prepared(player)
/// let mark = recorder.mark
/// player.currentPlaybackTime = 5
/// let reached = try await recorder.waitForSeekCompleted(since: mark)
/// #expect(abs(reached - 5) < 0.05)
/// ```
///
/// The `waitFor…` methods throw a `CheckFailure` that names what was awaited and the events
/// seen meanwhile when it does not come in time, so a test fails with a readable reason.
public final class EventRecorder: Sendable {
    /// One event and when it arrived (monotonic seconds).
    public struct Entry: Sendable {
        /// The event.
        public let event: PlaybackEvent
        /// When it arrived, in seconds on a monotonic clock.
        public let time: TimeInterval
    }

    struct Log: Sendable {
        var entries: [Entry] = []
        var ended = false
    }

    let log: Watched<Log>
    private let consumer: Task<Void, Never>

    /// Starts collecting `stream` (take it from the player before calling anything on it).
    public init(_ stream: AsyncStream<PlaybackEvent>) {
        let log = Watched(Log())
        self.log = log
        consumer = Task.detached {
            for await event in stream {
                let entry = Entry(event: event, time: monotonicSeconds())
                log.update { $0.entries.append(entry) }
            }
            log.update { $0.ended = true }
        }
    }

    /// Starts collecting a fresh event stream of `player` (make it before calling anything on
    /// the player).
    public convenience init(_ player: any MediaPlayback) {
        self.init(player.events)
    }

    /// Starts recording `player`'s events, calls `prepareToPlay()` and waits for
    /// `.preparedToPlay` (see `waitForPrepared`); returns the recorder for the later events.
    public static func prepared(_ player: any MediaPlayback, timeout: TimeInterval = 10) async throws -> EventRecorder {
        let recorder = EventRecorder(player)
        player.prepareToPlay()
        try await recorder.waitForPrepared(timeout: timeout)
        return recorder
    }

    deinit { consumer.cancel() }

    /// The number of events so far: pass it as `since` to look only at later ones.
    public var mark: Int { log.read { $0.entries.count } }

    /// True once the player finished the event stream (after shutdown).
    public var streamEnded: Bool { log.read { $0.ended } }

    /// The events from `mark` on.
    public func entries(since mark: Int = 0) -> [Entry] {
        log.read { Array($0.entries[min(mark, $0.entries.count)...]) }
    }

    /// The events from `mark` on, without times.
    public func events(since mark: Int = 0) -> [PlaybackEvent] { entries(since: mark).map(\.event) }

    /// The first event from `mark` on that `match` accepts, waiting at most `timeout` seconds
    /// for it; nil when none comes in time or the stream ends first. For a test that expects
    /// an event not to come.
    public func first(since mark: Int = 0, timeout: TimeInterval,
                      where match: @escaping @Sendable (PlaybackEvent) -> Bool) async -> Entry? {
        _ = await log.wait(timeout: timeout) { log in
            log.ended || log.entries[min(mark, log.entries.count)...].contains { match($0.event) }
        }
        return entries(since: mark).first { match($0.event) }
    }

    /// Waits for the first event after `mark` that `match` accepts and returns it. Fails the
    /// check when none comes within `timeout`, when the stream ends, or (unless `match`
    /// accepts it) when the player reports an error first.
    @discardableResult
    public func waitFor(_ what: String, since mark: Int = 0, timeout: TimeInterval,
                        _ match: @escaping @Sendable (PlaybackEvent) -> Bool) async throws -> Entry {
        let relevant: @Sendable (PlaybackEvent) -> Bool = { match($0) || $0.isError }
        _ = await log.wait(timeout: timeout) { log in
            log.ended || log.entries[min(mark, log.entries.count)...].contains { relevant($0.event) }
        }
        try Task.checkCancellation()
        let later = entries(since: mark)
        if let hit = later.first(where: { relevant($0.event) }) {
            if match(hit.event) { return hit }
            throw CheckFailure("the player failed while waiting for \(what): \(describe(hit.event))")
        }
        if streamEnded { throw CheckFailure("the event stream ended without \(what)") }
        throw CheckFailure("no \(what) within \(format(timeout)) s (events since: \(summary(later.map(\.event))))")
    }

    /// Waits for `.preparedToPlay` after `mark`; fails when the player finishes (with an error
    /// or otherwise) before it, or when it does not come within `timeout`.
    @discardableResult
    public func waitForPrepared(since mark: Int = 0, timeout: TimeInterval = 10) async throws -> Entry {
        let entry = try await waitFor(".preparedToPlay", since: mark, timeout: timeout) {
            $0 == .preparedToPlay || $0.isFinished
        }
        guard entry.event == .preparedToPlay else {
            throw CheckFailure("the player finished before .preparedToPlay: \(describe(entry.event))")
        }
        return entry
    }

    /// Waits for a `.seekCompleted` after `mark` and returns the position it reports; fails
    /// when the player finishes before it, or when it does not come within `timeout`.
    @discardableResult
    public func waitForSeekCompleted(since mark: Int, timeout: TimeInterval = 10) async throws -> TimeInterval {
        let entry = try await waitFor(".seekCompleted", since: mark, timeout: timeout) {
            $0.seekPosition != nil || $0.isFinished
        }
        guard let position = entry.event.seekPosition else {
            throw CheckFailure("the player finished before .seekCompleted: \(describe(entry.event))")
        }
        return position
    }

    /// Waits for a `.finished` after `mark` and returns its reason, errors included; fails
    /// when none comes within `timeout`.
    @discardableResult
    public func waitForFinish(since mark: Int = 0, timeout: TimeInterval) async throws -> FinishReason {
        let entry = try await waitFor(".finished", since: mark, timeout: timeout) { $0.isFinished }
        guard case .finished(let reason) = entry.event else {
            throw CheckFailure("expected .finished, got \(describe(entry.event))")
        }
        return reason
    }

    /// Waits until the event stream ends, at most `timeout` seconds; whether it did.
    public func waitForStreamEnd(timeout: TimeInterval) async -> Bool {
        await log.wait(timeout: timeout) { $0.ended }
    }
}

// MARK: - Frames

/// Collects what a `.frames` output delivers: a record of every frame (its number, time, size
/// and arrival) and the latest picture, with waits that have deadlines.
///
/// ```swift
/// let frames = FrameCollector()
/// let options = PlaybackOptions(videoOutput: .frames(viewport: nil, handler: frames.handler))
/// ...
/// let record = try await frames.waitFor("frame 125", timeout: 5) { $0.number == 125 }
/// ```
public final class FrameCollector: Sendable {
    /// One delivered frame.
    public struct Record: Sendable {
        /// The frame number read from the picture (`FramePattern`); nil when the collector
        /// does not read numbers or the picture carries none.
        public let number: Int?
        /// The frame's media time.
        public let presentationTime: TimeInterval
        /// The frame's size in pixels.
        public let size: VideoSize
        /// When it arrived, in seconds on a monotonic clock.
        public let arrival: TimeInterval
    }

    struct State: Sendable {
        var records: [Record] = []
        var latest: VideoFrame?
    }

    let state = Watched(State())
    private let readsNumbers: Bool

    /// `readsNumbers`: read the frame number from each frame (for natural-size pictures of
    /// the numbered fixtures; a composed viewport has no readable number).
    public init(readsNumbers: Bool = true) { self.readsNumbers = readsNumbers }

    /// The handler to put into `VideoOutput.frames`.
    public var handler: @Sendable (VideoFrame) -> Void {
        { [self] frame in
            let number = readsNumbers ? FramePattern.frameNumber(in: frame) : nil
            let record = Record(number: number, presentationTime: frame.presentationTime,
                                size: frame.size, arrival: monotonicSeconds())
            state.update {
                $0.records.append(record)
                $0.latest = frame
            }
        }
    }

    /// How many frames arrived so far: pass it as `since` to look only at later ones.
    public var count: Int { state.read { $0.records.count } }
    /// A record of every frame so far, in arrival order.
    public var records: [Record] { state.read { $0.records } }
    /// The last picture delivered.
    public var latest: VideoFrame? { state.read { $0.latest } }

    /// Waits until at least `count` frames have arrived, at most `timeout` seconds; whether
    /// they did.
    public func waitUntil(count: Int, timeout: TimeInterval) async -> Bool {
        await state.wait(timeout: timeout) { $0.records.count >= count }
    }

    /// Waits for a frame after the first `mark` ones that `match` accepts; fails the check if
    /// none comes within `timeout`.
    @discardableResult
    public func waitFor(_ what: String, since mark: Int = 0, timeout: TimeInterval,
                        _ match: @escaping @Sendable (Record) -> Bool) async throws -> Record {
        _ = await state.wait(timeout: timeout) { s in
            s.records[min(mark, s.records.count)...].contains(where: match)
        }
        try Task.checkCancellation()
        let later = state.read { Array($0.records[min(mark, $0.records.count)...]) }
        if let hit = later.first(where: match) { return hit }
        throw CheckFailure("no \(what) within \(format(timeout)) s (\(later.count) frames delivered meanwhile)")
    }
}

// MARK: - Describing events

extension PlaybackEvent {
    /// True for `.finished(.playbackError)`.
    var isError: Bool {
        if case .finished(.playbackError) = self { return true }
        return false
    }

    /// The error of a `.finished(.playbackError)`.
    var error: PlaybackError? {
        if case .finished(.playbackError(let error)) = self { return error }
        return nil
    }

    /// True for any `.finished`.
    var isFinished: Bool {
        if case .finished = self { return true }
        return false
    }

    /// The position of a `.seekCompleted`.
    var seekPosition: TimeInterval? {
        if case .seekCompleted(let position) = self { return position }
        return nil
    }

    /// The state of a `.playbackStateChanged`.
    var state: PlaybackState? {
        if case .playbackStateChanged(let state) = self { return state }
        return nil
    }
}

/// A short readable name of an event, for failure reasons.
func describe(_ event: PlaybackEvent) -> String {
    switch event {
    case .preparedToPlay: "preparedToPlay"
    case .naturalSizeAvailable(let size): "naturalSizeAvailable(\(size))"
    case .playbackStateChanged(let state): "state(\(state))"
    case .loadStateChanged(let load): "load\(load)"
    case .seekCompleted(let position): "seekCompleted(\(format(position)))"
    case .finished(.playbackEnded): "finished(playbackEnded)"
    case .finished(.userExited): "finished(userExited)"
    case .finished(.playbackError(let error)): "finished(playbackError(\(error)))"
    case .tracksChanged(let tracks): "tracksChanged(\(tracks.map(\.id).joined(separator: ",")))"
    case .metadataChanged(let metadata): "metadataChanged(\(metadata.tags.count) tags)"
    case .subtitleChanged(let cue): "subtitleChanged(\(cue.map { "\"\($0.text)\" at \(format($0.start))" } ?? "nil"))"
    }
}

/// Events as one line, the last `limit` of them.
func summary(_ events: [PlaybackEvent], limit: Int = 12) -> String {
    if events.isEmpty { return "none" }
    let shown = events.suffix(limit).map(describe).joined(separator: ", ")
    return events.count > limit ? "… " + shown : shown
}

/// A number with up to three decimals.
func format(_ value: Double) -> String {
    let rounded = (value * 1000).rounded() / 1000
    return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
}

import Foundation
import PlaybackKit

// MARK: - Events

/// Every event of one player from the moment it was made, with arrival times, and waits on
/// them with deadlines.
final class EventRecorder: Sendable {
    /// One event and when it arrived (monotonic seconds).
    struct Entry: Sendable {
        let event: PlaybackEvent
        let time: TimeInterval
    }

    struct Log: Sendable {
        var entries: [Entry] = []
        var ended = false
    }

    let log: Watched<Log>
    private let consumer: Task<Void, Never>

    /// Starts collecting `stream` (take it from the player before calling anything on it).
    init(_ stream: AsyncStream<PlaybackEvent>) {
        let log = Watched(Log())
        self.log = log
        consumer = Task.detached {
            for await event in stream {
                let entry = Entry(event: event, time: monotonicNow())
                log.update { $0.entries.append(entry) }
            }
            log.update { $0.ended = true }
        }
    }

    deinit { consumer.cancel() }

    /// The number of events so far: pass it as `since` to look only at later ones.
    var mark: Int { log.read { $0.entries.count } }

    /// True once the player finished the event stream (after shutdown).
    var streamEnded: Bool { log.read { $0.ended } }

    /// The events from `mark` on.
    func entries(since mark: Int = 0) -> [Entry] {
        log.read { Array($0.entries[min(mark, $0.entries.count)...]) }
    }

    /// The events from `mark` on, without times.
    func events(since mark: Int = 0) -> [PlaybackEvent] { entries(since: mark).map(\.event) }

    /// Waits for the first event after `mark` that `match` accepts and returns it. Fails the
    /// check when none comes within `timeout`, when the stream ends, or (unless `match`
    /// accepts it) when the player reports an error first.
    @discardableResult
    func waitFor(_ what: String, since mark: Int, timeout: TimeInterval,
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

    /// Waits until the event stream ends, at most `timeout` seconds; whether it did.
    func waitForStreamEnd(timeout: TimeInterval) async -> Bool {
        await log.wait(timeout: timeout) { $0.ended }
    }
}

// MARK: - Frames

/// Collects what a `.frames` output delivers: a record of every frame and the latest picture.
final class FrameCollector: Sendable {
    /// One delivered frame.
    struct Record: Sendable {
        /// The frame number read from the picture (natural-size frames only).
        let number: Int?
        let presentationTime: TimeInterval
        let size: VideoSize
        let arrival: TimeInterval
    }

    struct State: Sendable {
        var records: [Record] = []
        var latest: VideoFrame?
    }

    let state = Watched(State())
    private let readsNumbers: Bool

    /// `readsNumbers`: read the frame number from each natural-size frame.
    init(readsNumbers: Bool) { self.readsNumbers = readsNumbers }

    /// The handler to put into `VideoOutput.frames`.
    var handler: @Sendable (VideoFrame) -> Void {
        { [self] frame in
            let number = readsNumbers ? FramePattern.frameNumber(in: frame) : nil
            let record = Record(number: number, presentationTime: frame.presentationTime,
                                size: frame.size, arrival: monotonicNow())
            state.update {
                $0.records.append(record)
                $0.latest = frame
            }
        }
    }

    var count: Int { state.read { $0.records.count } }
    var records: [Record] { state.read { $0.records } }
    var latest: VideoFrame? { state.read { $0.latest } }

    /// Waits for a frame after the first `mark` ones that `match` accepts; fails the check if
    /// none comes within `timeout`.
    @discardableResult
    func waitFor(_ what: String, since mark: Int, timeout: TimeInterval,
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

import FoundationEssentials
import Glibc
import PlaybackKit

// MARK: - What a queue reports

/// Records a `PlaybackQueue`'s events and skipped items from the moment it is made, with
/// arrival times, and waits on them with deadlines (as `EventRecorder` does for a player).
final class QueueRecorder: Sendable {
    /// One report of the queue.
    enum Report: Sendable, Equatable {
        case event(QueueEvent)
        case failure(QueueItemFailure)
    }

    /// One report and when it arrived (monotonic seconds).
    struct Entry: Sendable {
        let report: Report
        let time: TimeInterval
    }

    private struct Log: Sendable {
        var entries: [Entry] = []
        var eventsEnded = false
    }

    private let log = Watched(Log())
    private let consumers: [Task<Void, Never>]

    /// Starts collecting the events and failures of `queue` (make it before calling anything
    /// on the queue).
    init(_ queue: PlaybackQueue) {
        let log = self.log
        let events = queue.events, failures = queue.failures
        consumers = [
            Task.detached {
                for await event in events {
                    let entry = Entry(report: .event(event), time: monotonicSeconds())
                    log.update { $0.entries.append(entry) }
                }
                log.update { $0.eventsEnded = true }
            },
            Task.detached {
                for await failure in failures {
                    let entry = Entry(report: .failure(failure), time: monotonicSeconds())
                    log.update { $0.entries.append(entry) }
                }
            },
        ]
    }

    deinit { consumers.forEach { $0.cancel() } }

    /// The number of reports so far: pass it as `since` to look only at later ones.
    var mark: Int { log.read { $0.entries.count } }

    /// The reports from `mark` on.
    func reports(since mark: Int = 0) -> [Report] {
        log.read { Array($0.entries[min(mark, $0.entries.count)...]).map(\.report) }
    }

    /// The events (not the failures) from `mark` on.
    func events(since mark: Int = 0) -> [QueueEvent] {
        reports(since: mark).compactMap { if case .event(let event) = $0 { event } else { nil } }
    }

    /// The failures from `mark` on.
    func failures(since mark: Int = 0) -> [QueueItemFailure] {
        reports(since: mark).compactMap { if case .failure(let failure) = $0 { failure } else { nil } }
    }

    /// Waits for the first report after `mark` that `match` accepts. Fails when none comes
    /// within `timeout`, when the event stream ends, or (unless `failuresExpected`) when an
    /// item fails first.
    @discardableResult
    func waitFor(_ what: String, since mark: Int = 0, timeout: TimeInterval, failuresExpected: Bool = false,
                 _ match: @escaping @Sendable (Report) -> Bool) async throws -> Entry {
        let relevant: @Sendable (Report) -> Bool = { report in
            if match(report) { return true }
            if case .failure = report { return !failuresExpected }
            return false
        }
        _ = await log.wait(timeout: timeout) { log in
            log.eventsEnded || log.entries[min(mark, log.entries.count)...].contains { relevant($0.report) }
        }
        try Task.checkCancellation()
        let later = log.read { Array($0.entries[min(mark, $0.entries.count)...]) }
        if let hit = later.first(where: { relevant($0.report) }) {
            if match(hit.report) { return hit }
            throw CheckFailure("an item failed while waiting for \(what): \(describe(hit.report))")
        }
        if log.read(\.eventsEnded) { throw CheckFailure("the queue's event stream ended without \(what)") }
        throw CheckFailure("no \(what) within \(format(timeout)) s (reports since: \(later.isEmpty ? "none" : later.map { describe($0.report) }.joined(separator: ", ")))")
    }

    /// Waits for `.itemChanged(index)` after `mark`.
    @discardableResult
    func waitForItem(_ index: Int, since mark: Int = 0, timeout: TimeInterval = 10, failuresExpected: Bool = false) async throws -> Entry {
        try await waitFor(".itemChanged(\(index))", since: mark, timeout: timeout, failuresExpected: failuresExpected) {
            $0 == .event(.itemChanged(index))
        }
    }

    /// Waits until the event stream ends, at most `timeout` seconds; whether it did.
    func waitForEventsEnd(timeout: TimeInterval) async -> Bool {
        await log.wait(timeout: timeout) { $0.eventsEnded }
    }
}

/// A queue's report as failures name it.
func describe(_ report: QueueRecorder.Report) -> String {
    switch report {
    case .event(.itemChanged(let index)): "itemChanged(\(index))"
    case .event(.finished): "finished"
    case .failure(let failure): "item \(failure.index) (\(failure.url.lastPathComponent)) failed: \(failure.error)"
    }
}

// MARK: - Boundaries measured by the wall clock

/// Samples the position of a queue's current player every millisecond on a thread of its own,
/// and finds at each change of player the gap between the previous item's end (when its
/// position last moved) and the next one's start (when its position first moved).
final class BoundaryWatch: Sendable {
    private struct Sample: Sendable {
        let time: TimeInterval
        let player: ObjectIdentifier
        let position: TimeInterval
    }

    /// One boundary: how long nothing moved, and the two sides.
    struct Gap: Sendable, CustomStringConvertible {
        /// Seconds from the previous item's last advancing position to the next one's first.
        let seconds: TimeInterval
        /// The previous item's furthest position.
        let endedAt: TimeInterval
        /// The longest interval between two samples around the boundary (the measure's grain).
        let resolution: TimeInterval
        var description: String { "\(Int((seconds * 1000).rounded())) ms" }
    }

    private let samples = Locked<[Sample]>([])
    private let running = Locked(true)

    /// Starts sampling `queue`.
    init(_ queue: PlaybackQueue) {
        let samples = samples, running = running
        DetachedThread.start(name: "boundary-watch") {
            while running.get() {
                if let player = queue.player {
                    let sample = Sample(time: monotonicSeconds(), player: ObjectIdentifier(player), position: player.currentPlaybackTime)
                    samples.withLock { $0.append(sample) }
                }
                usleep(1000)
            }
        }
    }

    deinit { running.set(false) }

    /// Stops sampling.
    func stop() { running.set(false) }

    /// The gaps at every change of player so far, in order. A change to a player whose
    /// position never moved (yet) gives no gap.
    func gaps() -> [Gap] {
        let all = samples.get()
        var runs: [[Sample]] = []
        for sample in all {
            if let last = runs.last?.last, last.player == sample.player {
                runs[runs.count - 1].append(sample)
            } else {
                runs.append([sample])
            }
        }
        var gaps: [Gap] = []
        for (previous, next) in zip(runs, runs.dropFirst()) {
            guard let final = previous.map(\.position).max(),
                  let ended = previous.first(where: { $0.position >= final - 0.0005 }),
                  let first = next.first?.position,
                  let started = next.first(where: { $0.position > first + 0.0005 }) else { continue }
            let around = (previous + next).filter { $0.time >= ended.time - 0.05 && $0.time <= started.time }
            let grain = zip(around, around.dropFirst()).map { $1.time - $0.time }.max() ?? 0
            gaps.append(Gap(seconds: started.time - ended.time, endedAt: final, resolution: grain))
        }
        return gaps
    }
}

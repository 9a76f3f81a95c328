import Dispatch

// MARK: - The monotonic clock

/// Seconds on the system's monotonic clock: the one clock every timing in the package reads
/// (never the calendar clock, which can jump).
package func monotonicSeconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

// MARK: - Time sources

/// Where the core reads the time and sets its deadlines: `SystemTimeSource` in every player,
/// a manual source in the core's tests, which advance it by hand so that every rule about time
/// (the position clock, the open timeout) is tested without waiting.
package protocol TimeSource: Sendable {
    /// Monotonic seconds.
    func now() -> Double
    /// Runs `work` on `queue` once `delay` seconds have passed, unless cancelled before.
    func schedule(after delay: Double, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) -> ScheduledWork
}

/// Work a time source will run later; `cancel()` stops it if it has not started.
package final class ScheduledWork: Sendable {
    private let cancelled = Locked(false)

    package init() {}

    /// Stops the work from running if it has not started yet.
    package func cancel() { cancelled.set(true) }

    /// True once `cancel()` was called.
    package var isCancelled: Bool { cancelled.get() }
}

/// The monotonic clock and dispatch's timers.
package struct SystemTimeSource: TimeSource {
    package init() {}

    package func now() -> Double { monotonicSeconds() }

    package func schedule(after delay: Double, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let scheduled = ScheduledWork()
        queue.asyncAfter(deadline: .now() + max(0, delay)) {
            if !scheduled.isCancelled { work() }
        }
        return scheduled
    }
}

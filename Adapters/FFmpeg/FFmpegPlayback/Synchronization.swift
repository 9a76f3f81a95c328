#if FFmpeg
import CFFmpeg
import FoundationEssentials

// MARK: - One mutex, several conditions

/// The session's mutex with the condition variables its threads wait on. Every queue and
/// every piece of shared session state is guarded by this one mutex, so a seek can flush all
/// queues and move the serials in one step; each waiter has its own condition so a signal
/// wakes only the thread that has something to do.
final class SessionLock: @unchecked Sendable {
    // @unchecked: the pthread objects are made for sharing between threads; they are created
    // in init and destroyed in deinit, when no thread can use them any more.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A condition variable bound to the session mutex.
    final class Condition: @unchecked Sendable {
        // @unchecked: a pthread condition is thread-safe; it lives as long as this object.
        fileprivate let cond: UnsafeMutablePointer<pthread_cond_t>
        fileprivate init() {
            cond = .allocate(capacity: 1)
            _ = pk_cond_init_monotonic(cond)
        }
        deinit {
            pthread_cond_destroy(cond)
            cond.deallocate()
        }
        /// Wakes every thread waiting on this condition (the mutex need not be held).
        func broadcast() { pthread_cond_broadcast(cond) }
    }

    /// Makes the mutex.
    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// A new condition for one kind of waiter.
    func makeCondition() -> Condition { Condition() }

    /// Runs `body` holding the mutex.
    @inline(__always)
    func locked<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Takes the mutex (for loops that hold it and let go around slow work).
    func lock() { pthread_mutex_lock(mutex) }

    /// Lets go of the mutex.
    func unlock() { pthread_mutex_unlock(mutex) }

    /// Waits on `condition`; the mutex must be held.
    func wait(_ condition: Condition) {
        pthread_cond_wait(condition.cond, mutex)
    }

    /// Waits on `condition` until the monotonic time `deadline`; the mutex must be held.
    /// Returns false when the deadline passed.
    @discardableResult
    func wait(_ condition: Condition, until deadline: Double) -> Bool {
        pk_cond_wait_until(condition.cond, mutex, deadline) == 0
    }
}

/// Seconds on the monotonic clock.
@inline(__always)
func monotonicNow() -> Double { pk_monotonic_now() }

// MARK: - The master clock

/// Media time that runs at the playback rate against the monotonic wall clock while
/// running. With audio the audio output corrects it as it plays samples (audio master); without
/// audio nothing corrects it and it is an external wall clock. Pausing freezes it; resuming
/// re-bases it at the frozen value, so it never catches up and never jumps.
/// Guarded by the session lock.
struct MediaClock {
    private(set) var base: Double = 0
    private var baseWall: Double = 0
    private(set) var speed: Double = 1
    private(set) var running = false

    /// The media time now.
    func now(_ wall: Double = monotonicNow()) -> Double {
        running ? base + (wall - baseWall) * speed : base
    }

    /// Sets the media time `value` as of wall time `wall`.
    mutating func set(_ value: Double, at wall: Double = monotonicNow()) {
        base = value
        baseWall = wall
    }

    /// Sets the media time `value` as of wall time `wall`, running at `newSpeed` from there.
    mutating func set(_ value: Double, at wall: Double, speed newSpeed: Double) {
        base = value
        baseWall = wall
        speed = newSpeed
    }

    /// Freezes or resumes at the current value.
    mutating func setRunning(_ run: Bool) {
        guard run != running else { return }
        let wall = monotonicNow()
        base = now(wall)
        baseWall = wall
        running = run
    }

    /// Changes the speed, re-basing at the current value.
    mutating func setSpeed(_ newSpeed: Double) {
        let wall = monotonicNow()
        base = now(wall)
        baseWall = wall
        speed = newSpeed
    }
}
#endif

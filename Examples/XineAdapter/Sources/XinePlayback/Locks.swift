import Glibc
import Synchronization

// PlaybackKit keeps its own locks to itself: an adapter outside the package brings its own,
// here the standard library's Mutex and a POSIX condition variable.

/// A value guarded by a mutex, for state that several threads read and write.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    /// Guards `value`.
    init(_ value: Value) { mutex = Mutex(value) }

    /// Runs `body` with exclusive access to the value.
    @discardableResult
    func withLock<R: Sendable>(_ body: (inout Value) throws -> R) rethrows -> R {
        try mutex.withLock { value in try body(&value) }
    }

    /// A copy of the value.
    func get() -> Value { withLock { $0 } }

    /// Replaces the value.
    func set(_ newValue: Value) { withLock { $0 = newValue } }
}

/// A mutex with one condition (POSIX), for a thread that waits until another changes shared
/// state: `withLock` around a loop that checks the state and `wait`s; the changing thread
/// changes it under `withLock` and calls `broadcast`.
final class ConditionLock: @unchecked Sendable {
    // @unchecked: the pthread objects are made once, never moved (they live in allocations of
    // their own) and used only through pthread calls, which are thread-safe.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` holding the mutex.
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Lets go of the mutex (which must be held) until a broadcast or `timeout` seconds at
    /// most, then takes it again. May return early: wait in a loop that checks the state.
    func wait(timeout: Double) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nanoseconds = Int(now.tv_nsec) + Int(max(0, timeout) * 1e9)
        var deadline = timespec(tv_sec: now.tv_sec + nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
        pthread_cond_timedwait(condition, mutex, &deadline)
    }

    /// Wakes every waiting thread.
    func broadcast() { pthread_cond_broadcast(condition) }
}

extension StringProtocol {
    /// The text without the characters at either end that `isSpace` holds for.
    func trimming(while isSpace: (Character) -> Bool) -> SubSequence {
        let start = firstIndex { !isSpace($0) } ?? endIndex
        let end = lastIndex { !isSpace($0) }.map(index(after:)) ?? start
        return self[start..<end]
    }
}

import FoundationEssentials
import Glibc

// MARK: - Mutex and conditions

/// Stops the program when a pthread call of the locks below fails: every failure these calls
/// can report (a lock taken twice, let go of by another thread, destroyed while held, bad
/// attributes) is a programming error, which must not pass silently as a race would.
@inline(__always)
private func checkPthread(_ result: Int32, _ call: StaticString) {
    if result != 0 { pthreadFailed(result, call) }
}

/// Reports a failed pthread call and stops (kept out of line: the locks' fast path is a compare).
@inline(never)
private func pthreadFailed(_ result: Int32, _ call: StaticString) -> Never {
    preconditionFailure("\(call) failed: \(String(cString: strerror(result))) (\(result))")
}

/// A mutual-exclusion lock over a pthread mutex: `lock`/`unlock` around work, or `withLock`;
/// with any number of conditions (`makeCondition()`) that threads wait on while holding it.
/// Not recursive. Timed waits run on the monotonic clock (`monotonicSeconds()`), so changes
/// of the calendar clock do not shorten or stretch them. `Locked` pairs one with the value it
/// guards.
package final class MutexLock: @unchecked Sendable {
    // @unchecked: a pthread mutex is made for sharing between threads; it is created in init
    // and destroyed in deinit, when no thread can hold it any more.
    fileprivate let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A condition variable bound to this mutex: wait on it holding the mutex, in a loop that
    /// checks the shared state (a wait may also return without a signal).
    package final class Condition: @unchecked Sendable {
        // @unchecked: a pthread condition is made for sharing between threads; it lives as
        // long as this object.
        fileprivate let condition: UnsafeMutablePointer<pthread_cond_t>

        fileprivate init() {
            condition = .allocate(capacity: 1)
            var attributes = pthread_condattr_t()
            checkPthread(pthread_condattr_init(&attributes), "pthread_condattr_init")
            checkPthread(pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC), "pthread_condattr_setclock")
            checkPthread(pthread_cond_init(condition, &attributes), "pthread_cond_init")
            checkPthread(pthread_condattr_destroy(&attributes), "pthread_condattr_destroy")
        }

        deinit {
            checkPthread(pthread_cond_destroy(condition), "pthread_cond_destroy")
            condition.deallocate()
        }

        /// Wakes one waiting thread (the mutex need not be held).
        package func signal() { checkPthread(pthread_cond_signal(condition), "pthread_cond_signal") }

        /// Wakes every waiting thread (the mutex need not be held).
        package func broadcast() { checkPthread(pthread_cond_broadcast(condition), "pthread_cond_broadcast") }
    }

    /// Makes an unlocked mutex. In a debug build it is an error-checking mutex, so taking it
    /// twice on one thread, or letting go of it on a thread that does not hold it, stops the
    /// program at that call instead of deadlocking or corrupting state.
    package init() {
        mutex = .allocate(capacity: 1)
        #if DEBUG
        var attributes = pthread_mutexattr_t()
        checkPthread(pthread_mutexattr_init(&attributes), "pthread_mutexattr_init")
        checkPthread(pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK)), "pthread_mutexattr_settype")
        checkPthread(pthread_mutex_init(mutex, &attributes), "pthread_mutex_init")
        checkPthread(pthread_mutexattr_destroy(&attributes), "pthread_mutexattr_destroy")
        #else
        checkPthread(pthread_mutex_init(mutex, nil), "pthread_mutex_init")
        #endif
    }

    deinit {
        checkPthread(pthread_mutex_destroy(mutex), "pthread_mutex_destroy")
        mutex.deallocate()
    }

    /// Takes the lock, waiting while another thread holds it.
    package func lock() { checkPthread(pthread_mutex_lock(mutex), "pthread_mutex_lock") }

    /// Lets go of the lock (the calling thread must hold it).
    package func unlock() { checkPthread(pthread_mutex_unlock(mutex), "pthread_mutex_unlock") }

    /// Runs `body` holding the lock.
    @inline(__always)
    package func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }

    /// A new condition bound to this mutex, for one kind of waiter.
    package func makeCondition() -> Condition { Condition() }

    /// Lets go of the mutex (which must be held) until `condition` is signalled, then takes it
    /// again.
    package func wait(_ condition: Condition) {
        checkPthread(pthread_cond_wait(condition.condition, mutex), "pthread_cond_wait")
    }

    /// Like `wait(_:)`, but returns by the monotonic time `deadline` (seconds, as
    /// `monotonicSeconds()` reads) at the latest. Returns false when the deadline passed.
    @discardableResult
    package func wait(_ condition: Condition, until deadline: Double) -> Bool {
        var time = timespec()
        let clamped = min(max(0, deadline), Double(Int32.max))
        let whole = clamped.rounded(.down)
        time.tv_sec = Int(whole)
        time.tv_nsec = min(999_999_999, Int((clamped - whole) * 1e9))
        let result = pthread_cond_timedwait(condition.condition, mutex, &time)
        if result == ETIMEDOUT { return false }
        checkPthread(result, "pthread_cond_timedwait")
        return true
    }

    /// Like `wait(_:)`, but returns by `timeout` seconds from now at the latest. Returns false
    /// when the time ran out.
    @discardableResult
    package func wait(_ condition: Condition, timeout: Double) -> Bool {
        wait(condition, until: monotonicSeconds() + max(0, timeout))
    }
}

/// A mutex with one condition, for threads that wait until another one changes shared state:
/// take the lock, `wait` in a loop until the state is right, `unlock`; the changing thread
/// takes the lock, changes the state and calls `signal` or `broadcast`.
package final class ConditionVariable: Sendable {
    private let mutex = MutexLock()
    private let condition: MutexLock.Condition

    /// Makes the mutex (unlocked) and the condition.
    package init() { condition = mutex.makeCondition() }

    /// Takes the mutex.
    package func lock() { mutex.lock() }

    /// Lets go of the mutex.
    package func unlock() { mutex.unlock() }

    /// Runs `body` holding the mutex.
    package func withLock<R>(_ body: () throws -> R) rethrows -> R { try mutex.withLock(body) }

    /// Lets go of the mutex (which must be held) until signalled, then takes it again. May
    /// also return without a signal: wait in a loop that checks the state.
    package func wait() { mutex.wait(condition) }

    /// Like `wait()`, but returns by `timeout` seconds from now at the latest. Returns false
    /// when the time ran out.
    @discardableResult
    package func wait(timeout: Double) -> Bool { mutex.wait(condition, timeout: timeout) }

    /// Like `wait()`, but returns by the monotonic time `deadline` at the latest. Returns
    /// false when the deadline passed.
    @discardableResult
    package func wait(until deadline: Double) -> Bool { mutex.wait(condition, until: deadline) }

    /// Wakes one waiting thread.
    package func signal() { condition.signal() }

    /// Wakes every waiting thread.
    package func broadcast() { condition.broadcast() }
}

// MARK: - Threads

/// Starts detached threads of their own, for loops that block (an engine's event loop, a
/// reader, a socket server). Work that does not need a dedicated thread belongs on a Dispatch
/// queue instead.
package enum DetachedThread {
    /// Starts a detached thread that runs `body` and ends with it. `name` (at most 15 bytes
    /// are kept) is what debuggers and `/proc/PID/task/*/comm` show. Returns the thread's
    /// pthread id; stops the program if the system cannot start a thread.
    @discardableResult
    package static func start(name: String? = nil, _ body: @escaping @Sendable () -> Void) -> pthread_t {
        let start = ThreadStart(name: name, body: body)
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        defer { pthread_attr_destroy(&attributes) }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(start).toOpaque()
        let status = pthread_create(&thread, &attributes, { context in
            let start = Unmanaged<ThreadStart>.fromOpaque(context!).takeRetainedValue()
            if let name = start.name { DetachedThread.nameCurrentThread(name) }
            start.body()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<ThreadStart>.fromOpaque(context).release()
            fatalError("cannot start a thread: \(String(cString: strerror(status)))")
        }
        return thread
    }

    /// Blocks SIGPIPE on the calling thread: a write to a connection the peer closed then
    /// fails with EPIPE instead of ending the process (OpenSSL and libcurl write with plain
    /// write()). The signal stays pending on the thread, which should end with its connection.
    package static func blockBrokenPipeSignals() {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }

    /// The calling thread's pthread id.
    package static var current: pthread_t { pthread_self() }

    /// True when `thread` is the calling thread.
    package static func isCurrent(_ thread: pthread_t) -> Bool { pthread_equal(thread, pthread_self()) != 0 }

    /// Names the calling thread (the first 15 bytes of `name`, cut at a character boundary),
    /// through `/proc/thread-self/comm` as `pthread_setname_np` does.
    package static func nameCurrentThread(_ name: String) {
        var kept = ""
        for character in name {
            guard kept.utf8.count + String(character).utf8.count <= 15 else { break }
            kept.append(character)
        }
        let file = open("/proc/thread-self/comm", O_WRONLY)
        guard file >= 0 else { return }
        _ = kept.withCString { write(file, $0, strlen($0)) }
        close(file)
    }
}

/// What a new thread runs, carried through pthread_create's context pointer.
private final class ThreadStart {
    let name: String?
    let body: @Sendable () -> Void
    init(name: String?, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}

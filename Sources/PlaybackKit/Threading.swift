import FoundationEssentials
import Glibc

// MARK: - Mutex

/// A mutual-exclusion lock over a pthread mutex: `lock`/`unlock` around work, or `withLock`.
/// Not recursive. `Locked` pairs one with the value it guards.
public final class MutexLock: @unchecked Sendable {
    // @unchecked: a pthread mutex is made for sharing between threads; it is created in init
    // and destroyed in deinit, when no thread can hold it any more.
    fileprivate let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Makes an unlocked mutex.
    public init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Takes the lock, waiting while another thread holds it.
    public func lock() { pthread_mutex_lock(mutex) }

    /// Lets go of the lock (the calling thread must hold it).
    public func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` holding the lock.
    @inline(__always)
    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

// MARK: - Condition variable

/// A mutex with a condition variable, for threads that wait until another one changes shared
/// state: take the lock, `wait` in a loop until the state is right, `unlock`; the changing
/// thread takes the lock, changes the state and calls `signal` or `broadcast`.
/// Timed waits run on the monotonic clock, so changes of the wall clock do not shorten or
/// stretch them.
public final class ConditionVariable: @unchecked Sendable {
    // @unchecked: the pthread mutex and condition are made for sharing between threads; both
    // are created in init and destroyed in deinit, when no thread can use them any more.
    private let mutex = MutexLock()
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    /// Makes the mutex (unlocked) and the condition.
    public init() {
        condition = .allocate(capacity: 1)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
    }

    /// Takes the mutex.
    public func lock() { mutex.lock() }

    /// Lets go of the mutex.
    public func unlock() { mutex.unlock() }

    /// Runs `body` holding the mutex.
    public func withLock<R>(_ body: () throws -> R) rethrows -> R { try mutex.withLock(body) }

    /// Lets go of the mutex (which must be held) until signalled, then takes it again. May
    /// also return without a signal: wait in a loop that checks the state.
    public func wait() { pthread_cond_wait(condition, mutex.mutex) }

    /// Like `wait()`, but returns by `timeout` seconds from now at the latest. Returns false
    /// when the time ran out.
    @discardableResult
    public func wait(timeout: Double) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let seconds = max(0, timeout)
        let whole = seconds.rounded(.down)
        deadline.tv_sec += Int(min(whole, Double(Int32.max)))
        deadline.tv_nsec += Int((seconds - whole) * 1e9)
        if deadline.tv_nsec >= 1_000_000_000 {
            deadline.tv_sec += 1
            deadline.tv_nsec -= 1_000_000_000
        }
        return pthread_cond_timedwait(condition, mutex.mutex, &deadline) != ETIMEDOUT
    }

    /// Like `wait()`, but returns by `deadline` at the latest. Returns false when the deadline
    /// passed.
    @discardableResult
    public func wait(until deadline: Date) -> Bool { wait(timeout: deadline.timeIntervalSinceNow) }

    /// Wakes one waiting thread.
    public func signal() { pthread_cond_signal(condition) }

    /// Wakes every waiting thread.
    public func broadcast() { pthread_cond_broadcast(condition) }
}

// MARK: - Threads

/// Starts detached threads of their own, for loops that block (an engine's event loop, a
/// reader, a socket server). Work that does not need a dedicated thread belongs on a Dispatch
/// queue instead.
public enum DetachedThread {
    /// Starts a detached thread that runs `body` and ends with it. `name` (at most 15 bytes
    /// are kept) is what debuggers and `/proc/PID/task/*/comm` show. Returns the thread's
    /// pthread id; stops the program if the system cannot start a thread.
    @discardableResult
    public static func start(name: String? = nil, _ body: @escaping @Sendable () -> Void) -> pthread_t {
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

    /// The calling thread's pthread id.
    public static var current: pthread_t { pthread_self() }

    /// True when `thread` is the calling thread.
    public static func isCurrent(_ thread: pthread_t) -> Bool { pthread_equal(thread, pthread_self()) != 0 }

    /// Names the calling thread (the first 15 bytes of `name`, cut at a character boundary),
    /// through `/proc/thread-self/comm` as `pthread_setname_np` does.
    public static func nameCurrentThread(_ name: String) {
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

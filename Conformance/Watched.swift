import Dispatch
import FoundationEssentials
import PlaybackKit

/// A value that several threads update and async code waits on, each wait with a deadline.
final class Watched<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value`, `waiters` and `nextID` are touched only while `lock` is held.
    private struct Waiter {
        let predicate: @Sendable (Value) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    private let lock = MutexLock()
    private var value: Value
    private var waiters: [Int: Waiter] = [:]
    private var nextID = 0

    init(_ value: Value) { self.value = value }

    /// Reads the value under the lock.
    func read<R>(_ body: (Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(value)
    }

    /// Changes the value and wakes every waiter whose condition now holds.
    func update(_ body: (inout Value) -> Void) {
        lock.lock()
        body(&value)
        var ready: [CheckedContinuation<Bool, Never>] = []
        for (id, waiter) in waiters where waiter.predicate(value) {
            ready.append(waiter.continuation)
            waiters[id] = nil
        }
        lock.unlock()
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// Waits until `predicate` holds for the value, at most `timeout` seconds (or until the
    /// task is cancelled). Returns whether it held.
    func wait(timeout: TimeInterval, until predicate: @escaping @Sendable (Value) -> Bool) async -> Bool {
        let id = makeID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                lock.lock()
                let holds = predicate(value)
                if holds || Task.isCancelled {
                    lock.unlock()
                    continuation.resume(returning: holds)
                    return
                }
                waiters[id] = Waiter(predicate: predicate, continuation: continuation)
                lock.unlock()
                DispatchQueue.global().asyncAfter(deadline: .now() + max(0, timeout)) { [self] in
                    expire(id)
                }
            }
        } onCancel: {
            expire(id)
        }
    }

    private func makeID() -> Int {
        lock.lock()
        defer { lock.unlock() }
        nextID += 1
        return nextID
    }

    private func expire(_ id: Int) {
        lock.lock()
        let waiter = waiters.removeValue(forKey: id)
        lock.unlock()
        waiter?.continuation.resume(returning: false)
    }
}

/// Seconds on a monotonic clock.

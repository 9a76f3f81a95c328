/// A value guarded by a lock, for state that several threads read and write.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    // @unchecked: every access to `value` goes through `lock`, and the value is Sendable.
    private let lock = MutexLock()
    private var value: Value

    /// Guards `value`.
    package init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    @discardableResult
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the value.
    package func get() -> Value { withLock { $0 } }
}

extension Locked {
    /// Replaces the value.
    package func set(_ newValue: Value) { withLock { $0 = newValue } }
}

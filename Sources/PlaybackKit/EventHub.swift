import FoundationEssentials

/// The hub of a player's `PlaybackEvent`s.
typealias EventHub = EventFanOut<PlaybackEvent>

/// Fans events out to every open `AsyncStream`, in the order they are sent.
final class EventFanOut<Event: Sendable>: Sendable {
    private struct State {
        var continuations: [Int: AsyncStream<Event>.Continuation] = [:]
        var observers: [@Sendable (Event) -> Void] = []
        var nextID = 0
        var finished = false
    }
    private let state = Locked(State())
    /// Serialises senders so every listener sees the same order. Continuations are yielded to
    /// under this lock only, never under `state`'s: a stream's termination handler (which takes
    /// `state`'s lock) may run while the concurrency runtime holds a task lock that `yield` needs.
    private let sendLock = MutexLock()

    /// A new stream that receives every event sent from now on.
    func makeStream() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .unbounded)
        let id: Int? = state.withLock { state in
            if state.finished { return nil }
            let id = state.nextID
            state.nextID += 1
            state.continuations[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Calls `observer` with every event sent from now on, on the sending thread, in order.
    func observe(_ observer: @escaping @Sendable (Event) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    /// Sends `event` to every open stream. Yielding under `sendLock` keeps the order the same
    /// for every listener even if two threads send at once.
    func send(_ event: Event) {
        sendLock.withLock {
            let (continuations, observers) = state.withLock { (Array($0.continuations.values), $0.observers) }
            for continuation in continuations { continuation.yield(event) }
            for observer in observers { observer(event) }
        }
        PlaybackLog.debug("event \(event)")
    }

    /// Finishes every stream; later streams finish at once.
    func finish() {
        let continuations = state.withLock { state in
            state.finished = true
            let all = Array(state.continuations.values)
            state.continuations.removeAll()
            return all
        }
        for continuation in continuations { continuation.finish() }
    }
}

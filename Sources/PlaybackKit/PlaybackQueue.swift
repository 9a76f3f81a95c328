import Dispatch
import FoundationEssentials

// MARK: - Values

/// How a play queue goes on at the end of an item.
public enum RepeatMode: Sendable, Equatable {
    /// Item after item, and the queue finishes after the last.
    case off
    /// The current item again and again.
    case one
    /// Item after item, and the first again after the last.
    case all
}

/// What a play queue tells its listeners, in order.
public enum QueueEvent: Sendable, Equatable {
    /// The item at this index became the current one (also when it starts again with
    /// `RepeatMode.one`).
    case itemChanged(Int)
    /// The last item ended and nothing follows (repeat off), or every item failed.
    case finished
}

/// An item of a play queue that could not play, and was skipped.
public struct QueueItemFailure: Sendable, Equatable {
    /// The item's index.
    public var index: Int
    /// The item.
    public var url: URL
    /// Why it failed.
    public var error: PlaybackError

    /// Makes the record of a failed item.
    public init(index: Int, url: URL, error: PlaybackError) {
        self.index = index
        self.url = url
        self.error = error
    }
}

// MARK: - The queue

/// Plays a list of items one after another with one player an item, over any list of backends
/// (each item's player is `Backends.makePlayer(backends:url:options:)`'s, so every item falls
/// back the same way).
///
/// While an item plays, the one after it is made and prepared, so that at the boundary it only
/// has to start: the gap is at most 100 ms of wall time. Its pictures reach a `.frames` handler
/// only once it is the current item (a `.window` output gets no item prepared ahead: two
/// engines cannot draw into one window). An item that fails (when prepared ahead, or while
/// current) is skipped: its `QueueItemFailure` is sent on `failures` before the `.itemChanged`
/// that passes over it is sent on `events` (two streams: a listener of both may see them in
/// either order), and the queue goes on.
///
/// `next()` and `previous()` follow the list (wrapping around only with `RepeatMode.all`);
/// `previous()` more than 3 s into an item restarts it instead, as desktop players do, and so
/// does `previous()` on the first item. A change of item keeps playing or paused as the queue
/// was (a paused queue prepares the new item and holds it at its start). After `.finished`,
/// `next()` and `previous()` do nothing, `jump(to:)` goes to that item and `play()` starts
/// again from the first.
///
/// Every call returns at once: the work runs on the queue's own serial queue.
public final class PlaybackQueue: Sendable {
    private struct Published {
        var items: [URL]
        var currentIndex: Int?
        var player: (any MediaPlayback)?
        var repeatMode: RepeatMode = .off
        var isShutDown = false
    }

    private let published: Locked<Published>
    private let core: QueueCore
    private let work = DispatchQueue(label: "playback.queue")
    private let hub = EventFanOut<QueueEvent>()
    private let failureHub = EventFanOut<QueueItemFailure>()
    private let candidates: [any PlaybackBackend]
    private let options: PlaybackOptions
    /// What `observeHandledEvents(_:)` was handed, called in order.
    private let handledEventObservers = Locked<[@Sendable (_ index: Int, _ event: PlaybackEvent) -> Void]>([])

    /// A queue of `urls`, each played by the first of `backends` that can (empty: the backend
    /// `Backends.makePlayer(backend: nil, ...)` would choose, i.e. `MEDIAPLAYBACK_BACKEND`, which
    /// may be a list, else the first registered). Nothing plays before `play()`.
    public convenience init(urls: [URL], backends: [String] = [], options: PlaybackOptions = PlaybackOptions()) {
        let names = backends.isEmpty ? Backends.requestedNames(nil) : backends
        self.init(urls: urls, trying: (names.isEmpty ? [""] : names).map(Backends.candidate(named:)), options: options)
    }

    /// A queue of `urls` over backends given as values (which need not be registered), tried in
    /// order for each item. An empty list fails every item as `backendUnavailable`.
    public init(urls: [URL], trying backends: [any PlaybackBackend], options: PlaybackOptions = PlaybackOptions()) {
        self.candidates = backends.isEmpty ? [UnavailableBackend(name: "", known: [])] : backends
        self.options = options
        self.published = Locked(Published(items: urls))
        self.core = QueueCore(items: urls)
    }

    deinit {
        // Last reference gone without shutdown(): nothing else can reach the players any more.
        if !published.get().isShutDown { core.releasePlayers() }
        hub.finish()
        failureHub.finish()
    }

    // MARK: - What the app reads

    /// The items, in order.
    public var items: [URL] { published.get().items }
    /// The index of the current item; nil before the queue first plays.
    public var currentIndex: Int? { published.get().currentIndex }
    /// The current item's player (after `.finished`, the last item's).
    public var player: (any MediaPlayback)? { published.get().player }
    /// What happens at the end of an item; `.off` by default.
    public var repeatMode: RepeatMode {
        get { published.get().repeatMode }
        set {
            guard !published.get().isShutDown else { return }
            published.withLock { $0.repeatMode = newValue }
            post { queue in
                queue.core.repeatMode = newValue
                queue.refreshPreload()
            }
        }
    }

    /// A fresh stream of the queue's events for each access; it finishes at shutdown().
    public var events: AsyncStream<QueueEvent> { hub.makeStream() }
    /// A fresh stream of the items that failed and were skipped, from now on; it finishes at
    /// shutdown().
    public var failures: AsyncStream<QueueItemFailure> { failureHub.makeStream() }

    /// Calls `observer` on the queue's serial queue each time the queue has handled an event of
    /// an item's player (or let it go, as it does after shutdown() and for a player it no longer
    /// uses), with the item's index. By then the queue has done everything that event makes it
    /// do, and so has the item's player before it passed the event on: what one waits on to
    /// know that the queue has caught up with a player.
    package func observeHandledEvents(_ observer: @escaping @Sendable (_ index: Int, _ event: PlaybackEvent) -> Void) {
        handledEventObservers.withLock { $0.append(observer) }
    }

    // MARK: - What the app does

    /// Plays the current item (the first, before the queue has played or after `.finished`).
    public func play() {
        post { queue in
            let core = queue.core
            core.intent = .playing
            if let current = core.current, !core.ended {
                current.player.play()
                queue.refreshPreload()
            } else if !core.items.isEmpty {
                core.failuresInARow = 0
                queue.switchTo(queue.fresh(0))
            }
        }
    }

    /// Pauses the current item.
    public func pause() {
        post { queue in
            let core = queue.core
            guard let current = core.current, !core.ended else { return }
            core.intent = .paused
            current.player.pause()
        }
    }

    /// Stops the current item (`play()` starts it again from its start) and lets go of the
    /// item prepared after it.
    public func stop() {
        post { queue in
            let core = queue.core
            guard let current = core.current, !core.ended else { return }
            core.intent = .stopped
            core.current?.isPrepared = false
            queue.discardUpcoming()
            current.player.stop()
        }
    }

    /// Goes to the next item (the first after the last only with `RepeatMode.all`; else nothing
    /// happens on the last).
    public func next() {
        post { queue in
            let core = queue.core
            guard let current = core.current, !core.ended,
                  let target = core.orderedNext(after: current.index, wrapping: core.repeatMode == .all) else { return }
            queue.go(to: target)
        }
    }

    /// Restarts the current item when it is more than 3 s in (or is the first, without
    /// `RepeatMode.all`); else goes to the item before.
    public func previous() {
        post { queue in
            let core = queue.core
            guard let current = core.current, !core.ended else { return }
            let before = current.index > 0 ? current.index - 1 : (core.repeatMode == .all ? core.items.count - 1 : nil)
            if current.player.currentPlaybackTime > PlaybackQueue.restartThreshold || before == nil {
                current.player.currentPlaybackTime = 0
            } else if let before {
                queue.go(to: before)
            }
        }
    }

    /// How far into an item (seconds) `previous()` restarts it instead of going back.
    public static let restartThreshold: TimeInterval = 3

    /// Makes the item at `index` the current one (an index outside the items is ignored).
    public func jump(to index: Int) {
        post { queue in
            guard index >= 0, index < queue.core.items.count else {
                PlaybackLog.log(.warning, "queue", "jump(to: \(index)): no such item (\(queue.core.items.count) items)")
                return
            }
            queue.go(to: index)
        }
    }

    /// Adds an item at the end.
    public func append(_ url: URL) {
        guard !published.get().isShutDown else { return }
        published.withLock { $0.items.append(url) }
        post { queue in
            queue.core.items.append(url)
            queue.refreshPreload()
        }
    }

    /// Shuts every player down; the event streams finish; later calls do nothing.
    public func shutdown() {
        let first = published.withLock { p -> Bool in
            defer { p.isShutDown = true }
            return !p.isShutDown
        }
        guard first else { return }
        work.async { [self] in
            core.releasePlayers()
            published.withLock { $0.player = nil }
            hub.finish()
            failureHub.finish()
        }
    }

    /// Runs `work` on the queue unless it is shut down.
    private func post(_ job: @escaping @Sendable (PlaybackQueue) -> Void) {
        guard !published.get().isShutDown else { return }
        work.async { [self] in
            guard !published.get().isShutDown else { return }
            job(self)
        }
    }

    // MARK: - Players (on the queue)

    /// A new player for the item at `index`, its events handed to the queue.
    private func fresh(_ index: Int) -> QueueSlot {
        core.slotsMade += 1
        let number = core.slotsMade
        let pictures = PictureGate()
        let player = FallbackPlayer(candidates: candidates, url: core.items[index], options: pictures.gating(options))
        let stream = player.events
        Task { [weak self] in
            for await event in stream {
                guard let self else { return }
                self.work.async {
                    self.received(event, fromSlot: number)
                    for observer in self.handledEventObservers.get() { observer(index, event) }
                }
            }
        }
        return QueueSlot(number: number, index: index, player: player, pictures: pictures)
    }

    /// Makes `slot` the current item: starts it (or prepares it, paused, when the queue is not
    /// playing), lets go of the one before and announces the change.
    private func switchTo(_ slot: QueueSlot) {
        let previous = core.current
        core.current = slot
        core.ended = false
        published.withLock {
            $0.currentIndex = slot.index
            $0.player = slot.player
        }
        previous?.pictures.close()
        slot.pictures.open()
        if core.intent == .playing {
            slot.player.play()
        } else {
            core.intent = .paused
            slot.player.prepareToPlay()
        }
        previous?.player.shutdown()
        hub.send(.itemChanged(slot.index))
        if slot.isPrepared { refreshPreload() }
    }

    /// Goes to `target` at the app's request: with the player prepared for it when there is
    /// one, else with a new one.
    private func go(to target: Int) {
        core.failuresInARow = 0
        if let upcoming = core.upcoming, upcoming.skipped.isEmpty, let slot = upcoming.slot, slot.index == target {
            core.upcoming = nil
            switchTo(slot)
        } else {
            discardUpcoming()
            switchTo(fresh(target))
        }
    }

    /// Makes sure the item that follows the current one at its end is being prepared (after
    /// the current one is prepared), or that none is when none follows.
    private func refreshPreload() {
        guard preparesAhead, let current = core.current, current.isPrepared, core.intent != .stopped, !core.ended else { return }
        let wanted = core.followingAtEnd(current.index)
        if let upcoming = core.upcoming {
            if upcoming.firstIndex == wanted { return }
            discardUpcoming()
        }
        guard let wanted else { return }
        core.upcoming = QueueUpcoming(skipped: [], slot: prepared(fresh(wanted)))
    }

    /// False with a `.window` output: two engines cannot draw into one window, so the next item
    /// is made only when it starts.
    private var preparesAhead: Bool {
        if case .window = options.videoOutput { return false }
        return true
    }

    /// `slot`, with its player asked to prepare.
    private func prepared(_ slot: QueueSlot) -> QueueSlot {
        slot.player.prepareToPlay()
        return slot
    }

    private func discardUpcoming() {
        core.upcoming?.slot?.pictures.close()
        core.upcoming?.slot?.player.shutdown()
        core.upcoming = nil
    }

    // MARK: - Events of the players (on the queue)

    private func received(_ event: PlaybackEvent, fromSlot number: Int) {
        guard !published.get().isShutDown else { return }
        if core.current?.number == number {
            switch event {
            case .preparedToPlay:
                core.current?.isPrepared = true
                core.failuresInARow = 0
                refreshPreload()
            case .finished(.playbackEnded): currentEnded()
            case .finished(.playbackError(let error)): currentFailed(error)
            default: break
            }
        } else if core.upcoming?.slot?.number == number {
            switch event {
            case .preparedToPlay:
                core.upcoming?.slot?.isPrepared = true
                core.failuresInARow = 0
            case .finished(.playbackError(let error)): upcomingFailed(error)
            default: break
            }
        }
    }

    /// The current item played to its end: the next one starts (the prepared one when there
    /// is one), or the queue finishes.
    private func currentEnded() {
        guard let current = core.current else { return }
        if let upcoming = core.upcoming {
            core.upcoming = nil
            take(upcoming)
        } else if let next = core.followingAtEnd(current.index) {
            switchTo(fresh(next))
        } else {
            finish()
        }
    }

    /// Goes on with `upcoming`: reports the items it skipped, then starts its player (or
    /// finishes when nothing follows them).
    private func take(_ upcoming: QueueUpcoming) {
        for failure in upcoming.skipped { failureHub.send(failure) }
        if let slot = upcoming.slot { switchTo(slot) } else { finish() }
    }

    /// The current item failed: it is reported and skipped, as if it had ended, except that
    /// `RepeatMode.one` moves on to the item after it.
    private func currentFailed(_ error: PlaybackError) {
        guard let current = core.current else { return }
        let failure = QueueItemFailure(index: current.index, url: core.items[current.index], error: error)
        report(failure)
        failureHub.send(failure)
        core.failuresInARow += 1
        let wanted = core.followingFailure(current.index)
        guard core.failuresInARow < core.items.count, let wanted else {
            finish()
            return
        }
        if let upcoming = core.upcoming, upcoming.firstIndex == wanted {
            core.upcoming = nil
            take(upcoming)
        } else {
            discardUpcoming()
            switchTo(fresh(wanted))
        }
    }

    /// The item prepared ahead failed: it is noted (and reported when the queue passes it) and
    /// the one after it is prepared instead.
    private func upcomingFailed(_ error: PlaybackError) {
        guard var upcoming = core.upcoming, let slot = upcoming.slot else { return }
        slot.pictures.close()
        slot.player.shutdown()
        let failure = QueueItemFailure(index: slot.index, url: core.items[slot.index], error: error)
        report(failure)
        upcoming.skipped.append(failure)
        core.failuresInARow += 1
        if let after = core.followingFailure(slot.index), core.failuresInARow < core.items.count {
            upcoming.slot = prepared(fresh(after))
        } else {
            upcoming.slot = nil
        }
        core.upcoming = upcoming
    }

    private func report(_ failure: QueueItemFailure) {
        PlaybackLog.log(.warning, "queue", "item \(failure.index) (\(failure.url.lastPathComponent)) cannot play, skipped: \(failure.error)")
    }

    /// Nothing follows: `.finished`; the last player stays until another item starts.
    private func finish() {
        discardUpcoming()
        core.intent = .stopped
        core.ended = true
        hub.send(.finished)
    }
}

// MARK: - State of the queue

/// What the queue wants its current item to do.
private enum QueueIntent { case playing, paused, stopped }

/// One item's player in a queue.
private struct QueueSlot {
    /// Tells the events of this player from those of others.
    let number: Int
    let index: Int
    let player: any MediaPlayback
    /// Its pictures reach the app while it is the current item.
    let pictures: PictureGate
    /// Its `.preparedToPlay` has arrived (false again after stop()).
    var isPrepared = false
}

/// The item that follows the current one, prepared ahead, and the items it skips (they failed
/// while being prepared ahead).
private struct QueueUpcoming {
    var skipped: [QueueItemFailure]
    /// Nil when no item follows the skipped ones.
    var slot: QueueSlot?
    /// The index that follows the current item: the first skipped one, else the slot's.
    var firstIndex: Int? { skipped.first?.index ?? slot?.index }
}

/// The queue's state, touched only on its serial queue.
private final class QueueCore: @unchecked Sendable {
    // @unchecked: every member is read and written only on `PlaybackQueue.work` (and in its
    // deinit, when nothing else can reach it).
    var items: [URL]
    var repeatMode: RepeatMode = .off
    var intent = QueueIntent.stopped
    var current: QueueSlot?
    var upcoming: QueueUpcoming?
    /// The queue finished; `play()` starts again from the first item.
    var ended = false
    /// Items that failed since the last one prepared: once every item has, the queue finishes.
    var failuresInARow = 0
    var slotsMade = 0

    init(items: [URL]) { self.items = items }

    /// The item after `index` in the list, wrapping around to the first when `wrapping`.
    func orderedNext(after index: Int, wrapping: Bool) -> Int? {
        if index + 1 < items.count { return index + 1 }
        return wrapping && !items.isEmpty ? 0 : nil
    }

    /// The item that plays when `index` ends.
    func followingAtEnd(_ index: Int) -> Int? {
        repeatMode == .one ? index : orderedNext(after: index, wrapping: repeatMode == .all)
    }

    /// The item that plays when `index` fails (never `index` again at once, unless it is the
    /// only one with `RepeatMode.all`).
    func followingFailure(_ index: Int) -> Int? {
        orderedNext(after: index, wrapping: repeatMode == .all)
    }

    /// Shuts every player down and forgets them.
    func releasePlayers() {
        current?.player.shutdown()
        upcoming?.slot?.player.shutdown()
        current = nil
        upcoming = nil
    }
}

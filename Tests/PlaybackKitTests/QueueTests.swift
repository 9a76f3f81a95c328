import Foundation
import Testing
@testable import PlaybackKit

/// `PlaybackQueue` over a scripted backend: items whose name starts with "bad" fail when they
/// are prepared; the others prepare at once and end when the test says so.
@Suite struct QueueTests {
    let log = ScriptLog()

    func queue(_ names: [String], repeatMode: RepeatMode = .off,
               options: PlaybackOptions = PlaybackOptions()) -> (PlaybackQueue, Inbox<QueueEvent>, Inbox<QueueItemFailure>) {
        let backend = ScriptedBackend(name: "scripted", log: log) { url in
            url.lastPathComponent.hasPrefix("bad")
                ? .fails(PlaybackError(code: .unsupportedFormat, message: "not media"), decoys: [])
                : .plays
        }
        let queue = PlaybackQueue(urls: names.map { URL(fileURLWithPath: "/media/\($0)") }, trying: [backend], options: options)
        queue.repeatMode = repeatMode
        return (queue, Inbox(queue.events), Inbox(queue.failures))
    }

    /// A queue of `names`, played until its `.itemChanged(0)`.
    func started(_ names: [String], repeatMode: RepeatMode = .off) async -> (PlaybackQueue, Inbox<QueueEvent>, Inbox<QueueItemFailure>) {
        let (queue, events, failures) = queue(names, repeatMode: repeatMode)
        queue.play()
        #expect(await events.next() == .itemChanged(0))
        return (queue, events, failures)
    }

    /// The latest player made for `item`, once it has been asked to prepare (or play).
    func player(_ item: String, number: Int = 1) async throws -> ScriptedPlayer {
        let made = await log.wait { log in
            log.players(for: item).count >= number && log.lines.contains("scripted \(item): prepare")
        }
        try #require(made, "no player for \(item) was prepared")
        return log.players(for: item)[number - 1]
    }

    /// The events of its items' players that `queue` has handled from now on, each with its
    /// item's index, in order.
    func handledEvents(of queue: PlaybackQueue) -> Waitable<[(index: Int, event: PlaybackEvent)]> {
        let handled = Waitable<[(index: Int, event: PlaybackEvent)]>([])
        queue.observeHandledEvents { index, event in handled.update { $0.append((index, event)) } }
        return handled
    }

    /// What was done to the players of `item`.
    func calls(_ item: String) -> [String] {
        log.lines.filter { $0.hasPrefix("scripted \(item): ") }.map { String($0.dropFirst("scripted \(item): ".count)) }
    }

    @Test func playsInOrderWithTheNextItemPreparedAhead() async throws {
        let (queue, events, _) = queue(["a.mp4", "b.mp4", "c.mp4"])
        defer { queue.shutdown() }
        #expect(queue.currentIndex == nil && queue.player == nil)
        queue.play()
        #expect(await events.next() == .itemChanged(0))
        let a = try await player("a.mp4")
        #expect(queue.currentIndex == 0)
        // b is prepared while a plays, before a ends.
        let b = try await player("b.mp4")
        #expect(calls("b.mp4").last == "prepare" && !calls("b.mp4").contains("play"))
        #expect(log.players(for: "c.mp4").isEmpty, "only the next item is prepared ahead")
        a.finishPlaying()
        #expect(await events.next() == .itemChanged(1))
        #expect(await log.wait { _ in self.calls("b.mp4").last == "play" && a.isShutDown })
        let c = try await player("c.mp4")
        b.finishPlaying()
        #expect(await events.next() == .itemChanged(2))
        c.finishPlaying()
        #expect(await events.next() == .finished)
        #expect(queue.currentIndex == 2, "the last item stays current after the end")
        #expect(log.players.count == 3)
        // play() after the end starts again from the first item.
        queue.play()
        #expect(await events.next() == .itemChanged(0))
        #expect(await log.wait { $0.players(for: "a.mp4").count == 2 })
    }

    @Test func theItemPreparedAheadShowsItsPictureOnlyOnceItIsCurrent() async throws {
        let pictures = Waitable(0)
        let options = PlaybackOptions(videoOutput: .frames(viewport: nil) { _ in pictures.update { $0 += 1 } })
        let (queue, events, _) = queue(["a.mp4", "b.mp4"], options: options)
        defer { queue.shutdown() }
        let handled = handledEvents(of: queue)
        queue.play()
        #expect(await events.next() == .itemChanged(0))
        let a = try await player("a.mp4")
        // b's picture is held by b's fallback player until it chooses its engine, then by the
        // queue: it must not reach the app in the meantime. b's player presents it as it
        // prepares and then sends `.playbackStateChanged(.paused)`, its last event; the fallback
        // player hands the picture on as it chooses the engine, before it passes the events on.
        // Once the queue has handled that last event, everything b's preparation set off has run.
        #expect(await handled.wait(timeout: 5) { events in
            events.contains { $0.index == 1 && $0.event == .playbackStateChanged(.paused) }
        })
        #expect(calls("b.mp4").contains("picture"), "b presents its picture while prepared ahead")
        #expect(pictures.value == 1, "only a's picture, not b's prepared ahead")
        a.finishPlaying()
        #expect(await events.next() == .itemChanged(1))
        #expect(await pictures.wait(timeout: 5) { $0 == 2 }, "b's picture, held back, comes when b starts")
    }

    @Test func repeatOnePlaysTheItemAgainWithAFreshPlayer() async throws {
        let (queue, events, _) = await started(["a.mp4", "b.mp4"], repeatMode: .one)
        defer { queue.shutdown() }
        let first = try await player("a.mp4")
        _ = try await player("a.mp4", number: 2)
        first.finishPlaying()
        #expect(await events.next() == .itemChanged(0))
        let second = log.players(for: "a.mp4")[1]
        #expect(await log.wait { _ in first.isShutDown && second.isPlaying })
        let third = try await player("a.mp4", number: 3)
        #expect(log.players(for: "b.mp4").isEmpty)
        // Back to off: the item prepared ahead becomes b.
        queue.repeatMode = .off
        _ = try await player("b.mp4")
        #expect(await log.wait { _ in third.isShutDown })
        second.finishPlaying()
        #expect(await events.next() == .itemChanged(1))
    }

    @Test func repeatAllStartsAgainAfterTheLast() async throws {
        let (queue, events, _) = await started(["a.mp4", "b.mp4"], repeatMode: .all)
        defer { queue.shutdown() }
        let a = try await player("a.mp4")
        let b = try await player("b.mp4")
        a.finishPlaying()
        #expect(await events.next() == .itemChanged(1))
        _ = try await player("a.mp4", number: 2)
        b.finishPlaying()
        #expect(await events.next() == .itemChanged(0))
        #expect(await log.wait { $0.players(for: "a.mp4")[1].isPlaying })
    }

    @Test func nextAndPreviousWhilePlayingAndPaused() async throws {
        let (queue, events, _) = await started(["a.mp4", "b.mp4", "c.mp4"])
        defer { queue.shutdown() }
        _ = try await player("b.mp4")
        queue.next()
        #expect(await events.next() == .itemChanged(1))
        let b = log.players(for: "b.mp4")[0]
        #expect(await log.wait { _ in self.calls("b.mp4").last == "play" }, "the prepared player plays")
        queue.pause()
        queue.next()
        #expect(await events.next() == .itemChanged(2))
        let c = try await player("c.mp4")
        #expect(await log.wait { _ in c.playbackState == .paused && b.isShutDown })
        #expect(!calls("c.mp4").contains("play"), "a paused queue holds the new item")
        // The last item, repeat off: next() does nothing (the jump's event comes first).
        queue.next()
        queue.previous()
        #expect(await events.next() == .itemChanged(1))
        let again = try await player("b.mp4", number: 2)
        #expect(await log.wait { _ in again.playbackState == .paused })
        // More than 3 s in: previous() restarts the item.
        try await queue.player?.prepare()
        again.currentPlaybackTime = 5
        queue.previous()
        queue.play()
        #expect(await log.wait { _ in self.calls("b.mp4").suffix(2) == ["seek 0.0", "play"] })
        #expect(queue.currentIndex == 1)
        // At the first item previous() restarts it, and with repeat all it wraps to the last.
        queue.jump(to: 0)
        #expect(await events.next() == .itemChanged(0))
        queue.previous()
        #expect(await log.wait { _ in self.calls("a.mp4").contains("seek 0.0") })
        queue.repeatMode = .all
        queue.previous()
        #expect(await events.next() == .itemChanged(2))
    }

    @Test func jumpGoesToTheItemAndIgnoresAnIndexOutside() async throws {
        let (queue, events, _) = queue(["a.mp4", "b.mp4", "c.mp4"])
        defer { queue.shutdown() }
        queue.jump(to: 7)
        queue.jump(to: -1)
        queue.jump(to: 2)
        #expect(await events.next() == .itemChanged(2))
        let c = try await player("c.mp4")
        #expect(await log.wait { _ in c.playbackState == .paused }, "jump(to:) before play() prepares the item, paused")
        queue.play()
        #expect(await log.wait { _ in self.calls("c.mp4").last == "play" })
        #expect(log.players(for: "a.mp4").isEmpty && log.players(for: "b.mp4").isEmpty)
    }

    @Test func aFailingItemIsSkippedWithItsErrorReported() async throws {
        let (queue, events, failures) = await started(["a.mp4", "bad-b.mp4", "c.mp4"])
        defer { queue.shutdown() }
        let a = try await player("a.mp4")
        // bad-b fails while prepared ahead; c is prepared in its place.
        _ = try await player("c.mp4")
        #expect(failures.all.isEmpty, "a failure is reported when the queue reaches the item")
        a.finishPlaying()
        let failure = await failures.next()
        #expect(failure?.index == 1 && failure?.error.code == .unsupportedFormat && failure?.url.lastPathComponent == "bad-b.mp4")
        #expect(await events.next() == .itemChanged(2))
        #expect(await log.wait { _ in self.calls("c.mp4").last == "play" })
    }

    @Test func aFailingCurrentItemIsSkipped() async throws {
        let (queue, events, failures) = await started(["bad-a.mp4", "b.mp4", "c.mp4"])
        defer { queue.shutdown() }
        #expect(await failures.next()?.index == 0)
        #expect(await events.next() == .itemChanged(1))
        let b = try await player("b.mp4")
        b.fail(PlaybackError(code: .decode, message: "broken in the middle"))
        #expect(await failures.next()?.error.code == .decode)
        #expect(await events.next() == .itemChanged(2))
    }

    @Test func whenEveryItemFailsTheQueueFinishes() async throws {
        let (queue, events, failures) = await started(["bad-a.mp4", "bad-b.mp4"], repeatMode: .all)
        #expect(await events.next() == .itemChanged(1))
        #expect(await events.next() == .finished)
        // The queue sends every failure before shutdown() ends its streams: what they delivered
        // by their end is all there was.
        queue.shutdown()
        #expect(await failures.waitForEnd())
        #expect(await events.waitForEnd())
        #expect(failures.all.map(\.index) == [0, 1], "each item fails once")
        #expect(failures.all.map(\.url.lastPathComponent) == ["bad-a.mp4", "bad-b.mp4"])
        #expect(events.all == [.itemChanged(0), .itemChanged(1), .finished], "nothing plays after the end")
        #expect(log.players.count == 2)
    }

    @Test func anItemAppendedWhileTheLastPlaysIsPreparedAhead() async throws {
        let (queue, events, _) = await started(["a.mp4"])
        defer { queue.shutdown() }
        let a = try await player("a.mp4")
        queue.append(URL(fileURLWithPath: "/media/b.mp4"))
        #expect(queue.items.count == 2)
        _ = try await player("b.mp4")
        a.finishPlaying()
        #expect(await events.next() == .itemChanged(1))
        #expect(await log.wait { _ in self.calls("b.mp4").last == "play" })
    }

    @Test func stopLetsGoOfThePreparedItemAndPlayStartsAgain() async throws {
        let (queue, events, _) = await started(["a.mp4", "b.mp4"])
        defer { queue.shutdown() }
        let b = try await player("b.mp4")
        queue.stop()
        #expect(await log.wait { _ in b.isShutDown && self.calls("a.mp4").last == "stop" })
        queue.play()
        #expect(await log.wait { $0.players(for: "b.mp4").count == 2 })
        #expect(await log.wait { _ in self.calls("a.mp4").suffix(2) == ["play", "prepare"] })
        // Every event is sent before shutdown() ends the stream: what it delivered by its end is
        // all there was.
        queue.shutdown()
        #expect(await events.waitForEnd())
        #expect(events.all == [.itemChanged(0)], "stop() and play() keep the item")
    }

    @Test func shutdownReleasesEveryPlayerAndEndsTheStreams() async throws {
        let (queue, events, failures) = queue(["a.mp4", "b.mp4"])
        queue.play()
        #expect(await events.next() == .itemChanged(0))
        _ = try await player("b.mp4")
        queue.shutdown()
        #expect(await events.waitForEnd())
        #expect(await failures.waitForEnd())
        #expect(await log.wait { $0.players.allSatisfy(\.isShutDown) })
        #expect(queue.player == nil)
        queue.play()
        queue.next()
        #expect(log.players.count == 2, "calls after shutdown() do nothing")
    }
}

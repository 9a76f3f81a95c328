import FoundationEssentials
import PlaybackKit

/// `PlaybackQueue` over the backend under test: items in order with at most 100 ms of wall
/// time between one item's end and the next one's start, the repeat modes, next and previous
/// while playing and paused, and failing items skipped with their errors reported.
///
/// Items end sooner than their length where the check is not about the boundary: a seek to
/// `nearEnd` seconds before the end.
enum QueueChecks {
    /// The queue checks, in the order they run.
    static let all: [Check] = [gapless, pictures, repeatOne, repeatAll, nextPrevious, skipsFailing]

    /// The longest gap allowed at an item boundary.
    static let gapLimit: TimeInterval = 0.1
    /// How far before the end checks seek to let an item end soon.
    static let nearEnd: TimeInterval = 0.4
    /// short.mp4's natural size; anamorphic.mp4 displays at 480x240.
    static let shortSize = VideoSize(width: 320, height: 240), anamorphicSize = VideoSize(width: 480, height: 240)

    // MARK: - queue.gapless

    static let gapless = Check(
        "queue.gapless",
        "a queue of short.mp4, anamorphic.mp4, short.mp4 plays them in order (.itemChanged 0, 1, 2, each item's own size), then .finished; at each boundary the next item's position moves within \(Int(gapLimit * 1000)) ms of wall time after the previous one's stopped",
        timeout: 45
    ) { context in
        let urls = try ["short.mp4", "anamorphic.mp4", "short.mp4"].map(context.fixture)
        let queue = try context.queue(urls)
        let recorder = QueueRecorder(queue)
        let watch = BoundaryWatch(queue)
        defer { watch.stop() }
        context.trace.set("queue.play() of \(urls.count) items")
        queue.play()
        for (index, size) in [shortSize, anamorphicSize, shortSize].enumerated() {
            context.trace.set("waiting for item \(index)")
            try await recorder.waitForItem(index, timeout: index == 0 ? 10 : 8)
            let player = try currentPlayer(queue, index)
            try await waitUntil("item \(index)'s player is prepared", timeout: 5) { player.isPreparedToPlay }
            try expect(player.naturalSize == size, "item \(index) (\(urls[index].lastPathComponent)) shows \(player.naturalSize), expected \(size): not the item in that place")
        }
        context.trace.set("waiting for the end of the queue")
        try await recorder.waitFor(".finished", timeout: 8) { $0 == .event(.finished) }
        watch.stop()
        let events = recorder.events()
        try expect(events == [.itemChanged(0), .itemChanged(1), .itemChanged(2), .finished], "the queue's events: \(events)")
        let gaps = watch.gaps()
        try expect(gaps.count == 2, "expected 2 boundaries, measured \(gaps.count): \(gaps)")
        let long = gaps.enumerated().filter { $0.element.seconds > gapLimit }
        try expect(long.isEmpty, "gaps at the boundaries: \(gaps.map(\.description).joined(separator: ", ")), limit \(Int(gapLimit * 1000)) ms (sampled every \(Int((gaps.map(\.resolution).max() ?? 0) * 1000)) ms at most)")
    }

    // MARK: - queue.pictures

    static let pictures = Check(
        "queue.pictures",
        "with a .frames output, the item prepared ahead shows nothing while the one before plays: every picture before .itemChanged(1) is short.mp4's (320x240, frame numbers rising), and anamorphic.mp4's (480x240) start at its frame 0 once it is current"
    ) { context in
        let frames = FrameCollector()
        let queue = try context.queue(try ["short.mp4", "anamorphic.mp4"].map(context.fixture), frames: frames)
        let recorder = QueueRecorder(queue)
        queue.play()
        try await recorder.waitForItem(0)
        let first = try await playing(queue, 0)
        try await seekNearEnd(first)
        let changed = try await recorder.waitForItem(1, timeout: 5)
        _ = try await playing(queue, 1)
        let records = frames.records
        guard let start = records.firstIndex(where: { $0.size == anamorphicSize }) else {
            throw CheckFailure("no picture of anamorphic.mp4 (480x240) after it became current (\(records.count) pictures)")
        }
        let head = records[..<start], tail = records[start...]
        let strays = tail.filter { $0.size != anamorphicSize }
        try expect(strays.isEmpty, "short.mp4's pictures went on after anamorphic.mp4's first (\(strays.count) of them): the item prepared ahead showed a picture while the one before played")
        let numbers = head.compactMap(\.number)
        let fallsBack = zip(numbers, numbers.dropFirst()).first { $1 < $0 }
        try expect(fallsBack == nil, "short.mp4's frame numbers fell back from \(fallsBack?.0 ?? 0) to \(fallsBack?.1 ?? 0)")
        try expect((numbers.last ?? 0) >= 65, "short.mp4's last picture before the boundary is frame \(numbers.last ?? -1), expected one near its end (75 frames)")
        try expect(records[start].number == 0, "anamorphic.mp4's first picture is frame \(records[start].number.map(String.init) ?? "unreadable"), expected 0")
        let early = changed.time - records[start].arrival
        try expect(early <= 0.05, "anamorphic.mp4's first picture came \(format(early)) s before it became current")
    }

    // MARK: - queue.repeat-one

    static let repeatOne = Check(
        "queue.repeat-one",
        "repeat one: at its end short.mp4 plays again from its start with a new player (.itemChanged(0) again); back to repeat off, the next item follows"
    ) { context in
        let (queue, recorder) = try await started(context, ["short.mp4", "anamorphic.mp4"], repeatMode: .one)
        let first = try await playing(queue, 0)
        let mark = recorder.mark
        try await seekNearEnd(first)
        try await recorder.waitForItem(0, since: mark, timeout: 5)
        let second = try await playing(queue, 0)
        try expect(second !== first, "repeat one played the item again with the same player")
        try expect(second.currentPlaybackTime < 1.5, "the repeated item started at \(format(second.currentPlaybackTime)) s, not at its start")
        queue.repeatMode = .off
        let changed = recorder.mark
        try await seekNearEnd(second)
        try await recorder.waitForItem(1, since: changed, timeout: 5)
        try expect(recorder.events() == [.itemChanged(0), .itemChanged(0), .itemChanged(1)], "the queue's events: \(recorder.events())")
    }

    // MARK: - queue.repeat-all

    static let repeatAll = Check(
        "queue.repeat-all",
        "repeat all: after the last item the first plays again (.itemChanged 0, 1, 0), with no .finished"
    ) { context in
        let (queue, recorder) = try await started(context, ["short.mp4", "anamorphic.mp4"], repeatMode: .all)
        var mark = 0
        for (step, index) in [0, 1, 0].enumerated() {
            if step > 0 { try await recorder.waitForItem(index, since: mark, timeout: 5) }
            let player = try await playing(queue, index)
            mark = recorder.mark
            if step < 2 { try await seekNearEnd(player) }
        }
        try expect(recorder.events() == [.itemChanged(0), .itemChanged(1), .itemChanged(0)], "the queue's events: \(recorder.events())")
    }

    // MARK: - queue.next-previous

    static let nextPrevious = Check(
        "queue.next-previous",
        "next() and previous() while playing go to the neighbour and play it; previous() more than 3 s in restarts the item; while paused they prepare the neighbour and hold it at its start; jump(to:) goes there; next() on the last item does nothing",
        timeout: 40
    ) { context in
        let (queue, recorder) = try await started(context, ["frames.mp4", "short.mp4", "anamorphic.mp4"])
        let first = try await playing(queue, 0)
        var mark = recorder.mark
        queue.next()
        try await recorder.waitForItem(1, since: mark)
        _ = try await playing(queue, 1)
        mark = recorder.mark
        queue.previous()
        try await recorder.waitForItem(0, since: mark)
        let again = try await playing(queue, 0)
        try expect(again !== first, "previous() came back to the player it had let go")
        try expect(again.currentPlaybackTime < 1.5, "previous() started frames.mp4 at \(format(again.currentPlaybackTime)) s, not at its start")

        // More than 3 s in: the same item again from its start.
        mark = recorder.mark
        try await seekAndWait(again, to: 5)
        queue.previous()
        try await waitUntil("previous() 5 s into frames.mp4 to restart it", timeout: 5) { again.currentPlaybackTime < 1 }
        try expect(queue.currentIndex == 0 && queue.player === again, "previous() 5 s in left the item (now item \(queue.currentIndex ?? -1))")

        // Paused: the neighbours are prepared and held at their start.
        queue.pause()
        try await waitUntil("pause() to pause the item", timeout: 5) { again.playbackState == .paused }
        queue.next()
        try await recorder.waitForItem(1, since: mark)
        try await held(queue, 1)
        mark = recorder.mark
        queue.previous()
        try await recorder.waitForItem(0, since: mark)
        try await held(queue, 0)

        // jump(to:), then next() on the last item: nothing comes before the next jump's event.
        mark = recorder.mark
        queue.jump(to: 2)
        try await recorder.waitForItem(2, since: mark)
        try await held(queue, 2)
        queue.play()
        _ = try await playing(queue, 2)
        mark = recorder.mark
        queue.next()
        queue.jump(to: 1)
        try await recorder.waitForItem(1, since: mark)
        try expect(recorder.events(since: mark) == [.itemChanged(1)], "next() on the last item (repeat off): \(recorder.events(since: mark)), expected nothing before jump(to: 1)'s .itemChanged(1)")
        _ = try await playing(queue, 1)
    }

    // MARK: - queue.skips-failing

    static let skipsFailing = Check(
        "queue.skips-failing",
        "a missing first item and random bytes in the middle are skipped with their errors reported (sourceNotFound; unsupportedFormat or decode), the queue goes on to the item after each and finishes; shutdown() ends its event stream"
    ) { context in
        let missing = try context.fixture("frames.mp4").deletingLastPathComponent().appendingPathComponent("no-such-file.mp4")
        let first = try context.queue([missing, try context.fixture("short.mp4")])
        let firstRecorder = QueueRecorder(first)
        first.play()
        try await firstRecorder.waitForItem(1, timeout: 10, failuresExpected: true)
        try await firstRecorder.waitFor("the failure of item 0", timeout: 2, failuresExpected: true) {
            if case .failure = $0 { true } else { false }
        }
        _ = try await playing(first, 1)
        let skipped = firstRecorder.failures()
        try expect(skipped.map(\.index) == [0] && skipped.first?.error.code == .sourceNotFound,
                   "a missing first item: failures \(skipped.map { describe(.failure($0)) }), expected item 0 with sourceNotFound")

        let (queue, recorder) = try await started(context, ["short.mp4", "random.mp4", "anamorphic.mp4"])
        let player = try await playing(queue, 0)
        try await seekAndWait(player, to: player.duration - 1)
        try await recorder.waitForItem(2, timeout: 5, failuresExpected: true)
        // The failure is sent before the .itemChanged that passes over it, on a stream of its own.
        try await recorder.waitFor("the failure of item 1", timeout: 2, failuresExpected: true) {
            if case .failure = $0 { true } else { false }
        }
        let failures = recorder.failures()
        try expect(failures.count == 1 && failures[0].index == 1 && [.unsupportedFormat, .decode].contains(failures[0].error.code),
                   "random bytes as item 1: failures \(failures.map { describe(.failure($0)) }), expected item 1 with unsupportedFormat or decode")
        let last = try await playing(queue, 2)
        try await seekNearEnd(last)
        try await recorder.waitFor(".finished", timeout: 5, failuresExpected: true) { $0 == .event(.finished) }
        try expect(recorder.events() == [.itemChanged(0), .itemChanged(2), .finished], "the queue's events: \(recorder.events())")
        queue.shutdown()
        let ended = await recorder.waitForEventsEnd(timeout: 5)
        try expect(ended && queue.player == nil, "after shutdown() the event stream ended: \(ended), the player is released: \(queue.player == nil)")
    }

    // MARK: - Helpers

    /// A queue of the fixtures `names` with `repeatMode`, its reports recorded, played until
    /// `.itemChanged(0)`.
    static func started(_ context: CheckContext, _ names: [String], repeatMode: RepeatMode = .off) async throws -> (PlaybackQueue, QueueRecorder) {
        let queue = try context.queue(try names.map(context.fixture))
        let recorder = QueueRecorder(queue)
        queue.repeatMode = repeatMode
        queue.play()
        try await recorder.waitForItem(0)
        return (queue, recorder)
    }

    /// The queue's current player, which must be item `index`'s.
    static func currentPlayer(_ queue: PlaybackQueue, _ index: Int) throws -> any MediaPlayback {
        guard queue.currentIndex == index, let player = queue.player else {
            throw CheckFailure("expected item \(index) to be current, it is \(queue.currentIndex.map(String.init) ?? "none")")
        }
        return player
    }

    /// Item `index`'s player once it plays: state playing and the position moved 0.2 s.
    static func playing(_ queue: PlaybackQueue, _ index: Int) async throws -> any MediaPlayback {
        let player = try currentPlayer(queue, index)
        let start = player.currentPlaybackTime
        try await waitUntil("item \(index) to play (state \(player.playbackState))", timeout: 5) {
            player.isPlaying && player.currentPlaybackTime >= start + 0.2
        }
        return player
    }

    /// Fails unless item `index`'s player is prepared, paused at its start, and stays there.
    static func held(_ queue: PlaybackQueue, _ index: Int) async throws {
        let player = try currentPlayer(queue, index)
        try await waitUntil("item \(index) to be prepared, paused", timeout: 8) {
            player.isPreparedToPlay && player.playbackState == .paused
        }
        try await observe(for: 0.3)
        try expect(player.playbackState == .paused && player.currentPlaybackTime < 0.05,
                   "item \(index) in a paused queue: state \(player.playbackState) at \(format(player.currentPlaybackTime)) s, expected paused at 0")
    }

    /// Seeks `player` and waits until its position is near the target.
    static func seekAndWait(_ player: any MediaPlayback, to target: TimeInterval) async throws {
        player.currentPlaybackTime = target
        try await waitUntil("the seek to \(format(target)) s", timeout: 5) { abs(player.currentPlaybackTime - target) < 0.3 }
    }

    /// Seeks the playing `player` to `nearEnd` seconds before its end.
    static func seekNearEnd(_ player: any MediaPlayback) async throws {
        let duration = player.duration
        try expect(duration > 1, "the item reports duration \(format(duration)) s")
        try await seekAndWait(player, to: duration - nearEnd)
    }

    /// Polls `condition` every 10 ms until it holds; fails after `timeout` seconds.
    static func waitUntil(_ what: String, timeout: TimeInterval, _ condition: () -> Bool) async throws {
        let deadline = monotonicSeconds() + timeout
        while !condition() {
            if monotonicSeconds() > deadline { throw CheckFailure("waited \(format(timeout)) s for \(what)") }
            try await observe(for: 0.01)
        }
    }
}

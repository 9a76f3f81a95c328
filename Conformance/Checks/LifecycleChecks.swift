import FoundationEssentials
import Glibc
import PlaybackKit

/// Prepare, autoplay, state events, stop, shutdown, play before prepare.
enum LifecycleChecks {
    static let all: [Check] = [prepared, autoplayOn, autoplayOff, stateOrder, stop, shutdown, playBeforePrepare]

    static let prepared = Check("lifecycle.prepared", "prepareToPlay() sends .preparedToPlay; then isPreparedToPlay, paused at 0, duration known") { context in
        let p = try context.player("frames.mp4")
        try expect(!p.player.isPreparedToPlay, "isPreparedToPlay is true before prepareToPlay()")
        try expect(p.player.playbackState == .stopped, "the state before prepareToPlay() is \(p.player.playbackState), not stopped")
        try await p.prepare()
        try expect(p.player.isPreparedToPlay, "isPreparedToPlay is false after .preparedToPlay")
        try expect(p.player.playbackState == .paused, "the state after prepare is \(p.player.playbackState), not paused")
        try expect(!p.player.isPlaying, "isPlaying is true after prepare without autoplay")
        try expect(p.position < 0.05, "the position after prepare is \(format(p.position)) s, not 0")
        try expect(p.player.duration > 0, "the duration after prepare is \(p.player.duration)")
        let load = p.player.loadState
        try expect(load.contains(.playable) && !load.contains(.stalled), "the load state after prepare is \(load), expected playable")
        let events = p.recorder.events()
        try expect(events.filter { $0 == .preparedToPlay }.count == 1, "expected one .preparedToPlay, got: \(summary(events))")
    }

    static let autoplayOn = Check("lifecycle.autoplay-on", "shouldAutoplay = true starts playing by itself once prepared") { context in
        let p = try context.player("frames.mp4")
        p.player.shouldAutoplay = true
        try expect(p.player.shouldAutoplay, "shouldAutoplay reads false after setting it true")
        let mark = p.mark
        try await p.prepare()
        try await p.recorder.waitFor(".playbackStateChanged(.playing) after prepare with autoplay", since: mark, timeout: 5) { $0 == .playbackStateChanged(.playing) }
        try await p.waitForPosition(atLeast: 0.4, timeout: 5)
        try expect(p.player.isPlaying, "isPlaying is false while autoplaying")
    }

    static let autoplayOff = Check("lifecycle.autoplay-off", "shouldAutoplay false (the default) waits paused after prepare") { context in
        let p = try context.player("frames.mp4")
        try expect(!p.player.shouldAutoplay, "shouldAutoplay defaults to true")
        try await p.prepare()
        try await observe(for: 0.8)
        try expect(!p.states().contains(.playing), "it started playing without play(): \(summary(p.recorder.events()))")
        try expect(p.player.playbackState == .paused, "the state is \(p.player.playbackState), not paused")
        try expect(p.position < 0.05, "the position moved to \(format(p.position)) s without play()")
        let frame = try p.thumbnailFrameNumber("paused after prepare")
        try expect(frame == 0, "the picture after prepare is frame \(frame), not 0")
    }

    static let stateOrder = Check("lifecycle.state-order", "state events come in order: prepared → paused → playing → paused → stopped, each matching playbackState") { context in
        let p = try context.player("frames.mp4")
        try await p.prepare()
        try expect(p.player.playbackState == .paused, "after prepare playbackState is \(p.player.playbackState)")
        try await p.play()
        try expect(p.player.playbackState == .playing, "after .playing playbackState is \(p.player.playbackState)")
        try await p.waitForPosition(atLeast: 0.3, timeout: 5)
        try await p.pause()
        try expect(p.player.playbackState == .paused, "after .paused playbackState is \(p.player.playbackState)")
        let mark = p.mark
        p.player.stop()
        try await p.recorder.waitFor(".finished(.userExited)", since: mark, timeout: 5) { $0 == .finished(.userExited) }
        let events = p.recorder.events()
        guard let prepared = events.firstIndex(of: .preparedToPlay) else { throw CheckFailure("no .preparedToPlay in \(summary(events))") }
        let statesBefore = events[..<prepared].compactMap(\.state).filter { $0 != .stopped }
        try expect(statesBefore.isEmpty, "state events before .preparedToPlay: \(statesBefore)")
        var states = p.states()
        states.removeAll { $0 == .seekingForward || $0 == .seekingBackward }
        let collapsed = states.enumerated().filter { $0.offset == 0 || states[$0.offset - 1] != $0.element }.map(\.element)
        try expect(collapsed.count == states.count, "a state event repeats the state before it: \(states)")
        try expect(collapsed == [.paused, .playing, .paused, .stopped], "state events \(collapsed), expected [paused, playing, paused, stopped]")
        let stopped = events.lastIndex(of: .playbackStateChanged(.stopped)) ?? 0
        let exited = events.lastIndex(of: .finished(.userExited)) ?? 0
        try expect(stopped < exited, ".playbackStateChanged(.stopped) comes after .finished(.userExited)")
    }

    static let stop = Check("lifecycle.stop", "stop() sends .finished(.userExited), state stopped; the player can be prepared and played again") { context in
        let p = try context.player("frames.mp4")
        try await p.prepare()
        try await p.play()
        try await p.waitForPosition(atLeast: 0.3, timeout: 5)
        let mark = p.mark
        p.player.stop()
        try await p.recorder.waitFor(".finished(.userExited)", since: mark, timeout: 5) { $0 == .finished(.userExited) }
        try expect(p.player.playbackState == .stopped, "after stop() the state is \(p.player.playbackState)")
        try expect(!p.player.isPlaying, "after stop() isPlaying is true")
        try expect(!p.player.isPreparedToPlay, "after stop() isPreparedToPlay is still true")
        let ends = p.recorder.events(since: mark).filter(\.isFinished)
        try expect(ends == [.finished(.userExited)], "after stop(): \(summary(ends)), expected one .finished(.userExited)")
        try await p.prepare()
        try await p.play()
        try await p.waitForPosition(atLeast: 0.3, timeout: 5)
    }

    static let shutdown = Check("lifecycle.shutdown", "shutdown() ends every event stream; a second shutdown() and every later call are prompt, harmless no-ops") { context in
        let p = try context.player("frames.mp4")
        try await p.prepare()
        try await p.play()
        try await p.waitForPosition(atLeast: 0.2, timeout: 5)
        let slowShutdown = timed("shutdown()") { p.player.shutdown() }
        let ended = await p.recorder.waitForStreamEnd(timeout: 5)
        try expect(ended, "the event stream did not finish within 5 s of shutdown()")
        let mark = p.mark
        var slow = slowShutdown.map { [$0] } ?? []
        if let again = timed("second shutdown()", { p.player.shutdown() }) { slow.append(again) }
        slow += DisciplineChecks.callEveryMember(p.player, playing: true)
        p.player.stop()
        slow += DisciplineChecks.callEveryMember(p.player, playing: false)
        try expect(slow.isEmpty, "calls after shutdown() were slow: \(slow.joined(separator: ", "))")
        let fresh = EventRecorder(p.player.events)
        let freshEnded = await fresh.waitForStreamEnd(timeout: 1)
        try expect(freshEnded, "an events stream taken after shutdown() does not finish")
        try await observe(for: 0.5)
        try expect(p.recorder.events(since: mark).isEmpty && fresh.events().isEmpty, "events after shutdown(): \(summary(p.recorder.events(since: mark) + fresh.events()))")
        try expect(!p.player.isPlaying && !p.player.isPreparedToPlay, "after shutdown() isPlaying=\(p.player.isPlaying) isPreparedToPlay=\(p.player.isPreparedToPlay)")
    }

    static let playBeforePrepare = Check("lifecycle.play-before-prepare", "play() without prepareToPlay() prepares and then plays") { context in
        let p = try context.player("frames.mp4")
        let mark = p.mark
        p.player.play()
        try await p.recorder.waitFor(".preparedToPlay", since: mark, timeout: 10) { $0 == .preparedToPlay }
        try await p.recorder.waitFor(".playbackStateChanged(.playing)", since: mark, timeout: 5) { $0 == .playbackStateChanged(.playing) }
        try await p.waitForPosition(atLeast: 0.4, timeout: 5)
        try expect(p.player.isPlaying, "isPlaying is false")
    }
}

/// Runs `call` and returns "`name` took N ms" when it took longer than `limit` (50 ms) of its
/// own: the wall time less what its thread spent ready to run but waiting for a core. A loaded
/// machine may keep any call off the cores for a while; a call that blocks (on a lock, a round
/// trip to the engine, a sleep) is not waiting for a core, and counts in full. The report says
/// how the time was spent: on a core, waiting for one, and the rest blocked.
///
/// A `repeatable` call (a read with no effect) that went over while running on its core,
/// not blocked, is measured once more, and is slow only if it is slow again: a call that does
/// too much work on the caller's thread is slow every time, while a one-off stretch on the
/// core (seen twice in clean-clone runs under the address sanitizer: a 320x240 thumbnail took
/// 58 ms on its core once, and under 8 ms in every run since) is the process's, not the
/// player's. A call that waited for the engine is slow at once.
func timed(_ name: String, limit: TimeInterval = DisciplineChecks.callLimit, repeatable: Bool = false,
           _ call: () -> Void) -> String? {
    let first = CallTiming.measure(call, limit: limit)
    guard first.isOver(limit) else { return nil }
    if repeatable, first.blocked <= limit {
        let again = CallTiming.measure(call, limit: limit)
        guard again.isOver(limit) else { return nil }
        return "\(name) took \(first.description), then \(again.description)"
    }
    return "\(name) took \(first.description)"
}

/// How long one call took, and where the time went when the kernel says.
struct CallTiming: CustomStringConvertible {
    /// Wall seconds.
    var elapsed: TimeInterval
    /// The calling thread's times over the call; nil where the kernel keeps none.
    var spent: ThreadSchedulerTimes?

    /// Seconds neither on a core nor waiting for one.
    var blocked: TimeInterval {
        guard let spent else { return elapsed }
        return max(0, elapsed - spent.onCore - spent.waitingForCore)
    }

    /// Whether the call took longer than `limit`, less its wait for a core.
    func isOver(_ limit: TimeInterval) -> Bool { elapsed - (spent?.waitingForCore ?? 0) > limit }

    /// "N ms (A on a core, B waiting for one, C blocked)".
    var description: String {
        func milliseconds(_ seconds: TimeInterval) -> Int { Int((seconds * 1000).rounded()) }
        guard let spent else { return "\(milliseconds(elapsed)) ms" }
        return "\(milliseconds(elapsed)) ms (\(milliseconds(spent.onCore)) on a core, "
            + "\(milliseconds(spent.waitingForCore)) waiting for one, \(milliseconds(blocked)) blocked)"
    }

    /// Runs `call` and measures it; the thread's times are read only when it took longer
    /// than `limit`.
    static func measure(_ call: () -> Void, limit: TimeInterval) -> CallTiming {
        let start = monotonicSeconds()
        let before = ThreadSchedulerTimes.current()
        call()
        let elapsed = monotonicSeconds() - start
        guard elapsed > limit else { return CallTiming(elapsed: elapsed, spent: nil) }
        let spent = ThreadSchedulerTimes.current().flatMap { after in before.map { after.since($0) } }
        return CallTiming(elapsed: elapsed, spent: spent)
    }
}

/// The time the calling thread has spent on a core and ready to run but waiting for one, from
/// the scheduler's statistics (`/proc/thread-self/schedstat`: its first two fields, in
/// nanoseconds).
struct ThreadSchedulerTimes {
    /// Seconds spent running.
    var onCore: TimeInterval
    /// Seconds spent ready to run, waiting for a core.
    var waitingForCore: TimeInterval

    /// The times spent since `earlier`.
    func since(_ earlier: ThreadSchedulerTimes) -> ThreadSchedulerTimes {
        ThreadSchedulerTimes(onCore: max(0, onCore - earlier.onCore),
                             waitingForCore: max(0, waitingForCore - earlier.waitingForCore))
    }

    /// The calling thread's times so far; nil where the kernel keeps no such statistics.
    static func current() -> ThreadSchedulerTimes? {
        let descriptor = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 96)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let fields = String(decoding: bytes[0..<count], as: UTF8.self).split(separator: " ")
        guard fields.count >= 2, let running = UInt64(fields[0]), let waiting = UInt64(fields[1]) else { return nil }
        return ThreadSchedulerTimes(onCore: Double(running) / 1e9, waitingForCore: Double(waiting) / 1e9)
    }
}

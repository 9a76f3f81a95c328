import FoundationEssentials
import PlaybackKit

/// The end of the media: one finish, position at the end, restart, seek after the end.
enum EndChecks {
    static let all: [Check] = [finishedOnce, positionAtEnd, restart, seekAfterEnd, pauseNearEnd]

    /// Prepares short.mp4, seeks 1 s before its end, plays to the end and returns the player
    /// and the event mark from before play().
    static func playToEnd(_ context: CheckContext) async throws -> (CheckPlayer, Int) {
        let p = try context.player("short.mp4")
        try await p.prepare()
        let duration = p.player.duration
        try expect(duration > 1.5, "short.mp4 reports duration \(format(duration)) s")
        try await p.seek(to: duration - 1.0)
        let mark = p.mark
        try await p.play()
        try await p.waitForEnd(since: mark, timeout: 6)
        return (p, mark)
    }

    static let finishedOnce = Check("end.finished-once", "playing to the end sends exactly one .finished(.playbackEnded) and stops") { context in
        let (p, mark) = try await playToEnd(context)
        try await observe(for: 1.0)
        let finishes = p.recorder.events(since: mark).filter(\.isFinished)
        try expect(finishes == [.finished(.playbackEnded)], "at the end: \(summary(finishes)), expected exactly one .finished(.playbackEnded)")
        try expect(p.player.playbackState == .stopped, "at the end the state is \(p.player.playbackState), expected stopped")
        try expect(!p.player.isPlaying, "at the end isPlaying is true")
        let states = p.states(since: mark)
        try expect(states.last == .stopped, "the last state event at the end is \(states.last.map { "\($0)" } ?? "none"), expected stopped")
    }

    static let positionAtEnd = Check("end.position", "at the end the position is the duration and holds there; the picture is the last frame") { context in
        let (p, _) = try await playToEnd(context)
        let duration = p.player.duration
        let samples = try await sample(every: 0.05, for: 0.5) { p.position }
        for s in samples {
            try expect(abs(s.value - duration) <= 0.1, "at the end the position is \(format(s.value)) s, duration \(format(duration)) s")
        }
        let lastFrame = Int((duration * FramePattern.frameRate).rounded()) - 1
        let shown = try p.thumbnailFrameNumber("at the end")
        try expect(abs(shown - lastFrame) <= 1, "at the end the picture is frame \(shown), expected the last frame \(lastFrame) (±1)")
    }

    static let restart = Check("end.restart", "play() after the end restarts from 0") { context in
        let (p, _) = try await playToEnd(context)
        let mark = p.mark
        let start = monotonicSeconds()
        p.player.play()
        try await p.recorder.waitFor(".playbackStateChanged(.playing) after the end", since: mark, timeout: 5) { $0 == .playbackStateChanged(.playing) }
        let samples = try await sample(every: 0.01, for: 0.6) { p.position }
        for s in samples where s.value > (s.time - start) + 0.15 {
            throw CheckFailure("\(Int((s.time - start) * 1000)) ms after play() at the end the position is \(format(s.value)) s, expected a restart from 0")
        }
        try await p.waitForPosition(atLeast: 0.3, timeout: 3)
        let shown = try p.thumbnailFrameNumber("after the restart")
        try expect(shown < 40, "after the restart the picture is frame \(shown), expected one near the start")
        let finishes = p.recorder.events(since: mark).filter(\.isFinished)
        try expect(finishes.isEmpty, "the restart finished at once: \(summary(finishes))")
    }

    /// Where `pauseNearEnd` plays from in formats/flac.flac (3 s of sound alone).
    static let pauseNearEndStart = 1.5
    /// How far the position while paused may be from the time played.
    static let pauseNearEndPositionTolerance = 0.3

    static let pauseNearEnd = Check(
        "end.pause-near-end",
        "sound alone (formats/flac.flac, 3 s): played from 1.5 s for 1 s, paused for 1 s (longer than the rest), played again: no end while paused, the position while paused the time played (± 0.3 s), and the end once the rest has played (1.5 s of playing in all, ± 0.4 s)"
    ) { context in
        let p = try context.player(url: context.fixtures.appendingPathComponent("formats/flac.flac"))
        try await p.prepare()
        let duration = p.player.duration
        try await p.seek(to: pauseNearEndStart)
        let mark = p.mark
        let started = monotonicSeconds()
        try await p.play()
        try await observe(for: 1.0)
        try await p.pause()
        let playedBefore = monotonicSeconds() - started
        try await observe(for: 1.0)
        let finishes = p.recorder.events(since: mark).filter(\.isFinished)
        try expect(finishes.isEmpty, "paused \(format(pauseNearEndStart + playedBefore)) s into \(format(duration)) s: \(summary(finishes)) while paused")
        try expect(p.player.playbackState == .paused, "paused before the end, 1 s later the state is \(p.player.playbackState)")
        let pausedAt = p.player.currentPlaybackTime
        try expect(abs(pausedAt - (pauseNearEndStart + playedBefore)) <= pauseNearEndPositionTolerance,
                   "paused after \(format(playedBefore)) s of playing from \(format(pauseNearEndStart)) s, the position reads \(format(pausedAt)) s")
        let resumed = monotonicSeconds()
        try await p.play()
        try await p.waitForEnd(since: mark, timeout: 5)
        let played = playedBefore + monotonicSeconds() - resumed
        let expected = duration - pauseNearEndStart
        try expect(abs(played - expected) <= 0.4,
                   "from \(format(pauseNearEndStart)) s to the end of \(format(duration)) s it played \(format(played)) s in all (\(format(playedBefore)) s before the pause), expected \(format(expected)) s ± 0.4")
    }

    static let seekAfterEnd = Check("end.seek-after-end", "a seek after the end, then play(), plays from there to the end again") { context in
        let (p, _) = try await playToEnd(context)
        let reached = try await p.seek(to: 1.0)
        try expect(abs(reached - 1.0) <= SeekChecks.landing, "a seek to 1 s after the end reported \(format(reached))")
        let shown = try p.thumbnailFrameNumber("after a seek to 1 s after the end")
        try expect(shown == 25, "a seek to 1 s after the end shows frame \(shown), expected 25")
        let mark = p.mark
        let start = monotonicSeconds()
        try await p.play()
        try await p.waitForPosition(atLeast: 1.3, timeout: 3)
        let elapsed = monotonicSeconds() - start
        try expect(p.position <= 1.0 + elapsed + 0.15, "playing from 1 s, \(format(elapsed)) s later the position is \(format(p.position)) s")
        try await p.waitForEnd(since: mark, timeout: 5)
        let finishes = p.recorder.events(since: mark).filter(\.isFinished)
        try expect(finishes == [.finished(.playbackEnded)], "playing again after the end: \(summary(finishes))")
    }
}

import FoundationEssentials
import PlaybackKit

/// Accurate seeks, seeks while paused and before prepare, seek storms, past the end, negative,
/// frame steps.
enum SeekChecks {
    static let all: [Check] = [accurateFrame, firstFrames, longGroups, keyframe, pausedShowsFrame, beforePrepare, storm, pastEnd, negative, frameStep]

    /// How far an accurate seek's reported position may be from the target.
    static let landing = 0.5 / FramePattern.frameRate + 0.001

    static let accurateFrame = Check("seek.accurate-frame", "an accurate seek lands on the exact frame (thumbnail frame number, ±0)") { context in
        let p = try context.player("frames.mp4")
        try await p.prepare()
        for target in [5.0, 9.97, 3.53, 9.93, 9.9, 9.89, 7.96, 0.44, 9.0] {
            let reached = try await seekShowsFrame(p, target, "a seek")
            let position = p.position
            try expect(abs(position - reached) <= 0.001, "after the seek to \(format(target)) s the position is \(format(position)) s, the seek reported \(format(reached))")
        }
    }

    /// The frames `firstFrames` seeks to, in an order that goes back and forth among them.
    static let firstFrameTargets = [3, 1, 4, 2]

    static let firstFrames = Check("seek.first-frames", "opened at frame 2 (a seek before prepare), and after accurate seeks while paused into the first frames (3, 1, 4, 2: too close to the start for a seek to begin before them), the picture is the frame sought; playing on from frame 2 moves it at real time") { context in
        let opened = try context.player("frames.mp4")
        let openingTarget = 2.5 / FramePattern.frameRate
        opened.player.currentPlaybackTime = openingTarget
        try await opened.prepare()
        let openedOn = try opened.thumbnailFrameNumber("prepared after a seek to \(format(openingTarget)) s")
        try expect(openedOn == 2, "prepared after a seek to \(format(openingTarget)) s the picture is frame \(openedOn), expected frame 2")
        opened.player.shutdown()

        let p = try context.player("frames.mp4")
        try await p.prepare()
        for frame in firstFrameTargets {
            // Mid-frame: the frame shown there is `frame` however the engine rounds.
            let target = (Double(frame) + 0.5) / FramePattern.frameRate
            let reached = try await p.seek(to: target, near: nil)
            try expect(abs(reached - FramePattern.time(ofFrame: frame)) <= landing || abs(reached - target) <= landing,
                       "a paused seek to \(format(target)) s reported .seekCompleted(\(format(reached)))")
            let shown = try p.thumbnailFrameNumber("after the paused seek to \(format(target)) s")
            try expect(shown == frame, "a paused seek to \(format(target)) s shows frame \(shown), expected frame \(frame)")
            try expect(p.player.playbackState == .paused, "after a paused seek to \(format(target)) s the state is \(p.player.playbackState)")
        }
        try await p.play()
        try await p.waitForPosition(atLeast: 0.4, timeout: 3)
        let wall0 = monotonicSeconds()
        let frame0 = try p.thumbnailFrameNumber("playing from frame 2")
        try await observe(for: 1.0)
        let frame1 = try p.thumbnailFrameNumber("playing 1 s later")
        let wall = monotonicSeconds() - wall0
        let advanced = Double(frame1 - frame0) / FramePattern.frameRate
        try expect(frame0 >= 2 && abs(advanced - wall) <= wall * 0.15 + 2 / FramePattern.frameRate,
                   "playing on from frame 2 the picture went from frame \(frame0) to \(frame1) (\(format(advanced)) s) in \(format(wall)) s")
    }

    /// Targets of `longGroups`, paused: far into the first 10 s group of pictures, back near
    /// its start, then into the last group (its last frame too).
    static let longGroupTargets = [3.3, 7.3, 9.9, 0.5, 11.5, 11.97]

    static let longGroups = Check("seek.long-gop", "in an MPEG-TS whose keyframes are 10 s apart (where a demuxer's seek lands on any packet), accurate seeks while paused show the frame sought, deep into the first group of pictures and into the last; a seek while playing goes on from its target", timeout: 60) { context in
        let p = try context.player("long-gop.ts")
        try await p.prepare()
        for target in longGroupTargets {
            try await seekShowsFrame(p, target, "a paused seek")
        }
        let target = 6.1
        try await p.seek(to: 1.0)
        try await p.play()
        let reached = try await p.seek(to: target, near: nil)
        try expect(abs(reached - target) <= 0.25, "a seek to \(format(target)) s while playing reported .seekCompleted(\(format(reached)))")
        try await p.waitForPosition(atLeast: target + 0.4, timeout: 3)
        let shown = try p.thumbnailFrameNumber("playing on from \(format(target)) s")
        let first = FramePattern.frame(at: target)
        try expect(shown > first && shown <= FramePattern.frame(at: target + 1.5),
                   "playing on after a seek to \(format(target)) s (frame \(first)) the picture is frame \(shown)")
    }

    static let keyframe = Check("seek.keyframe", "with accurateSeek false a seek lands on a keyframe within one GOP of the target, or on the target itself, and reports where it landed (frames.mp4: keyframes every 2 s)") { context in
        let p = try context.player(url: context.fixture("frames.mp4")) { $0.accurateSeek = false }
        try await p.prepare()
        let keyframeInterval = 50
        for target in [5.0, 7.96, 2.5] {
            let reached = try await p.seek(to: target, near: nil)
            let shown = try p.thumbnailFrameNumber("after a keyframe seek to \(format(target)) s")
            let exact = FramePattern.frame(at: target)
            let onKeyframe = shown % keyframeInterval == 0 && abs(FramePattern.time(ofFrame: shown) - target) < Double(keyframeInterval) / FramePattern.frameRate
            try expect(onKeyframe || shown == exact, "a keyframe seek to \(format(target)) s shows frame \(shown): neither a keyframe within one GOP nor the target frame \(exact)")
            try expect(abs(reached - FramePattern.time(ofFrame: shown)) <= landing, "a keyframe seek to \(format(target)) s reported .seekCompleted(\(format(reached))) but shows frame \(shown) (\(format(FramePattern.time(ofFrame: shown))) s)")
            try expect(abs(p.position - reached) <= 0.001, "after a keyframe seek the position is \(format(p.position)) s, the seek reported \(format(reached))")
        }
    }

    static let pausedShowsFrame = Check("seek.paused-shows-frame", "a seek while paused stays paused and shows (and presents) the new frame") { context in
        let p = try context.player("frames.mp4", frames: true)
        try await p.prepare()
        let mark = p.mark
        let frameMark = p.frames?.count ?? 0
        try await p.seek(to: 2.0)
        try await observe(for: 0.3)
        let states = p.states(since: mark)
        try expect(!states.contains(.playing), "a seek while paused started playing: \(states)")
        try expect(p.player.playbackState == .paused, "after a seek while paused the state is \(p.player.playbackState)")
        let shown = try p.thumbnailFrameNumber("after the seek to 2 s while paused")
        try expect(shown == 50, "after the seek to 2 s the thumbnail is frame \(shown), expected 50")
        let presented = try await p.frames!.waitFor("presented frame 50", since: frameMark, timeout: 2) { $0.number == 50 }
        try expect(abs(presented.presentationTime - 2.0) <= 0.021, "frame 50 was presented with time \(format(presented.presentationTime)), expected 2")
        let position = p.position
        try await observe(for: 0.4)
        try expect(p.position == position && abs(position - 2.0) <= landing, "paused after the seek the position is \(format(position)) then \(format(p.position)), expected 2 held still")
        let last = p.frames?.records.last?.number
        try expect(last == 50, "the last presented frame is \(last.map(String.init) ?? "unreadable"), expected 50")
    }

    static let beforePrepare = Check("seek.before-prepare", "a seek requested before prepare is applied once prepared") { context in
        let p = try context.player("frames.mp4")
        p.player.currentPlaybackTime = 4.0
        try await p.prepare()
        let position = p.position
        try expect(abs(position - 4.0) <= landing, "prepared after a seek to 4 s, the position is \(format(position)) s")
        try expect(p.player.playbackState == .paused, "prepared after a seek, the state is \(p.player.playbackState)")
        let shown = try p.thumbnailFrameNumber("prepared after a seek to 4 s")
        try expect(shown == 100, "prepared after a seek to 4 s, the picture is frame \(shown), expected 100")
        try await p.play()
        try await p.waitForPosition(atLeast: 4.3, timeout: 3)
        let playing = try p.thumbnailFrameNumber("playing from 4 s")
        try expect(playing >= 100 && playing < 150, "playing from 4 s shows frame \(playing)")
    }

    /// Targets of the storm: spread over the clip, the last far from every other.
    static let stormTargets: [Double] = [1.0, 8.2, 2.4, 7.1, 0.6, 5.3, 3.3, 8.8, 1.7, 4.4, 7.8, 2.9, 8.5, 0.9, 6.0]

    static let storm = Check("seek.storm", "15 seeks 10-20 ms apart while playing end with a .seekCompleted at the last target, none after it, and play on from there") { context in
        let p = try context.player("frames.mp4")
        try await p.prepare()
        try await p.play()
        try await p.waitForPosition(atLeast: 0.3, timeout: 5)
        let last = stormTargets.last!
        // Slow calls are api.prompt-during-seek-storm's business; here only the outcome counts.
        _ = try await DisciplineChecks.seekStorm(p.player, targets: stormTargets)
        let completed = try await p.recorder.waitFor(".seekCompleted near the last target \(format(last)) s", since: 0, timeout: 10) { event in
            guard let position = event.seekPosition else { return false }
            return abs(position - last) <= landing + 0.05
        }
        try await observe(for: 1.0)
        let after = p.recorder.entries(since: 0).filter { $0.time > completed.time }.compactMap(\.event.seekPosition)
        try expect(after.isEmpty, "after .seekCompleted(\(format(last))) more seeks completed: \(after.map(format))")
        try expect(p.player.playbackState == .playing, "after the storm the state is \(p.player.playbackState), expected playing")
        let position = p.position
        try expect(position >= last && position <= last + 2.5, "1 s after the storm ended at \(format(last)) s the position is \(format(position)) s")
        let shown = try p.thumbnailFrameNumber("after the storm")
        try expect(shown >= FramePattern.frame(at: last) && shown <= FramePattern.frame(at: last + 2.5),
                   "after the storm ended at \(format(last)) s the picture is frame \(shown)")
    }

    static let pastEnd = Check("seek.past-end", "a seek past the end while playing finishes cleanly: one .finished(.playbackEnded), stopped at the end") { context in
        let p = try context.player("short.mp4")
        try await p.prepare()
        try await p.play()
        try await p.waitForPosition(atLeast: 0.3, timeout: 5)
        let mark = p.mark
        p.player.currentPlaybackTime = 10
        try await p.waitForEnd(since: mark, timeout: 5)
        try await observe(for: 0.5)
        let finishes = p.recorder.events(since: mark).filter(\.isFinished)
        try expect(finishes == [.finished(.playbackEnded)], "after a seek past the end: \(summary(finishes)), expected one .finished(.playbackEnded)")
        try expect(p.player.playbackState == .stopped, "after a seek past the end the state is \(p.player.playbackState)")
        let duration = p.player.duration
        try expect(abs(p.position - duration) <= 0.1, "after a seek past the end the position is \(format(p.position)) s, duration \(format(duration)) s")
    }

    static let negative = Check("seek.negative", "a seek to a negative time clamps to 0 and shows frame 0") { context in
        let p = try context.player("frames.mp4")
        try await p.prepare()
        try await p.seek(to: 3.0)
        let reached = try await p.seek(to: -5, near: nil)
        try expect(reached >= 0 && reached <= landing, "a seek to -5 s reported .seekCompleted(\(format(reached))), expected 0")
        try expect(p.position >= 0 && p.position <= landing, "after a seek to -5 s the position is \(format(p.position)) s")
        let shown = try p.thumbnailFrameNumber("after a seek to -5 s")
        try expect(shown == 0, "after a seek to -5 s the picture is frame \(shown), expected 0")
        let errors = p.recorder.events().filter(\.isError)
        try expect(errors.isEmpty, "a negative seek failed the player: \(summary(errors))")
    }

    // MARK: - Frame steps

    /// Frames a step while playing may land past the one after the frame shown at the call:
    /// the engine's pause takes effect a little later (0.3 s of frames).
    static let pauseLatencyFrames = 8

    static let frameStep = Check("seek.frame-step", "nominalFrameRate is the clip's 25; stepFrames moves exactly the frames asked (forward and back, paused, each with a .seekCompleted), pauses first while playing, counts from the picture shown after a pause, and stays on frame 0 before the start") { context in
        let p = try context.player("frames.mp4")
        try await p.prepare()
        let rate = p.player.nominalFrameRate
        try expect(abs(rate - FramePattern.frameRate) < 0.001, "nominalFrameRate is \(format(rate)), expected \(format(FramePattern.frameRate))")
        try await p.seek(to: 1.0)
        var expected = try p.thumbnailFrameNumber("paused at 1 s")
        try expect(expected == 25, "paused after a seek to 1 s the picture is frame \(expected), expected 25")
        for count in [1, 1, 1, 1, 1, -1, -1] {
            let shown = try await stepAndRead(p, by: count, from: expected)
            expected += count
            try expect(shown == expected, "stepFrames(\(count)) from frame \(expected - count) shows frame \(shown), expected \(expected)")
        }

        try await p.play()
        try await p.waitForPosition(atLeast: 1.6, timeout: 5)
        let before = try p.thumbnailFrameNumber("playing, before stepFrames(1)")
        let mark = p.mark
        let shown = try await stepAndRead(p, by: 1, from: before)
        try expect(p.states(since: mark).contains(.paused), "stepFrames(1) while playing sent no .playbackStateChanged(.paused): \(p.states(since: mark))")
        try expect(shown > before && shown <= before + 1 + pauseLatencyFrames,
                   "stepFrames(1) while playing at frame \(before) shows frame \(shown), expected \(before + 1) (up to \(before + 1 + pauseLatencyFrames) for the pause to land)")
        try await observe(for: 0.3)
        let held = try p.thumbnailFrameNumber("0.3 s after stepFrames(1) while playing")
        try expect(held == shown && p.player.playbackState == .paused, "0.3 s after stepFrames(1) while playing the picture is frame \(held) (state \(p.player.playbackState)), expected frame \(shown) held, paused")
        let next = try await stepAndRead(p, by: 1, from: shown)
        try expect(next == shown + 1, "stepFrames(1) after the step from playing shows frame \(next), expected \(shown + 1)")

        try await p.play()
        try await p.waitForPosition(atLeast: 2.6, timeout: 5)
        try await p.pause()
        let paused = try await heldFrame(p, "paused while playing")
        let afterPause = try await stepAndRead(p, by: 1, from: paused)
        try expect(afterPause == paused + 1, "stepFrames(1) after a pause on frame \(paused) shows frame \(afterPause), expected \(paused + 1)")

        try await p.seek(to: 0)
        let first = try await stepAndRead(p, by: -1, from: 0)
        try expect(first == 0, "stepFrames(-1) on frame 0 shows frame \(first), expected 0")
        try expect(p.position >= 0 && p.position < FramePattern.time(ofFrame: 1), "stepFrames(-1) on frame 0 left the position at \(format(p.position)) s, expected within frame 0")
    }

    /// Seeks to `target` and expects `.seekCompleted` at the target or at the start of its
    /// frame, and that frame's picture (`what` names the seek in the failure); returns the
    /// position the seek reported.
    @discardableResult
    static func seekShowsFrame(_ p: CheckPlayer, _ target: TimeInterval, _ what: String) async throws -> TimeInterval {
        let reached = try await p.seek(to: target, near: nil)
        let expected = FramePattern.frame(at: target)
        try expect(abs(reached - FramePattern.time(ofFrame: expected)) <= landing || abs(reached - target) <= landing,
                   "\(what) to \(format(target)) s reported .seekCompleted(\(format(reached))), expected \(format(target)) s")
        let shown = try p.thumbnailFrameNumber("after \(what) to \(format(target)) s")
        try expect(shown == expected, "\(what) to \(format(target)) s shows frame \(shown), expected frame \(expected)")
        return reached
    }

    /// The frame shown once two thumbnails 50 ms apart show the same one (an engine may
    /// show a frame or two more as a pause lands); fails when it does not hold within 2 s.
    static func heldFrame(_ p: CheckPlayer, _ what: String) async throws -> Int {
        var last = try p.thumbnailFrameNumber(what)
        let deadline = monotonicSeconds() + 2
        while monotonicSeconds() < deadline {
            try await observe(for: 0.05)
            let now = try p.thumbnailFrameNumber(what)
            if now == last { return now }
            last = now
        }
        throw CheckFailure("\(what): the picture did not hold still within 2 s (frame \(last))")
    }

    /// Steps `count` frames from frame `from` and waits for the `.seekCompleted`; checks that
    /// the player is paused with its position on the frame it shows, and returns that frame.
    static func stepAndRead(_ p: CheckPlayer, by count: Int, from: Int) async throws -> Int {
        let mark = p.mark
        p.step("stepFrames(\(count)) from frame \(from)")
        p.player.stepFrames(count)
        let reached = try await p.recorder.waitForSeekCompleted(since: mark, timeout: 5)
        let shown = try p.thumbnailFrameNumber("after stepFrames(\(count)) from frame \(from)")
        try expect(p.player.playbackState == .paused, "after stepFrames(\(count)) the state is \(p.player.playbackState), expected paused")
        let start = FramePattern.time(ofFrame: shown)
        for (what, time) in [(".seekCompleted", reached), ("the position", p.position)] {
            try expect(time >= start - 0.002 && time < start + 1 / FramePattern.frameRate,
                       "after stepFrames(\(count)) from frame \(from) \(what) is \(format(time)) s, but the picture is frame \(shown) (\(format(start)) s)")
        }
        return shown
    }
}

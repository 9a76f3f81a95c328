import FoundationEssentials
import PlaybackKit

/// Duration, real-time pace, smoothness, pause and resume.
enum TimeChecks {
    static let all: [Check] = [duration, realTimeNullAudio, realTimeVideoOnly, smooth, pauseHolds, resumeNoJump]

    /// One frame of the fixtures.
    static let frame = 1.0 / FramePattern.frameRate

    static let duration = Check("time.duration", "duration is right within one frame (frames.mp4 10 s, short.mp4 3 s, video-only.mp4 6 s)") { context in
        for (name, expected) in [("frames.mp4", 10.0), ("short.mp4", 3.0), ("video-only.mp4", 6.0)] {
            let p = try context.player(name)
            try await p.prepare()
            let duration = p.player.duration
            try expect(abs(duration - expected) <= frame + 0.001, "\(name): duration \(format(duration)) s, expected \(format(expected)) s ± one frame")
            p.player.shutdown()
        }
    }

    static let realTimeNullAudio = Check("time.realtime-null-audio", "with null audio the position and the picture advance at real time (±10%)") { context in
        try await realTime(context, fixture: "frames.mp4", rate: 1.0, tolerance: 0.10)
    }

    static let realTimeVideoOnly = Check("time.realtime-video-only", "with no audio stream the position and the picture advance at real time (±10%)") { context in
        try await realTime(context, fixture: "video-only.mp4", rate: 1.0, tolerance: 0.10)
    }

    /// Plays `fixture` at `rate` and measures over about 2.5 s of wall time how fast the
    /// position and the frame number in the thumbnail advance.
    static func realTime(_ context: CheckContext, fixture: String, rate: Float, tolerance: Double) async throws {
        let p = try context.player(fixture)
        try await p.prepare()
        if rate != 1 {
            p.player.playbackRate = rate
            try expect(p.player.playbackRate == rate, "playbackRate reads \(p.player.playbackRate) after setting \(rate)")
        }
        try await p.play()
        try await p.waitForPosition(atLeast: 0.3 * Double(rate), timeout: 5)
        try await observe(for: 0.3)
        let wall0 = monotonicSeconds(), position0 = p.position
        let frame0 = try p.thumbnailFrameNumber("start of the measurement")
        let span = min(2.5, (p.player.duration - position0 - 0.5) / Double(rate))
        try await observe(for: span)
        let wall1 = monotonicSeconds(), position1 = p.position
        let frame1 = try p.thumbnailFrameNumber("end of the measurement")
        let wall = wall1 - wall0
        let expected = Double(rate)
        let pace = (position1 - position0) / wall
        let picturePace = Double(frame1 - frame0) * frame / wall
        try expect(abs(pace - expected) <= expected * tolerance,
                   "the position advanced \(format(position1 - position0)) s in \(format(wall)) s: \(format(pace))x, expected \(format(expected))x ± \(Int(tolerance * 100))%")
        try expect(abs(picturePace - expected) <= expected * tolerance,
                   "the picture advanced from frame \(frame0) to \(frame1) in \(format(wall)) s: \(format(picturePace))x, expected \(format(expected))x ± \(Int(tolerance * 100))%")
    }

    static let smooth = Check("time.smooth", "while playing the position updates at least 20 times a second and never goes backwards") { context in
        let p = try context.player("frames.mp4")
        try await p.prepare()
        try await p.play()
        try await p.waitForPosition(atLeast: 0.2, timeout: 5)
        let samples = try await sample(every: 0.005, for: 1.5) { p.position }
        for (previous, next) in zip(samples, samples.dropFirst()) where next.value < previous.value {
            throw CheckFailure("the position went back from \(format(previous.value)) s to \(format(next.value)) s")
        }
        let distinct = Set(samples.map(\.value)).count
        let span = (samples.last?.time ?? 0) - (samples.first?.time ?? 0)
        let perSecond = Double(distinct) / max(span, 0.001)
        try expect(perSecond >= 20, "only \(distinct) distinct positions in \(format(span)) s (\(Int(perSecond)) a second, need 20)")
        let advance = (samples.last?.value ?? 0) - (samples.first?.value ?? 0)
        try expect(advance > span * 0.8, "the position advanced only \(format(advance)) s in \(format(span)) s")
    }

    static let pauseHolds = Check("time.pause-holds", "pause() holds the position and the picture still") { context in
        let p = try context.player("frames.mp4")
        try await p.prepare()
        try await p.play()
        try await p.waitForPosition(atLeast: 0.6, timeout: 5)
        try await p.pause()
        let held = p.position
        // The position holds from the .paused event on; the picture may still take the frame
        // that was on its way, then holds too (checked after 1 s and again after 1.5 s).
        let samples = try await sample(every: 0.02, for: 1.0) { p.position }
        for s in samples where abs(s.value - held) > 0.001 {
            throw CheckFailure("paused at \(format(held)) s, the position moved to \(format(s.value)) s")
        }
        let frame = try p.thumbnailFrameNumber("paused 1 s")
        try expect(abs(frame - FramePattern.frame(at: held)) <= 1, "paused at \(format(held)) s (frame \(FramePattern.frame(at: held))) the picture is frame \(frame)")
        try await observe(for: 0.5)
        let later = try p.thumbnailFrameNumber("paused 1.5 s")
        try expect(later == frame, "paused, the picture changed from frame \(frame) to \(later)")
        try expect(p.player.playbackState == .paused, "the state is \(p.player.playbackState) while paused")
    }

    static let resumeNoJump = Check("time.resume-no-jump", "play() after pause() continues from the paused position: never ahead of the elapsed time (+0.1 s), never back") { context in
        let p = try context.player("frames.mp4")
        try await p.prepare()
        try await p.play()
        try await p.waitForPosition(atLeast: 1.0, timeout: 5)
        try await p.pause()
        try await observe(for: 0.5)
        let paused = p.position
        let start = monotonicSeconds()
        p.player.play()
        let samples = try await sample(every: 0.005, for: 0.5) { p.position }
        for s in samples {
            let elapsed = s.time - start
            try expect(s.value - paused <= elapsed + 0.1,
                       "\(Int(elapsed * 1000)) ms after play() the position is \(format(s.value)) s, paused at \(format(paused)) s: it leapt ahead")
            try expect(s.value >= paused - 0.001,
                       "\(Int(elapsed * 1000)) ms after play() the position is \(format(s.value)) s, behind the paused \(format(paused)) s")
        }
        try await p.waitForPosition(atLeast: paused + 0.3, timeout: 3)
        let frameNow = try p.thumbnailFrameNumber("after resume")
        try expect(frameNow >= FramePattern.frame(at: paused), "after resume the picture is frame \(frameNow), before the paused position")
    }
}

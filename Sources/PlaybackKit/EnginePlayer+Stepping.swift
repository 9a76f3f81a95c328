import FoundationEssentials

// MARK: - Frame arithmetic

/// Frames of a video at a nominal rate: which frame a position shows, and the time a seek
/// aims at to show a frame.
package struct FrameTiming: Sendable, Equatable {
    /// Frames per second (> 0).
    package let rate: Double

    /// Added to `position * rate` before rounding down, in frames: a position an engine
    /// reports a little early (rounded to the millisecond, or to its time base) still names
    /// the frame it shows.
    package static let slack = 0.05
    /// How far into a frame a step aims, in frames: every engine's accurate seek shows the
    /// frame that starts at or before its target, whatever its rounding.
    package static let aim = 0.5

    /// A timing at `rate` frames per second.
    package init(rate: Double) { self.rate = rate }

    /// The frame shown at `position`: floor(position * rate + slack).
    package func frame(at position: TimeInterval) -> Int {
        Int((max(0, position) * rate + Self.slack).rounded(.down))
    }

    /// The last frame of media `duration` seconds long; nil when the duration is unknown.
    package func lastFrame(duration: TimeInterval) -> Int? {
        guard duration > 0 else { return nil }
        return max(0, Int((duration * rate - Self.slack).rounded(.up)) - 1)
    }

    /// Where a seek aims to show `frame`: 0 for the first, else `aim` into it, kept before the
    /// end of media `duration` seconds long (0: unknown).
    package func target(ofFrame frame: Int, duration: TimeInterval) -> TimeInterval {
        guard frame > 0 else { return 0 }
        let start = Double(frame) / rate
        let aimed = (Double(frame) + Self.aim) / rate
        return duration > 0 ? min(aimed, (start + duration) / 2) : aimed
    }

    /// The seek target that shows the frame `count` frames from the one at `position`, within
    /// the first and last frames of media `duration` seconds long.
    package func target(stepping count: Int, from position: TimeInterval, duration: TimeInterval) -> TimeInterval {
        var wanted = max(0, frame(at: position) + count)
        if let last = lastFrame(duration: duration) { wanted = min(wanted, last) }
        return target(ofFrame: wanted, duration: duration)
    }
}

// MARK: - Stepping

extension EnginePlayer {
    public var nominalFrameRate: Double { published.get().frameRate }

    public func stepFrames(_ count: Int) {
        post { $0.step(by: count) }
    }

    /// Pauses when playing, then seeks accurately to the frame `count` frames from the one
    /// shown: the one at the position, which after a seek is the frame sought (a seek in
    /// flight counts from its target: the clock holds it). Once the media has played since,
    /// the position the clock held at the pause may be a frame off the picture the engine
    /// stopped on, so the shown picture's own time counts instead, when the engine has one.
    private func step(by count: Int) {
        guard phase == .prepared else {
            PlaybackLog.log(.warning, "playback", "stepFrames(\(count)): the player is not prepared; ignored")
            return
        }
        let rate = published.get().frameRate
        guard rate > 0 else {
            PlaybackLog.log(.warning, "playback", "stepFrames(\(count)): the frame rate of \(source.url.lastPathComponent) is unknown; ignored")
            return
        }
        pauseNow()
        var from = clock.read()
        if playedSinceSeek, !isSeeking, let shown = engine?.thumbnail()?.presentationTime, shown.isFinite, shown >= 0 {
            from = shown
        }
        let target = FrameTiming(rate: rate).target(stepping: count, from: from, duration: duration)
        requestSeek(target, accurate: true)
    }
}

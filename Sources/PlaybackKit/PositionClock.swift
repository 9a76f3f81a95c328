import FoundationEssentials

/// The position every player reports: engine samples interpolated by the wall clock so that
/// it is smooth, advances at the playback rate, never runs backwards during plain playback,
/// holds still while paused and does not jump on resume. Engine samples correct it gradually;
/// it never runs more than `maximumLead` seconds of wall time past the last sample.
final class PositionClock: Sendable {
    private struct State {
        var anchorMedia: Double = 0
        var anchorWall: Double = 0
        var running = false
        var rate: Double = 1
        var lastRead: Double = 0
        var lastSampleWall: Double = 0
        var duration: Double = 0
        var lastJumpWall: Double = -1
    }

    /// Samples further than this from the estimate are taken as they are (a discontinuity).
    static let snapThreshold = 1.0
    /// Share of the difference to a sample corrected at each sample.
    static let correctionGain = 0.25
    /// Wall seconds the clock may run on past the last engine sample.
    static let maximumLead = 1.0
    /// Wall seconds after a jump during which a sample far from the new position is taken
    /// as one sent before the jump, and ignored.
    static let staleSampleWindow = 0.3

    private let state = Locked(State())
    private let time: any TimeSource

    /// A clock at 0, stopped, reading `time` (the system's monotonic clock unless a test drives it).
    init(time: any TimeSource = SystemTimeSource()) { self.time = time }

    private static func estimate(_ s: State, at now: Double) -> Double {
        guard s.running else { return s.anchorMedia }
        let wall = min(now, s.lastSampleWall + maximumLead)
        return s.anchorMedia + max(0, wall - s.anchorWall) * s.rate
    }

    private static func clamp(_ value: Double, _ s: State) -> Double {
        let low = max(0, value)
        return s.duration > 0 ? min(low, s.duration) : low
    }

    /// The position now.
    func read() -> Double {
        state.withLock { s in
            var value = Self.clamp(Self.estimate(s, at: time.now()), s)
            if s.running { value = max(value, s.lastRead) }
            s.lastRead = value
            return value
        }
    }

    /// The media length, used as the upper bound.
    func setDuration(_ duration: Double) { state.withLock { $0.duration = max(0, duration) } }

    /// An engine sample while playing; ignored while stopped or paused.
    func sample(_ media: Double) {
        state.withLock { s in
            guard s.running else { return }
            let now = time.now()
            let estimate = Self.estimate(s, at: now)
            let error = media - estimate
            if abs(error) > Self.snapThreshold, now - s.lastJumpWall < Self.staleSampleWindow { return }
            s.anchorMedia = abs(error) > Self.snapThreshold ? media : estimate + error * Self.correctionGain
            s.anchorWall = now
            s.lastSampleWall = now
        }
    }

    /// Sets the position outright (seek target, seek result, restart, end), running or not.
    func jump(to media: Double, running: Bool) {
        state.withLock { s in
            let now = time.now()
            let value = Self.clamp(media, s)
            s.anchorMedia = value
            s.anchorWall = now
            s.lastSampleWall = now
            s.lastRead = value
            s.running = running
            s.lastJumpWall = now
        }
    }

    /// Starts or stops advancing from where the clock stands now.
    func setRunning(_ running: Bool) {
        state.withLock { s in
            guard s.running != running else { return }
            let now = time.now()
            let here = Self.clamp(max(Self.estimate(s, at: now), s.running ? s.lastRead : 0), s)
            s.anchorMedia = here
            s.anchorWall = now
            s.lastSampleWall = now
            s.lastRead = here
            s.running = running
        }
    }

    /// Changes the rate from where the clock stands now.
    func setRate(_ rate: Double) {
        state.withLock { s in
            let now = time.now()
            s.anchorMedia = Self.estimate(s, at: now)
            s.anchorWall = now
            s.lastSampleWall = now
            s.rate = rate
        }
    }
}

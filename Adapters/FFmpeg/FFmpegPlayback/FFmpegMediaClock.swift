#if FFmpeg
import CFFmpeg
import PlaybackKit
import FoundationEssentials

// The FFmpeg engine's clock: the media time its audio output and its video presenter
// follow (MediaClock).

// MARK: - The master clock

/// Media time that runs at the playback rate against the monotonic wall clock while
/// running. With audio the audio output corrects it as it plays samples (audio master); without
/// audio nothing corrects it and it is an external wall clock. Pausing freezes it; resuming
/// re-bases it at the frozen value, so it never catches up and never jumps.
/// Guarded by the session lock.
struct MediaClock {
    private(set) var base: Double = 0
    private var baseWall: Double = 0
    private(set) var speed: Double = 1
    private(set) var running = false

    /// The media time now.
    func now(_ wall: Double = monotonicSeconds()) -> Double {
        running ? base + (wall - baseWall) * speed : base
    }

    /// Sets the media time `value` as of wall time `wall`.
    mutating func set(_ value: Double, at wall: Double = monotonicSeconds()) {
        base = value
        baseWall = wall
    }

    /// Sets the media time `value` as of wall time `wall`, running at `newSpeed` from there.
    mutating func set(_ value: Double, at wall: Double, speed newSpeed: Double) {
        base = value
        baseWall = wall
        speed = newSpeed
    }

    /// Freezes or resumes at the current value.
    mutating func setRunning(_ run: Bool) {
        guard run != running else { return }
        let wall = monotonicSeconds()
        base = now(wall)
        baseWall = wall
        running = run
    }

    /// Changes the speed, re-basing at the current value.
    mutating func setSpeed(_ newSpeed: Double) {
        let wall = monotonicSeconds()
        base = now(wall)
        baseWall = wall
        speed = newSpeed
    }
}
#endif

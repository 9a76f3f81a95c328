#if GStreamer
import FoundationEssentials
import PlaybackKit

/// Notices playback that crawls for want of data while GStreamer does not say so: queue2
/// rates its level by the input's bitrate, so a source slower than the media (but not
/// stopped) keeps it above the buffering threshold, and playback goes on at the pace the data
/// comes, in small steps. Fed the position on every tick while playing; reset whenever
/// playing is not expected to move it.
struct StarvationWatch {
    /// The span over which the pace is measured, seconds.
    static let window = 1.0
    /// Below this fraction of the playback rate, playback counts as waiting for data.
    static let slowest = 0.6
    /// Seconds to have loaded ahead of the position before playing on.
    static let refill = 1.5

    private var first: TimeInterval?
    private var start: (position: TimeInterval, time: Double)?

    /// Forgets what was seen (paused, seeking, buffering, at the end).
    mutating func reset() {
        first = nil
        start = nil
    }

    /// Takes the position at `now`; true when the last window went at less than `slowest`
    /// of `speed`. Windows start once the position has moved (starting to play takes a
    /// moment of its own).
    mutating func observe(_ position: TimeInterval, at now: Double, speed: Double) -> Bool {
        guard let start else {
            if let first, position > first + 0.001 {
                self.start = (position, now)
            } else if first == nil {
                first = position
            }
            return false
        }
        let elapsed = now - start.time
        guard elapsed >= Self.window else { return false }
        self.start = (position, now)
        return (position - start.position) < Self.slowest * speed * elapsed
    }
}
#endif

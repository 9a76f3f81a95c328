#if MPV
import FoundationEssentials
import PlaybackKit

/// Gives each drawn frame its media time. The software render API does not say which frame it
/// drew, so frames are paired with mpv's `time-pos` samples: mpv sets `time-pos` to a frame's
/// time when it queues the frame for display (frames are queued when due, see
/// `video-timing-offset`), which is also when it asks for the frame to be drawn. A new frame
/// therefore takes the earliest sample not taken by the frame before it that arrived around its
/// draw request (a little before it at most, or after it, waiting briefly), not simply the
/// newest one: the next frame's sample may already be in when drawing is slow.
final class MPVFrameTimes: @unchecked Sendable {
    // @unchecked: every field is read and written with `condition` held.
    private let condition = ConditionVariable()
    private var samples: [(arrival: TimeInterval, value: TimeInterval)] = []
    private var lastStamp: TimeInterval = 0
    /// When the sample the last new frame took arrived.
    private var takenArrival: TimeInterval = -1
    private static let kept = 16
    /// How long a new frame waits for its sample (less than a frame at common rates).
    private static let sampleWait: TimeInterval = 0.03
    /// A sample may arrive before the draw request it belongs to (the request is delayed when
    /// the machine is busy), by at most this much.
    private static let earlyArrival: TimeInterval = 0.025

    /// A `time-pos` sample from the event thread.
    func record(_ value: TimeInterval) {
        condition.lock()
        samples.append((ProcessInfo.processInfo.systemUptime, value))
        if samples.count > Self.kept { samples.removeFirst(samples.count - Self.kept) }
        condition.broadcast()
        condition.unlock()
    }

    /// The newest sample (the position mpv reports now).
    var latest: TimeInterval {
        condition.lock()
        defer { condition.unlock() }
        return samples.last?.value ?? lastStamp
    }

    /// The frame on screen is known to be at `value` (a finished seek): it and later redraws say so.
    func settle(at value: TimeInterval) {
        condition.lock()
        lastStamp = value
        condition.unlock()
    }

    /// The media time of a frame drawn on a request made at `requestedAt` (system uptime);
    /// a redraw keeps the time of the frame it repeats. `waitsForSample`: whether a sample may
    /// still be on its way (not while the core holds still before it is prepared). Render thread.
    func stamp(requestedAt: TimeInterval, isNewFrame: Bool, waitsForSample: Bool = true) -> TimeInterval {
        condition.lock()
        defer { condition.unlock() }
        guard isNewFrame else { return lastStamp }
        let deadline = monotonicSeconds() + (waitsForSample ? Self.sampleWait : 0)
        while true {
            if let sample = samples.first(where: { $0.arrival > takenArrival && $0.arrival >= requestedAt - Self.earlyArrival }) {
                lastStamp = sample.value
                takenArrival = sample.arrival
                break
            }
            if !condition.wait(until: deadline) {
                // No new sample: the frame shows the position mpv reports now.
                if let newest = samples.last {
                    lastStamp = newest.value
                    takenArrival = newest.arrival
                }
                break
            }
        }
        return lastStamp
    }
}
#endif

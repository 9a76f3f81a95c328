#if MPV
import Foundation

/// Gives each drawn frame its media time. The software render API does not say which frame it
/// drew, so frames are paired with mpv's `time-pos` samples: mpv sets `time-pos` to a frame's
/// time when it queues the frame for display, which is also when it asks for the frame to be
/// drawn. A new frame therefore takes the first sample that arrived after its draw request
/// (waiting briefly for it), not the newest one: with mpv's frame lead the next frame may
/// already be queued by the time drawing returns.
final class MPVFrameTimes: @unchecked Sendable {
    // @unchecked: every field is read and written with `condition` held.
    private let condition = NSCondition()
    private var samples: [(arrival: TimeInterval, value: TimeInterval)] = []
    private var lastStamp: TimeInterval = 0
    private static let kept = 16
    /// How long a new frame waits for its sample (less than a frame at common rates).
    private static let sampleWait: TimeInterval = 0.03
    /// A sample may arrive a little before the draw request it belongs to.
    private static let earlyArrival: TimeInterval = 0.002

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
    /// a redraw keeps the time of the frame it repeats. Render thread.
    func stamp(requestedAt: TimeInterval, isNewFrame: Bool) -> TimeInterval {
        condition.lock()
        defer { condition.unlock() }
        guard isNewFrame else { return lastStamp }
        let deadline = Date().addingTimeInterval(Self.sampleWait)
        while true {
            if let sample = samples.first(where: { $0.arrival >= requestedAt - Self.earlyArrival }) {
                lastStamp = sample.value
                break
            }
            if !condition.wait(until: deadline) {
                lastStamp = samples.last?.value ?? lastStamp
                break
            }
        }
        return lastStamp
    }
}
#endif

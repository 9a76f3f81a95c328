#if MPV
import FoundationEssentials
import PlaybackKit

/// Gives each drawn frame its media time. The software render API does not say which frame it
/// drew, so frames are paired with mpv's `time-pos` samples: mpv sets `time-pos` to a frame's
/// time when it queues the frame for display (frames are queued when due, see
/// `video-timing-offset`), which is also when it asks for the frame to be drawn.
///
/// When drawing (or the `.frames` handler) is slower than the frame rate, mpv's output lags:
/// a frame waits in its queue from its target time (when mpv means to show it, which mpv gives
/// with the frame) until the output takes it and asks for the draw, and the output leaves late
/// ones out, while later frames are queued and their samples come. Then the draw request's time
/// alone tells little: the frame takes the last sample not taken before that came between its
/// target time and its draw request (a little before and after), else the first that comes.
/// Without a target time, it takes the earliest sample not taken before that arrived around
/// its draw request (a little before it at most, or after it, waiting briefly).
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
    /// A frame is queued (and its sample sent) when due, so its sample does not arrive before
    /// its target time, but for this much leeway.
    private static let earlyBeforeTarget: TimeInterval = 0.003
    /// How long after the draw request the sample of the frame mpv's output took may arrive
    /// (it passes through the event thread).
    private static let lateAfterRequest: TimeInterval = 0.002

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

    /// The media time of the frame of `request`; a redraw keeps the time of the frame it
    /// repeats. `waitsForSample`: whether a sample may still be on its way (not while the core
    /// holds still before it is prepared). Render thread.
    func stamp(_ request: MPVDrawRequest, waitsForSample: Bool = true) -> TimeInterval {
        condition.lock()
        defer { condition.unlock() }
        guard request.isNewFrame else { return lastStamp }
        let deadline = monotonicSeconds() + (waitsForSample ? Self.sampleWait : 0)
        let earliest = request.targetTime.map { $0 - Self.earlyBeforeTarget } ?? request.requestedAt - Self.earlyArrival
        while true {
            let taken = takenArrival
            let untaken = samples.filter { $0.arrival > taken && $0.arrival >= earliest }
            // With a target time: the frame was queued (its sample sent) from its target time
            // until mpv's output took it, which asked for the draw: the last sample of that
            // span is the frame's (the ones before were left out, the next comes after).
            let queued = request.targetTime == nil ? nil
                : untaken.last { $0.arrival <= request.requestedAt + Self.lateAfterRequest }
            if let sample = queued ?? untaken.first {
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

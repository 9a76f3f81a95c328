#if MPV
import CMPV
import Dispatch
import FoundationEssentials
import PlaybackKit

/// Takes `screenshot-raw` pictures on a worker of its own, so that `thumbnail()` returns within
/// a bound: each mpv call waits for the core, which a run of seeks can keep busy for longer
/// than a public call may take.
///
/// A call waits up to `wait` (`recentWait` when the last one was taken a moment ago) for a
/// screenshot begun after it was made (or for one already under way); when the core is too
/// busy for that, it returns the last picture taken, which carries its own time (the one it
/// was taken at), and the one under way replaces it when done.
/// That holds only while the last picture is still current: before the first one, and after
/// a paused seek or a new size (`invalidate()`), when the picture on screen is another one for
/// good, a call waits up to `firstWait` for a screenshot begun since.
final class MPVScreenshotTaker: @unchecked Sendable {
    // @unchecked: every `var` is read and written with `condition` held.
    private let condition = ConditionVariable()
    private let handle: MPVHandle
    private let fallbackTime: @Sendable () -> TimeInterval
    private let worker = DispatchQueue(label: "PlaybackKit.mpv.screenshot")
    /// Counts the moments the last picture stopped being current (`invalidate()`).
    private var epoch = 0
    private var running = false
    private var finished = 0
    private var latest: VideoFrame?
    /// The epoch the screenshot in `latest` was begun in; -1 before the first.
    private var latestEpoch = -1
    /// When `latest` was taken (monotonic seconds).
    private var latestTakenAt = -Double.infinity
    /// How long a call waits for a fresh screenshot before it settles for the last one.
    static let wait: TimeInterval = 0.035
    /// How long it waits when the last one is recent (`recent`): calls in quick succession
    /// (a run of seeks, a polling UI) get the last picture sooner, leaving the rest of a
    /// public call's time to a machine too loaded to wake the caller on time.
    static let recentWait: TimeInterval = 0.015
    /// How old a screenshot may be to count as recent.
    static let recent: TimeInterval = 0.25
    /// How long a call waits when the last screenshot is not current.
    static let firstWait: TimeInterval = 1

    /// A taker for `handle`'s video output; `fallbackTime` is a picture's time when mpv
    /// reports no position (read on the worker).
    init(handle: MPVHandle, fallbackTime: @escaping @Sendable () -> TimeInterval) {
        self.handle = handle
        self.fallbackTime = fallbackTime
    }

    /// The picture on screen now, or the last one taken while it is current and the core
    /// does not answer within `wait`; nil when there is none.
    func take() -> VideoFrame? {
        condition.lock()
        defer { condition.unlock() }
        let before = finished
        let now = monotonicSeconds()
        let wait: TimeInterval
        if latestEpoch != epoch {
            wait = Self.firstWait
        } else {
            wait = now - latestTakenAt < Self.recent ? Self.recentWait : Self.wait
        }
        let deadline = now + wait
        while finished == before || latestEpoch != epoch {
            startIfIdle()
            guard condition.wait(until: deadline) else { break }
        }
        return latest
    }

    /// Begins a screenshot unless one is under way, without waiting for it (so that the next
    /// `take()` finds a current one).
    func refresh() {
        condition.lock()
        startIfIdle()
        condition.unlock()
    }

    /// The picture on screen changed for good (a paused seek, a new size): the last screenshot
    /// no longer stands for it, nor does one under way.
    func invalidate() {
        condition.lock()
        epoch += 1
        condition.unlock()
    }

    /// Starts a screenshot on the worker unless one runs; `condition` held.
    private func startIfIdle() {
        guard !running else { return }
        running = true
        worker.async { [handle, fallbackTime, begunIn = epoch] in
            let frame = MPVScreenshot.take(from: handle, fallbackTime: fallbackTime())
            self.condition.lock()
            self.latest = frame
            self.latestEpoch = begunIn
            self.latestTakenAt = monotonicSeconds()
            self.finished += 1
            self.running = false
            self.condition.broadcast()
            self.condition.unlock()
        }
    }
}

/// Thumbnails where no picture passes through memory while playing (`.none`, `.window`): mpv's
/// `screenshot-raw` of the frame the video output holds, converted to RGBA on demand.
///
/// The screenshot carries no time, so it is paired with `time-pos`, which mpv sets to a frame's
/// time when it hands that frame to the video output (on the core thread, together with the
/// hand-over). `time-pos` read before and after the screenshot alike means no frame was handed
/// over in between: the picture is the frame at that time.
enum MPVScreenshot {
    /// How often a screenshot is taken again when a new frame came while it was taken.
    private static let attempts = 4

    /// The video picture on screen now, or nil when there is none (no video, nothing shown
    /// yet). `fallbackTime` is its time when mpv reports no position.
    static func take(from handle: MPVHandle, fallbackTime: @autoclosure () -> TimeInterval) -> VideoFrame? {
        for attempt in 1...attempts {
            let before = handle.getDouble("time-pos")
            guard let result = handle.commandReturningNode(["screenshot-raw", "video"]) else { return nil }
            let after = handle.getDouble("time-pos")
            guard before == after || attempt == attempts else { continue }
            return frame(from: result, presentationTime: after ?? before ?? fallbackTime())
        }
        return nil
    }

    /// Converts a `screenshot-raw` result (`bgr0`, or `rgb0`/`rgba`/`bgra`) to an RGBA frame.
    private static func frame(from result: MPVValue, presentationTime: TimeInterval) -> VideoFrame? {
        guard let width = result["w"]?.int, let height = result["h"]?.int,
              let stride = result["stride"]?.int, width > 0, height > 0, stride >= width * 4,
              case .bytes(let data)? = result["data"], data.count >= stride * (height - 1) + width * 4
        else { return nil }
        let format = result["format"]?.string ?? "bgr0"
        let swapsRedAndBlue = !format.hasPrefix("rgb")
        let bytesPerRow = width * 4
        let pixels = [UInt8](unsafeUninitializedCapacity: bytesPerRow * height) { output, count in
            data.withUnsafeBufferPointer { input in
                for row in 0..<height {
                    var from = row * stride
                    var to = row * bytesPerRow
                    for _ in 0..<width {
                        output[to] = input[swapsRedAndBlue ? from + 2 : from]
                        output[to + 1] = input[from + 1]
                        output[to + 2] = input[swapsRedAndBlue ? from : from + 2]
                        output[to + 3] = 255
                        from += 4
                        to += 4
                    }
                }
            }
            count = bytesPerRow * height
        }
        return VideoFrame(width: width, height: height, bytesPerRow: bytesPerRow, pixels: pixels,
                          presentationTime: presentationTime)
    }
}
#endif

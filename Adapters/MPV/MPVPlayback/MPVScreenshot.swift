#if MPV
import CMPV
import Dispatch
import FoundationEssentials
import PlaybackKit

/// Takes `screenshot-raw` pictures on a worker of its own, so that `thumbnail()` returns within
/// a bound: each mpv call waits for the core, which a run of seeks can keep busy for longer
/// than a public call may take.
///
/// A call waits a moment for a screenshot begun after it was made (or for one already under
/// way); when the core is too busy for that, it returns the last picture taken, which carries
/// its own time (the one it was taken at), and the one under way replaces it when done.
/// The last picture stands in only while it may still be the one shown:
/// - while a seek is under way (the core is busy, and the picture from before is shown until
///   it lands): for `seekingWait`;
/// - once a seek landed or the size changed (`invalidate()`) while playing: for `wait`, as a
///   screenshot of the new picture is begun then;
/// - while paused or stalled (held until the cache fills), until a seek, a new size, or the
///   next pause or resume (a screenshot from an earlier pause, or from before the pictures
///   stopped, shows another frame): for `stillWait`, as a fresh one would show the same
///   picture;
/// - while playing, for `recent` after it was taken, as the pictures move on: for `wait`.
/// Otherwise (before the first, after a paused seek, a picture too old while playing) a call
/// waits up to `firstWait` for a screenshot begun since: the core is not seeking then, and
/// answers within the time of one screenshot.
final class MPVScreenshotTaker: @unchecked Sendable {
    // @unchecked: every `var` is read and written with `condition` held.
    private let condition = ConditionVariable()
    private let handle: MPVHandle
    private let fallbackTime: @Sendable () -> TimeInterval
    private let playback: @Sendable () -> PlaybackMotion
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
    /// How long it waits while a seek is under way: the calls of a run of seeks get the last
    /// picture sooner, leaving the rest of a public call's time to a machine too loaded to
    /// wake the caller on time.
    static let seekingWait: TimeInterval = 0.015
    /// How long it waits while the picture holds still (paused or stalled) and the last
    /// screenshot may stand for it: a fresh one would show the same picture, and a stalled
    /// source can keep the core from answering.
    static let stillWait: TimeInterval = 0.015
    /// How old a screenshot taken while playing may be to stand in.
    static let recent: TimeInterval = 0.25
    /// How long a call waits when the last screenshot cannot stand in.
    static let firstWait: TimeInterval = 1

    /// What the pictures are doing, as the session last asked for.
    struct PlaybackMotion {
        /// A seek was sent and has not landed.
        var seeking: Bool
        /// Playing (or asked to), and not held until the cache fills: the pictures move on.
        var advancing: Bool
    }

    /// A taker for `handle`'s video output; `fallbackTime` is a picture's time when mpv
    /// reports no position (read on the worker); `playback` is read by each call.
    init(handle: MPVHandle, fallbackTime: @escaping @Sendable () -> TimeInterval,
         playback: @escaping @Sendable () -> PlaybackMotion) {
        self.handle = handle
        self.fallbackTime = fallbackTime
        self.playback = playback
    }

    /// The picture on screen now, or the last one taken while it is current and the core
    /// does not answer within `wait`; nil when there is none.
    func take() -> VideoFrame? {
        condition.lock()
        defer { condition.unlock() }
        let before = finished
        let now = monotonicSeconds()
        let wait = standInWait(at: now)
        let deadline = now + wait
        while finished == before || latestEpoch != epoch {
            startIfIdle()
            guard condition.wait(until: deadline) else { break }
        }
        let waited = monotonicSeconds() - now
        if waited > 0.03 {
            PlaybackLog.log(.debug, "mpv", "thumbnail: waited \(Int(waited * 1000)) ms for a screenshot (bound \(Int(wait * 1000)) ms)")
        }
        return latest
    }

    /// How long a call at `now` waits before the last picture stands in (see the type's
    /// summary); `condition` held.
    private func standInWait(at now: TimeInterval) -> TimeInterval {
        guard latestEpoch >= 0 else { return Self.firstWait }
        let motion = playback()
        if motion.seeking { return Self.seekingWait }
        if latestEpoch != epoch { return motion.advancing ? Self.wait : Self.firstWait }
        guard motion.advancing else { return Self.stillWait }
        return now - latestTakenAt >= Self.recent ? Self.firstWait : Self.wait
    }

    /// Begins a screenshot unless one is under way, without waiting for it (so that the next
    /// `take()` finds a current one).
    func refresh() {
        condition.lock()
        startIfIdle()
        condition.unlock()
    }

    /// The picture on screen changed for good (a seek landed, a new size, a pause or resume):
    /// the last screenshot no longer stands for it, nor does one under way.
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
            // The picture it replaces is freed once the lock is let go: a caller waiting for
            // the lock (to return within its bound) does not wait for that.
            let replaced = self.latest
            self.latest = frame
            self.latestEpoch = begunIn
            self.latestTakenAt = monotonicSeconds()
            self.finished += 1
            self.running = false
            self.condition.broadcast()
            self.condition.unlock()
            withExtendedLifetime(replaced) {}
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

import CXine
import Dispatch
import FoundationEssentials
import PlaybackKit

// MARK: - The raw output's context

/// What xine's raw video output calls back into, on xine's video output thread, for every
/// picture it displays: the picture is copied (its planes are xine's, valid during the call
/// only) with its timestamp (from the timestamp plugin) and, by the mode the engine sets,
/// shown (kept for thumbnails and handed to a `.frames` handler), kept aside for the engine
/// (while it seeks), or ignored (xine displaying the paused picture again).
final class XineVideoOutput: @unchecked Sendable {
    // @unchecked: every variable below is touched only while `condition` is held, except
    // `sizes`, which only the video output thread (the callback's) touches.

    /// What becomes of the pictures displayed.
    enum Mode: Sendable {
        /// Shown: the thumbnail, and the `.frames` handler.
        case live
        /// Kept aside (`recorded`) for the engine, which shows the one it lands on.
        case recording
        /// Ignored: xine displays the paused picture again.
        case ignoring
    }

    private let condition = ConditionLock()
    private var stream: UnsafeMutablePointer<xine_stream_t>?
    private var timestamps: UnsafeMutablePointer<xine_post_t>?
    private var mode = Mode.recording
    private var displays = 0
    private var recorded: XinePicture?
    private var recordedBefore: XinePicture?
    private var timeline = Timeline()
    private var lastLive = uptime()
    private var usesStreamAspect = true
    private var sizes = SizeTracker()

    /// Where shown pictures go.
    let store: XinePictureStore
    private let sink: EngineSink

    init(store: XinePictureStore, sink: EngineSink) {
        self.store = store
        self.sink = sink
    }

    // MARK: Engine side

    /// Starts reading the stream's clock and size and the plugin's timestamps (the session
    /// calls it once made).
    func attach(_ stream: UnsafeMutablePointer<xine_stream_t>, timestamps: UnsafeMutablePointer<xine_post_t>) {
        condition.withLock {
            self.stream = stream
            self.timestamps = timestamps
        }
    }

    /// Stops touching the stream and the plugin; later pictures are ignored. Returns once no
    /// callback is between its reads of them.
    func detach() {
        condition.withLock {
            stream = nil
            timestamps = nil
        }
    }

    /// Where a picture's display aspect comes from: the stream's (the decoder's latest,
    /// XINE_STREAM_INFO_VIDEO_RATIO), or the picture's own. A picture carries the aspect of
    /// when the decoder allocated it, and xine's ffmpeg decoder allocates its first pictures
    /// before it has read the pixel aspect (anamorphic.mp4's first five say 4:3); but xine's
    /// Ogg demuxer stores Theora's pixel aspect as the stream's ratio.
    func takeAspect(fromStream: Bool) { condition.withLock { usesStreamAspect = fromStream } }

    /// Sets what becomes of the pictures from now on.
    func setMode(_ newMode: Mode) {
        condition.withLock {
            if newMode == .live, mode != .live { lastLive = uptime() }
            mode = newMode
        }
    }

    /// When the last picture was shown while playing (or playing started), monotonic seconds.
    var lastLiveDisplay: TimeInterval { condition.withLock { lastLive } }

    /// The media time of the last picture displayed, and when it was shown while playing (or
    /// playing started), monotonic seconds.
    var lastShown: (time: TimeInterval, at: TimeInterval) { condition.withLock { (timeline.lastTime ?? 0, lastLive) } }

    /// How many pictures have been displayed, and the last one recorded.
    var lastRecorded: (count: Int, picture: XinePicture?) { condition.withLock { (displays, recorded) } }

    /// Waits until more than `count` pictures have been displayed, at most `timeout`
    /// seconds; returns the last one recorded then and the one recorded before it, or nil
    /// on timeout.
    func waitForDisplay(after count: Int, timeout: TimeInterval) -> (picture: XinePicture, before: XinePicture?)? {
        let deadline = uptime() + timeout
        return condition.withLock {
            while displays <= count {
                let left = deadline - uptime()
                if left <= 0 { return nil }
                condition.wait(timeout: left)
            }
            return recorded.map { ($0, recordedBefore) }
        }
    }

    /// The media time of a picture (its timestamp from the first picture's), or nil when
    /// the plugin did not see it or the first picture is not known yet.
    func mediaTime(of picture: XinePicture) -> TimeInterval? { condition.withLock { timeline.mediaTime(of: picture) } }

    /// The media time given to the last picture xine displayed.
    var lastTime: TimeInterval? { condition.withLock { timeline.lastTime } }

    /// Takes the timestamp `pts` as media time 0 (the first picture's).
    func setStart(_ pts: Int64) { condition.withLock { timeline.start = pts } }

    /// Notes pictures xine displayed (the last one last), with their media times, for telling
    /// the last one apart when xine displays it again.
    func remember(_ pictures: [(XinePicture, TimeInterval)]) {
        condition.withLock { for (picture, time) in pictures { timeline.remember(picture, at: time) } }
    }

    /// True once the first picture's timestamp is known.
    var hasStart: Bool { condition.withLock { timeline.start != nil } }

    /// One frame, seconds, as the engine measured it.
    func setFrameDuration(_ seconds: TimeInterval) { condition.withLock { timeline.frameDuration = seconds } }


    /// Shows `picture` at media time `time`: on screen, and to the `.frames` handler.
    func show(_ picture: XinePicture, at time: TimeInterval) {
        store.set(picture, time: time)
        present(picture, at: time)
    }

    // MARK: Video output thread

    /// One displayed picture, on xine's video output thread.
    private func displayed(format: Int32, width: Int, height: Int, aspect frameAspect: Double,
                           planes: (UnsafeRawPointer?, UnsafeRawPointer?, UnsafeRawPointer?)) {
        typealias Reading = (mode: Mode, clock: Int64, info: VideoSize, ratio: Double, timestamp: Int64?)
        let reading = condition.withLock { () -> Reading? in
            guard let stream, let timestamps else { return nil }
            let info = VideoSize(width: Int(xine_get_stream_info(stream, XINE_STREAM_INFO_VIDEO_WIDTH)),
                                 height: Int(xine_get_stream_info(stream, XINE_STREAM_INFO_VIDEO_HEIGHT)))
            let ratio = usesStreamAspect ? Double(xine_get_stream_info(stream, XINE_STREAM_INFO_VIDEO_RATIO)) / 10000 : 0
            var pts: Int64 = 0, vpts: Int64 = 0
            let found = planes.0.map { pkx_timestamp_of(timestamps, $0, &pts, &vpts) == 1 } ?? false
            return (mode, xine_get_current_vpts(stream), info, ratio, found ? pts : nil)
        }
        guard let reading else { return }
        let visible = sizes.visible(buffer: VideoSize(width: width, height: height), reported: reading.info)
        let natural = SizeTracker.natural(visible: visible, aspect: reading.ratio > 0 ? reading.ratio : frameAspect)
        let picture = reading.mode == .ignoring ? nil
            : XinePicture(format: format, bufferWidth: width, visible: visible, natural: natural, planes: planes,
                          clock: reading.clock, timestamp: reading.timestamp)
        let time = condition.withLock { () -> TimeInterval? in
            displays += 1
            let shown = picture.flatMap { timeline.displayed($0) }
            if reading.mode == .recording, let picture {
                recordedBefore = recorded
                recorded = picture
            }
            condition.broadcast()
            // While playing, a picture displayed again (xine shows the landed one again when
            // playing starts, and the last one while its decoder waits for data) is on
            // screen already.
            guard reading.mode == .live, let shown, !shown.again else { return nil }
            lastLive = uptime()
            return shown.time
        }
        guard let picture, let time else { return }
        // The picture on screen is the position: xine's clock itself moves on its own after
        // a seek (the sound nudges it), the pictures keep their times.
        sink.position(time)
        if natural != store.latestNaturalSize { sink.naturalSizeChanged(natural) }
        show(picture, at: time)
    }

    /// Hands a shown picture to the `.frames` handler, if the player has one.
    private func present(_ picture: XinePicture, at time: TimeInterval) {
        guard sink.frames != nil else { return }
        let frame = picture.rgba(presentationTime: time)
        frame.pixels.withUnsafeBytes { pixels in
            sink.presentFrame(pixels, size: frame.size, bytesPerRow: frame.bytesPerRow, presentationTime: time)
        }
    }

    /// The raw output's picture callback (`raw_output_cb`); `context` is the output, kept
    /// alive by its session until the output is closed.
    static let frameCallback: pkx_raw_frame_callback = { context, format, width, height, aspect, plane0, plane1, plane2 in
        guard let context, width > 0, height > 0 else { return }
        let output = Unmanaged<XineVideoOutput>.fromOpaque(context).takeUnretainedValue()
        output.displayed(format: format, width: Int(width), height: Int(height), aspect: aspect,
                         planes: (UnsafeRawPointer(plane0), UnsafeRawPointer(plane1), UnsafeRawPointer(plane2)))
    }

    /// The raw output's overlay callback (`raw_overlay_cb`): subtitles and OSD, not drawn.
    static let overlayCallback: pkx_raw_overlay_callback = { _, _, _ in }
}

// MARK: - Times

/// The media times of the pictures xine displays: a picture's timestamp (the timestamp
/// plugin's) from the first picture's. The last picture displayed again (xine copies it to
/// display it again when playing starts, into a plane the plugin last saw with another
/// picture) keeps the time it had.
struct Timeline: Sendable {
    /// The first picture's timestamp, media time 0.
    var start: Int64?
    /// One frame, seconds (0 until the engine has measured it).
    var frameDuration: TimeInterval = 0
    /// The last picture xine displayed, by a digest of its pixels, with its media time.
    private var last: (digest: UInt64, time: TimeInterval)?

    /// The media time of the last picture displayed.
    var lastTime: TimeInterval? { last?.time }

    /// The media time of `picture` by its timestamp, or nil without its timestamp or the start.
    func mediaTime(of picture: XinePicture) -> TimeInterval? {
        guard let start, let timestamp = picture.timestamp else { return nil }
        return TimeInterval(timestamp - start) / 90000
    }

    /// The media time of `picture`, just displayed, and whether it is the last picture
    /// displayed again (which keeps its time); else its timestamp's (or a frame after the
    /// last one's, without one).
    mutating func displayed(_ picture: XinePicture) -> (time: TimeInterval, again: Bool)? {
        let digest = picture.digest
        if let last, last.digest == digest { return (max(0, last.time), true) }
        guard let time = mediaTime(of: picture) ?? last.map({ $0.time + frameDuration }) else { return nil }
        last = (digest, time)
        return (max(0, time), false)
    }

    /// Notes `picture` as the last one displayed, at media time `time` (for a picture
    /// displayed before the first picture's timestamp was known).
    mutating func remember(_ picture: XinePicture, at time: TimeInterval) { last = (picture.digest, time) }
}

/// Seconds of the monotonic clock.
func uptime() -> TimeInterval { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

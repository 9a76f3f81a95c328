#if GStreamer
import CGStreamer
import FoundationEssentials
import PlaybackKit
import PictureConversion

// The typed operations on the playbin: state changes, seeks, queries, properties, pictures.
// Each may be called from any thread (the playbin is held through `withPlaybin`); once the
// pipeline is destroyed they do nothing and answer nil or `.failure`.

/// A pipeline state (GstState).
enum PipelineState: Sendable, Equatable, CustomStringConvertible {
    case voidPending, null, ready, paused, playing

    init(_ state: GstState) {
        switch state {
        case GST_STATE_NULL: self = .null
        case GST_STATE_READY: self = .ready
        case GST_STATE_PAUSED: self = .paused
        case GST_STATE_PLAYING: self = .playing
        default: self = .voidPending
        }
    }

    var gstState: GstState {
        switch self {
        case .voidPending: GST_STATE_VOID_PENDING
        case .null: GST_STATE_NULL
        case .ready: GST_STATE_READY
        case .paused: GST_STATE_PAUSED
        case .playing: GST_STATE_PLAYING
        }
    }

    var description: String { String(cString: gst_element_state_get_name(gstState)) }
}

/// How a state change went (GstStateChangeReturn).
enum StateChange: Sendable, Equatable {
    /// Done.
    case success
    /// Under way: ASYNC_DONE follows (the sinks preroll).
    case async
    /// Done, but a live source does not preroll in PAUSED.
    case noPreroll
    /// Refused (the reason is on the bus).
    case failure

    init(_ result: GstStateChangeReturn) {
        switch result {
        case GST_STATE_CHANGE_SUCCESS: self = .success
        case GST_STATE_CHANGE_ASYNC: self = .async
        case GST_STATE_CHANGE_NO_PREROLL: self = .noPreroll
        default: self = .failure
        }
    }

    /// No state change is pending any more.
    var isSettled: Bool { self == .success || self == .noPreroll }
}

/// Where a seek lands.
enum SeekMode: Sendable {
    /// On the exact frame.
    case accurate
    /// On the keyframe at or before the target.
    case keyframe
}

/// What the pipeline knows about its buffering and reading (see `bufferFigures()`).
struct PipelineBufferFigures: Sendable, Equatable {
    /// How far the buffered data reaches, in the unit the elements answered in.
    enum Reach: Sendable, Equatable {
        case time(TimeInterval)
        /// A share of the whole media, 0...1.
        case share(Double)
        case bytes(Int64)
    }

    /// Whether an element answered the buffering query (something buffers).
    var answered = false
    /// The buffering percentage the query answered.
    var percent = 0
    /// How far buffered data reaches, when the query said.
    var reach: Reach?
    /// The source's byte position and size (0 and nil when unknown).
    var sourceOffset: Int64 = 0
    var sourceSize: Int64?
    /// Bytes the source has delivered so far.
    var bytesRead: Int64 = 0
}

extension GStreamerPipeline {
    // MARK: - State

    /// Asks for `state`.
    @discardableResult
    func setState(_ state: PipelineState) -> StateChange {
        withPlaybin { StateChange(gst_element_set_state($0, state.gstState)) } ?? .failure
    }

    /// Waits up to `timeout` seconds (0: not at all) for a pending state change to finish;
    /// `.async` when it still runs.
    func waitForState(timeout: TimeInterval) -> StateChange {
        let nanoseconds = GstClockTime(GStreamerFrames.nanoseconds(timeout))
        return withPlaybin { StateChange(gst_element_get_state($0, nil, nil, nanoseconds)) } ?? .failure
    }

    // MARK: - Seeking

    /// A flushing seek from `seconds` on at `rate`; false if refused. A flushing seek puts the
    /// pipeline in an async state change before this returns (`waitForState(timeout: 0)` is
    /// `.async` until it has landed).
    func seek(to seconds: TimeInterval, rate: Double, mode: SeekMode) -> Bool {
        let landing = mode == .accurate
            ? GST_SEEK_FLAG_ACCURATE.rawValue
            : GST_SEEK_FLAG_KEY_UNIT.rawValue | GST_SEEK_FLAG_SNAP_BEFORE.rawValue
        let flags = GstSeekFlags(rawValue: GST_SEEK_FLAG_FLUSH.rawValue | landing)
        let streamTime = seconds + context.timelineOrigin.get()
        return withPlaybin {
            gst_element_seek($0, rate, GST_FORMAT_TIME, flags, GST_SEEK_TYPE_SET,
                             GStreamerFrames.nanoseconds(streamTime), GST_SEEK_TYPE_NONE, -1) != 0
        } ?? false
    }

    // MARK: - Queries

    /// The playing position on the media's timeline, seconds; nil when the pipeline cannot
    /// tell.
    func position() -> TimeInterval? {
        timeQuery(gst_element_query_position).map { max(0, $0 - context.timelineOrigin.get()) }
    }

    /// The media's duration, seconds; nil when unknown. (Demuxers answer with the length,
    /// from the first timestamp on: the timeline origin is not in it.)
    func duration() -> TimeInterval? { timeQuery(gst_element_query_duration) }

    /// Takes where the media starts on the stream's timeline from the position prerolled at
    /// the start (see `PipelineContext.timelineOrigin`); a live source keeps 0. Call once
    /// prerolled, before any seek.
    func measureTimelineOrigin(live: Bool) {
        var start = live ? 0 : timeQuery(gst_element_query_position) ?? 0
        if !live, let picture = firstPictureStart(), MediaStart.isStart(firstPicture: picture.time, start: start, frameDuration: picture.frame) {
            // Muxers shift every stream by an audio encoder's delay (Opus's pre-skip, AAC's
            // priming): a first picture that close to the start is the start, as on the
            // other engines.
            start = picture.time
        }
        context.setTimelineOrigin(start)
        if start > 0 { PlaybackLog.log(.debug, "gstreamer", "the media starts \(start) s into the stream's timeline") }
    }

    /// The stream time of the video sink's prerolled picture, and how long a frame lasts (its
    /// caps' rate; 50 ms without one); nil without a picture.
    private func firstPictureStart() -> (time: TimeInterval, frame: TimeInterval)? {
        withPlaybin { playbin -> (time: TimeInterval, frame: TimeInterval)? in
            guard let sample = pk_gst_get_sample(playbin, "sample") else { return nil }
            defer { gst_sample_unref(sample) }
            guard let time = GStreamerFrames.presentationTime(of: sample, origin: 0) else { return nil }
            let rate = gst_sample_get_caps(sample).flatMap { GStreamerFrames.frameRate(of: $0) }
            return (time, rate.map { 1 / $0 } ?? 0.05)
        } ?? nil
    }

    /// A position or duration query in time on the playbin, in seconds.
    private func timeQuery(_ query: (UnsafeMutablePointer<GstElement>?, GstFormat, UnsafeMutablePointer<gint64>?) -> gboolean) -> TimeInterval? {
        withPlaybin { playbin -> TimeInterval? in
            var value: gint64 = -1
            guard query(playbin, GST_FORMAT_TIME, &value) != 0, value >= 0 else { return nil }
            return GStreamerFrames.seconds(GstClockTime(value))
        } ?? nil
    }

    /// The number of video and audio streams (n-video, n-audio).
    func streamCounts() -> (video: Int, audio: Int) {
        withPlaybin { (Int(pk_gst_get_int($0, "n-video")), Int(pk_gst_get_int($0, "n-audio"))) } ?? (0, 0)
    }

    /// A buffering query on the pipeline, with the source's byte position and size and the
    /// bytes read, to fall back on when nothing answers it.
    func bufferFigures() -> PipelineBufferFigures {
        var figures = PipelineBufferFigures()
        figures.bytesRead = context.bytesRead.get()
        context.source.withLock { held in
            guard let source = held.element else { return }
            var value: gint64 = 0
            if gst_element_query_position(source, GST_FORMAT_BYTES, &value) != 0, value > 0 { figures.sourceOffset = Int64(value) }
            if gst_element_query_duration(source, GST_FORMAT_BYTES, &value) != 0, value > 0 { figures.sourceSize = Int64(value) }
        }
        withPlaybin { playbin in
            let query = gst_query_new_buffering(GST_FORMAT_TIME)!
            defer { gst_query_unref(query) }
            guard gst_element_query(playbin, query) != 0 else { return }
            figures.answered = true
            var busy: gboolean = 0
            var percent: gint = 0
            gst_query_parse_buffering_percent(query, &busy, &percent)
            figures.percent = Int(percent)
            var format = GST_FORMAT_UNDEFINED
            var stop: gint64 = -1
            gst_query_parse_buffering_range(query, &format, nil, &stop, nil)
            guard stop > 0 else { return }
            switch format {
            case GST_FORMAT_TIME: figures.reach = .time(max(0, GStreamerFrames.seconds(GstClockTime(stop)) - context.timelineOrigin.get()))
            case GST_FORMAT_PERCENT: figures.reach = .share(Double(stop) / Double(pk_gst_format_percent_max()))
            case GST_FORMAT_BYTES: figures.reach = .bytes(Int64(stop))
            default: break
            }
        }
        return figures
    }

    /// The name of a demuxer whose streaming task stopped before it exposed any stream, if
    /// one did (decodebin drops the errors of an element it is still plugging, see
    /// `GStreamerSession.checkDemuxers`).
    func stoppedDemuxer() -> String? {
        context.demuxers.withLock { list -> String? in
            for held in list {
                guard let element = held.element, element.pointee.numsrcpads == 0,
                      let pad = gst_element_get_static_pad(element, "sink") else { continue }
                defer { gst_object_unref(pad) }
                if gst_pad_get_task_state(pad) == GST_TASK_PAUSED {
                    return GStreamerErrors.objectName(pk_gst_object(element))
                }
            }
            return nil
        }
    }

    // MARK: - Properties

    /// playbin's "volume" (linear, 0...1 here).
    func setVolume(_ volume: Double) {
        withPlaybin { pk_gst_set_double($0, "volume", volume) }
    }


    // MARK: - Pictures

    /// The video sink's last picture as RGBA at `size` (default: its natural size), without
    /// drawn subtitles: the same picture from before the overlay when subtitles show;
    /// converted by `converter`.
    func thumbnail(size: VideoSize? = nil, converter: YUVFrameConverter) -> VideoFrame? {
        withPlaybin { playbin -> VideoFrame? in
            guard let sample = pk_gst_get_sample(playbin, "sample") else { return nil }
            defer { gst_sample_unref(sample) }
            let undrawn = context.undrawnPictures.withLock { $0.sample(like: sample) }
            defer { if let undrawn { gst_sample_unref(undrawn) } }
            let origin = context.timelineOrigin.get(), turn = context.uprightTurn.get()
            if let undrawn, turn != 0 {
                // The picture from before the overlay is also from before videoflip: turned here.
                let upright = size ?? gst_sample_get_caps(sample).flatMap { GStreamerFrames.naturalSize(of: $0) }
                return GStreamerFrames.thumbnail(of: undrawn, size: upright?.turned(by: turn), origin: origin, converter: converter)?
                    .turned(by: turn)
            }
            return GStreamerFrames.thumbnail(of: undrawn ?? sample, size: size, origin: origin, converter: converter)
        } ?? nil
    }
}
#endif

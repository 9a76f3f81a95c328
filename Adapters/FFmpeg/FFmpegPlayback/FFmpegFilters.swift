#if FFmpeg
import CFFmpeg
import PlaybackKit

// MARK: - A chain of filters

/// One `AVFilterGraph`: a source, a chain of filters and a sink, built once for one shape of
/// frame and freed here. Frames go in with `push` and come out with `pull`.
final class FilterChain {
    private let graph: UnsafeMutablePointer<AVFilterGraph>
    private let source: UnsafeMutablePointer<AVFilterContext>
    private let sink: UnsafeMutablePointer<AVFilterContext>

    /// Builds `source` (a filter name and its arguments) → `steps` (names and arguments, in
    /// order) → `sink`, on one thread; nil when libavfilter cannot build it.
    init?(source sourceFilter: (name: String, arguments: String), steps: [(name: String, arguments: String?)], sink sinkName: String) {
        guard let graph = avfilter_graph_alloc() else { return nil }
        graph.pointee.nb_threads = 1
        var sourceContext: UnsafeMutablePointer<AVFilterContext>?
        var sinkContext: UnsafeMutablePointer<AVFilterContext>?
        var built = avfilter_graph_create_filter(&sourceContext, avfilter_get_by_name(sourceFilter.name), "in", sourceFilter.arguments, nil, graph) >= 0
            && avfilter_graph_create_filter(&sinkContext, avfilter_get_by_name(sinkName), "out", nil, nil, graph) >= 0
        if built, let sourceContext, let sinkContext {
            var previous = sourceContext
            for (index, step) in steps.enumerated() {
                var filter: UnsafeMutablePointer<AVFilterContext>?
                guard avfilter_graph_create_filter(&filter, avfilter_get_by_name(step.name), "step\(index)", step.arguments, nil, graph) >= 0,
                      let filter, avfilter_link(previous, 0, filter, 0) >= 0 else { built = false; break }
                previous = filter
            }
            built = built && avfilter_link(previous, 0, sinkContext, 0) >= 0 && avfilter_graph_config(graph, nil) >= 0
        }
        guard built, let sourceContext, let sinkContext else {
            var g: UnsafeMutablePointer<AVFilterGraph>? = graph
            avfilter_graph_free(&g)
            return nil
        }
        self.graph = graph
        source = sourceContext
        sink = sinkContext
    }

    deinit {
        var g: UnsafeMutablePointer<AVFilterGraph>? = graph
        avfilter_graph_free(&g)
    }

    /// Feeds a frame (its reference is taken over and `frame` left empty).
    func push(_ frame: UnsafeMutablePointer<AVFrame>) -> Bool {
        av_buffersrc_add_frame_flags(source, frame, 0) >= 0
    }

    /// Takes the next filtered frame into `frame`; false when none is ready.
    func pull(into frame: UnsafeMutablePointer<AVFrame>) -> Bool {
        av_buffersink_get_frame(sink, frame) >= 0
    }
}

// MARK: - Tempo

/// abuffer → atempo (chained for factors outside 0.5...2) → abuffersink: changes the speed
/// of audio while keeping its pitch.
final class TempoFilter {
    private let chain: FilterChain
    let rate: Double
    let inputFormat: Int32
    let inputRate: Int32
    let inputChannels: Int32

    /// Builds the graph for frames shaped like `frame`, at `rate`.
    init?(for frame: UnsafeMutablePointer<AVFrame>, rate: Double) {
        let f = frame.pointee
        var layoutName = [CChar](repeating: 0, count: 128)
        var layout = f.ch_layout
        av_channel_layout_describe(&layout, &layoutName, layoutName.count)
        let formatName = String(cString: av_get_sample_fmt_name(AVSampleFormat(f.format)))
        let arguments = "time_base=1/\(f.sample_rate):sample_rate=\(f.sample_rate):sample_fmt=\(formatName):channel_layout=\(FFmpegErrors.string(from: layoutName))"
        // atempo takes 0.5...100 per instance; chain instances for slower speeds.
        var factors: [Double] = []
        var remaining = rate
        while remaining < 0.5 { factors.append(0.5); remaining /= 0.5 }
        factors.append(remaining)
        guard let chain = FilterChain(source: ("abuffer", arguments), steps: factors.map { ("atempo", "tempo=\($0)") },
                                      sink: "abuffersink") else { return nil }
        self.chain = chain
        self.rate = rate
        inputFormat = f.format
        inputRate = f.sample_rate
        inputChannels = f.ch_layout.nb_channels
    }

    /// True when `frame` has the shape the graph was built for.
    func accepts(_ frame: UnsafeMutablePointer<AVFrame>) -> Bool {
        frame.pointee.format == inputFormat && frame.pointee.sample_rate == inputRate
            && frame.pointee.ch_layout.nb_channels == inputChannels
    }

    /// Feeds a frame (its reference is taken over and `frame` left empty).
    func push(_ frame: UnsafeMutablePointer<AVFrame>) -> Bool { chain.push(frame) }

    /// Takes the next filtered frame into `frame`; false when none is ready.
    func pull(into frame: UnsafeMutablePointer<AVFrame>) -> Bool { chain.pull(into: frame) }
}

// MARK: - Upright

/// buffer → transpose (a quarter turn) or hflip → vflip (a half turn) → buffersink: turns the
/// pictures of a stream with a display matrix (phone recordings) upright, as `ffmpeg` and
/// the other engines show them. Built for one picture shape; the decoder builds it again when
/// the shape changes.
final class UprightFilter {
    private let chain: FilterChain
    /// The clockwise turn in degrees (90, 180 or 270).
    let turn: Int
    private let inputFormat: Int32
    private let inputWidth: Int32
    private let inputHeight: Int32

    /// Builds the graph turning pictures shaped like `frame` clockwise by `turn` degrees;
    /// nil for another turn or when libavfilter cannot build it.
    init?(for frame: UnsafeMutablePointer<AVFrame>, turn: Int) {
        let steps: [(name: String, arguments: String?)]
        switch turn {
        case 90: steps = [("transpose", "dir=clock")]
        case 180: steps = [("hflip", nil), ("vflip", nil)]
        case 270: steps = [("transpose", "dir=cclock")]
        default: return nil
        }
        let f = frame.pointee
        let aspect = f.sample_aspect_ratio.num > 0 && f.sample_aspect_ratio.den > 0 ? f.sample_aspect_ratio : AVRational(num: 1, den: 1)
        let arguments = "video_size=\(f.width)x\(f.height):pix_fmt=\(f.format):time_base=1/1000000:pixel_aspect=\(aspect.num)/\(aspect.den)"
        guard let chain = FilterChain(source: ("buffer", arguments), steps: steps, sink: "buffersink") else { return nil }
        self.chain = chain
        self.turn = turn
        inputFormat = f.format
        inputWidth = f.width
        inputHeight = f.height
    }

    /// True when `frame` has the shape the graph was built for.
    func accepts(_ frame: UnsafeMutablePointer<AVFrame>) -> Bool {
        frame.pointee.format == inputFormat && frame.pointee.width == inputWidth && frame.pointee.height == inputHeight
    }

    /// Replaces `frame` with its picture turned upright (its other properties kept); false
    /// when libavfilter failed, and `frame` is then left empty.
    func turnUpright(_ frame: UnsafeMutablePointer<AVFrame>) -> Bool {
        // A picture without its own pixel aspect takes the stream's (already turned by the
        // reader): the graph's stand-in 1:1 is not handed on.
        let hasAspect = frame.pointee.sample_aspect_ratio.num > 0
        guard chain.push(frame) else {
            av_frame_unref(frame)
            return false
        }
        guard chain.pull(into: frame) else { return false }
        if !hasAspect { frame.pointee.sample_aspect_ratio = AVRational(num: 0, den: 1) }
        return true
    }
}
#endif

#if GStreamer
import CGStreamer
import FoundationEssentials
import PictureConversion
import PlaybackKit

/// A picture the `.frames` sink received, valid only while the callback it is handed to
/// runs (the pipeline releases the sample after it).
struct PipelineSample: @unchecked Sendable {
    // @unchecked: the sample is only read, and only during the callback on its streaming thread.
    private let sample: OpaquePointer
    /// Where the media's timeline starts on the stream's (see `PipelineContext.timelineOrigin`).
    private let origin: TimeInterval

    init(_ sample: OpaquePointer, origin: TimeInterval) {
        self.sample = sample
        self.origin = origin
    }

    /// The picture's media time (see `GStreamerFrames.presentationTime(of:origin:)`).
    var presentationTime: TimeInterval? { GStreamerFrames.presentationTime(of: sample, origin: origin) }

    /// Calls `body` with the picture as a `YUVFrame` over the buffer's own planes (mapped for
    /// the call); nil if it is not I420 or NV12.
    func withYUVFrame<T>(converter: YUVFrameConverter, _ body: (YUVFrame) -> T) -> T? {
        GStreamerFrames.withYUVFrame(of: sample, time: presentationTime ?? 0, converter: converter, body)
    }

    /// Calls `body` with the picture as the picture converter reads it, and its display size;
    /// nil if its format is not one the converter reads.
    func withSourcePicture<T>(_ body: (SourcePicture, VideoSize) -> T) -> T? {
        GStreamerFrames.withSourcePicture(of: sample, body)
    }

    /// The sample, referenced for as long as the result lives.
    func retained() -> RetainedSample { RetainedSample(sample, origin: origin) }
}

/// A sample kept beyond its callback (a reference of its own, dropped with this object): the
/// window output's last picture, drawn again on expose or resize. Its buffer is only read.
final class RetainedSample: @unchecked Sendable {
    // @unchecked: the sample is only read (mapped for reading), from any thread.
    private let sample: OpaquePointer
    /// Where the media's timeline starts on the stream's.
    private let origin: TimeInterval

    init(_ sample: OpaquePointer, origin: TimeInterval) {
        self.sample = gst_sample_ref(sample)
        self.origin = origin
    }

    deinit { gst_sample_unref(sample) }

    /// Calls `body` with the sample, which stays valid for the call.
    func withSample<T>(_ body: (OpaquePointer) -> T) -> T { body(sample) }

    /// Calls `body` with the picture as a `YUVFrame` over the buffer's planes (mapped for the
    /// call); nil if it is not I420 or NV12.
    func withYUVFrame<T>(converter: YUVFrameConverter, _ body: (YUVFrame) -> T) -> T? {
        GStreamerFrames.withYUVFrame(of: sample, time: GStreamerFrames.presentationTime(of: sample, origin: origin) ?? 0, converter: converter, body)
    }
}

/// Reads pictures and their geometry out of GstSamples and GstCaps: the pipeline's helper
/// for its samples and caps.
enum GStreamerFrames {
    /// The video info of `caps` (raw video only).
    static func videoInfo(_ caps: UnsafeMutablePointer<GstCaps>) -> GstVideoInfo? {
        var info = GstVideoInfo()
        guard gst_video_info_from_caps(&info, caps) != 0, info.width > 0, info.height > 0 else { return nil }
        return info
    }

    /// The display size described by `caps`: the stored size with the pixel aspect applied.
    static func naturalSize(of caps: UnsafeMutablePointer<GstCaps>) -> VideoSize? {
        naturalSize(of: caps, turnedBy: 0)
    }

    /// The display size of `caps`' pictures once turned clockwise by `turn` degrees, as
    /// `videoflip` turns them: a quarter turn swaps the stored size and inverts the pixel aspect.
    static func naturalSize(of caps: UnsafeMutablePointer<GstCaps>, turnedBy turn: Int) -> VideoSize? {
        guard let info = videoInfo(caps) else { return nil }
        let storage = VideoSize(width: Int(info.width), height: Int(info.height))
        return VideoSize.display(storage: storage, pixelAspect: Int(info.par_n), Int(info.par_d), turnedBy: turn)
    }

    /// The frames per second of video `caps`; nil when they give none (0/1: variable).
    static func frameRate(of caps: UnsafeMutablePointer<GstCaps>) -> Double? {
        guard let info = videoInfo(caps), info.fps_n > 0, info.fps_d > 0 else { return nil }
        return Double(info.fps_n) / Double(info.fps_d)
    }

    /// The media time of `sample`'s picture: its PTS on the stream timeline (the segment
    /// start subtracted), the timeline position queries answer on, less `origin`, where the
    /// media starts on it (never below 0).
    static func presentationTime(of sample: OpaquePointer, origin: TimeInterval) -> TimeInterval? {
        guard let buffer = gst_sample_get_buffer(sample) else { return nil }
        let pts = pk_gst_buffer_pts(buffer)
        guard pk_gst_clock_time_is_valid(pts) != 0 else { return nil }
        var time = pts
        if let segment = gst_sample_get_segment(sample), segment.pointee.format == GST_FORMAT_TIME {
            let streamTime = gst_segment_to_stream_time(segment, GST_FORMAT_TIME, pts)
            if pk_gst_clock_time_is_valid(streamTime) != 0 { time = streamTime }
        }
        return max(0, seconds(time) - origin)
    }

    /// Calls `body` with the mapped RGBA pixels of `sample` (which must carry RGBA caps).
    @discardableResult
    static func withRGBAPixels<T>(of sample: OpaquePointer,
                                  _ body: (UnsafeRawBufferPointer, VideoSize, _ bytesPerRow: Int) -> T) -> T? {
        guard let caps = gst_sample_get_caps(sample), let info = videoInfo(caps),
              info.finfo.pointee.format == GST_VIDEO_FORMAT_RGBA,
              let buffer = gst_sample_get_buffer(sample) else { return nil }
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { return nil }
        defer { gst_buffer_unmap(buffer, &map) }
        let size = VideoSize(width: Int(info.width), height: Int(info.height))
        let stride = Int(info.stride.0)
        guard let data = map.data, map.size >= stride * (size.height - 1) + size.width * 4 else { return nil }
        return body(UnsafeRawBufferPointer(start: data, count: Int(map.size)), size, stride)
    }

    // MARK: - Pictures for the converter

    /// The raw formats the `.frames` output takes as the decoder makes them (videoconvert
    /// passes them through untouched and converts only others), by GStreamer's name, with the
    /// libavutil name of the same layout: the picture converter reads each one straight from
    /// the decoder's buffer, planes and strides as they are.
    static let converterFormats: [(gstreamer: String, libav: String)] = [
        ("I420", "yuv420p"), ("NV12", "nv12"), ("NV21", "nv21"), ("Y42B", "yuv422p"), ("Y444", "yuv444p"),
        ("Y41B", "yuv411p"), ("A420", "yuva420p"), ("I420_10LE", "yuv420p10le"), ("I422_10LE", "yuv422p10le"),
        ("Y444_10LE", "yuv444p10le"), ("I420_12LE", "yuv420p12le"), ("I422_12LE", "yuv422p12le"),
        ("Y444_12LE", "yuv444p12le"), ("P010_10LE", "p010le"), ("GRAY8", "gray"), ("GRAY16_LE", "gray16le"),
        ("GBR", "gbrp"), ("GBR_10LE", "gbrp10le"), ("RGBA", "rgba"), ("BGRA", "bgra"), ("ARGB", "argb"),
        ("ABGR", "abgr"), ("RGBx", "rgb0"), ("BGRx", "bgr0"), ("xRGB", "0rgb"), ("xBGR", "0bgr"),
        ("RGB", "rgb24"), ("BGR", "bgr24"),
    ]

    /// `converterFormats` as libavutil pixel format values, by GStreamer's name (the ones this
    /// libavutil knows).
    private static let libavFormats: [String: Int32] = Dictionary(uniqueKeysWithValues: converterFormats.compactMap { entry in
        let value = I420Converter.pixelFormat(named: entry.libav)
        return value >= 0 ? (entry.gstreamer, value) : nil
    })

    /// Raw video caps in any of the formats the converter reads.
    static func converterCaps() -> UnsafeMutablePointer<GstCaps> {
        let names = converterFormats.map(\.gstreamer).filter { libavFormats[$0] != nil }
        return gst_caps_from_string("video/x-raw,format=(string){\(names.joined(separator: ","))}")!
    }

    /// Calls `body` with the picture of `sample` as the converter reads it (the buffer's own
    /// planes, mapped for the call with the strides and offsets the decoder's video meta
    /// gives) and its display size; nil when its format is not one of `converterFormats`.
    static func withSourcePicture<T>(of sample: OpaquePointer, _ body: (SourcePicture, VideoSize) -> T) -> T? {
        guard let caps = gst_sample_get_caps(sample), var info = videoInfo(caps),
              let buffer = gst_sample_get_buffer(sample), let display = naturalSize(of: caps),
              let name = gst_video_format_to_string(info.finfo.pointee.format),
              let format = libavFormats[String(cString: name)] else { return nil }
        var frame = GstVideoFrame()
        guard gst_video_frame_map(&frame, &info, buffer, GST_MAP_READ) != 0 else { return nil }
        defer { gst_video_frame_unmap(&frame) }
        let planeCount = Int(info.finfo.pointee.n_planes)
        let data = withUnsafeBytes(of: frame.data) { Array($0.bindMemory(to: UnsafeMutableRawPointer?.self).prefix(planeCount)) }
        let strides = withUnsafeBytes(of: frame.info.stride) { Array($0.bindMemory(to: gint.self).prefix(planeCount)) }
        let colour = colour(of: caps, info: info)
        let picture = SourcePicture(format: .libav(format), width: Int(info.width), height: Int(info.height),
                                    planes: data.map { $0.map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) } },
                                    strides: strides.map { Int($0) }, matrix: colour.matrix == .bt709 ? .bt709 : .bt601,
                                    fullRange: colour.fullRange)
        return body(picture, display)
    }

    // MARK: - YUV pictures

    /// Calls `body` with the I420 or NV12 picture of `sample` as a `YUVFrame`, its planes
    /// mapped (with the strides and offsets the decoder's video meta gives) for the call.
    static func withYUVFrame<T>(of sample: OpaquePointer, time: TimeInterval, converter: YUVFrameConverter,
                                _ body: (YUVFrame) -> T) -> T? {
        guard let caps = gst_sample_get_caps(sample), var info = videoInfo(caps),
              let buffer = gst_sample_get_buffer(sample) else { return nil }
        let layout: YUVPixelLayout
        switch info.finfo.pointee.format {
        case GST_VIDEO_FORMAT_I420: layout = .i420
        case GST_VIDEO_FORMAT_NV12: layout = .nv12
        default: return nil
        }
        var frame = GstVideoFrame()
        guard gst_video_frame_map(&frame, &info, buffer, GST_MAP_READ) != 0 else { return nil }
        defer { gst_video_frame_unmap(&frame) }
        let width = Int(info.width), height = Int(info.height)
        let geometry = YUVFrame.planeGeometry(layout, width: width, height: height)
        let data = withUnsafeBytes(of: frame.data) { Array($0.bindMemory(to: UnsafeMutableRawPointer?.self).prefix(3)) }
        let strides = withUnsafeBytes(of: frame.info.stride) { Array($0.bindMemory(to: gint.self).prefix(3)) }
        var planes: [YUVPlane] = []
        for (index, plane) in geometry.enumerated() {
            guard let base = data[index], Int(strides[index]) >= plane.rowBytes else { return nil }
            planes.append(YUVPlane(baseAddress: UnsafePointer(base.assumingMemoryBound(to: UInt8.self)),
                                   bytesPerRow: Int(strides[index]), rowBytes: plane.rowBytes, rows: plane.rows))
        }
        let display = naturalSize(of: caps), colour = colour(of: caps, info: info)
        return body(YUVFrame(layout: layout, width: width, height: height, displaySize: display, planes: planes,
                             presentationTime: time, matrix: colour.matrix, fullRange: colour.fullRange, converter: converter))
    }

    /// The YUV matrix and range of `caps`' pictures; for a matrix they leave unset, what
    /// players assume for the height. Read from the caps' own colorimetry text: the video info
    /// replaces a colorimetry whose matrix is unset with the size's default, limited range
    /// included, so a full-range H.264 stream ("1:0:0:0") would lose its range.
    private static func colour(of caps: UnsafeMutablePointer<GstCaps>, info: GstVideoInfo) -> (matrix: YUVColorMatrix, fullRange: Bool) {
        var range = info.colorimetry.range, matrix = info.colorimetry.matrix
        var stated = GstVideoColorimetry()
        if let structure = gst_caps_get_structure(caps, 0), let text = gst_structure_get_string(structure, "colorimetry"),
           gst_video_colorimetry_from_string(&stated, text) != 0 {
            if stated.range != GST_VIDEO_COLOR_RANGE_UNKNOWN { range = stated.range }
            matrix = stated.matrix
        }
        let named: YUVColorMatrix = switch matrix {
        case GST_VIDEO_COLOR_MATRIX_BT709: .bt709
        case GST_VIDEO_COLOR_MATRIX_BT601: .bt601
        default: .assumed(forHeight: Int(info.height))
        }
        return (named, range == GST_VIDEO_COLOR_RANGE_0_255)
    }

    /// The picture of `sample` as RGBA at `size` (default: the natural size its caps
    /// describe), converted and scaled when it is not already: by `converter` straight from
    /// the buffer when its format is one the converter reads (a caller's thread must not wait
    /// on the pipeline GStreamer's own converter builds per call), by GStreamer otherwise.
    static func thumbnail(of sample: OpaquePointer, size: VideoSize? = nil, origin: TimeInterval,
                          converter: YUVFrameConverter) -> VideoFrame? {
        guard let caps = gst_sample_get_caps(sample), let info = videoInfo(caps),
              let natural = size.flatMap({ $0.isEmpty ? nil : $0 }) ?? naturalSize(of: caps) else { return nil }
        let time = presentationTime(of: sample, origin: origin) ?? 0
        let ready = info.finfo.pointee.format == GST_VIDEO_FORMAT_RGBA
            && Int(info.width) == natural.width && Int(info.height) == natural.height
        if ready { return copyFrame(sample, time: time) }
        if let converted = withSourcePicture(of: sample, { picture, _ in
            converter.rgbaFrame(picture, size: natural, presentationTime: time)
        }) {
            return converted
        }
        let target = pk_gst_caps_rgba(gint(natural.width), gint(natural.height))
        defer { gst_caps_unref(target) }
        var error: UnsafeMutablePointer<GError>?
        guard let converted = gst_video_convert_sample(sample, target, 5 * pk_gst_second(), &error) else {
            if let error {
                PlaybackLog.log(.warning, "gstreamer", "thumbnail: \(String(cString: error.pointee.message))")
                g_error_free(error)
            }
            return nil
        }
        defer { gst_sample_unref(converted) }
        return copyFrame(converted, time: time)
    }

    private static func copyFrame(_ sample: OpaquePointer, time: TimeInterval) -> VideoFrame? {
        withRGBAPixels(of: sample) { pixels, size, stride -> VideoFrame in
            VideoFrame(copying: pixels.baseAddress!, width: size.width, height: size.height, bytesPerRow: stride,
                       presentationTime: time)
        }
    }

    /// Nanoseconds to seconds.
    static func seconds(_ nanoseconds: GstClockTime) -> TimeInterval {
        Double(nanoseconds) / 1_000_000_000
    }

    /// Seconds to nanoseconds (clamped at 0).
    static func nanoseconds(_ seconds: TimeInterval) -> gint64 {
        gint64((max(0, seconds) * 1_000_000_000).rounded())
    }
}
#endif

#if StreamProbe
internal import CMediaProbe
import FoundationEssentials
import PlaybackKit

/// What libavformat reads of a file's container: its streams in order with their flags,
/// titles, languages and codec names, its tags and its chapters. For engines whose own model
/// leaves some of these out (libVLC 3 has no default flags, no codec names and only a few tags),
/// so that the same file gives the same tracks, metadata and chapters on every engine.
package struct StreamProbe: Sendable, Equatable {
    /// One stream of the container.
    package struct Stream: Sendable, Equatable {
        /// Its index in the container.
        package var index: Int
        /// Audio, video or subtitle.
        package var kind: TrackKind
        /// FFmpeg's codec name.
        package var codec: String
        /// The "title" tag.
        package var title: String?
        /// The "language" tag.
        package var language: String?
        /// AV_DISPOSITION_DEFAULT.
        package var isDefault: Bool
        /// AV_DISPOSITION_FORCED.
        package var isForced: Bool
        /// A video stream's nominal frames per second (its average rate, else its base rate);
        /// nil for other streams or when the container gives neither.
        package var frameRate: Double? = nil
        /// A video stream's stored picture size (its visible area, without the decoder's
        /// padding); nil for other streams or when the container does not say.
        package var pictureSize: VideoSize? = nil
        /// `pictureSize` with the stream's sample aspect ratio applied (the same when square),
        /// then turned by `rotation`: the size the picture is shown at.
        package var displaySize: VideoSize? = nil
        /// The clockwise quarter turn (0, 90, 180 or 270 degrees) the container's display
        /// matrix asks for to show the pictures upright (phone recordings).
        package var rotation = 0
    }

    /// The audio, video and subtitle streams, in container order (attached pictures left out).
    package var streams: [Stream]
    /// The container's tags.
    package var tags: [String: String]
    /// The chapters, in order.
    package var chapters: [Chapter]
    /// The media's duration as libavformat reads it (from the first timestamp), seconds; nil
    /// when it cannot tell.
    package var duration: TimeInterval? = nil
    /// libavformat's name for the container it read ("ogg", "matroska,webm", ...); nil when
    /// it gives none.
    package var container: String? = nil

    /// Reads `url` (a local file; remote sources are read only when `remote` is true, since
    /// that costs a second connection). Throws a `PlaybackError` when it cannot be read.
    package static func read(_ url: URL, remote: Bool = false) throws(PlaybackError) -> StreamProbe {
        guard url.isFileURL || remote else {
            throw PlaybackError(code: .invalidArgument, message: "probe: \(url.absoluteString) is not a local file")
        }
        _ = MediaProbeLog.quiet
        var format = openInput(url)
        guard let context = format else {
            throw PlaybackError(code: .unsupportedFormat, message: "probe: \(url.lastPathComponent) cannot be read")
        }
        defer { avformat_close_input(&format) }
        _ = avformat_find_stream_info(context, nil)
        var streams: [Stream] = []
        for index in 0..<Int(context.pointee.nb_streams) {
            let stream = context.pointee.streams[index]!
            let parameters = stream.pointee.codecpar.pointee
            let kind: TrackKind
            switch parameters.codec_type {
            case AVMEDIA_TYPE_AUDIO: kind = .audio
            case AVMEDIA_TYPE_VIDEO:
                if stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 { continue }
                kind = .video
            case AVMEDIA_TYPE_SUBTITLE: kind = .subtitle
            default: continue
            }
            let tags = dictionary(stream.pointee.metadata)
            let picture = kind == .video ? pictureSize(parameters) : nil
            let aspect = parameters.sample_aspect_ratio
            let rotation = kind == .video ? clockwiseTurn(of: stream) : 0
            streams.append(Stream(
                index: index, kind: kind, codec: String(cString: avcodec_get_name(parameters.codec_id)),
                title: tags["title"], language: tags["language"],
                isDefault: stream.pointee.disposition & AV_DISPOSITION_DEFAULT != 0,
                isForced: stream.pointee.disposition & AV_DISPOSITION_FORCED != 0,
                frameRate: kind == .video ? frameRate(stream.pointee.avg_frame_rate) ?? frameRate(stream.pointee.r_frame_rate) : nil,
                pictureSize: picture,
                displaySize: picture.map {
                    VideoSize.display(storage: $0, pixelAspect: Int(aspect.num), Int(aspect.den), turnedBy: rotation)
                },
                rotation: rotation))
        }
        var chapters: [Chapter] = []
        for index in 0..<Int(context.pointee.nb_chapters) {
            let chapter = context.pointee.chapters[index]!.pointee
            let base = Double(chapter.time_base.num) / Double(chapter.time_base.den)
            chapters.append(Chapter(title: dictionary(chapter.metadata)["title"], start: Double(chapter.start) * base,
                                    end: chapter.end > chapter.start ? Double(chapter.end) * base : nil))
        }
        let duration = context.pointee.duration > 0 ? Double(context.pointee.duration) / Double(AV_TIME_BASE) : nil
        let container = context.pointee.iformat.map { String(cString: $0.pointee.name) }
        return StreamProbe(streams: streams, tags: dictionary(context.pointee.metadata), chapters: chapters, duration: duration,
                           container: container)
    }

    /// The clockwise quarter turn (0, 90, 180 or 270) the display matrix of the first video
    /// stream of the local file at `url` asks for, read from the container's header alone (no
    /// packet is read, so it costs next to nothing); nil when the file cannot be opened.
    package static func videoRotation(_ url: URL) -> Int? {
        guard url.isFileURL else { return nil }
        _ = MediaProbeLog.quiet
        var format = openInput(url)
        guard let context = format else { return nil }
        defer { avformat_close_input(&format) }
        for index in 0..<Int(context.pointee.nb_streams) {
            let stream = context.pointee.streams[index]!
            guard stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO,
                  stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC == 0 else { continue }
            return clockwiseTurn(of: stream)
        }
        return 0
    }

    // MARK: - Opening

    /// Opens `url` (a local file or a remote source) with libavformat. A local file whose name
    /// ends as a container's that checks its own header (`strictDemuxers`) is opened with that
    /// demuxer first; when it refuses the file or finds no stream, the file is opened again with
    /// libavformat's probe, which tries every demuxer's detector on the first bytes. So a
    /// misnamed file reads as well as any, and a well-named one costs no probe: the probe touches
    /// the code of each of some 350 detectors (and libraries such as libopenmpt's), 2 to 3 MiB of
    /// memory in a process that plays with another engine. Nil when it cannot be opened.
    static func openInput(_ url: URL) -> UnsafeMutablePointer<AVFormatContext>? {
        let path = url.isFileURL ? url.path : url.absoluteString
        var format: UnsafeMutablePointer<AVFormatContext>?
        if url.isFileURL, let demuxer = strictDemuxers[url.pathExtension.lowercased()],
           let hinted = av_find_input_format(demuxer) {
            // A failed open, and avformat_close_input, leave `format` nil.
            if avformat_open_input(&format, path, hinted, nil) >= 0, let context = format {
                if context.pointee.nb_streams > 0 { return context }
                avformat_close_input(&format)
            }
        }
        guard avformat_open_input(&format, path, nil, nil) >= 0 else { return nil }
        return format
    }

    /// Containers whose demuxer refuses a file without its own header (an atom tree with a
    /// movie header, an EBML header, RIFF with its form type, "OggS"), by file extension: a
    /// misnamed file fails to open with them rather than reading as something it is not.
    /// Lenient ones (FLAC, which skips its marker unread; MP3, ADTS, MPEG-TS, program streams,
    /// raw streams) are left to the probe. `StreamProbeTests` opens every container of the
    /// format sweep under each of these names.
    private static let strictDemuxers: [String: String] = [
        "mp4": "mov", "m4v": "mov", "m4a": "mov", "mov": "mov", "3gp": "mov", "3g2": "mov",
        "mkv": "matroska", "mka": "matroska", "mks": "matroska", "webm": "matroska",
        "avi": "avi", "wav": "wav", "ogg": "ogg", "ogv": "ogg", "oga": "ogg", "opus": "ogg",
    ]

    /// The clockwise quarter turn `stream`'s display matrix asks for (0 without one).
    private static func clockwiseTurn(of stream: UnsafeMutablePointer<AVStream>) -> Int {
        guard let matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, nil) else { return 0 }
        let degrees = UnsafeRawPointer(matrix).withMemoryRebound(to: Int32.self, capacity: 9) { av_display_rotation_get($0) }
        return PictureTurn.clockwise(fromCounterclockwise: degrees)
    }

    /// The stored picture size of a video stream's parameters; nil when unset.
    private static func pictureSize(_ parameters: AVCodecParameters) -> VideoSize? {
        parameters.width > 0 && parameters.height > 0 ? VideoSize(width: Int(parameters.width), height: Int(parameters.height)) : nil
    }

    /// Frames per second of a stream's rate, nil when it is unset (0/0, 0/1) or absurd.
    private static func frameRate(_ rational: AVRational) -> Double? {
        guard rational.num > 0, rational.den > 0 else { return nil }
        let rate = Double(rational.num) / Double(rational.den)
        return rate < 1000 ? rate : nil
    }

    /// The entries of an AVDictionary, keys lower-cased.
    private static func dictionary(_ dictionary: OpaquePointer?) -> [String: String] {
        var result: [String: String] = [:]
        var entry: UnsafeMutablePointer<AVDictionaryEntry>?
        while let next = av_dict_get(dictionary, "", entry, AV_DICT_IGNORE_SUFFIX) {
            entry = next
            let key = String(cString: next.pointee.key).lowercased()
            if result[key] == nil { result[key] = String(cString: next.pointee.value) }
        }
        return result
    }
}
/// libav's own log lines stay off stderr (an app's terminal), as the FFmpeg engine keeps them:
/// shown only with PlaybackKit's debug log. Read once before the first probe or cue read.
enum MediaProbeLog {
    static let quiet: Void = { av_log_set_level(PlaybackLog.enabled(.debug) ? AV_LOG_INFO : AV_LOG_QUIET) }()
}
#endif

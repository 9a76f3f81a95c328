#if GStreamer
import CGStreamer
import FoundationEssentials
import PlaybackKit

// The typed operations on playbin's streams: how many of each kind, which one plays, the
// external subtitle file, the text offset and the volume read back. Any thread, like the
// other operations (the playbin is held through `withPlaybin`).

extension GStreamerPipeline {
    /// playbin's GST_PLAY_FLAG_VIDEO, _AUDIO and _TEXT (GstPlayFlags is not in a public header).
    private static func playFlag(_ kind: TrackKind) -> guint {
        switch kind {
        case .video: 0x1
        case .audio: 0x2
        case .subtitle: 0x4
        }
    }

    private static func streamNames(_ kind: TrackKind) -> (count: String, current: String) {
        switch kind {
        case .video: ("n-video", "current-video")
        case .audio: ("n-audio", "current-audio")
        case .subtitle: ("n-text", "current-text")
        }
    }

    /// The number of streams of `kind` playbin exposes (n-video, n-audio, n-text).
    func streamCount(_ kind: TrackKind) -> Int {
        withPlaybin { Int(pk_gst_get_int($0, Self.streamNames(kind).count)) } ?? 0
    }

    /// The language code and title playbin's tags give stream `index` of `kind`.
    func streamTags(_ kind: TrackKind, index: Int) -> (language: String?, title: String?) {
        let action = switch kind {
        case .video: "get-video-tags"
        case .audio: "get-audio-tags"
        case .subtitle: "get-text-tags"
        }
        return withPlaybin { playbin -> (String?, String?) in
            guard let tags = pk_gst_playbin_stream_tags(playbin, action, gint(clamping: index)) else { return (nil, nil) }
            defer { gst_tag_list_unref(tags) }
            func text(_ tag: String) -> String? {
                guard let value = pk_gst_tag_string(tags, tag) else { return nil }
                defer { g_free(value) }
                return String(cString: value)
            }
            return (text("language-code"), text("title"))
        } ?? (nil, nil)
    }

    /// The stream of `kind` playing now (current-*), nil when none: playbin's flag for the
    /// kind is off, or it has none.
    func currentStream(_ kind: TrackKind) -> Int? {
        withPlaybin { playbin -> Int? in
            let names = Self.streamNames(kind)
            guard pk_gst_get_uint(playbin, "flags") & Self.playFlag(kind) != 0 else { return nil }
            let count = Int(pk_gst_get_int(playbin, names.count))
            let current = Int(pk_gst_get_int(playbin, names.current))
            guard count > 0 else { return nil }
            return current < 0 ? 0 : (current < count ? current : nil)
        } ?? nil
    }

    /// Plays stream `index` of `kind`, or none of that kind (nil: playbin's flag off).
    func selectStream(_ kind: TrackKind, index: Int?) {
        if kind == .subtitle { context.undrawnPictures.withLock { $0.keep(index != nil) } }
        withPlaybin { playbin in
            let flags = pk_gst_get_uint(playbin, "flags")
            guard let index else {
                pk_gst_set_uint(playbin, "flags", flags & ~Self.playFlag(kind))
                return
            }
            if flags & Self.playFlag(kind) == 0 { pk_gst_set_uint(playbin, "flags", flags | Self.playFlag(kind)) }
            pk_gst_set_int(playbin, Self.streamNames(kind).current, gint(clamping: index))
        }
    }

    /// playbin's "suburi": the external subtitle file, played as its last text stream, its
    /// encoding told to subparse when it is local. Takes effect when the pipeline next leaves
    /// READY.
    func setSubtitleFile(_ url: URL) {
        let data = url.isFileURL ? FileManager.default.contents(atPath: url.path) : nil
        context.subtitleEncoding.set(data.map { SubtitleEncoding.detect($0).textAfterDemuxing })
        withPlaybin { pk_gst_set_string($0, "suburi", url.absoluteString) }
    }

    /// The font playbin draws subtitles with ("subtitle-font-desc"), `points` large.
    func setSubtitleFontSize(_ points: Int) {
        withPlaybin { pk_gst_set_string($0, "subtitle-font-desc", "Sans \(points)") }
    }

    /// playbin's "text-offset": drawn subtitles `seconds` later (negative: earlier).
    func setTextOffset(_ seconds: TimeInterval) {
        withPlaybin { pk_gst_set_int64($0, "text-offset", gint64((seconds * 1_000_000_000).rounded())) }
    }

    /// Keeps the pictures before subtitles are drawn when playbin shows a subtitle now.
    func followSubtitleDrawing() {
        let drawing = currentStream(.subtitle) != nil
        context.undrawnPictures.withLock { $0.keep(drawing) }
    }

    /// playbin's "volume" as it reports it now (linear, 0...1 here); nil once destroyed.
    func volume() -> Double? {
        withPlaybin { pk_gst_get_double($0, "volume") }
    }
}

/// The last few decoded pictures of the playing video stream before playbin draws subtitles
/// on them, kept while subtitles show, so that a thumbnail of the picture on screen is taken
/// from its undrawn twin (the one with the same timestamp).
struct UndrawnPictures: @unchecked Sendable {
    // @unchecked: kept only inside a Locked; holds references, released when it stops keeping.

    /// Pictures between the stream's pad and the sink (playsink's and the overlay's queues
    /// hold some ten): a second at 25 frames per second.
    static let capacity = 24
    private var entries: [(buffer: UnsafeMutablePointer<GstBuffer>, caps: UnsafeMutablePointer<GstCaps>)] = []
    /// Pictures are kept (subtitles show).
    private(set) var isKeeping = false

    /// Starts or stops keeping pictures; stopping releases them.
    mutating func keep(_ keeping: Bool) {
        isKeeping = keeping
        guard !keeping else { return }
        for entry in entries { release(entry) }
        entries = []
    }

    /// Keeps a reference to `buffer`, taking over the reference to `caps`.
    mutating func append(_ buffer: UnsafeMutablePointer<GstBuffer>, caps: UnsafeMutablePointer<GstCaps>) {
        entries.append((gst_buffer_ref(buffer), caps))
        if entries.count > Self.capacity { release(entries.removeFirst()) }
    }

    /// A new sample of the kept picture with the timestamp of `shown`'s, with `shown`'s
    /// segment; nil when none is kept.
    func sample(like shown: OpaquePointer) -> OpaquePointer? {
        guard let buffer = gst_sample_get_buffer(shown) else { return nil }
        let pts = pk_gst_buffer_pts(buffer)
        guard pk_gst_clock_time_is_valid(pts) != 0,
              let entry = entries.last(where: { pk_gst_buffer_pts($0.buffer) == pts }) else { return nil }
        return gst_sample_new(entry.buffer, entry.caps, gst_sample_get_segment(shown), nil)
    }

    private func release(_ entry: (buffer: UnsafeMutablePointer<GstBuffer>, caps: UnsafeMutablePointer<GstCaps>)) {
        gst_buffer_unref(entry.buffer)
        gst_caps_unref(entry.caps)
    }
}
#endif

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
        context.subtitleEncoding.set(data.map { SubtitleEncoding.detect($0) })
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

    /// playbin's "volume" as it reports it now (linear, 0...1 here); nil once destroyed.
    func volume() -> Double? {
        withPlaybin { pk_gst_get_double($0, "volume") }
    }
}
#endif

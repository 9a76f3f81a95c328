#if VLC
import CVLC
import FoundationEssentials
import Glibc
import PlaybackKit

/// One elementary stream as libVLC lists it.
struct VLCStream: Sendable, Equatable {
    /// libVLC's ES id (what the selection calls take).
    var id: Int32
    var kind: TrackKind
    var language: String?
    var description: String?
}

// MARK: - Tracks, subtitles and volume (every libVLC call of them)

extension VLCMediaPlayer {
    /// The media's streams as libVLC parsed them, ordered by ES id within each kind.
    func mediaStreams() -> [VLCStream] {
        var tracks: UnsafeMutablePointer<UnsafeMutablePointer<libvlc_media_track_t>?>?
        let count = libvlc_media_tracks_get(media, &tracks)
        guard let tracks else { return [] }
        defer { libvlc_media_tracks_release(tracks, count) }
        var streams: [VLCStream] = []
        for index in 0..<Int(count) {
            guard let track = tracks[index]?.pointee else { continue }
            let kind: TrackKind
            switch track.i_type {
            case libvlc_track_audio: kind = .audio
            case libvlc_track_video: kind = .video
            case libvlc_track_text: kind = .subtitle
            default: continue
            }
            streams.append(VLCStream(id: track.i_id, kind: kind, language: track.psz_language.map { String(cString: $0) },
                                     description: track.psz_description.map { String(cString: $0) }))
        }
        return streams.sorted { ($0.kind.rawValue, $0.id) < ($1.kind.rawValue, $1.id) }
    }

    /// The ES ids of the subtitle streams the running input has (embedded and added files),
    /// in libVLC's order; empty without input.
    func subtitleStreamIDs() -> [Int32] {
        guard let list = libvlc_video_get_spu_description(player) else { return [] }
        defer { libvlc_track_description_list_release(list) }
        var ids: [Int32] = []
        var entry: UnsafeMutablePointer<libvlc_track_description_t>? = list
        while let current = entry {
            if current.pointee.i_id >= 0 { ids.append(current.pointee.i_id) }
            entry = current.pointee.p_next
        }
        return ids
    }

    /// The ES id of the stream of `kind` playing or shown now; -1 for none.
    func selectedStream(_ kind: TrackKind) -> Int32 {
        switch kind {
        case .audio: libvlc_audio_get_track(player)
        case .video: libvlc_video_get_track(player)
        case .subtitle: libvlc_video_get_spu(player)
        }
    }

    /// Plays or shows the stream `id` of `kind` (-1: none). False when libVLC refused.
    @discardableResult
    func selectStream(_ kind: TrackKind, id: Int32) -> Bool {
        switch kind {
        case .audio: libvlc_audio_set_track(player, id) == 0
        case .video: libvlc_video_set_track(player, id) == 0
        case .subtitle: libvlc_video_set_spu(player, id) == 0
        }
    }

    /// Adds the subtitle file at `url` (before or during playback), selected when `select`.
    @discardableResult
    func addSubtitleFile(_ url: URL, select: Bool) -> Bool {
        libvlc_media_player_add_slave(player, libvlc_media_slave_type_subtitle, url.absoluteString, select) == 0
    }

    /// Shows subtitles `seconds` later (negative: earlier).
    func setSubtitleDelay(_ seconds: TimeInterval) {
        _ = libvlc_video_set_spu_delay(player, Int64((seconds * 1_000_000).rounded()))
    }

    /// The media's tags libVLC reads (for sources the probe does not read), keys lower-cased.
    func tags() -> [String: String] {
        let names: [(libvlc_meta_t, String)] = [
            (libvlc_meta_Title, "title"), (libvlc_meta_Artist, "artist"), (libvlc_meta_Album, "album"),
            (libvlc_meta_Genre, "genre"), (libvlc_meta_Date, "date"), (libvlc_meta_Description, "comment"),
        ]
        var tags: [String: String] = [:]
        for (meta, name) in names {
            guard let value = libvlc_media_get_meta(media, meta) else { continue }
            tags[name] = String(cString: value)
            free(value)
        }
        return tags
    }

    /// The volume libVLC applies, 0...100; nil when it cannot tell (-1, or the memory output
    /// has not started).
    var appliedVolume: Int? {
        if discardsAudio { return outputVolume.volume.get().map { Int(($0 * 100).rounded()) } }
        let percent = libvlc_audio_get_volume(player)
        return percent >= 0 ? Int(percent) : nil
    }
}
#endif

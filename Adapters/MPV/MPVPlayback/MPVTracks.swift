#if MPV
import CMPV
import FoundationEssentials
import PlaybackKit

/// mpv's model of tracks, tags and chapters read into the engine's reports, and selections
/// carried out through its `aid`/`vid`/`sid` properties. Every call goes through `MPVHandle`.
enum MPVTracks {
    /// mpv's track type names.
    static func kind(_ type: String) -> TrackKind? {
        switch type {
        case "audio": .audio
        case "video": .video
        case "sub": .subtitle
        default: nil
        }
    }

    /// The property that selects a track of `kind`.
    static func property(_ kind: TrackKind) -> String {
        switch kind {
        case .audio: "aid"
        case .video: "vid"
        case .subtitle: "sid"
        }
    }

    /// Where the cues of the selected subtitle track can be read ahead: the media itself and
    /// the track's place among its embedded subtitle streams, or the external file; nil when
    /// none is selected or the source is not a local file.
    static func cueSource(_ handle: MPVHandle, media: MediaSource) -> (url: URL, subtitleIndex: Int, id: String)? {
        guard case .array(let entries)? = handle.getValue("track-list") else { return nil }
        let subtitles = entries.filter { $0["type"]?.string == "sub" }
        guard let selected = subtitles.first(where: { flag($0["selected"]) }), let id = selected["id"]?.int else { return nil }
        if flag(selected["external"]) {
            guard let file = selected["external-filename"]?.string else { return nil }
            let url = file.hasPrefix("/") ? URL(fileURLWithPath: file) : (URL(string: file) ?? URL(fileURLWithPath: file))
            return url.isFileURL ? (url, 0, "\(id)") : nil
        }
        guard media.isFile else { return nil }
        let embedded = subtitles.filter { !flag($0["external"]) }.sorted { ($0["ff-index"]?.int ?? 0) < ($1["ff-index"]?.int ?? 0) }
        guard let place = embedded.firstIndex(where: { $0["id"]?.int == id }) else { return nil }
        return (media.url, place, "\(id)")
    }

    /// `track-list` as engine tracks: embedded ones in the container's stream order
    /// (`ff-index`), then external files in the order they were added (mpv's ids grow).
    /// Cover pictures (`albumart`) are not tracks, as on the other engines.
    static func engineTracks(_ handle: MPVHandle) -> [EngineTrack] {
        guard case .array(let entries)? = handle.getValue("track-list") else { return [] }
        var listed: [(order: (Int, Int), track: EngineTrack)] = []
        for entry in entries {
            guard let type = entry["type"]?.string, let kind = kind(type), let id = entry["id"]?.int,
                  !flag(entry["albumart"]) else { continue }
            let external = flag(entry["external"])
            let codec = entry["codec"]?.string
            let track = EngineTrack(
                kind: kind, engineID: String(id), title: entry["title"]?.string, language: entry["lang"]?.string,
                codec: codec.map(codecName), isDefault: flag(entry["default"]), isForced: flag(entry["forced"]),
                isExternal: external, isSelected: flag(entry["selected"]))
            let order = external ? (1, id) : (0, entry["ff-index"]?.int ?? id)
            listed.append((order, track))
        }
        return listed.sorted { $0.order < $1.order }.map(\.track)
    }

    /// The names mpv gives codecs where they differ from FFmpeg's.
    static func codecName(_ name: String) -> String {
        switch name {
        case "subrip", "srt": "subrip"
        default: name
        }
    }

    /// The file's tags (`metadata`).
    static func tags(_ handle: MPVHandle) -> [String: String] {
        guard case .map(let entries)? = handle.getValue("metadata") else { return [:] }
        return entries.compactMapValues(\.string)
    }

    /// `chapter-list` as chapters, at the times the file gives (mpv counts them from the
    /// demuxer's start time); each ends where the next starts, the last where mpv does not say
    /// (its chapter list has no ends).
    static func chapters(_ handle: MPVHandle) -> [Chapter] {
        guard case .array(let entries)? = handle.getValue("chapter-list") else { return [] }
        let offset = handle.getDouble("demuxer-start-time") ?? 0
        let starts = entries.map { ($0["time"]?.double ?? 0) + offset }
        return entries.enumerated().map { index, entry in
            let end = index + 1 < starts.count ? starts[index + 1] : nil
            return Chapter(title: entry["title"]?.string, start: starts[index], end: end)
        }
    }

    /// The subtitle shown now as a cue: `sub-text` with `sub-start`/`sub-end` (the cue's own
    /// times: mpv shows it `sub-delay` later but does not count the delay in them); nil when
    /// none shows.
    static func currentCue(_ handle: MPVHandle) -> SubtitleCue? {
        guard let text = handle.getString("sub-text"), !text.isEmpty,
              let start = handle.getDouble("sub-start") else { return nil }
        let end = handle.getDouble("sub-end")
        let lines = text.replacing("\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: true)
        return SubtitleCue(text: lines.joined(separator: "\n"), start: start, end: end)
    }

    /// Tells mpv the text encoding of a local subtitle file by the package's rule
    /// (`SubtitleEncoding`), since its own guess may differ between builds.
    static func prepareEncoding(of url: URL, handle: MPVHandle) {
        guard url.isFileURL, let data = FileManager.default.contents(atPath: url.path) else { return }
        handle.setStringAsync("sub-codepage", SubtitleEncoding.detect(data).textAfterDemuxing.rawValue)
    }

    private static func flag(_ value: MPVValue?) -> Bool {
        if case .flag(let on)? = value { return on }
        return false
    }
}
#endif

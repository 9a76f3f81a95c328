import FoundationEssentials
import CommandLineSupport
import PlaybackKit

/// `mediaplay info`: what a source holds, as the chosen engine reads it: duration, picture
/// size, tracks, metadata and chapters; `--json` writes the same as one JSON object.
enum InfoCommand {
    static let usage = """
        usage: mediaplay info [--backend NAME] [--json] [--open-timeout SECONDS] FILE|URL
          the duration, picture size, tracks (id, language, title, codec, flags), metadata and
          chapters of FILE or URL as the engine reads them; --json writes one JSON object;
          --open-timeout gives up opening after SECONDS (20 unless given)
        """

    static func run(_ arguments: Arguments) async throws -> Int32 {
        try arguments.check(known: ["--backend", "--json", "--open-timeout"])
        let source = MediaSource(argument: try arguments.single("FILE or URL"))
        var options = PlaybackOptions(videoOutput: .none, audioOutput: .null)
        if let openTimeout = try arguments.openTimeout() { options.openTimeout = openTimeout }
        let player = try Backends.makePlayer(backend: arguments.value("--backend"), url: source.url, options: options)
        defer { player.shutdown() }
        try await player.prepare()
        let backend = player.backendName
        let version = Backends.backend(named: backend)?.engineVersion ?? "unknown version"
        if arguments.flag("--json") {
            print(try JSONValue(jsonObject(player, source: source, backend: backend)).text())
        } else {
            print(text(player, source: source, backend: "\(backend) (\(version))"), terminator: "")
        }
        return 0
    }

    // MARK: - JSON

    /// The object `--json` writes: keys `backend`, `url`, `duration`, `width`, `height`,
    /// `hasVideo`, `tracks`, `metadata`, `chapters`; a value the media lacks is null.
    static func jsonObject(_ player: any MediaPlayback, source: MediaSource, backend: String) -> [String: Any] {
        let size = player.naturalSize
        let tracks: [Any] = player.tracks.map { track in
            [
                "id": track.id, "kind": track.kind.rawValue, "title": track.title as Any,
                "language": track.language as Any, "codec": track.codec as Any,
                "isDefault": track.isDefault, "isExternal": track.isExternal, "isSelected": track.isSelected,
            ] as [String: Any]
        }
        let metadata = player.metadata
        let chapters: [Any] = player.chapters.map { chapter in
            ["title": chapter.title as Any, "start": chapter.start, "end": chapter.end as Any] as [String: Any]
        }
        return [
            "backend": backend,
            "url": source.url.absoluteString,
            "duration": player.duration,
            "width": size.width,
            "height": size.height,
            "hasVideo": !size.isEmpty,
            "tracks": tracks,
            "metadata": [
                "title": metadata.title as Any, "artist": metadata.artist as Any, "album": metadata.album as Any,
                "genre": metadata.genre as Any, "date": metadata.date as Any, "comment": metadata.comment as Any,
                "tags": metadata.tags,
            ] as [String: Any],
            "chapters": chapters,
        ]
    }

    // MARK: - Text

    /// The lines for a person: one field per line, then a line per track and chapter.
    static func text(_ player: any MediaPlayback, source: MediaSource, backend: String) -> String {
        let size = player.naturalSize
        var lines = [
            "backend:  \(backend)",
            "source:   \(source.isFile ? source.path : source.url.absoluteString)",
            "duration: \(String(cFormat: "%.3f", player.duration)) s (\(clockText(player.duration)))",
            "size:     \(size.isEmpty ? "no video" : size.description)",
        ]
        if !size.isEmpty { lines.append("frames:   \(frameRateText(player.nominalFrameRate))") }
        let tracks = player.tracks
        if !tracks.isEmpty {
            lines.append("tracks:")
            let idWidth = tracks.map(\.id.count).max() ?? 0
            for track in tracks { lines.append("  " + describe(track, idWidth: idWidth)) }
        }
        let metadata = player.metadata
        if !metadata.tags.isEmpty {
            lines.append("metadata:")
            let keyWidth = metadata.tags.keys.map(\.count).max() ?? 0
            for key in metadata.tags.keys.sorted() {
                lines.append("  \(key.padding(to: keyWidth)) \(metadata.tags[key]!.replacing("\n", with: " "))")
            }
        }
        let chapters = player.chapters
        if !chapters.isEmpty {
            lines.append("chapters:")
            for (index, chapter) in chapters.enumerated() {
                let start = String(cFormat: "%.3f", chapter.start)
                lines.append("  \(index + 1). \(clockText(chapter.start)) (\(start) s)\(chapter.title.map { " \"\($0)\"" } ?? "")")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// "25 a second", "29.970 a second", or "rate unknown".
    static func frameRateText(_ rate: Double) -> String {
        guard rate > 0 else { return "rate unknown" }
        let rounded = rate.rounded()
        return (abs(rate - rounded) < 0.0005 ? String(Int(rounded)) : String(cFormat: "%.3f", rate)) + " a second"
    }

    /// `audio:1     fre  "Français"  flac  [default, selected]`.
    static func describe(_ track: MediaTrack, idWidth: Int) -> String {
        var fields = [track.id.padding(to: idWidth)]
        if let language = track.language { fields.append(language) }
        if let title = track.title { fields.append("\"\(title)\"") }
        if let codec = track.codec { fields.append(codec) }
        var flags: [String] = []
        if track.isDefault { flags.append("default") }
        if track.isExternal { flags.append("external") }
        if track.isSelected { flags.append("selected") }
        if !flags.isEmpty { fields.append("[" + flags.joined(separator: ", ") + "]") }
        return fields.joined(separator: "  ")
    }
}

extension String {
    /// The string with spaces after it up to `width` characters.
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}

import Foundation
import PlaybackKit
import Testing

/// `mediaplay info`'s tracks, metadata and chapters, `play`'s track options and cue lines, and
/// every command's `--help`.
@Suite(.serialized) struct MediaplayTrackTests {
    static let film = CLI.fixtures.appendingPathComponent("tracks/film.mkv")

    /// The track table every engine gives for film.mkv, as `info --json` writes it.
    static let filmTracks: [[String: String]] = [
        ["id": "video:0", "kind": "video", "codec": "h264", "flags": "default selected"],
        ["id": "audio:0", "kind": "audio", "title": "English", "language": "eng", "codec": "flac", "flags": "default selected"],
        ["id": "audio:1", "kind": "audio", "title": "Français", "language": "fre", "codec": "flac", "flags": ""],
        ["id": "subtitle:0", "kind": "subtitle", "title": "English", "language": "eng", "codec": "subrip", "flags": ""],
        ["id": "subtitle:1", "kind": "subtitle", "title": "Français", "language": "fre", "codec": "ass", "flags": ""],
    ]

    /// One track of the JSON as the strings of `filmTracks` (absent and null fields left out).
    static func flatten(_ track: [String: Any]) -> [String: String] {
        var flat: [String: String] = [:]
        for key in ["id", "kind", "title", "language", "codec"] {
            if let value = track[key] as? String { flat[key] = value }
        }
        let flags = [("isDefault", "default"), ("isExternal", "external"), ("isSelected", "selected")]
        flat["flags"] = flags.filter { track[$0.0] as? Bool == true }.map(\.1).joined(separator: " ")
        return flat
    }

    @Test(arguments: CLI.backends)
    func infoJSONHasTheSameTracksMetadataAndChaptersOnEveryBackend(backend: String) throws {
        let result = try CLI.run(["info", "--json", "--backend", backend, Self.film.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.contains("\\/"), "slashes are escaped: \(result.stdout)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let tracks = try #require(object["tracks"] as? [[String: Any]])
        #expect(tracks.map(Self.flatten) == Self.filmTracks)
        let metadata = try #require(object["metadata"] as? [String: Any])
        #expect(metadata["title"] as? String == "A Film of Tracks")
        #expect(metadata["artist"] as? String == "PlaybackKit")
        #expect((metadata["tags"] as? [String: String])?["genre"] == "Test")
        let chapters = try #require(object["chapters"] as? [[String: Any]])
        let times = chapters.map { [$0["start"] as? Double ?? -1, $0["end"] as? Double ?? -1] }
        #expect(chapters.map { $0["title"] as? String } == ["Opening", "Middle", "End"])
        #expect(zip(times, [[0.0, 2.0], [2, 4], [4, 6]]).allSatisfy { abs($0[0] - $1[0]) < 0.01 && abs($0[1] - $1[1]) < 0.01 },
                "chapter times \(times)")
        #expect(object["url"] as? String == Self.film.absoluteString)
    }

    @Test func infoTextListsTracksMetadataAndChapters() throws {
        let result = try CLI.run(["info", Self.film.path])
        #expect(result.status == 0, "\(result.stderr)")
        for line in ["tracks:", "audio:1", "\"Français\"", "[default, selected]", "title   A Film of Tracks",
                     "chapters:", "2. 00:00:02 (2.000 s) \"Middle\""] {
            #expect(result.stdout.contains(line), "no '\(line)' in:\n\(result.stdout)")
        }
    }

    @Test(arguments: CLI.backends)
    func playShowsThePreferredLanguagesSubtitles(backend: String) throws {
        let result = try CLI.run(["play", "--backend", backend, "--audio", "null", "--sub-lang", "fre", Self.film.path], timeout: 40)
        #expect(result.status == 0, "\(result.stderr)")
        for text in ["Première ligne", "Deuxième / ligne", "Troisième"] {
            #expect(result.stdout.contains("subtitle: \(text)\n"), "no cue '\(text)' in:\n\(result.stdout)")
        }
    }

    @Test(arguments: CLI.backends)
    func playShowsASubtitleFileGivenWithSub(backend: String) throws {
        let cues = CLI.fixtures.appendingPathComponent("tracks/cues.srt")
        let result = try CLI.run(["play", "--backend", backend, "--audio", "null", "--sub", cues.path,
                                  CLI.fixtures.appendingPathComponent("tracks/film.mkv").path], timeout: 40)
        #expect(result.status == 0, "\(result.stderr)")
        for text in ["First line", "Second / line", "Third"] {
            #expect(result.stdout.contains("subtitle: \(text)\n"), "no cue '\(text)' in:\n\(result.stdout)")
        }
    }

}

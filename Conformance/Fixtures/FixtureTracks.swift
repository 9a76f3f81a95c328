import FoundationEssentials

// MARK: - Media with several tracks, subtitles, tags and chapters (tracks/)

/// The track fixtures, in `tracks/`, made from the facts the track checks hold
/// (`TrackFixtures`: cue times and texts, tags, chapters):
///
/// - film.mkv: 6 s frame-numbered 320x240 H.264; audio 0: 440 Hz FLAC, "eng", title
///   "English", default; audio 1: 660 Hz FLAC, "fre", title "Français" (FLAC has no encoder
///   delay, so every stream and the chapters start at 0); subtitle 0: SubRip, "eng", title
///   "English"; subtitle 1: ASS, "fre", title "Français"; no subtitle marked default; global
///   tags; chapters 0-2 s "Opening", 2-4 s "Middle", 4-6 s "End".
/// - mov-text.mp4: 6 s H.264 + AAC with a mov_text subtitle ("eng").
/// - cues.srt, cues.ass, cues.vtt: the three cues as external files (UTF-8); cues-bom.srt: the
///   same SubRip file with a UTF-8 byte order mark; cues-cp1251.srt: Cyrillic cues in
///   Windows-1251 (a legacy 8-bit file); cues-utf16le.srt, cues-utf16be.srt: the Cyrillic cues
///   in UTF-16 with its byte order mark, little- and big-endian (as Windows tools save text);
///   cues-styled.vtt: the three cues in WebVTT as web players write it: a header line, STYLE
///   and REGION blocks, a NOTE, cue ids and settings, CR LF line ends.
/// - song.mp3: 4 s 440 Hz MP3 with ID3 tags and a cover picture (an attached JPEG, "Cover
///   (front)"), as a music library's files have them; cover.jpg: a cover picture beside it,
///   as music folders have one.
///
/// The cues: 0.5-1.5 s "First line"; 2.0-3.0 s "Second" / "line" (two lines); 3.5-4.5 s
/// "Third" in italics (markup in the file, none in the cue text).
enum FixtureTracks {
    /// The text files, by path in the fixtures folder; the ones whose name starts with a dot
    /// are inputs of the clips, removed once they are made.
    static let textFiles: [(path: String, bytes: [UInt8])] = [
        ("tracks/cues.srt", Array(subRip(englishTexts).utf8)),
        ("tracks/cues-bom.srt", [0xEF, 0xBB, 0xBF] + Array(subRip(englishTexts).utf8)),
        ("tracks/cues.ass", Array(ass(englishTexts).utf8)),
        ("tracks/cues.vtt", Array(webVTT(englishTexts).utf8)),
        ("tracks/cues-styled.vtt", Array(styledWebVTT(englishTexts).utf8)),
        ("tracks/cues-cp1251.srt", windows1251(subRip(TrackFixtures.cyrillicTexts))),
        ("tracks/cues-utf16le.srt", utf16(subRip(TrackFixtures.cyrillicTexts), bigEndian: false)),
        ("tracks/cues-utf16be.srt", utf16(subRip(TrackFixtures.cyrillicTexts), bigEndian: true)),
        (frenchSubtitles, Array(ass(TrackFixtures.frenchTexts).utf8)),
        (filmMetadata, Array(ffmetadata.utf8)),
    ]

    /// The inputs of film.mkv that are not fixtures themselves.
    static let inputs = [frenchSubtitles, filmMetadata]

    private static let frenchSubtitles = "tracks/.film-fr.ass"
    private static let filmMetadata = "tracks/.film-metadata.txt"

    private static var englishTexts: [String] { TrackFixtures.cues.map(\.text) }

    /// The clips, made once the text files are written.
    static let clips: [FixtureJob] = [
        FixtureJob(output: "tracks/film.mkv", arguments: [
            "-f", "lavfi", "-i", "color=c=gray:s=320x240:r=25:d=6,format=yuv420p",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=6",
            "-f", "lavfi", "-i", "sine=frequency=660:sample_rate=48000:duration=6",
            "-i", "tracks/cues.srt", "-i", frenchSubtitles, "-i", filmMetadata,
            "-map", "0:v", "-map", "1:a", "-map", "2:a", "-map", "3:s", "-map", "4:s", "-map_metadata", "5", "-map_chapters", "5",
            "-vf", FixtureClips.numberedPicture, "-c:v", "libx264", "-preset", "veryfast", "-crf", "12", "-g", "25",
            "-pix_fmt", "yuv420p", "-c:a", "flac", "-ac", "2", "-c:s:0", "srt", "-c:s:1", "ass",
            "-disposition:v:0", "default",
            "-metadata:s:a:0", "language=eng", "-metadata:s:a:0", "title=English", "-disposition:a:0", "default",
            "-metadata:s:a:1", "language=fre", "-metadata:s:a:1", "title=Français", "-disposition:a:1", "0",
            "-metadata:s:s:0", "language=eng", "-metadata:s:s:0", "title=English", "-disposition:s:0", "0",
            "-metadata:s:s:1", "language=fre", "-metadata:s:s:1", "title=Français", "-disposition:s:1", "0",
            "-t", "6",
        ]),
        FixtureJob(output: "tracks/mov-text.mp4", arguments: [
            "-f", "lavfi", "-i", "color=c=gray:s=320x240:r=25:d=6,format=yuv420p",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=6", "-i", "tracks/cues.srt",
            "-map", "0:v", "-map", "1:a", "-map", "2:s", "-vf", FixtureClips.numberedPicture,
            "-c:v", "libx264", "-preset", "veryfast", "-crf", "12", "-g", "25", "-pix_fmt", "yuv420p",
            "-c:a", "aac", "-b:a", "96k", "-ac", "2", "-c:s", "mov_text", "-metadata:s:s:0", "language=eng", "-t", "6",
        ]),
        FixtureJob(output: "tracks/song.mp3", arguments: [
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=4",
            "-f", "lavfi", "-i", "color=c=0x3080C0:s=96x96:d=1",
            "-map", "0:a", "-map", "1:v", "-c:v", "mjpeg", "-frames:v", "1", "-disposition:v:0", "attached_pic",
            "-metadata:s:v:0", "title=Album cover", "-metadata:s:v:0", "comment=Cover (front)",
            "-c:a", "libmp3lame", "-b:a", "128k", "-id3v2_version", "3",
            "-metadata", "title=\(TrackFixtures.songTags.title)", "-metadata", "artist=\(TrackFixtures.songTags.artist)",
            "-metadata", "album=\(TrackFixtures.songTags.album)", "-metadata", "genre=\(TrackFixtures.songTags.genre)",
            "-metadata", "date=\(TrackFixtures.songTags.date)", "-metadata", "comment=\(TrackFixtures.songTags.comment)",
        ]),
        FixtureJob(output: "tracks/cover.jpg", arguments: [
            "-f", "lavfi", "-i", "color=c=0xC08030:s=96x96:d=1", "-frames:v", "1", "-update", "1",
        ]),
    ]

    /// The text files as the stamp counts them.
    static var description: String {
        textFiles.map { "text \($0.path): " + $0.bytes.map { String($0, radix: 16) }.joined(separator: " ") }.joined(separator: "\n")
    }

    // MARK: - The subtitle files

    /// The cue times, as each format writes them.
    private static var times: [(start: TimeInterval, end: TimeInterval)] { TrackFixtures.cues.map { ($0.start, $0.end ?? $0.start) } }

    /// `seconds` as h:mm:ss with `fraction` digits after `separator` (SubRip: 00:00:00,500).
    private static func clock(_ seconds: TimeInterval, hourDigits: Int, separator: Character, fraction: Int) -> String {
        let scale = fraction == 3 ? 1000 : 100
        let units = Int((seconds * Double(scale)).rounded())
        let hours = String(units / (3600 * scale)), rest = units % (3600 * scale)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let digits = String(rest % scale), padded = String(repeating: "0", count: max(0, fraction - digits.count)) + digits
        return String(repeating: "0", count: max(0, hourDigits - hours.count)) + hours
            + ":\(two(rest / (60 * scale))):\(two(rest / scale % 60))\(separator)\(padded)"
    }

    /// A SubRip file (CRLF lines) of the three cues with `texts`; the third in italics.
    static func subRip(_ texts: [String]) -> String {
        zip(times, texts).enumerated().map { index, cue in
            let text = index == 2 ? "<i>\(cue.1)</i>" : cue.1
            let span = "\(clock(cue.0.start, hourDigits: 2, separator: ",", fraction: 3)) --> \(clock(cue.0.end, hourDigits: 2, separator: ",", fraction: 3))"
            return "\(index + 1)\r\n\(span)\r\n\(text.replacing("\n", with: "\r\n"))\r\n\r\n"
        }.joined()
    }

    /// A WebVTT file of the three cues with `texts`; the third in italics.
    static func webVTT(_ texts: [String]) -> String {
        "WEBVTT\n" + zip(times, texts).enumerated().map { index, cue in
            let text = index == 2 ? "<i>\(cue.1)</i>" : cue.1
            return "\n\(clock(cue.0.start, hourDigits: 2, separator: ".", fraction: 3)) --> \(clock(cue.0.end, hourDigits: 2, separator: ".", fraction: 3))\n\(text)\n"
        }.joined()
    }

    /// `webVTT(texts)` with what web players' files carry besides: a title on the signature
    /// line, a STYLE block (CSS for the cues and a class), a REGION block, a NOTE, an id and
    /// settings on each cue (the first in the region), the second cue in a class span; CR LF
    /// line ends.
    static func styledWebVTT(_ texts: [String]) -> String {
        let header = """
            WEBVTT - cues with styles

            STYLE
            ::cue {
              color: yellow;
              background-color: rgba(0, 0, 0, 0.8);
            }
            ::cue(.loud) { font-weight: bold; }

            REGION
            id:bottom
            width:80%
            lines:3
            regionanchor:50%,100%
            viewportanchor:50%,90%

            NOTE Written by hand, as caption tools write them.

            """
        let settings = ["region:bottom align:center", "line:85% position:50%", "align:center size:80%"]
        let cues = zip(times, texts).enumerated().map { index, cue in
            let text = index == 1 ? "<c.loud>\(cue.1)</c>" : index == 2 ? "<i>\(cue.1)</i>" : cue.1
            let timing = "\(clock(cue.0.start, hourDigits: 2, separator: ".", fraction: 3)) --> \(clock(cue.0.end, hourDigits: 2, separator: ".", fraction: 3))"
            return "cue-\(index + 1)\n\(timing) \(settings[index])\n\(text)\n"
        }.joined(separator: "\n")
        // (The literal's last line ends the NOTE; the blank line after it parts it from the cues.)
        return (header + "\n" + cues).replacing("\n", with: "\r\n")
    }

    /// An ASS file (320x240, DejaVu Sans 20) of the three cues with `texts`; the third in italics.
    static func ass(_ texts: [String]) -> String {
        let events = zip(times, texts).enumerated().map { index, cue in
            let text = index == 2 ? "{\\i1}\(cue.1){\\i0}" : cue.1.replacing("\n", with: "\\N")
            return "Dialogue: 0,\(clock(cue.0.start, hourDigits: 1, separator: ".", fraction: 2)),\(clock(cue.0.end, hourDigits: 1, separator: ".", fraction: 2)),Default,,0,0,0,,\(text)\n"
        }.joined()
        return """
            [Script Info]
            ScriptType: v4.00+
            PlayResX: 320
            PlayResY: 240

            [V4+ Styles]
            Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
            Style: Default,DejaVu Sans,20,&H00FFFFFF,&H000000FF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,2,0,2,10,10,10,1

            [Events]
            Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text

            """ + events
    }

    /// `text` in Windows-1251: ASCII as it is, the Russian alphabet (U+0410...U+044F, Ё, ё)
    /// in its 8-bit codes.
    /// `text` in UTF-16 with its byte order mark, CR LF line ends (as Windows tools save it).
    static func utf16(_ text: String, bigEndian: Bool) -> [UInt8] {
        let units = [0xFEFF] + text.replacing("\n", with: "\r\n").utf16
        return units.flatMap { unit in
            let bytes = [UInt8(unit & 0xFF), UInt8(unit >> 8)]
            return bigEndian ? bytes.reversed() : bytes
        }
    }

    static func windows1251(_ text: String) -> [UInt8] {
        text.unicodeScalars.map { scalar in
            switch scalar.value {
            case 0..<0x80: UInt8(scalar.value)
            case 0x410...0x44F: UInt8(scalar.value - 0x410 + 0xC0)
            case 0x401: 0xA8
            case 0x451: 0xB8
            default: preconditionFailure("U+\(String(scalar.value, radix: 16)) has no Windows-1251 code here")
            }
        }
    }

    // MARK: - film.mkv's tags and chapters

    /// ffmpeg's metadata file of film.mkv: the global tags and the chapters.
    static var ffmetadata: String {
        let tags = TrackFixtures.filmTags
        var text = ";FFMETADATA1\ntitle=\(tags.title)\nartist=\(tags.artist)\ndate=\(tags.date)\ngenre=\(tags.genre)\ncomment=\(tags.comment)\n"
        for chapter in TrackFixtures.chapters {
            text += "\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=\(Int(chapter.start * 1000))\nEND=\(Int((chapter.end ?? chapter.start) * 1000))\ntitle=\(chapter.title ?? "")\n"
        }
        return text
    }
}

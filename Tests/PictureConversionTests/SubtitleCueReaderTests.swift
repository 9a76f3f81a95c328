#if StreamProbe
import Foundation
import PlaybackKit
@testable import MediaProbe
import Testing

/// The shared cue reader on the fixtures' subtitle files and the film's embedded tracks.
@Suite struct SubtitleCueReaderTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/tracks")

    static let english = ["First line", "Second\nline", "Third"]

    @Test(arguments: ["cues.srt", "cues.ass", "cues.vtt", "cues-bom.srt"])
    func readsEveryCueOfAFile(_ name: String) throws {
        let url = Self.folder.appendingPathComponent(name)
        try #require(FileManager.default.fileExists(atPath: url.path), "run scripts/make-fixtures.sh")
        let cues = try SubtitleCueReader.cues(in: url)
        #expect(cues.map(\.text) == Self.english)
        let times = cues.map { [$0.start, $0.end ?? -1] }
        #expect(zip(times, [[0.5, 1.5], [2, 3], [3.5, 4.5]]).allSatisfy { zip($0, $1).allSatisfy { abs($0 - $1) < 0.011 } }, "\(times)")
    }

    @Test func decodesALegacyEncodingByTheRule() throws {
        let url = Self.folder.appendingPathComponent("cues-cp1251.srt")
        try #require(FileManager.default.fileExists(atPath: url.path), "run scripts/make-fixtures.sh")
        #expect(SubtitleEncoding.detect(try Data(contentsOf: url)) == .windows1251)
        #expect(try SubtitleCueReader.cues(in: url).map(\.text) == ["Первая строка", "Вторая\nстрока", "Третья"])
    }

    @Test func readsTheEmbeddedTracksOfAFilm() throws {
        let url = Self.folder.appendingPathComponent("film.mkv")
        try #require(FileManager.default.fileExists(atPath: url.path), "run scripts/make-fixtures.sh")
        #expect(try SubtitleCueReader.cues(in: url, subtitleIndex: 0).map(\.text) == Self.english)
        #expect(try SubtitleCueReader.cues(in: url, subtitleIndex: 1).map(\.text) == ["Première ligne", "Deuxième\nligne", "Troisième"])
        #expect(throws: PlaybackError.self) { try SubtitleCueReader.cues(in: url, subtitleIndex: 2) }
    }

    @Test func plainTextDropsMarkup() {
        #expect(SubtitleCueReader.plainText(assDialogue: "0,0,Default,,0,0,0,,{\\i1}Hello{\\i0}\\Nworld, again") == "Hello\nworld, again")
        #expect(SubtitleCueReader.plainText(markup: "<i>Third</i>\n<font color=\"red\">red</font>") == "Third\nred")
    }

    @Test func theEncodingRuleTellsCyrillicFromWesternText() {
        #expect(SubtitleEncoding.detect(Data("Première ligne".utf8)) == .utf8)
        let western = Data([0x50, 0x72, 0x65, 0x6D, 0x69, 0xE8, 0x72, 0x65])  // "Première" in Windows-1252
        #expect(SubtitleEncoding.detect(western) == .windows1252)
        let cyrillic = Data([0xCF, 0xE5, 0xF0, 0xE2, 0xE0, 0xFF])  // "Первая" in Windows-1251
        #expect(SubtitleEncoding.detect(cyrillic) == .windows1251)
    }

    @Test func utf16IsToldByItsByteOrderMarkAndReachesTheDecodersAsUTF8() {
        // "Première" with UTF-16's byte order mark: not UTF-8, and mostly pairs of high bytes
        // when read byte by byte (the old rule took it for Windows-1251).
        let littleEndian = Data([0xFF, 0xFE] + "Première".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        let bigEndian = Data([0xFE, 0xFF] + "Première".utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] })
        #expect(SubtitleEncoding.detect(littleEndian) == .utf16LittleEndian)
        #expect(SubtitleEncoding.detect(bigEndian) == .utf16BigEndian)
        #expect(SubtitleEncoding.detect(littleEndian).textAfterDemuxing == .utf8)
        #expect(SubtitleEncoding.detect(bigEndian).textAfterDemuxing == .utf8)
        #expect(SubtitleEncoding.windows1251.textAfterDemuxing == .windows1251)
    }
}
#endif

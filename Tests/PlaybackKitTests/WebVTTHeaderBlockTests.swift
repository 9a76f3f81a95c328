import Foundation
import Testing
@testable import PlaybackKit

/// The copy of a WebVTT file libavformat reads: without STYLE and REGION blocks, all else kept.
@Suite struct WebVTTHeaderBlockTests {
    private func removed(_ text: String, byteOrderMark: Bool = false) -> String? {
        let bytes = (byteOrderMark ? [0xEF, 0xBB, 0xBF] : []) + Array(text.utf8)
        return WebVTTHeaderBlocks.removed(from: Data(bytes)).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func styleAndRegionBlocksGoAndTheRestStays() throws {
        let file = "WEBVTT - title\r\n\r\nSTYLE\r\n::cue { color: yellow; }\r\n\r\nREGION\r\nid:r\r\nwidth:40%\r\n\r\n"
            + "NOTE kept\r\n\r\nSTYLE\r\n00:00:01.000 --> 00:00:02.000 region:r\r\nA cue whose id is STYLE\r\n\r\n"
            + "2\r\n00:00:03.000 --> 00:00:04.000\r\n<c.loud>Two</c>\r\nlines\r\n"
        let result = try #require(removed(file))
        #expect(result == "WEBVTT - title\n\nNOTE kept\n\nSTYLE\n00:00:01.000 --> 00:00:02.000 region:r\nA cue whose id is STYLE\n\n"
            + "2\n00:00:03.000 --> 00:00:04.000\n<c.loud>Two</c>\nlines\n")
    }

    @Test func aByteOrderMarkAndBlocksWithSettingsOnTheirFirstLine() throws {
        let result = try #require(removed("WEBVTT\n\nSTYLE \t\n::cue {}\n\nREGION\tid:x\n\n00:01.000 --> 00:02.000\nHi\n", byteOrderMark: true))
        #expect(result == "WEBVTT\n\n00:01.000 --> 00:02.000\nHi\n")
    }

    @Test func filesWithNothingToRemoveOrNotWebVTTAreLeftAlone() {
        #expect(removed("WEBVTT\n\nNOTE STYLE\n\n00:01.000 --> 00:02.000\nSTYLE\n") == nil)
        #expect(removed("WEBVTT\n\nSTYLES\nx\n\n00:01.000 --> 00:02.000\nHi\n") == nil)
        #expect(removed("1\n00:00:01,000 --> 00:00:02,000\nHi\n\nSTYLE\nx\n") == nil)
        #expect(removed("WEBVTTX\n\nSTYLE\nx\n") == nil)
        #expect(WebVTTHeaderBlocks.removed(from: Data([0x57, 0x45, 0x42, 0x56, 0x54, 0x54, 0x0A, 0x0A, 0x53, 0x54, 0x59, 0x4C, 0x45, 0x0A, 0xFF])) == nil)
    }

    @Test func aReadableCopyKeepsTheFileNameAndGoesWithItsFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webvtt-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let styled = folder.appendingPathComponent("film.en.vtt")
        try Data("WEBVTT\n\nSTYLE\nx\n\n00:01.000 --> 00:02.000\nHi\n".utf8).write(to: styled)
        let plain = folder.appendingPathComponent("plain.vtt")
        try Data("WEBVTT\n\n00:01.000 --> 00:02.000\nHi\n".utf8).write(to: plain)
        #expect(WebVTTHeaderBlocks.readableCopy(of: plain) == nil)
        let copy = try #require(WebVTTHeaderBlocks.readableCopy(of: styled))
        #expect(copy.lastPathComponent == "film.en.vtt" && copy != styled)
        #expect(try String(contentsOf: copy, encoding: .utf8) == "WEBVTT\n\n00:01.000 --> 00:02.000\nHi\n")
        let copies = WebVTTReadableCopies()
        let kept = copies.file(for: styled)
        #expect(kept != styled && FileManager.default.fileExists(atPath: kept.path))
        #expect(copies.file(for: plain) == plain)
        copies.removeAll()
        #expect(!FileManager.default.fileExists(atPath: kept.deletingLastPathComponent().path))
        #expect(copies.file(for: styled) == styled)
        WebVTTHeaderBlocks.removeCopy(copy)
        #expect(!FileManager.default.fileExists(atPath: copy.path))
    }
}

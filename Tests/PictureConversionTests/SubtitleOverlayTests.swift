#if Libass && StreamProbe
import Foundation
import MediaProbe
import PlaybackKit
import SubtitleOverlay
import Testing

/// The libass overlay libVLC's `.frames` output draws subtitles with (on the frame the
/// handler gets), over scripts the shared reader makes of the fixtures' files: text where a
/// cue shows, nothing elsewhere, and nothing past each row's pixels.
@Suite struct SubtitleOverlayTests {
    static let size = VideoSize(width: 321, height: 181)
    static let bytesPerRow = 1344

    /// A mid-grey picture with padded rows.
    static func grey() -> [UInt8] { [UInt8](repeating: 90, count: bytesPerRow * size.height) }

    /// The overlay with the script of `name` (its first subtitle stream) installed.
    static func overlay(_ name: String, subtitleIndex: Int = 0) throws -> SubtitleOverlay {
        let url = SubtitleCueReaderTests.folder.appendingPathComponent(name)
        try #require(FileManager.default.fileExists(atPath: url.path), "run scripts/make-fixtures.sh")
        let reading = try SubtitleCueReader.read(url, subtitleIndex: subtitleIndex)
        #expect(reading.header.contains("[Script Info]"), "no ASS header from \(name)")
        #expect(reading.events.count == 3, "\(name): \(reading.events.count) events")
        let overlay = SubtitleOverlay()
        overlay.install(SubtitleScript(header: reading.header,
                                       events: reading.events.map { .init(fields: $0.fields, start: $0.start, end: $0.end) },
                                       fonts: reading.fonts.map { EmbeddedFont(name: $0.name, data: $0.data) }))
        return overlay
    }

    /// How many pixels differ from grey after drawing at `time` on a grey picture, and
    /// whether a byte past a row's pixels (the rows' padding) was written.
    static func changes(_ overlay: SubtitleOverlay, at time: TimeInterval) -> (changed: Int, paddingWritten: Bool) {
        var picture = grey()
        picture.withUnsafeMutableBytes { pixels in
            overlay.draw(at: time, onto: pixels.baseAddress!, width: size.width, height: size.height, bytesPerRow: bytesPerRow)
        }
        var changed = 0
        var paddingWritten = false
        for y in 0..<size.height {
            for x in 0..<size.width where picture[y * bytesPerRow + x * 4] != 90 { changed += 1 }
            for byte in (size.width * 4)..<bytesPerRow where picture[y * bytesPerRow + byte] != 90 { paddingWritten = true }
        }
        return (changed, paddingWritten)
    }

    @Test(arguments: [("cues.srt", 0), ("cues.ass", 0), ("film.mkv", 0), ("film.mkv", 1)])
    func drawsTextWhileACueShowsAndNothingElsewhere(_ name: String, _ subtitleIndex: Int) throws {
        let overlay = try Self.overlay(name, subtitleIndex: subtitleIndex)
        let during = Self.changes(overlay, at: 1.0)
        #expect(during.changed >= 40 && !during.paddingWritten, "\(name) #\(subtitleIndex) at 1.0 s: \(during)")
        let between = Self.changes(overlay, at: 1.75)
        #expect(between == (0, false), "\(name) #\(subtitleIndex) at 1.75 s (no cue): \(between)")
    }

    @Test func theDelayMovesTheTextAndClearStopsIt() throws {
        let overlay = try Self.overlay("cues.srt")
        overlay.setDelay(1)
        #expect(Self.changes(overlay, at: 1.0).changed == 0, "1 s late, the first cue (0.5-1.5 s) shows from 1.5 s")
        #expect(Self.changes(overlay, at: 2.0).changed >= 40)
        overlay.clear()
        #expect(!overlay.isDrawing)
        #expect(Self.changes(overlay, at: 2.0) == (0, false))
    }
}
#endif

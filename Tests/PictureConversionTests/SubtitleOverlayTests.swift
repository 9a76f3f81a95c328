#if VLC
import Foundation
import MediaProbe
import PlaybackKit
import SubtitleOverlay
import Testing

/// The libass overlay libVLC's `.frames` output draws subtitles with, over scripts the shared
/// reader makes of the fixtures' files: text where a cue shows, nothing elsewhere, and the
/// engine's own picture never written.
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

    /// How many pixels of `drawn` differ from the grey picture, and whether it was a copy.
    static func changes(_ overlay: SubtitleOverlay, at time: TimeInterval, picture: [UInt8]) -> (changed: Int, copied: Bool) {
        picture.withUnsafeBytes { source in
            overlay.withDrawn(source, size: size, bytesPerRow: bytesPerRow, at: time) { drawn in
                var changed = 0
                for y in 0..<size.height {
                    for x in 0..<size.width where drawn[y * bytesPerRow + x * 4] != 90 { changed += 1 }
                }
                return (changed, drawn.baseAddress != source.baseAddress)
            }
        }
    }

    @Test(arguments: [("cues.srt", 0), ("cues.ass", 0), ("film.mkv", 0), ("film.mkv", 1)])
    func drawsTextWhileACueShowsAndNothingElsewhere(_ name: String, _ subtitleIndex: Int) throws {
        let overlay = try Self.overlay(name, subtitleIndex: subtitleIndex)
        let picture = Self.grey()
        let during = Self.changes(overlay, at: 1.0, picture: picture)
        #expect(during.copied && during.changed >= 40, "\(name) #\(subtitleIndex) at 1.0 s: \(during)")
        #expect(picture.allSatisfy { $0 == 90 }, "the engine's picture was written")
        let between = Self.changes(overlay, at: 1.75, picture: picture)
        #expect(!between.copied && between.changed == 0, "\(name) #\(subtitleIndex) at 1.75 s (no cue): \(between)")
    }

    @Test func theDelayMovesTheTextAndClearStopsIt() throws {
        let overlay = try Self.overlay("cues.srt")
        let picture = Self.grey()
        overlay.setDelay(1)
        #expect(Self.changes(overlay, at: 1.0, picture: picture).changed == 0, "1 s late, the first cue (0.5-1.5 s) shows from 1.5 s")
        #expect(Self.changes(overlay, at: 2.0, picture: picture).changed >= 40)
        overlay.clear()
        #expect(!overlay.isDrawing)
        #expect(Self.changes(overlay, at: 2.0, picture: picture) == (0, false))
    }
}
#endif

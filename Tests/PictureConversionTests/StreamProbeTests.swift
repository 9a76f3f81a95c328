#if StreamProbe
import Foundation
import PlaybackKit
@testable import MediaProbe
import Testing

/// The probe opens a file by its name's container first; every container of the format sweep
/// under every name that leads there (and under none) reads the same as under its own name.
@Suite struct StreamProbeTests {
    static let formats = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/formats")

    /// Extensions of every container `StreamProbe.openInput` opens by name, some it leaves to
    /// libavformat's probe, and none.
    static let misleadingExtensions = ["mp4", "m4a", "mov", "3gp", "mkv", "webm", "avi", "wav", "ogg", "opus", "flac", "mp3", ""]

    /// Streams, tags, chapters and duration are the same under every name.
    @Test func everyContainerReadsTheSameUnderAnyName() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.formats.path).sorted()
        try #require(files.count >= 15, "run scripts/make-fixtures.sh")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("probe-names-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for file in files {
            let original = Self.formats.appendingPathComponent(file)
            let expected = try StreamProbe.read(original)
            #expect(!expected.streams.isEmpty, "\(file): no stream")
            for ext in Self.misleadingExtensions {
                let renamed = folder.appendingPathComponent("clip" + (ext.isEmpty ? "" : ".\(ext)"))
                try? FileManager.default.removeItem(at: renamed)
                try FileManager.default.createSymbolicLink(at: renamed, withDestinationURL: original)
                let probe = try StreamProbe.read(renamed)
                #expect(probe == expected, "\(file) named \(renamed.lastPathComponent): \(probe.streams.map(\.codec)) instead of \(expected.streams.map(\.codec))")
            }
        }
    }

    /// The container is libavformat's name for it, whatever the file is called (the libVLC
    /// adapter picks its demuxer by it).
    @Test func theContainerIsNamed() throws {
        let expected = ["flac.oga": "ogg", "opus.ogg": "ogg", "theora-vorbis.ogg": "ogg", "flac.flac": "flac",
                        "h264-flac.mkv": "matroska,webm", "mp3.mp3": "mp3", "mulaw.wav": "wav"]
        for (file, container) in expected {
            let url = Self.formats.appendingPathComponent(file)
            try #require(FileManager.default.fileExists(atPath: url.path), "run scripts/make-fixtures.sh")
            #expect(try StreamProbe.read(url).container == container, "\(file)")
        }
    }

    /// Bytes of no container named as one the probe opens by name are refused, not read as it.
    @Test func bytesOfNoContainerAreRefusedUnderAContainersName() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("probe-noise-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var generator = SystemRandomNumberGenerator()
        let noise = Data((0..<65_536).map { _ in UInt8.random(in: 0...255, using: &generator) })
        for ext in ["mp4", "mkv", "webm", "avi", "wav", "ogg"] {
            let url = folder.appendingPathComponent("noise.\(ext)")
            try noise.write(to: url)
            #expect(throws: PlaybackError.self, "noise named .\(ext)") { _ = try StreamProbe.read(url) }
            #expect(StreamProbe.videoRotation(url) == nil, "noise named .\(ext)")
        }
    }
}
#endif

import Foundation
import Testing
@testable import PlaybackKit

@Suite struct PNGTests {
    @Test func roundTripsThroughLibpng() throws {
        var pixels: [UInt8] = []
        for y in 0..<3 {
            for x in 0..<5 { pixels += [UInt8(x * 50), UInt8(y * 100), 7, 255] }
            pixels += [0, 0, 0, 0]  // padding beyond width*4
        }
        let frame = VideoFrame(width: 5, height: 3, bytesPerRow: 24, pixels: pixels, presentationTime: 2)
        let png = try frame.pngData()
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let decoded = try VideoFrame(pngData: png)
        #expect(decoded.size == VideoSize(width: 5, height: 3))
        for y in 0..<3 {
            for x in 0..<5 { #expect(decoded.pixel(x: x, y: y) == frame.pixel(x: x, y: y)) }
        }
    }

    @Test func opaqueFramesAreWrittenAsRGBAndTranslucentOnesKeepAlpha() throws {
        var opaque: [UInt8] = []
        for index in 0..<64 { opaque += [UInt8(index), UInt8(255 - index), UInt8(index * 3 % 256), 255] }
        var translucent = opaque
        translucent[3] = 128
        for (pixels, colourType) in [(opaque, UInt8(2)), (translucent, UInt8(6))] {
            let frame = VideoFrame(width: 8, height: 8, bytesPerRow: 32, pixels: pixels, presentationTime: 0)
            for compression in [PNGCompression.fast, .small] {
                let png = try frame.pngData(compression: compression)
                // IHDR: signature (8), length (4), "IHDR" (4), width, height (8), depth (1), colour type.
                #expect(png[png.startIndex + 24] == 8)
                #expect(png[png.startIndex + 25] == colourType)
                let decoded = try VideoFrame(pngData: png)
                for y in 0..<8 {
                    for x in 0..<8 { #expect(decoded.pixel(x: x, y: y) == frame.pixel(x: x, y: y)) }
                }
            }
        }
    }

    @Test func ffprobeReadsTheFile() throws {
        let frame = VideoFrame(width: 16, height: 8, bytesPerRow: 64, pixels: [UInt8](repeating: 200, count: 16 * 8 * 4), presentationTime: 0)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("pk-\(UUID().uuidString).png")
        try frame.pngData().write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
        probe.arguments = ["-v", "error", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", url.path]
        let pipe = Pipe()
        probe.standardOutput = pipe
        try probe.run()
        probe.waitUntilExit()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(probe.terminationStatus == 0)
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "png,16,8")
    }

    @Test func rejectsAFrameWithTooFewBytes() {
        let frame = VideoFrame(width: 4, height: 4, bytesPerRow: 16, pixels: [0, 0], presentationTime: 0)
        #expect(throws: PlaybackError.self) { try frame.pngData() }
    }

    @Test func rejectsDataThatIsNotPNG() {
        #expect(throws: PlaybackError.self) { try VideoFrame(pngData: Data("not a png".utf8)) }
    }
}

@Suite struct OptionsTests {
    @Test func defaults() {
        let options = PlaybackOptions()
        #expect(options.accurateSeek)
        #expect(options.maxBufferBytes == nil)
        #expect(options.httpHeaders.isEmpty)
        #expect(options.audioOutput == .system)
        if case .none = options.videoOutput {} else { Issue.record("video output should default to .none") }
        #expect(options.allowedSchemes == ["file", "http", "https"])
    }

    @Test func loadStateDescribesItsMembers() {
        #expect(LoadState([.playable, .stalled]).description == "[playable, stalled]")
        #expect(LoadState().description == "[]")
    }
}

@Suite struct MediaSourceTests {
    @Test func plainPathsBecomeFileURLs() {
        let source = MediaSource(argument: "/tmp/some clip.mp4")
        #expect(source.isFile)
        #expect(source.path == "/tmp/some clip.mp4")
        #expect(MediaSource(URL(string: "/tmp/x.mp4")!).isFile)
    }

    @Test func remoteURLsKeepTheirScheme() {
        let source = MediaSource(argument: "http://127.0.0.1:8080/a.mp4")
        #expect(source.isHTTP)
        #expect(source.precheck(allowedSchemes: ["file", "http"]) == nil)
    }

    @Test func precheckGivesTheContractsCodes() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pk-src-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let empty = folder.appendingPathComponent("empty.mp4")
        #expect(FileManager.default.createFile(atPath: empty.path, contents: Data()))
        let allowed: Set<String> = ["file", "http", "https"]
        #expect(MediaSource(folder.appendingPathComponent("missing.mp4")).precheck(allowedSchemes: allowed)?.code == .sourceNotFound)
        #expect(MediaSource(folder).precheck(allowedSchemes: allowed)?.code == .sourceNotFound)
        #expect(MediaSource(empty).precheck(allowedSchemes: allowed)?.code == .unsupportedFormat)
        #expect(MediaSource(URL(string: "gopher://127.0.0.1/x")!).precheck(allowedSchemes: allowed)?.code == .forbiddenURL)
        #expect(MediaSource(URL(string: "file:///etc/hostname")!).precheck(allowedSchemes: ["http"])?.code == .forbiddenURL)
    }
}

@Suite struct MediaStartTests {
    @Test("a first picture a WMA frame (43 ms) after the start of a 25 fps clip is the start")
    func encoderDelayLongerThanAFrame() {
        #expect(MediaStart.isStart(firstPicture: 36001.443, start: 36001.4, frameDuration: 0.04))
    }

    @Test("at 60 fps, AAC's priming (21 ms) is more than a frame and still the start")
    func primingAtSixtyFrames() {
        #expect(MediaStart.isStart(firstPicture: 0.0213, start: 0, frameDuration: 1.0 / 60))
    }

    @Test("a first picture at the start, before it, or later than a frame and 50 ms is not moved")
    func notTheStart() {
        #expect(!MediaStart.isStart(firstPicture: 0, start: 0, frameDuration: 0.04))
        #expect(!MediaStart.isStart(firstPicture: 0.98, start: 1, frameDuration: 0.04))
        #expect(!MediaStart.isStart(firstPicture: 0.06, start: 0, frameDuration: 0.04))
        #expect(!MediaStart.isStart(firstPicture: 3, start: 0, frameDuration: 0.04))
        #expect(MediaStart.isStart(firstPicture: 0.09, start: 0, frameDuration: 0.1))
    }
}

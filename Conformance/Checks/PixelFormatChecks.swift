import FoundationEssentials
import PlaybackKit

/// One clip of the pixel-format sweep in the fixtures' `pixels/` folder: 2 s of the
/// frame-numbered 320x240 picture at 25 fps with a sine, coded in one pixel format (bit
/// depth, chroma subsampling, range, RGB) as cameras, editors and phones write them.
struct PixelFormatClip: Sendable {
    /// The folder of the clips in the fixtures folder.
    static let folder = "pixels"

    /// The file's name in `pixels/`: `<codec>-<pixel format>.<container>`.
    let file: String
    /// What the clip holds, e.g. "H.264 High 10 (4:2:0, 10 bits)".
    let label: String
    /// The luma the middle of the picture is painted with, in the clip's own range.
    var middleLuma = 128
    /// The clip's samples use the full range (0...255), and say so.
    var fullRange = false
    /// ffmpeg's options for the video, after the picture filter.
    let videoOptions: [String]
    /// The sound's encoder and options.
    var audioOptions = ["-c:a", "aac", "-b:a", "96k"]

    /// The grey an RGB picture shows in its middle: the painted luma in the clip's range.
    var middleGrey: Int {
        fullRange ? middleLuma : Int((Double(middleLuma - 16) * 255 / 219).rounded())
    }

    /// The fixture's path inside the fixtures folder.
    var path: String { "\(Self.folder)/\(file)" }
    /// The name of a check of family `family` for this clip: the file name with its dot as a
    /// dash after the family's (`pixel-format.png-rgb24-mov`).
    func checkName(_ family: String) -> String { "\(family)." + file.replacing(".", with: "-") }

    /// How the recipe makes it. geq paints in limited-range formats only: a full-range clip's
    /// samples are painted as they are, then only declared full range (`setparams`), so that
    /// the encoder stores them unchanged.
    var job: FixtureJob {
        let picture = FixtureClips.numberedPicture(middleLuma: middleLuma) + (fullRange ? ",setparams=range=pc" : "")
        return FixtureJob(output: path, arguments: [
            "-f", "lavfi", "-i", "color=c=gray:s=320x240:r=25:d=2,format=yuv444p",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2",
            "-vf", picture,
        ] + videoOptions + ["-g", "25"] + audioOptions + ["-ac", "2", "-t", "2"])
    }

    /// The sweep: every pixel format beyond 8-bit 4:2:0 that common media use.
    static let all: [PixelFormatClip] = [
        PixelFormatClip(file: "h264-yuv420p10.mp4", label: "H.264 High 10 (4:2:0, 10 bits)",
                        videoOptions: ["-c:v", "libx264", "-preset", "veryfast", "-crf", "16", "-pix_fmt", "yuv420p10le"]),
        PixelFormatClip(file: "h264-yuv422p.mp4", label: "H.264 High 4:2:2",
                        videoOptions: ["-c:v", "libx264", "-preset", "veryfast", "-crf", "16", "-pix_fmt", "yuv422p"]),
        PixelFormatClip(file: "h264-yuv444p.mp4", label: "H.264 High 4:4:4",
                        videoOptions: ["-c:v", "libx264", "-preset", "veryfast", "-crf", "16", "-pix_fmt", "yuv444p"]),
        // Full range, as phones and screen recorders write it, with a dark middle (luma 40
        // means grey 40 in full range, 28 if taken for limited range).
        PixelFormatClip(file: "h264-full-range.mp4", label: "H.264 in full range (0-255)", middleLuma: 40, fullRange: true,
                        videoOptions: ["-c:v", "libx264", "-preset", "veryfast", "-crf", "16", "-pix_fmt", "yuvj420p", "-color_range", "pc"]),
        PixelFormatClip(file: "hevc-yuv420p10.mp4", label: "HEVC Main 10",
                        videoOptions: ["-c:v", "libx265", "-preset", "ultrafast", "-crf", "18", "-x265-params", "log-level=error",
                                       "-tag:v", "hvc1", "-pix_fmt", "yuv420p10le"]),
        PixelFormatClip(file: "vp9-yuv420p10.webm", label: "VP9 profile 2 (10 bits)",
                        videoOptions: ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-crf", "24", "-b:v", "0",
                                       "-pix_fmt", "yuv420p10le"],
                        audioOptions: ["-c:a", "libopus", "-b:a", "96k"]),
        // Motion JPEG in full-range 4:2:2, as webcams and older cameras write it.
        PixelFormatClip(file: "mjpeg-yuvj422p.mov", label: "Motion JPEG (4:2:2, full range)", middleLuma: 40, fullRange: true,
                        videoOptions: ["-c:v", "mjpeg", "-q:v", "3", "-pix_fmt", "yuvj422p"],
                        audioOptions: ["-c:a", "pcm_s16le"]),
        PixelFormatClip(file: "prores-yuv422p10.mov", label: "ProRes 422 Proxy (4:2:2, 10 bits)",
                        videoOptions: ["-c:v", "prores_ks", "-profile:v", "0", "-pix_fmt", "yuv422p10le"],
                        audioOptions: ["-c:a", "pcm_s16le"]),
        // RGB pictures, as screen recordings in PNG-in-MOV have them.
        PixelFormatClip(file: "png-rgb24.mov", label: "PNG (RGB)",
                        videoOptions: ["-c:v", "png", "-pix_fmt", "rgb24"],
                        audioOptions: ["-c:a", "pcm_s16le"]),
    ]
}

/// The pixel-format sweep, one check per clip of `pixels/` in each of two families:
/// `pixel-format`, where `.frames` pictures and thumbnails show the frame sought in the right
/// colours (the middle's grey to within a few steps, so that a range taken wrongly shows), and
/// `yuv-pixel-format`, where `.yuvFrames` hands 4:2:0 pictures whose Y plane carries the frame
/// number, converted from whatever the decoder made, their range flag saying which range the
/// samples use.
enum PixelFormatChecks {
    static let all: [Check] = PixelFormatClip.all.map(framesCheck) + PixelFormatClip.all.map(yuvCheck)

    /// How far the middle's grey may be from the painted one (a range taken wrongly moves a
    /// grey of 40 by 12).
    static let greyTolerance = 6

    static func framesCheck(_ clip: PixelFormatClip) -> Check {
        Check(clip.checkName("pixel-format"), "\(clip.label) (\(clip.path)): the first .frames picture is frame 0, a paused seek to 1 s presents and shows frame 25, pictures and thumbnail in the clip's colours (the middle grey \(clip.middleGrey) ± \(greyTolerance))",
              timeout: 20) { context in
            try await CheckFailure.naming(clip.path) { try await framesAndThumbnail(context, clip) }
        }
    }

    static func yuvCheck(_ clip: PixelFormatClip) -> Check {
        Check(clip.checkName("yuv-pixel-format"), "\(clip.label) (\(clip.path)): .yuvFrames hands 4:2:0 pictures at the stored size with frame 0 in Y first, the luma of the middle as the range flag says, and rgbaFrame() in the clip's colours",
              timeout: 20) { context in
            try await CheckFailure.naming(clip.path) { try await yuvFrames(context, clip) }
        }
    }

    /// What is wrong with the colours of `frame`, a picture of `clip`: the middle grey, the
    /// bottom quarter red on the left and blue on the right.
    static func colourProblem(_ frame: VideoFrame, _ clip: PixelFormatClip) -> String? {
        let middle = frame.pixel(x: frame.width / 2, y: frame.height / 2)
        let grey = [Int(middle.r), Int(middle.g), Int(middle.b)]
        if grey.contains(where: { abs($0 - clip.middleGrey) > greyTolerance }) {
            return "the middle is rgb(\(grey.map(String.init).joined(separator: ", "))), expected grey \(clip.middleGrey)"
        }
        let left = frame.pixel(x: frame.width / 4, y: frame.height * 7 / 8)
        let right = frame.pixel(x: frame.width * 3 / 4, y: frame.height * 7 / 8)
        guard MarkerColour.red.matches(left), MarkerColour.blue.matches(right) else {
            return "the bottom quarter is rgb(\(left.r), \(left.g), \(left.b)) | rgb(\(right.r), \(right.g), \(right.b)), expected red | blue"
        }
        return nil
    }

    /// `.frames`: the first picture, then the picture of a paused seek and the thumbnail.
    static func framesAndThumbnail(_ context: CheckContext, _ clip: PixelFormatClip) async throws {
        let p = try context.player(url: context.fixture(clip.path), frames: true)
        defer { p.player.shutdown() }
        try await p.prepare()
        try expect(p.player.naturalSize == FormatClip.size, "naturalSize is \(p.player.naturalSize), expected \(FormatClip.size)")
        let first = try await p.frames!.waitFor("first .frames picture", timeout: 3) { _ in true }
        try expect(first.number == 0, "the first .frames picture shows frame \(first.number.map(String.init) ?? "unreadable"), expected 0")
        if let picture = p.frames!.latest, let problem = colourProblem(picture, clip) {
            throw CheckFailure("the first .frames picture: \(problem)")
        }
        let mark = p.frames!.count
        try await SeekChecks.seekShowsFrame(p, 1.0, "a paused seek")
        try await p.frames!.waitFor(".frames picture of frame 25", since: mark, timeout: 3) { $0.number == 25 }
        if let picture = p.frames!.latest, let problem = colourProblem(picture, clip) {
            throw CheckFailure("the .frames picture after the seek to 1 s: \(problem)")
        }
        guard let thumbnail = p.player.thumbnailAtCurrentTime() else { throw CheckFailure("thumbnailAtCurrentTime() is nil after the seek to 1 s") }
        if let problem = colourProblem(thumbnail, clip) { throw CheckFailure("the thumbnail at 1 s: \(problem)") }
    }

    /// `.yuvFrames`: 4:2:0 pictures at the stored size with the frame number in Y, the
    /// clip's range, and `rgbaFrame()` in the clip's colours.
    static func yuvFrames(_ context: CheckContext, _ clip: PixelFormatClip) async throws {
        let collector = YUVFrameCollector()
        let p = try YUVChecks.player(clip.path, collector, context)
        defer { p.player.shutdown() }
        try await p.prepare()
        let first = try await collector.waitFor("first .yuvFrames picture", timeout: 3) { _ in true }
        if let problem = first.problem { throw CheckFailure("the first .yuvFrames picture: \(problem)") }
        try expect(first.size == FormatClip.size, "the first .yuvFrames picture is \(first.size), expected \(FormatClip.size)")
        try expect(first.number == 0, "the first .yuvFrames picture shows frame \(first.number.map(String.init) ?? "unreadable") in its Y plane, expected 0")
        guard let frame = collector.latest else { throw CheckFailure("no .yuvFrames picture kept") }
        // Converted pictures may change the range; the flag must say which one the samples use.
        let middle = Int(frame.planes[0][frame.width / 2, frame.height / 2])
        let expected = frame.fullRange ? clip.middleGrey : Int((Double(clip.middleGrey) * 219 / 255).rounded()) + 16
        try expect(abs(middle - expected) <= greyTolerance,
                   "the .yuvFrames picture's middle has luma \(middle) and says fullRange \(frame.fullRange): expected luma \(expected) (the clip is \(clip.fullRange ? "full" : "limited") range, luma \(clip.middleLuma))")
        guard let rgba = frame.rgbaFrame() else { throw CheckFailure("rgbaFrame() of the .yuvFrames picture is nil") }
        if let problem = colourProblem(rgba, clip) { throw CheckFailure("rgbaFrame() of the first .yuvFrames picture: \(problem)") }
    }
}

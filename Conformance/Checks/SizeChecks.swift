import FoundationEssentials
import Glibc
import PlaybackKit

// MARK: - The sizes

/// One clip of the picture-size sweep (the fixture recipe makes them all, `FixtureClips.sizeClip`).
struct SweepClip: Sendable, CustomStringConvertible {
    /// How the clip is encoded.
    enum Codec: String, Sendable {
        /// H.264 4:2:0 in MP4 (even sizes only).
        case h264 = "mp4"
        /// VP9 4:2:0 in WebM (odd sizes too).
        case vp9 = "webm"
        /// FFV1 4:4:4 in Matroska (odd sizes, full-resolution chroma).
        case ffv1 = "mkv"
    }

    let size: VideoSize
    let codec: Codec

    /// The fixture's path inside the fixtures folder.
    var fixture: String { "sizes/\(size.width)x\(size.height).\(codec.rawValue)" }
    var description: String { "\(size.width)x\(size.height) \(codec)" }

    /// Side of the corner markers, as the recipe paints them.
    var markerSide: Int { max(2, min(size.width, size.height) / 6) }
    /// Whether the picture has corner markers and the frame-number band.
    var hasMarkers: Bool { size.width >= 8 && size.height >= 8 }
    var hasBand: Bool { size.width >= 64 && size.height >= 48 }
}

/// The clips of the sweep.
enum SizeSweep {
    private static func clips(_ sizes: String, _ codec: SweepClip.Codec) -> [SweepClip] {
        sizes.split(separator: " ").map { text in
            let parts = text.split(separator: "x").compactMap { Int($0) }
            return SweepClip(size: VideoSize(width: parts[0], height: parts[1]), codec: codec)
        }
    }

    /// Widths 64...127: every residue mod 64 (and so mod 32), with varying heights; even
    /// widths in H.264, odd ones in VP9 (some with odd heights).
    static let residues: [SweepClip] = (0..<64).map { r in
        let width = 64 + r, height = 48 + (r * 14) % 50
        return width % 2 == 0
            ? SweepClip(size: VideoSize(width: width, height: height - height % 2), codec: .h264)
            : SweepClip(size: VideoSize(width: width, height: height | (r % 4 == 1 ? 1 : 0)), codec: .vp9)
    }
    /// Sizes that corrupted memory before the converter's layout rule, and sizes that never did.
    static let common = clips("424x240 200x120 426x320 426x480 1706x960 320x240 322x240 640x360 854x480 1366x768", .h264)
    /// Portrait pictures.
    static let portrait = clips("240x426 360x640 1080x1920", .h264)
    /// The smallest pictures each codec allows, and odd ones.
    static let tiny = clips("16x16 32x18", .h264) + clips("2x2 4x4 8x8 15x9", .vp9) + clips("5x3", .ffv1)
    /// Odd widths and heights at ordinary sizes, 4:2:0 and 4:4:4.
    static let odd = clips("33x17 853x479 1919x1079", .vp9) + clips("97x61 641x359", .ffv1)
    /// 4K.
    static let uhd = clips("3840x2160", .h264)
    /// Every clip of the sweep, as the fixture recipe makes them (`FixtureClips.sizeClip`).
    static var all: [SweepClip] { residues + common + portrait + tiny + odd + uhd }

    /// The sweep's families: the check names' second part, what they hold, their clips, and
    /// how long the `.frames` sweep of them may take (seconds, at real time).
    static let families: [(name: String, what: String, clips: [SweepClip], seconds: TimeInterval)] = [
        ("residues", "every width residue mod 64 (widths 64-127, H.264 and VP9, odd heights too)", residues, 150),
        ("common", "common sizes, those that once corrupted memory among them (424x240, 200x120, 426x320, 426x480, 1706x960, ...)", common, 60),
        ("portrait", "portrait pictures up to 1080x1920", portrait, 40),
        ("tiny", "tiny pictures: 16x16, 32x18, 2x2, 4x4, 8x8, 15x9, 5x3", tiny, 40),
        ("odd", "odd widths and heights in 4:2:0 (VP9) and 4:4:4 (FFV1)", odd, 50),
        ("uhd", "3840x2160", uhd, 40),
    ]

    /// One check per family, named `prefix.family`: `exercise` runs on each of its clips in
    /// turn, within the family's time (`timeScale` times the `.frames` sweep's).
    static func checks(_ prefix: String, _ summary: String, timeScale: Double = 1,
                       exercise: @escaping @Sendable (SweepClip, CheckContext) async throws -> Void) -> [Check] {
        families.map { family in
            Check("\(prefix).\(family.name)", "\(family.what): \(summary)", timeout: family.seconds * timeScale * slowdown) { context in
                try await context.eachClip(family.clips, key: \.fixture) { try await exercise($0, context) }
            }
        }
    }

    /// How much slower than real time the players run (for runs under a memory checker):
    /// `PLAYBACK_CONFORMANCE_SLOWDOWN`, a number ≥ 1 that multiplies this family's deadlines.
    static let slowdown: Double = {
        guard let text = getenv("PLAYBACK_CONFORMANCE_SLOWDOWN").map({ String(cString: $0) }),
              let value = Double(text), value >= 1 else { return 1 }
        return value
    }()

    /// Whether the pictures' frame numbers are held to the position: not when slowed down
    /// (under a memory checker an engine that times pictures by the wall clock cannot keep
    /// up); the size, the border and the markers are checked either way.
    static let checksFrameNumbers = slowdown == 1
}

// MARK: - The checks

/// The picture-size sweep: every size and format of picture, in every output path, has the
/// right size and the right picture (the border, the corner markers and the frame number of
/// the recipe, checked to the last row and column).
enum SizeChecks {
    static let all: [Check] = SizeSweep.checks(
        "picture-size", "prepared, .frames with and without a viewport, a paused seek, thumbnails and PNG each show the whole picture at its size",
        exercise: exercise)

    /// The steps every clip goes through.
    static func exercise(_ clip: SweepClip, _ context: CheckContext) async throws {
        let slow = SizeSweep.slowdown
        let url = try sweepFixture(clip, context)
        let size = clip.size
        // Natural size: prepared, thumbnail, PNG, .frames while playing, a paused seek.
        let p = try context.player(url: url, frames: true, retained: false)
        defer { p.player.shutdown() }
        try await p.prepare(timeout: 10 * slow)
        try expect(p.player.naturalSize == size, "\(clip): naturalSize is \(p.player.naturalSize)")
        try verifyThumbnail(clip, p, when: "after prepare", frame: 0)
        try await p.play(timeout: 10 * slow)
        // Slowed down (under a memory checker) an engine may drop every picture while playing
        // as late (libVLC at 1706x960 does): the prepared picture, delivered through the same
        // output, is what is checked there.
        let wanted = SizeSweep.checksFrameNumbers ? 3 : 1
        guard await p.frames!.waitUntil(count: wanted, timeout: 5 * slow) else {
            throw CheckFailure("\(clip): \(p.frames!.count) frames delivered within \(format(5 * slow)) s of playing")
        }
        try await p.pause(timeout: 5 * slow)
        guard let latest = p.frames!.latest else { throw CheckFailure("\(clip): no frame delivered") }
        // The picture only: how its presentationTime matches it is picture.frames-order's
        // business (at the fixtures' size, where every engine keeps real time).
        if let problem = SizeSweep.problem(in: latest, clip: clip, frame: nil) {
            throw CheckFailure("\(clip): a .frames picture while playing: \(problem)")
        }
        try await p.seek(to: 0.6, near: 0.1, timeout: 10 * slow)
        // The picture after the seek, not its frame number: landing on the target frame is
        // seek.accurate-frame's business (libVLC misses it at 1080p and 4K, see Known limits).
        try verifyThumbnail(clip, p, when: "after a paused seek to 0.6 s", frame: nil)
        p.player.shutdown()

        // A viewport that is a multiple of nothing: the picture scaled into it by aspectFit.
        let viewport = SizeSweep.viewport(for: size)
        let v = try context.player(url: url, frames: true, viewport: viewport, retained: false)
        defer { v.player.shutdown() }
        try await v.prepare(timeout: 10 * slow)
        try await v.play(timeout: 10 * slow)
        guard await v.frames!.waitUntil(count: max(1, wanted - 1), timeout: 5 * slow) else {
            throw CheckFailure("\(clip): \(v.frames!.count) frames delivered into a \(viewport) viewport within \(format(5 * slow)) s")
        }
        guard let composed = v.frames!.latest else { throw CheckFailure("\(clip): no frame in the viewport") }
        if let problem = SizeSweep.problem(inComposed: composed, clip: clip, viewport: viewport, mode: v.player.scalingMode) {
            throw CheckFailure("\(clip): in a \(viewport) viewport: \(problem)")
        }
    }

    /// The clip's URL; a missing clip fails the check (the recipe makes every one).
    static func sweepFixture(_ clip: SweepClip, _ context: CheckContext) throws -> URL {
        do {
            return try context.fixture(clip.fixture)
        } catch is CheckSkip {
            throw CheckFailure("fixture \(clip.fixture) is missing: run the fixture recipe again")
        }
    }

    /// The thumbnail must be the whole picture at natural size (showing `frame`, when given), and its PNG
    /// must decode to the same pixels.
    static func verifyThumbnail(_ clip: SweepClip, _ p: CheckPlayer, when: String, frame: Int?) throws {
        p.step("thumbnailAtCurrentTime() \(when)")
        guard let picture = p.player.thumbnailAtCurrentTime() else {
            throw CheckFailure("\(clip): thumbnailAtCurrentTime() is nil \(when)")
        }
        if let problem = SizeSweep.problem(in: picture, clip: clip, frame: frame) {
            throw CheckFailure("\(clip): the thumbnail \(when): \(problem)")
        }
        let png: Data
        do {
            png = try picture.pngData()
        } catch {
            throw CheckFailure("\(clip): pngData() threw \(error)")
        }
        let decoded: VideoFrame
        do {
            decoded = try VideoFrame(pngData: png)
        } catch {
            throw CheckFailure("\(clip): the PNG of the thumbnail does not decode: \(error)")
        }
        try expect(decoded.size == picture.size, "\(clip): the PNG is \(decoded.size), the thumbnail \(picture.size)")
        if picture.bytesPerRow == picture.width * 4, decoded.pixels == picture.pixels { return }
        for y in 0..<picture.height {
            for x in 0..<picture.width {
                let a = picture.pixel(x: x, y: y), b = decoded.pixel(x: x, y: y)
                guard a.r == b.r, a.g == b.g, a.b == b.b else {
                    throw CheckFailure("\(clip): the PNG differs from the thumbnail at (\(x), \(y))")
                }
            }
        }
    }
}

// MARK: - Reading the pictures

extension SizeSweep {
    /// The viewport a clip is also played into: 1.5 x 1.25 its size (3/10 for large ones),
    /// made odd.
    static func viewport(for size: VideoSize) -> VideoSize {
        if size.width * size.height > 1280 * 720 {
            return VideoSize(width: size.width * 3 / 10 | 1, height: size.height * 3 / 10 | 1)
        }
        return VideoSize(width: max(3, size.width * 3 / 2 | 1), height: max(3, size.height * 5 / 4 | 1))
    }

    /// What is wrong with a natural-size picture of `clip` that should show `frame`, or nil.
    static func problem(in picture: VideoFrame, clip: SweepClip, frame: Int?) -> String? {
        let size = clip.size
        guard picture.size == size else { return "it is \(picture.size), expected \(size)" }
        guard picture.bytesPerRow >= size.width * 4, picture.pixels.count >= picture.bytesPerRow * size.height else {
            return "stride \(picture.bytesPerRow) and \(picture.pixels.count) bytes do not hold \(size)"
        }
        let w = size.width, h = size.height
        // RGBA, opaque: every pixel's fourth byte is 255.
        for y in 0..<h {
            let row = y * picture.bytesPerRow
            if let x = (0..<w).first(where: { picture.pixels[row + $0 * 4 + 3] != 255 }) {
                return "pixel (\(x), \(y)) has alpha \(picture.pixels[row + x * 4 + 3]), expected 255 (opaque)"
            }
        }
        // The border: every pixel of the first and last row and column is light.
        for x in 0..<w {
            for y in Set([0, h - 1]) where !isLight(picture, x, y) {
                return "row \(y) is not the light border at column \(x) (luma \(FramePattern.luma(picture, x: x, y: y)))"
            }
        }
        for y in 0..<h {
            for x in Set([0, w - 1]) where !isLight(picture, x, y) {
                return "column \(x) is not the light border at row \(y) (luma \(FramePattern.luma(picture, x: x, y: y)))"
            }
        }
        guard clip.hasMarkers else { return nil }
        // Just inside the border, between the markers (and above the band): mid grey.
        let m = clip.markerSide
        let insideRow = clip.hasBand ? (1 + m + h / 3) / 2 : h / 2
        let insideColumn = w / 2
        for (x, y) in [(1, insideRow), (w - 2, insideRow), (insideColumn, 1), (insideColumn, h - 2)] {
            let luma = FramePattern.luma(picture, x: x, y: y)
            if !(80...175).contains(luma) {
                return "pixel (\(x), \(y)) just inside the border has luma \(luma), not mid grey (a picture shifted or cropped)"
            }
        }
        // The corner markers (only where they are large enough to keep their colour in 4:2:0).
        if m >= 4 {
            let near = 1 + m / 2, far = w - 2 - m / 2, bottom = h - 2 - m / 2
            let expected: [(x: Int, y: Int, colour: MarkerColour)] = [
                (near, near, .red), (far, near, .green), (near, bottom, .blue), (far, bottom, .yellow),
            ]
            for marker in expected {
                let pixel = picture.pixel(x: marker.x, y: marker.y)
                if !marker.colour.matches(pixel) {
                    return "the \(marker.colour) corner marker at (\(marker.x), \(marker.y)) is rgb(\(pixel.r), \(pixel.g), \(pixel.b))"
                }
            }
        }
        if clip.hasBand, let frame, checksFrameNumbers {
            let band = PixelRect(x: 0, y: h / 3, width: w, height: 2 * h / 3 - h / 3)
            guard let number = FramePattern.frameNumber(in: picture, region: band) else { return "the frame number band is unreadable" }
            if abs(number - frame) > 1 { return "it shows frame \(number), expected \(frame) (±1)" }
        }
        return nil
    }

    /// What is wrong with a picture of `clip` composed into `viewport` by `mode`, or nil.
    static func problem(inComposed picture: VideoFrame, clip: SweepClip, viewport: VideoSize, mode: ScalingMode) -> String? {
        guard picture.size == viewport else { return "it is \(picture.size), expected \(viewport)" }
        let layout = ScalingLayout(source: clip.size, viewport: viewport, mode: mode)
        let content = layout.content
        // Bars (outside the content, at least 2 pixels from it) are black.
        let bars = [
            (content.x - 2, content.y + content.height / 2, content.x >= 3),
            (content.x + content.width + 1, content.y + content.height / 2, viewport.width - content.x - content.width >= 3),
            (content.x + content.width / 2, content.y - 2, content.y >= 3),
            (content.x + content.width / 2, content.y + content.height + 1, viewport.height - content.y - content.height >= 3),
        ]
        for (x, y, present) in bars where present && FramePattern.luma(picture, x: x, y: y) > 24 {
            return "the bar at (\(x), \(y)) is not black (luma \(FramePattern.luma(picture, x: x, y: y))) for content \(content)"
        }
        // Corner markers, where they are scaled to at least 6 pixels.
        let scale = Double(content.width) / Double(layout.crop.width)
        let side = Double(clip.markerSide) * scale
        guard clip.hasMarkers, side >= 6 else { return nil }
        func place(_ x: Double, _ y: Double) -> (Int, Int) {
            (content.x + Int((x * scale).rounded(.down)), content.y + Int((y * Double(content.height) / Double(layout.crop.height)).rounded(.down)))
        }
        let m = Double(clip.markerSide), w = Double(clip.size.width), h = Double(clip.size.height)
        let expected: [((Int, Int), MarkerColour)] = [
            (place(1 + m / 2, 1 + m / 2), .red), (place(w - 1 - m / 2, 1 + m / 2), .green),
            (place(1 + m / 2, h - 1 - m / 2), .blue), (place(w - 1 - m / 2, h - 1 - m / 2), .yellow),
        ]
        for ((x, y), colour) in expected {
            let pixel = picture.pixel(x: x, y: y)
            if !colour.matches(pixel) {
                return "the \(colour) corner marker at (\(x), \(y)) is rgb(\(pixel.r), \(pixel.g), \(pixel.b)) for content \(content)"
            }
        }
        return nil
    }

    /// Whether pixel (x, y) is the light border.
    private static func isLight(_ picture: VideoFrame, _ x: Int, _ y: Int) -> Bool {
        FramePattern.luma(picture, x: x, y: y) >= 170
    }
}

/// The colours of the corner markers, told apart with a wide margin.
enum MarkerColour: String, CustomStringConvertible {
    case red, green, blue, yellow
    var description: String { rawValue }

    func matches(_ p: (r: UInt8, g: UInt8, b: UInt8, a: UInt8)) -> Bool {
        let high = 150, low = 110
        let r = Int(p.r), g = Int(p.g), b = Int(p.b)
        switch self {
        case .red: return r >= high && g <= low && b <= low
        case .green: return g >= high && r <= low && b <= low
        case .blue: return b >= high && r <= low && g <= low
        case .yellow: return r >= high && g >= high && b <= low
        }
    }
}

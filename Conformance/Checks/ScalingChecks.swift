import FoundationEssentials
import PlaybackKit

/// Each `ScalingMode` composed into a 400x200 viewport from the 320x240 clip, checked by pixels:
/// black bars for aspectFit and none, crop without bars for aspectFill, stretch for fill.
enum ScalingChecks {
    static let all: [Check] = [aspectFit, aspectFill, fill, none]

    static let viewport = VideoSize(width: 400, height: 200)

    /// What a pixel of the composed picture should be.
    enum Kind: String {
        case black, grey, red, blue
        /// The frame-number band: light or dark.
        case band
    }

    /// One probe: a pixel, what it should be, and why.
    struct Probe {
        let x: Int, y: Int
        let kind: Kind
        let note: String
        init(_ x: Int, _ y: Int, _ kind: Kind, _ note: String) {
            self.x = x
            self.y = y
            self.kind = kind
            self.note = note
        }
    }

    static func classify(_ frame: VideoFrame, x: Int, y: Int) -> Kind? {
        let p = frame.pixel(x: x, y: y)
        let r = Int(p.r), g = Int(p.g), b = Int(p.b)
        if r < 40, g < 40, b < 40 { return .black }
        if r > 160, g < 90, b < 90 { return .red }
        if b > 160, r < 90, g < 110 { return .blue }
        if max(r, g, b) - min(r, g, b) < 30, (90...170).contains(r) { return .grey }
        if min(r, g, b) > 200 { return .band }
        return nil
    }

    static func matches(_ frame: VideoFrame, _ probe: Probe) -> (Bool, String) {
        let found = classify(frame, x: probe.x, y: probe.y)
        let p = frame.pixel(x: probe.x, y: probe.y)
        let ok: Bool
        switch probe.kind {
        case .band: ok = found == .band || found == .black
        default: ok = found == probe.kind
        }
        return (ok, "(\(probe.x),\(probe.y)) is rgb(\(p.r),\(p.g),\(p.b)) = \(found?.rawValue ?? "other"), expected \(probe.kind.rawValue) (\(probe.note))")
    }

    /// What a picture composed by one mode shows: probes, and where the picture (with its
    /// frame number) lies.
    struct Expectation {
        let probes: [Probe]
        let numberRegion: PixelRect
    }

    /// Plays frames.mp4 into the viewport with `mode`, then checks the probes and the frame
    /// number read from the picture area.
    static func check(_ context: CheckContext, mode: ScalingMode) async throws {
        let (probes, numberRegion) = (expected(mode).probes, expected(mode).numberRegion)
        let p = try context.player("frames.mp4", frames: true, viewport: viewport)
        try await p.prepare()
        p.player.scalingMode = mode
        try expect(p.player.scalingMode == mode, "scalingMode reads \(p.player.scalingMode) after setting \(mode)")
        try await p.play()
        try await p.frames!.waitFor("a frame from 0.4 s on", since: 0, timeout: 5) { $0.presentationTime >= 0.4 }
        try await p.pause()
        guard let frame = p.frames!.latest else { throw CheckFailure("no frame delivered") }
        try expect(frame.size == viewport, "the composed frame is \(frame.size), expected the viewport \(viewport)")
        let wrong = probes.map { matches(frame, $0) }.filter { !$0.0 }.map(\.1)
        try expect(wrong.isEmpty, "\(mode): \(wrong.count) of \(probes.count) probes wrong: " + wrong.prefix(4).joined(separator: "; "))
        guard let number = FramePattern.frameNumber(in: frame, region: numberRegion) else {
            throw CheckFailure("\(mode): no frame number readable in the picture area \(numberRegion)")
        }
        // The exact presentation time is picture.frames-order's business; here the number only
        // proves the picture area holds the whole, undistorted band.
        let expected = Int((frame.presentationTime * FramePattern.frameRate).rounded())
        try expect(abs(number - expected) <= 1, "\(mode): the composed picture shows frame \(number) but says presentationTime \(format(frame.presentationTime)) (frame \(expected))")
    }

    // Source 320x240: frame-number band rows 0..<60, grey 60..<180, bottom 180..<240
    // (red for columns 0..<160, blue 160..<320).

    /// The probes and the picture area of `mode` in the 400x200 viewport.
    static func expected(_ mode: ScalingMode) -> Expectation {
        switch mode {
        case .aspectFit:
            return Expectation(probes: [
                Probe(10, 100, .black, "left bar"), Probe(60, 100, .black, "left bar"), Probe(30, 20, .black, "left bar"),
                Probe(340, 100, .black, "right bar"), Probe(390, 100, .black, "right bar"), Probe(370, 180, .black, "right bar"),
                Probe(71, 100, .grey, "picture's left edge"), Probe(200, 100, .grey, "centre"), Probe(328, 100, .grey, "picture's right edge"),
                Probe(200, 25, .band, "number band"), Probe(200, 56, .grey, "below the band (ends at 50)"), Probe(200, 144, .grey, "above the bottom (starts at 150)"),
                Probe(75, 175, .red, "bottom left"), Probe(190, 175, .red, "bottom left"),
                Probe(210, 175, .blue, "bottom right"), Probe(325, 175, .blue, "bottom right"),
            ], numberRegion: PixelRect(x: 66, y: 0, width: 267, height: 200))
        case .aspectFill:
            return Expectation(probes: [
                Probe(3, 100, .grey, "left edge, no bar"), Probe(396, 100, .grey, "right edge, no bar"),
                Probe(3, 190, .red, "bottom left corner"), Probe(396, 190, .blue, "bottom right corner"),
                Probe(200, 10, .band, "number band (rows 0..25)"), Probe(200, 35, .grey, "below the cropped band"),
                Probe(100, 165, .grey, "above the cropped bottom (starts at 175)"),
                Probe(100, 190, .red, "bottom left"), Probe(190, 190, .red, "bottom left"),
                Probe(210, 190, .blue, "bottom right"), Probe(300, 190, .blue, "bottom right"),
            ], numberRegion: PixelRect(x: 0, y: 0, width: 400, height: 100))
        case .fill:
            return Expectation(probes: [
                Probe(3, 100, .grey, "left edge, no bar"), Probe(396, 100, .grey, "right edge, no bar"),
                Probe(3, 190, .red, "bottom left corner"), Probe(396, 190, .blue, "bottom right corner"),
                Probe(200, 40, .band, "number band (rows 0..50)"), Probe(200, 56, .grey, "below the band"),
                Probe(200, 144, .grey, "above the bottom"), Probe(100, 160, .red, "bottom left (from 150)"),
                Probe(190, 165, .red, "bottom left"), Probe(210, 165, .blue, "bottom right"), Probe(300, 160, .blue, "bottom right"),
            ], numberRegion: PixelRect(x: 0, y: 0, width: 400, height: 200))
        case .none:
            return Expectation(probes: [
                Probe(20, 100, .black, "left bar"), Probe(35, 180, .black, "left bar"),
                Probe(380, 100, .black, "right bar"), Probe(365, 20, .black, "right bar"),
                Probe(45, 100, .grey, "picture's left edge"), Probe(50, 100, .grey, "picture's left edge"), Probe(355, 100, .grey, "picture's right edge"),
                Probe(200, 30, .band, "number band (rows 0..40)"), Probe(200, 46, .grey, "below the band"),
                Probe(200, 154, .grey, "above the bottom (from 160)"), Probe(100, 170, .red, "bottom left"), Probe(195, 190, .red, "bottom left"),
                Probe(205, 190, .blue, "bottom right"), Probe(300, 170, .blue, "bottom right"),
            ], numberRegion: PixelRect(x: 40, y: 0, width: 320, height: 80))
        }
    }

    static let aspectFit = Check("picture.scaling-aspect-fit", "aspectFit: the whole picture, aspect kept (267x200 at x 66), black bars left and right") { context in
        try await check(context, mode: .aspectFit)
    }

    static let aspectFill = Check("picture.scaling-aspect-fill", "aspectFill: fills the viewport, aspect kept, top and bottom cropped, no bars") { context in
        try await check(context, mode: .aspectFill)
    }

    static let fill = Check("picture.scaling-fill", "fill: stretched to the whole viewport, aspect not kept, nothing cropped") { context in
        try await check(context, mode: .fill)
    }

    static let none = Check("picture.scaling-none", "none: natural size centred (x 40..360), rows 20..220 of the picture, black bars at the sides") { context in
        try await check(context, mode: .none)
    }
}

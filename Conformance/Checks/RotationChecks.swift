import FoundationEssentials
import PlaybackKit

/// Pictures whose container asks for a turn (a display matrix, as phone recordings carry):
/// every engine shows them upright, as `ffmpeg` does, at the upright size, in every output.
enum RotationChecks {
    /// One clip: the size sweep's 320x240 picture (`sizes/320x240.mp4`, border and corner
    /// markers) remuxed with a display matrix (`FixtureClips.turned`), and how `ffmpeg` shows it.
    struct TurnedClip: Sendable, CustomStringConvertible {
        /// The fixture's path.
        let fixture: String
        /// The upright picture's size.
        let size: VideoSize
        /// The markers in the upright picture's corners: top left, top right, bottom left,
        /// bottom right (red, green, blue, yellow in the stored picture); none: the size alone
        /// is checked.
        let corners: [MarkerColour]

        var description: String { fixture }
    }

    /// The clips, with what `ffmpeg -i F -frames:v 1 out.png` shows of each.
    static let clips: [TurnedClip] = [
        TurnedClip(fixture: FixtureClips.turnedFixture(90), size: VideoSize(width: 240, height: 320),
                   corners: [.green, .yellow, .red, .blue]),
        TurnedClip(fixture: FixtureClips.turnedFixture(180), size: VideoSize(width: 320, height: 240),
                   corners: [.yellow, .blue, .green, .red]),
        TurnedClip(fixture: FixtureClips.turnedFixture(270), size: VideoSize(width: 240, height: 320),
                   corners: [.blue, .red, .yellow, .green]),
    ]

    /// anamorphic.mp4 (320x240 stored, 3:2 pixels, shown 480x240) turned a quarter: upright it
    /// is 240x320 stored with 2:3 pixels, shown 160x320 (the height kept, as for any picture).
    static let anamorphic = TurnedClip(fixture: "turned-anamorphic-90.mp4", size: VideoSize(width: 160, height: 320), corners: [])

    static let all: [Check] = [rotated]

    static let rotated = Check(
        "picture-size.rotated",
        "clips whose display matrix turns them 90, 180 and 270 degrees: naturalSize is the upright size, and the thumbnail, .frames and .yuvFrames (its displaySize and rgbaFrame()) show the picture upright, each corner marker where ffmpeg shows it; an anamorphic clip turned a quarter is shown at its upright display size (160x320 for 480x240) in each",
        timeout: 80 * SizeSweep.slowdown
    ) { context in
        try await context.eachClip(clips + [anamorphic], key: \.fixture) { try await exercise($0, context) }
    }

    /// The steps every clip goes through.
    static func exercise(_ clip: TurnedClip, _ context: CheckContext) async throws {
        let slow = SizeSweep.slowdown
        let url = try context.fixture(clip.fixture)
        let p = try context.player(url: url, frames: true, retained: false)
        defer { p.player.shutdown() }
        try await p.prepare(timeout: 10 * slow)
        try expect(p.player.naturalSize == clip.size, "\(clip): naturalSize is \(p.player.naturalSize), expected the upright \(clip.size)")
        p.step("thumbnailAtCurrentTime() after prepare")
        guard let thumbnail = p.player.thumbnailAtCurrentTime() else { throw CheckFailure("\(clip): thumbnailAtCurrentTime() is nil after prepare") }
        if let problem = problem(in: thumbnail, clip) { throw CheckFailure("\(clip): the thumbnail after prepare: \(problem)") }
        try await p.play(timeout: 10 * slow)
        guard await p.frames!.waitUntil(count: 3, timeout: 5 * slow), let latest = p.frames!.latest else {
            throw CheckFailure("\(clip): \(p.frames!.count) frames delivered within \(format(5 * slow)) s of playing")
        }
        if let problem = problem(in: latest, clip) { throw CheckFailure("\(clip): a .frames picture while playing: \(problem)") }
        p.player.shutdown()

        let collector = YUVFrameCollector()
        let y = try context.player(url: url, retained: false) { $0.videoOutput = .yuvFrames(handler: collector.handler) }
        defer { y.player.shutdown() }
        try await y.prepare(timeout: 10 * slow)
        let record = try await collector.waitFor("after prepare", timeout: 5 * slow) { _ in true }
        try expect(record.displaySize == clip.size, "\(clip): a .yuvFrames picture's displaySize is \(record.displaySize), expected the upright \(clip.size)")
        guard let converted = collector.latest?.rgbaFrame() else { throw CheckFailure("\(clip): rgbaFrame() of a .yuvFrames picture is nil") }
        if let problem = problem(in: converted, clip) { throw CheckFailure("\(clip): rgbaFrame() of a .yuvFrames picture: \(problem)") }
    }

    /// What is wrong with an RGBA picture of `clip`, or nil: its size, and the colour at the
    /// middle of each corner marker.
    static func problem(in picture: VideoFrame, _ clip: TurnedClip) -> String? {
        guard picture.size == clip.size else { return "it is \(picture.size), expected the upright \(clip.size)" }
        // The stored picture's markers are min(320, 240) / 6 pixels wide, inside a 1-pixel border.
        guard !clip.corners.isEmpty else { return nil }
        let m = 240 / 6
        let w = clip.size.width, h = clip.size.height
        let near = 1 + m / 2, right = w - 2 - m / 2, bottom = h - 2 - m / 2
        let spots = [("top left", near, near), ("top right", right, near), ("bottom left", near, bottom), ("bottom right", right, bottom)]
        for ((name, x, y), colour) in zip(spots, clip.corners) {
            let pixel = picture.pixel(x: x, y: y)
            if !colour.matches(pixel) {
                return "the \(name) corner (\(x), \(y)) is rgb(\(pixel.r), \(pixel.g), \(pixel.b)), expected the \(colour) marker there (the picture is not turned as its display matrix asks)"
            }
        }
        return nil
    }
}

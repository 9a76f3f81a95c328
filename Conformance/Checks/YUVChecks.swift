import FoundationEssentials
import PlaybackKit

// MARK: - The pictures of .yuvFrames

/// `.yuvFrames`: the decoder's 4:2:0 pictures in presentation order at their stored size, the
/// frame number read from the Y plane, chroma in the right plane, `copy()` and `rgbaFrame()`
/// showing the same picture, and (family `yuv-size`) every size of the picture-size sweep.
enum YUVChecks {
    static let all: [Check] = [order, picture, anamorphic, pausedSeek] + sweeps

    /// A player for `name` with a `.yuvFrames` output collected into `collector`.
    static func player(_ name: String, _ collector: YUVFrameCollector, _ context: CheckContext,
                       retained: Bool = true) throws -> CheckPlayer {
        try context.player(url: context.fixture(name), retained: retained) {
            $0.videoOutput = .yuvFrames(handler: collector.handler)
        }
    }

    static let order = Check("yuv.frames-order", ".yuvFrames delivers 4:2:0 pictures at the stored size in presentation order, timestamps rising and matching the frame number in the Y plane, across a pause and resume and a seek while playing") { context in
        let collector = YUVFrameCollector()
        let p = try player("frames.mp4", collector, context)
        try await PictureChecks.playAcrossPauseAndSeek(p)
        let records = collector.records
        try expect(records.count >= 50, "only \(records.count) pictures delivered for 2.4 s of playback")
        try PictureChecks.expectPresentationOrder(records.map { ($0.number, $0.presentationTime) })
        for (index, record) in records.enumerated() {
            if let problem = record.problem { throw CheckFailure("picture \(index): \(problem)") }
            try expect(record.size == VideoSize(width: 320, height: 240), "picture \(index) is \(record.size), expected the stored 320x240")
            guard let number = record.number else { throw CheckFailure("picture \(index) carries no readable frame number in its Y plane") }
            try expect(abs(record.presentationTime - FramePattern.time(ofFrame: number)) <= 0.021,
                       "frame \(number) came with presentationTime \(format(record.presentationTime)), expected \(format(FramePattern.time(ofFrame: number)))")
        }
        try PictureChecks.expectFramesAcrossSeek(records.compactMap(\.number))
    }

    static let picture = Check("yuv.picture", ".yuvFrames planes hold the picture: grey, red and blue where the clip has them in Y, U and V; rgbaFrame() and copy() show the same picture; thumbnails still work") { context in
        let collector = YUVFrameCollector()
        let p = try player("frames.mp4", collector, context)
        try await p.prepare()
        try await p.play()
        try await collector.waitFor("from 0.4 s on", timeout: 5) { $0.presentationTime >= 0.4 }
        try await p.pause()
        guard let frame = collector.latest else { throw CheckFailure("no picture kept") }
        if let problem = samplesProblem(frame) { throw CheckFailure(problem) }
        let number = FramePattern.frameNumber(inLuma: frame.planes[0])
        guard let rgba = frame.rgbaFrame() else { throw CheckFailure("rgbaFrame() is nil") }
        try expect(rgba.size == frame.displaySize, "rgbaFrame() is \(rgba.size), expected \(frame.displaySize)")
        try expect(rgba.presentationTime == frame.presentationTime, "rgbaFrame() is stamped \(format(rgba.presentationTime)), the picture \(format(frame.presentationTime))")
        let rgbaNumber = FramePattern.frameNumber(in: rgba)
        try expect(rgbaNumber != nil && rgbaNumber == number, "rgbaFrame() shows frame \(rgbaNumber.map(String.init) ?? "?"), the Y plane \(number.map(String.init) ?? "?")")
        let (left, right) = (rgba.pixel(x: rgba.width / 4, y: rgba.height * 7 / 8), rgba.pixel(x: rgba.width * 3 / 4, y: rgba.height * 7 / 8))
        try expect(MarkerColour.red.matches(left) && MarkerColour.blue.matches(right),
                   "rgbaFrame()'s bottom quarter is rgb(\(left.r), \(left.g), \(left.b)) | rgb(\(right.r), \(right.g), \(right.b)), expected red | blue")
        let half = VideoSize(width: 160, height: 120)
        try expect(frame.rgbaFrame(size: half)?.size == half, "rgbaFrame(size: 160x120) is \(frame.rgbaFrame(size: half)?.size.description ?? "nil")")
        guard let thumbnail = p.player.thumbnailAtCurrentTime() else { throw CheckFailure("thumbnailAtCurrentTime() is nil with a .yuvFrames output") }
        try expect(thumbnail.size == VideoSize(width: 320, height: 240), "the thumbnail is \(thumbnail.size)")
    }

    static let anamorphic = Check("yuv.anamorphic", ".yuvFrames of a 320x240 clip with 3:2 pixels: the stored size, displaySize, rgbaFrame() and the thumbnail 480x240") { context in
        let collector = YUVFrameCollector()
        let p = try player("anamorphic.mp4", collector, context)
        try await p.prepare()
        let record = try await collector.waitFor("after prepare", timeout: 5) { _ in true }
        try expect(record.size == VideoSize(width: 320, height: 240), "the picture is \(record.size), expected the stored 320x240")
        try expect(record.displaySize == VideoSize(width: 480, height: 240), "displaySize is \(record.displaySize), expected 480x240")
        try expect(collector.latest?.rgbaFrame()?.size == VideoSize(width: 480, height: 240), "rgbaFrame() is not 480x240")
        let thumbnail = p.player.thumbnailAtCurrentTime()
        try expect(thumbnail?.size == VideoSize(width: 480, height: 240), "the thumbnail is \(thumbnail?.size.description ?? "nil"), expected 480x240")
    }

    static let pausedSeek = Check("yuv.paused-seek", "a seek while paused presents the picture at the target through .yuvFrames") { context in
        let collector = YUVFrameCollector()
        let p = try player("frames.mp4", collector, context)
        try await p.prepare()
        let mark = collector.count
        try await p.seek(to: 2.0)
        let presented = try await collector.waitFor("of frame 50", since: mark, timeout: 3) { $0.number == 50 }
        try expect(abs(presented.presentationTime - 2.0) <= 0.021, "frame 50 was presented with time \(format(presented.presentationTime)), expected 2")
        try await observe(for: 0.3)
        let last = collector.records.last?.number
        try expect(last == 50, "the last picture presented is frame \(last.map(String.init) ?? "unreadable"), expected 50")
    }

    /// What is wrong with the samples of a frames.mp4 picture: mid grey in the middle, the
    /// bottom quarter red on the left and blue on the right (as Y, U, V the recipe paints).
    static func samplesProblem(_ frame: YUVFrame) -> String? {
        let y = frame.planes[0]
        let (cx, cy) = (frame.width / 4 / 2, frame.height * 7 / 8 / 2)
        let rx = frame.width * 3 / 4 / 2
        func chroma(_ x: Int, _ row: Int) -> (u: Int, v: Int) {
            switch frame.layout {
            case .i420: (Int(frame.planes[1][x, row]), Int(frame.planes[2][x, row]))
            case .nv12: (Int(frame.planes[1][2 * x, row]), Int(frame.planes[1][2 * x + 1, row]))
            }
        }
        let grey = Int(y[frame.width / 2, frame.height / 2])
        guard (100...156).contains(grey) else { return "Y in the middle is \(grey), expected mid grey (128)" }
        let leftY = Int(y[frame.width / 4, frame.height * 7 / 8]), rightY = Int(y[frame.width * 3 / 4, frame.height * 7 / 8])
        guard abs(leftY - 81) <= 20, abs(rightY - 41) <= 20 else { return "Y in the bottom quarter is \(leftY) | \(rightY), expected 81 | 41" }
        let left = chroma(cx, cy), right = chroma(rx, cy)
        guard abs(left.u - 90) <= 25, abs(left.v - 240) <= 25, abs(right.u - 240) <= 25, abs(right.v - 110) <= 25 else {
            return "U, V in the bottom quarter are (\(left.u), \(left.v)) | (\(right.u), \(right.v)), expected (90, 240) | (240, 110) (\(frame.layout))"
        }
        return nil
    }
}

// MARK: - The picture-size sweep through .yuvFrames

extension YUVChecks {
    static let sweeps: [Check] = SizeSweep.checks(
        "yuv-size", ".yuvFrames pictures at the stored size with planes of the right geometry, the light border in the first and last row and column of Y, and rgbaFrame() showing the whole picture",
        timeScale: 0.6, exercise: exercise)

    /// The steps every clip goes through.
    static func exercise(_ clip: SweepClip, _ context: CheckContext) async throws {
        let slow = SizeSweep.slowdown
        let url = try SizeChecks.sweepFixture(clip, context)
        let collector = YUVFrameCollector()
        let p = try context.player(url: url, retained: false) { $0.videoOutput = .yuvFrames(handler: collector.handler) }
        defer { p.player.shutdown() }
        try await p.prepare(timeout: 10 * slow)
        try await p.play(timeout: 10 * slow)
        let wanted = SizeSweep.checksFrameNumbers ? 3 : 1
        guard await collector.waitUntil(count: wanted, timeout: 5 * slow) else {
            throw CheckFailure("\(clip): \(collector.count) pictures delivered within \(format(5 * slow)) s of playing")
        }
        try await p.pause(timeout: 5 * slow)
        if let bad = collector.records.first(where: { $0.problem != nil || $0.size != clip.size }) {
            throw CheckFailure("\(clip): a picture is \(bad.size) (expected \(clip.size))\(bad.problem.map { ": \($0)" } ?? "")")
        }
        guard let latest = collector.latest else { throw CheckFailure("\(clip): no picture kept") }
        if let problem = borderProblem(latest.planes[0]) { throw CheckFailure("\(clip): the Y plane: \(problem)") }
        guard let rgba = latest.rgbaFrame() else { throw CheckFailure("\(clip): rgbaFrame() is nil") }
        if let problem = SizeSweep.problem(in: rgba, clip: clip, frame: nil) {
            throw CheckFailure("\(clip): rgbaFrame() of a .yuvFrames picture: \(problem)")
        }
    }

    /// What is wrong with the light border of a Y plane (first and last row and column), or nil.
    static func borderProblem(_ plane: YUVPlane) -> String? {
        let (w, h) = (plane.rowBytes, plane.rows)
        for x in 0..<w {
            for y in Set([0, h - 1]) where plane[x, y] < 160 { return "row \(y) is not the light border at column \(x) (Y \(plane[x, y]))" }
        }
        for y in 0..<h {
            for x in Set([0, w - 1]) where plane[x, y] < 160 { return "column \(x) is not the light border at row \(y) (Y \(plane[x, y]))" }
        }
        return nil
    }
}

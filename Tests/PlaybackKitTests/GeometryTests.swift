import Testing
@testable import PlaybackKit

@Suite struct ScalingLayoutTests {
    let wide = VideoSize(width: 320, height: 240)
    let viewport = VideoSize(width: 400, height: 200)

    @Test func aspectFitLetterboxesTheSides() {
        let layout = ScalingLayout(source: wide, viewport: viewport, mode: .aspectFit)
        #expect(layout.crop == PixelRect(x: 0, y: 0, width: 320, height: 240))
        #expect(layout.content == PixelRect(x: 66, y: 0, width: 267, height: 200))
    }

    @Test func aspectFitLetterboxesTopAndBottom() {
        let layout = ScalingLayout(source: VideoSize(width: 480, height: 240), viewport: VideoSize(width: 300, height: 300), mode: .aspectFit)
        #expect(layout.content == PixelRect(x: 0, y: 75, width: 300, height: 150))
    }

    @Test func aspectFillCropsTopAndBottom() {
        let layout = ScalingLayout(source: wide, viewport: viewport, mode: .aspectFill)
        #expect(layout.content == PixelRect(x: 0, y: 0, width: 400, height: 200))
        #expect(layout.crop == PixelRect(x: 0, y: 40, width: 320, height: 160))
    }

    @Test func fillStretches() {
        let layout = ScalingLayout(source: wide, viewport: viewport, mode: .fill)
        #expect(layout.content == PixelRect(x: 0, y: 0, width: 400, height: 200))
        #expect(layout.crop == PixelRect(x: 0, y: 0, width: 320, height: 240))
    }

    @Test func noneCentresAndCropsAtNaturalSize() {
        let layout = ScalingLayout(source: wide, viewport: viewport, mode: .none)
        #expect(layout.content == PixelRect(x: 40, y: 0, width: 320, height: 200))
        #expect(layout.crop == PixelRect(x: 0, y: 20, width: 320, height: 200))
    }

    @Test func sameAspectFillsWholeViewportInEveryMode() {
        for mode in [ScalingMode.aspectFit, .aspectFill, .fill] {
            let layout = ScalingLayout(source: VideoSize(width: 160, height: 120), viewport: VideoSize(width: 640, height: 480), mode: mode)
            #expect(layout.content == PixelRect(x: 0, y: 0, width: 640, height: 480), "\(mode)")
        }
    }

    @Test func displaySizeAppliesPixelAspect() {
        #expect(VideoSize.display(storage: wide, pixelAspect: 3, 2) == VideoSize(width: 480, height: 240))
        #expect(VideoSize.display(storage: wide, pixelAspect: 1, 1) == wide)
        #expect(VideoSize.display(storage: wide, pixelAspect: 0, 1) == wide)
    }

    /// Pixels narrower than tall shrink the width and keep the height, in the rational form
    /// and in the form an engine gives as a number (mpv's `video-params/par`), turned or not.
    @Test func narrowPixelsShrinkTheWidthInBothForms() {
        let ntsc = VideoSize(width: 720, height: 480)
        #expect(VideoSize.display(storage: ntsc, pixelAspect: 8, 9) == VideoSize(width: 640, height: 480))
        #expect(VideoSize.display(storage: ntsc, pixelAspect: 8.0 / 9.0, turnedBy: 0) == VideoSize(width: 640, height: 480))
        #expect(VideoSize.display(storage: ntsc, pixelAspect: 8.0 / 9.0, turnedBy: 180) == VideoSize(width: 640, height: 480))
        // A quarter turn: 480x720 upright, of 9:8 pixels, 540x720.
        #expect(VideoSize.display(storage: ntsc, pixelAspect: 8.0 / 9.0, turnedBy: 90)
                == VideoSize.display(storage: ntsc, pixelAspect: 8, 9, turnedBy: 90))
        #expect(VideoSize.display(storage: ntsc, pixelAspect: 8.0 / 9.0, turnedBy: 90) == VideoSize(width: 540, height: 720))
        let odd = VideoSize(width: 97, height: 61)
        #expect(VideoSize.display(storage: odd, pixelAspect: 2989.0 / 3007.0, turnedBy: 0)
                == VideoSize.display(storage: odd, pixelAspect: 2989, 3007))
        #expect(VideoSize.display(storage: odd, pixelAspect: 2989, 3007) == VideoSize(width: 96, height: 61))
        for bad in [0.0, -1.0, .infinity, .nan, 1.0] {
            #expect(VideoSize.display(storage: odd, pixelAspect: bad, turnedBy: 0) == odd, "\(bad)")
        }
    }
}

@Suite struct TurnedPictureTests {
    /// A 3x2 picture whose pixels are numbered 0...5 row by row (in the red byte), with a
    /// padded row stride.
    func numbered() -> VideoFrame {
        var pixels: [UInt8] = []
        for y in 0..<2 {
            for x in 0..<3 { pixels += [UInt8(y * 3 + x), 0, 0, 255] }
            pixels += [9, 9, 9, 9]  // padding
        }
        return VideoFrame(width: 3, height: 2, bytesPerRow: 16, pixels: pixels, presentationTime: 1.5)
    }

    func reds(_ frame: VideoFrame) -> [[Int]] {
        (0..<frame.height).map { y in (0..<frame.width).map { x in Int(frame.pixel(x: x, y: y).r) } }
    }

    @Test func sizesTurnByQuarters() {
        let size = VideoSize(width: 320, height: 240)
        #expect(size.turned(by: 90) == VideoSize(width: 240, height: 320))
        #expect(size.turned(by: 270) == VideoSize(width: 240, height: 320))
        #expect(size.turned(by: 180) == size)
        #expect(size.turned(by: 0) == size)
    }

    @Test func turnedDisplaySizeKeepsTheUprightHeight() {
        let stored = VideoSize(width: 320, height: 240)
        #expect(VideoSize.display(storage: stored, pixelAspect: 2, 1, turnedBy: 90) == VideoSize(width: 120, height: 320))
        #expect(VideoSize.display(storage: stored, pixelAspect: 2, 1, turnedBy: 180) == VideoSize(width: 640, height: 240))
        #expect(VideoSize.display(storage: stored, pixelAspect: 0, 1, turnedBy: 270) == VideoSize(width: 240, height: 320))
    }

    @Test func picturesTurnClockwise() {
        let picture = numbered()
        // 0 1 2      3 0      5 4 3      2 5
        // 3 4 5      4 1      2 1 0      1 4
        //            5 2                 0 3
        #expect(reds(picture.turned(by: 90)) == [[3, 0], [4, 1], [5, 2]])
        #expect(reds(picture.turned(by: 180)) == [[5, 4, 3], [2, 1, 0]])
        #expect(reds(picture.turned(by: 270)) == [[2, 5], [1, 4], [0, 3]])
        let turned = picture.turned(by: 90)
        #expect(turned.bytesPerRow == 8 && turned.pixels.count == 24 && turned.presentationTime == 1.5)
        #expect(picture.turned(by: 45) == picture)
    }
}

@Suite struct FrameComposerTests {
    /// A 4x2 picture: left half red, right half blue.
    func redBlue() -> [UInt8] {
        var pixels: [UInt8] = []
        for _ in 0..<2 {
            for x in 0..<4 { pixels += x < 2 ? [255, 0, 0, 255] : [0, 0, 255, 255] }
        }
        return pixels
    }

    func compose(_ mode: ScalingMode, into viewport: VideoSize) -> VideoFrame {
        let composer = FrameComposer()
        return redBlue().withUnsafeBytes { raw in
            composer.compose(source: raw, size: VideoSize(width: 4, height: 2), bytesPerRow: 16, into: viewport, mode: mode, presentationTime: 1.5)
        }
    }

    @Test func aspectFitPutsBlackBarsAboveAndBelow() {
        let frame = compose(.aspectFit, into: VideoSize(width: 8, height: 8))
        #expect(frame.presentationTime == 1.5)
        #expect(frame.pixel(x: 0, y: 0) == (0, 0, 0, 255))
        #expect(frame.pixel(x: 0, y: 1) == (0, 0, 0, 255))
        #expect(frame.pixel(x: 0, y: 2) == (255, 0, 0, 255))
        #expect(frame.pixel(x: 7, y: 5) == (0, 0, 255, 255))
        #expect(frame.pixel(x: 7, y: 6) == (0, 0, 0, 255))
    }

    @Test func aspectFillCropsTheSides() {
        let frame = compose(.aspectFill, into: VideoSize(width: 2, height: 2))
        // The centre two columns of the source: one red, one blue, no black.
        #expect(frame.pixel(x: 0, y: 0) == (255, 0, 0, 255))
        #expect(frame.pixel(x: 1, y: 1) == (0, 0, 255, 255))
    }

    @Test func fillStretchesWithoutBars() {
        let frame = compose(.fill, into: VideoSize(width: 8, height: 8))
        #expect(frame.pixel(x: 0, y: 0) == (255, 0, 0, 255))
        #expect(frame.pixel(x: 7, y: 7) == (0, 0, 255, 255))
    }

    @Test func reusesItsBufferWhenTheFrameIsDropped() {
        let composer = FrameComposer()
        let pixels = redBlue()
        var first: VideoFrame? = pixels.withUnsafeBytes {
            composer.compose(source: $0, size: VideoSize(width: 4, height: 2), bytesPerRow: 16, into: VideoSize(width: 8, height: 8), mode: .fill, presentationTime: 0)
        }
        let kept = first!
        first = nil
        let second = pixels.withUnsafeBytes {
            composer.compose(source: $0, size: VideoSize(width: 4, height: 2), bytesPerRow: 16, into: VideoSize(width: 8, height: 8), mode: .aspectFit, presentationTime: 1)
        }
        // The kept frame must not change under the caller.
        #expect(kept.pixel(x: 0, y: 0) == (255, 0, 0, 255))
        #expect(second.pixel(x: 0, y: 0) == (0, 0, 0, 255))
    }
}

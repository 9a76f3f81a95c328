#if Swscale
import PictureConversion
import PlaybackKit
import Testing

/// `EngineSink.presentFrame(_:naturalSize:...)`'s drawing: the converter writes each picture
/// once, straight into the frame the handler gets (or through its own buffer when the frame's
/// rows cannot take whole-vector stores), for every width residue, at natural size and into
/// viewports with bars; the frame is always tightly packed, its bars black, its edges right.
@Suite struct FrameDrawingTests {
    /// Presents `picture` at `natural` through a presenter with `viewport` and returns the frame.
    static func present(_ picture: EdgePicture, natural: VideoSize, viewport: VideoSize?,
                        mode: ScalingMode = .aspectFit) -> VideoFrame? {
        let received = Locked<VideoFrame?>(nil)
        let presenter = FramePresenter(viewport: viewport, mode: mode) { frame in received.set(frame) }
        let converter = PictureConverter()
        picture.withSource { source in
            presenter.present(naturalSize: natural, presentationTime: 1.5) { converter.draw(source, into: $0) }
        }
        return received.get()
    }

    @Test("at natural size the frame is the whole picture, tightly packed, its edges in place", arguments: sweptWidths)
    func naturalSize(width: Int) throws {
        for height in [1, 2, 17] {
            let picture = EdgePicture(width: width, height: height, padding: 32)
            let frame = try #require(Self.present(picture, natural: VideoSize(width: width, height: height), viewport: nil))
            #expect(frame.width == width && frame.height == height && frame.bytesPerRow == width * 4)
            #expect(frame.pixels.count == width * 4 * height)
            #expect(frame.presentationTime == 1.5)
            // The white last column and row, grey elsewhere, opaque everywhere.
            for y in 0..<height {
                for x in 0..<width {
                    let pixel = frame.pixel(x: x, y: y)
                    let edge = x == width - 1 || y == height - 1
                    guard edge ? pixel.r > 200 : pixel.r < 100, pixel.a == 255 else {
                        Issue.record("\(width)x\(height): pixel (\(x), \(y)) is \(pixel)")
                        return
                    }
                }
            }
        }
    }

    @Test("into a viewport the picture fills the layout's rectangle and the bars are opaque black",
          arguments: [VideoSize(width: 640, height: 360), VideoSize(width: 333, height: 500), VideoSize(width: 17, height: 9)])
    func viewport(_ viewport: VideoSize) throws {
        for width in [31, 64, 854, 1366] {
            let height = width * 9 / 16 + 1
            let natural = VideoSize(width: width, height: height)
            for mode in [ScalingMode.aspectFit, .aspectFill, .fill, .none] {
                let picture = EdgePicture(width: width, height: height)
                let frame = try #require(Self.present(picture, natural: natural, viewport: viewport, mode: mode))
                #expect(frame.width == viewport.width && frame.height == viewport.height && frame.bytesPerRow == viewport.width * 4)
                let content = ScalingLayout(source: natural, viewport: viewport, mode: mode).content
                var wrong: String?
                for y in 0..<viewport.height where wrong == nil {
                    for x in 0..<viewport.width {
                        let pixel = frame.pixel(x: x, y: y)
                        let inside = x >= content.x && x < content.x + content.width && y >= content.y && y < content.y + content.height
                        if pixel.a != 255 || (!inside && (pixel.r, pixel.g, pixel.b) != (0, 0, 0)) || (inside && pixel.r < 20) {
                            wrong = "\(mode) \(width)x\(height) into \(viewport): pixel (\(x), \(y)) is \(pixel), content \(content)"
                            break
                        }
                    }
                }
                #expect(wrong == nil, "\(wrong ?? "")")
            }
        }
    }

    @Test("a frame the handler keeps is not written by the next picture")
    func keptFrameStaysIntact() throws {
        let kept = Locked<[VideoFrame]>([])
        let presenter = FramePresenter(viewport: nil, mode: .aspectFit) { frame in kept.withLock { $0.append(frame) } }
        let converter = PictureConverter()
        let dark = EdgePicture(width: 64, height: 4)
        let natural = VideoSize(width: 64, height: 4)
        dark.withSource { source in
            presenter.present(naturalSize: natural, presentationTime: 0) { converter.draw(source, into: $0) }
        }
        let first = try #require(kept.get().first)
        // A second picture of another size, then the same size again: the first frame keeps its pixels.
        EdgePicture(width: 32, height: 4).withSource { source in
            presenter.present(naturalSize: VideoSize(width: 32, height: 4), presentationTime: 1) { converter.draw(source, into: $0) }
        }
        dark.withSource { source in
            presenter.present(naturalSize: natural, presentationTime: 2) { target in
                target.base.initializeMemory(as: UInt8.self, repeating: 7, count: target.bytesPerRow * target.size.height)
                return true
            }
        }
        #expect(kept.get().count == 3)
        #expect(first.pixel(x: 0, y: 0).r < 100 && first.pixel(x: 63, y: 0).r > 200, "the kept frame was written")
        #expect(kept.get()[2].pixel(x: 5, y: 2).r == 7)
    }

    @Test("a picture that cannot be converted presents nothing")
    func failedDrawPresentsNothing() {
        let count = Locked(0)
        let presenter = FramePresenter(viewport: nil, mode: .aspectFit) { _ in count.withLock { $0 += 1 } }
        presenter.present(naturalSize: VideoSize(width: 8, height: 8), presentationTime: 0) { _ in false }
        presenter.present(naturalSize: .zero, presentationTime: 0) { _ in true }
        #expect(count.get() == 0)
    }
}
#endif

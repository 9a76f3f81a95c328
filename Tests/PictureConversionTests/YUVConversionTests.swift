#if Swscale
import PictureConversion
import PlaybackKit
import Testing

@Suite struct YUVConversionTests {
    /// The edge picture as a borrowed `YUVFrame`, handed to `body`.
    private func withFrame<T>(_ picture: EdgePicture, _ body: (YUVFrame) -> T) -> T {
        picture.withSource { source in
            let layout: YUVPixelLayout = source.format == .nv12 ? .nv12 : .i420
            let geometry = YUVFrame.planeGeometry(layout, width: picture.width, height: picture.height)
            let planes = geometry.indices.map {
                YUVPlane(baseAddress: source.planes[$0]!, bytesPerRow: source.strides[$0],
                         rowBytes: geometry[$0].rowBytes, rows: geometry[$0].rows)
            }
            return body(YUVFrame(layout: layout, width: picture.width, height: picture.height, planes: planes,
                                 presentationTime: 1.5, converter: YUVFrameConverter()))
        }
    }

    @Test("copy() owns planes equal to the borrowed ones", arguments: [(1, 1), (5, 3), (97, 61), (424, 17)])
    func copyKeepsThePicture(size: (Int, Int)) {
        let picture = EdgePicture(width: size.0, height: size.1, padding: 13)
        let copy = withFrame(picture) { frame -> YUVFrame in
            let copy = frame.copy()
            #expect(!frame.ownsPlanes && copy.ownsPlanes)
            for (plane, copied) in zip(frame.planes, copy.planes) {
                #expect(copied.bytesPerRow % 64 == 0 && copied.rowBytes == plane.rowBytes && copied.rows == plane.rows)
                for row in 0..<plane.rows { #expect(Array(plane.row(row)) == Array(copied.row(row))) }
            }
            return copy
        }
        // Still readable once the borrowed planes are gone.
        #expect(copy.planes[0][size.0 - 1, size.1 - 1] == EdgePicture.light)
        #expect(copy.rgbaFrame()?.size == VideoSize(width: size.0, height: size.1))
    }

    @Test("rgbaFrame() converts at the asked size with the light edges in place", arguments: [SourcePixelFormat.i420, .nv12])
    func convertsToRGBA(format: SourcePixelFormat) throws {
        let picture = EdgePicture(width: 67, height: 9, format: format, padding: 5)
        let rgba = try #require(withFrame(picture) { $0.rgbaFrame() })
        #expect(rgba.size == VideoSize(width: 67, height: 9) && rgba.bytesPerRow == 67 * 4 && rgba.presentationTime == 1.5)
        #expect(rgba.pixel(x: 66, y: 4).r > 200 && rgba.pixel(x: 10, y: 8).r > 200 && rgba.pixel(x: 10, y: 4).r < 100)
        #expect(withFrame(picture) { $0.rgbaFrame(size: VideoSize(width: 20, height: 5)) }?.size == VideoSize(width: 20, height: 5))
    }

    @Test("I420Converter makes I420 planes of the picture's geometry", arguments: [(3, 3), (64, 2), (129, 17)])
    func makesI420(size: (Int, Int)) throws {
        let picture = EdgePicture(width: size.0, height: size.1, format: .nv12, padding: 3)
        let converter = I420Converter()
        let planes = try #require(picture.withSource { converter.convert($0, size: VideoSize(width: size.0, height: size.1)) })
        let geometry = YUVFrame.planeGeometry(.i420, width: size.0, height: size.1)
        #expect(planes.map(\.rowBytes) == geometry.map(\.rowBytes) && planes.map(\.rows) == geometry.map(\.rows))
        #expect(planes[0][size.0 - 1, 0] > 200 && planes[0][0, size.1 - 1] > 200)
        if size.0 > 2 && size.1 > 2 { #expect(planes[0][0, 0] < 100) }
    }
}
#endif

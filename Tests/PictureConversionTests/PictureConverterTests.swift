#if Swscale
import PictureConversion
import PlaybackKit
import Testing

// MARK: - Test pictures

/// A 4:2:0 picture in memory: dark grey everywhere but a white last column and a white
/// last row, neutral chroma (so every RGB pixel is grey and the edges can be told exactly).
/// Planes carry `padding` extra bytes a row and a spare row, as decoders' pictures do.
final class EdgePicture {
    let width: Int, height: Int
    let format: SourcePixelFormat
    private(set) var storage: [UInt8]
    private let offsets: [Int]
    let strides: [Int]

    static let dark: UInt8 = 60, light: UInt8 = 235

    init(width: Int, height: Int, format: SourcePixelFormat = .i420, padding: Int = 0) {
        self.width = width
        self.height = height
        self.format = format
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        let lumaStride = width + padding
        let chroma = format == .nv12 ? [(chromaWidth * 2 + padding, chromaHeight)] : [(chromaWidth + padding, chromaHeight), (chromaWidth + padding, chromaHeight)]
        let planes = [(lumaStride, height)] + chroma
        strides = planes.map(\.0)
        var offset = 0, offsets: [Int] = []
        for (stride, rows) in planes {
            offsets.append(offset)
            offset += stride * (rows + 1)
        }
        self.offsets = offsets
        storage = [UInt8](repeating: 128, count: offset + 64)
        for y in 0..<height {
            for x in 0..<width {
                storage[y * lumaStride + x] = (x == width - 1 || y == height - 1) ? Self.light : Self.dark
            }
        }
    }

    /// Calls `body` with the picture as the converter reads it.
    func withSource<T>(_ body: (SourcePicture) -> T) -> T {
        storage.withUnsafeBufferPointer { bytes in
            let planes = offsets.map { UnsafePointer(bytes.baseAddress! + $0) } as [UnsafePointer<UInt8>?]
            return body(SourcePicture(format: format, width: width, height: height, planes: planes, strides: strides))
        }
    }
}

/// A destination buffer with `guardBytes` of known bytes after what the layout allows.
struct GuardedBuffer {
    static let canary: UInt8 = 0xA5
    let layout: PackedLayout
    let guardBytes: Int
    let memory: UnsafeMutableRawPointer

    init(layout: PackedLayout, guardBytes: Int = 512) {
        self.layout = layout
        self.guardBytes = guardBytes
        memory = .allocate(byteCount: layout.byteCount + guardBytes, alignment: PackedLayout.alignment)
        memory.initializeMemory(as: UInt8.self, repeating: Self.canary, count: layout.byteCount + guardBytes)
    }

    /// How many bytes after the layout's end were written.
    var overrun: Int {
        let tail = (memory + layout.byteCount).assumingMemoryBound(to: UInt8.self)
        return (0..<guardBytes).filter { tail[$0] != Self.canary }.count
    }

    /// The red byte of pixel (x, y).
    func red(x: Int, y: Int) -> UInt8 { memory.load(fromByteOffset: y * layout.bytesPerRow + x * 4, as: UInt8.self) }

    func free() { memory.deallocate() }
}

/// Widths that cover every residue mod 64 (1...64, then 65...129), and a few large ones.
let sweptWidths = Array(1...129) + [424, 426, 854, 1366, 1706, 1918, 3840]
let sweptHeights = [1, 2, 3, 7, 16, 17]

// MARK: - Layout

@Suite struct PackedLayoutTests {
    @Test("rows are 64-byte aligned and the buffer has a spare row", arguments: [1, 15, 16, 17, 424, 426, 1366])
    func rowsAreAligned(width: Int) {
        let layout = PackedLayout(width: width, height: 240)
        #expect(layout.bytesPerRow % 64 == 0)
        #expect(layout.bytesPerRow >= width * 4)
        #expect(layout.bytesPerRow - width * 4 < 64)
        #expect(layout.byteCount == layout.bytesPerRow * 241)
    }
}

// MARK: - Conversion at every width

@Suite struct PictureConverterTests {
    /// The converter never writes past its layout, and converts every pixel up to the last
    /// column and the last row, for every width residue, at natural size.
    @Test("same-size conversion stays inside the layout and converts the edges", arguments: [SourcePixelFormat.i420, .nv12])
    func sameSize(format: SourcePixelFormat) {
        let converter = PictureConverter()
        for width in sweptWidths {
            for height in sweptHeights where width * height <= 3840 * 17 {
                let picture = EdgePicture(width: width, height: height, format: format, padding: 3)
                let buffer = GuardedBuffer(layout: PackedLayout(width: width, height: height))
                defer { buffer.free() }
                let converted = picture.withSource { converter.convert($0, format: .rgba, into: buffer.memory, layout: buffer.layout) }
                #expect(converted, "\(width)x\(height) \(format) did not convert")
                #expect(buffer.overrun == 0, "\(width)x\(height) \(format): \(buffer.overrun) bytes written past the layout")
                guard converted else { continue }
                // The last column and last row are white, the pixel before them dark.
                for y in 0..<height {
                    #expect(buffer.red(x: width - 1, y: y) > 200, "\(width)x\(height) \(format): last column, row \(y) is \(buffer.red(x: width - 1, y: y))")
                }
                for x in 0..<width {
                    #expect(buffer.red(x: x, y: height - 1) > 200, "\(width)x\(height) \(format): last row, column \(x) is \(buffer.red(x: x, y: height - 1))")
                }
                if width >= 2, height >= 2 {
                    #expect(buffer.red(x: width - 2, y: 0) < 100, "\(width)x\(height) \(format): column \(width - 2) is not dark")
                }
            }
        }
    }

    /// Scaling to any size (odd, every residue) stays inside the layout too.
    @Test("scaled conversion stays inside the layout")
    func scaled() {
        let converter = PictureConverter()
        let picture = EdgePicture(width: 426, height: 240)
        for width in Array(1...129) + [427, 853, 1367] {
            for height in [1, 5, 239, 481] {
                let buffer = GuardedBuffer(layout: PackedLayout(width: width, height: height))
                defer { buffer.free() }
                let converted = picture.withSource { converter.convert($0, format: .bgra, into: buffer.memory, layout: buffer.layout) }
                #expect(converted, "426x240 to \(width)x\(height) did not convert")
                #expect(buffer.overrun == 0, "426x240 to \(width)x\(height): \(buffer.overrun) bytes written past the layout")
            }
        }
    }

    /// A crop of the picture keeps its right and bottom edge (the origin moves to a whole
    /// chroma sample, the size grows by as much).
    @Test("a crop keeps the edges of the picture")
    func crop() {
        let converter = PictureConverter()
        let picture = EdgePicture(width: 101, height: 61)
        let crop = PixelRect(x: 51, y: 31, width: 50, height: 30)
        let buffer = GuardedBuffer(layout: PackedLayout(width: 51, height: 31))
        defer { buffer.free() }
        let converted = picture.withSource { converter.convert($0, crop: crop, format: .rgba, into: buffer.memory, layout: buffer.layout) }
        #expect(converted)
        #expect(buffer.overrun == 0)
        #expect(buffer.red(x: 50, y: 0) > 200)
        #expect(buffer.red(x: 0, y: 30) > 200)
        #expect(buffer.red(x: 0, y: 0) < 100)
    }

    /// The converter's own buffer and the tight `VideoFrame` copy.
    @Test("rgbaFrame gives a tight frame of the asked size with the edges in place")
    func frame() throws {
        let converter = PictureConverter()
        for width in [1, 2, 17, 63, 65, 424, 426] {
            let picture = EdgePicture(width: width, height: 9)
            let frame = try #require(picture.withSource { converter.rgbaFrame($0, size: VideoSize(width: width, height: 9), presentationTime: 1.5) })
            #expect(frame.width == width && frame.height == 9 && frame.bytesPerRow == width * 4)
            #expect(frame.pixels.count == width * 4 * 9)
            #expect(frame.presentationTime == 1.5)
            #expect(frame.pixel(x: width - 1, y: 0).r > 200)
            #expect(frame.pixel(x: 0, y: 8).r > 200)
            #expect(frame.pixel(x: 0, y: 8).a == 255)
        }
    }
}
#endif

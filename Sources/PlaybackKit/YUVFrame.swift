import FoundationEssentials

// MARK: - Layout

/// How the chroma of a `YUVFrame` is stored. Both are 8-bit 4:2:0: one chroma sample for
/// each 2 x 2 block of pixels (odd sizes round up).
public enum YUVPixelLayout: Sendable, Equatable {
    /// Three planes: Y, then U (Cb), then V (Cr), each chroma plane at half width and height.
    case i420
    /// Two planes: Y, then one plane of interleaved U, V pairs at half height.
    case nv12

    /// How many planes a frame of this layout has.
    public var planeCount: Int { self == .i420 ? 3 : 2 }
}

/// The YUV matrix a picture was encoded with.
public enum YUVColorMatrix: Sendable, Equatable {
    /// ITU-R BT.601 (standard definition).
    case bt601
    /// ITU-R BT.709 (high definition).
    case bt709

    /// What players assume for video that does not say: BT.709 from 720 rows up, else BT.601.
    public static func assumed(forHeight height: Int) -> YUVColorMatrix { height >= 720 ? .bt709 : .bt601 }
}

/// One plane of a `YUVFrame`, borrowed like the frame it belongs to.
public struct YUVPlane {
    /// The first byte of the first row.
    public let baseAddress: UnsafePointer<UInt8>
    /// Bytes from the start of one row to the next (at least `rowBytes`).
    public let bytesPerRow: Int
    /// Bytes of picture in each row (the rest of a row is padding): the width for Y, half
    /// the width rounded up for U and V, twice that for NV12's interleaved plane.
    public let rowBytes: Int
    /// Rows: the height for Y, half the height rounded up for chroma.
    public let rows: Int

    /// A plane of `rows` rows of `rowBytes` bytes, `bytesPerRow` apart from `baseAddress` on.
    public init(baseAddress: UnsafePointer<UInt8>, bytesPerRow: Int, rowBytes: Int, rows: Int) {
        self.baseAddress = baseAddress
        self.bytesPerRow = bytesPerRow
        self.rowBytes = rowBytes
        self.rows = rows
    }

    /// The picture bytes of row `index` (0..<rows).
    public func row(_ index: Int) -> UnsafeBufferPointer<UInt8> {
        precondition((0..<rows).contains(index), "row \(index) of a plane of \(rows) rows")
        return UnsafeBufferPointer(start: baseAddress + index * bytesPerRow, count: rowBytes)
    }

    /// The byte at `column` of row `row`.
    public subscript(column: Int, row: Int) -> UInt8 {
        precondition((0..<rowBytes).contains(column) && (0..<rows).contains(row), "(\(column), \(row)) outside the plane")
        return baseAddress[row * bytesPerRow + column]
    }
}

// MARK: - The frame

/// Turns a `YUVFrame` into RGBA: the picture converter of whoever made the frame.
public protocol YUVFrameConverting: AnyObject, Sendable {
    /// `frame` converted (and scaled) to tightly packed RGBA at `size`; nil when it cannot be.
    func rgbaFrame(_ frame: YUVFrame, size: VideoSize) -> VideoFrame?
}

/// A presented picture as the decoder made it (`VideoOutput.yuvFrames`): 4:2:0 planes with
/// their strides at the picture's visible size, and its presentation time.
///
/// The planes of a frame handed to the handler are borrowed: they are valid only while the
/// handler runs, and must not be kept or written. `copy()` makes a frame that owns its planes
/// (kept as long as the copy lives); `rgbaFrame(size:)` converts to RGBA.
public struct YUVFrame {
    /// How the chroma is stored.
    public let layout: YUVPixelLayout
    /// Width in pixels (of the visible picture, the Y plane's `rowBytes`).
    public let width: Int
    /// Height in pixels (the Y plane's `rows`).
    public let height: Int
    /// The size to show the picture at: `size` with the pixel aspect applied.
    public let displaySize: VideoSize
    /// Y, U, V (I420) or Y, UV (NV12).
    public let planes: [YUVPlane]
    /// Media time of the picture, on the same timeline as `currentPlaybackTime`.
    public let presentationTime: TimeInterval
    /// The YUV matrix.
    public let matrix: YUVColorMatrix
    /// True for full-range (JPEG) values, false for limited (studio) range.
    public let fullRange: Bool

    /// Keeps a copy's planes alive; nil for borrowed planes.
    private let storage: YUVPlaneStorage?
    /// Converts to RGBA; nil when the maker of the frame has no converter.
    private let converter: (any YUVFrameConverting)?

    /// A frame over borrowed planes (`layout.planeCount` of them, laid out as `YUVPlane`
    /// describes for `width` x `height`). `converter` serves `rgbaFrame(size:)`.
    public init(layout: YUVPixelLayout, width: Int, height: Int, displaySize: VideoSize? = nil,
                planes: [YUVPlane], presentationTime: TimeInterval, matrix: YUVColorMatrix? = nil,
                fullRange: Bool = false, converter: (any YUVFrameConverting)?) {
        self.init(layout: layout, width: width, height: height, displaySize: displaySize, planes: planes,
                  presentationTime: presentationTime, matrix: matrix, fullRange: fullRange,
                  converter: converter, storage: nil)
    }

    private init(layout: YUVPixelLayout, width: Int, height: Int, displaySize: VideoSize?, planes: [YUVPlane],
                 presentationTime: TimeInterval, matrix: YUVColorMatrix?, fullRange: Bool,
                 converter: (any YUVFrameConverting)?, storage: YUVPlaneStorage?) {
        precondition(planes.count == layout.planeCount, "\(layout) takes \(layout.planeCount) planes, not \(planes.count)")
        self.layout = layout
        self.width = width
        self.height = height
        let size = VideoSize(width: width, height: height)
        self.displaySize = displaySize.flatMap { $0.isEmpty ? nil : $0 } ?? size
        self.planes = planes
        self.presentationTime = presentationTime
        self.matrix = matrix ?? .assumed(forHeight: height)
        self.fullRange = fullRange
        self.converter = converter
        self.storage = storage
    }

    /// The size of the picture in pixels.
    public var size: VideoSize { VideoSize(width: width, height: height) }

    /// True when the frame owns its planes (a `copy()`), false when they are borrowed.
    public var ownsPlanes: Bool { storage != nil }

    /// The plane geometry a `width` x `height` picture of `layout` has: (rowBytes, rows) per plane.
    public static func planeGeometry(_ layout: YUVPixelLayout, width: Int, height: Int) -> [(rowBytes: Int, rows: Int)] {
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        switch layout {
        case .i420: return [(width, height), (chromaWidth, chromaHeight), (chromaWidth, chromaHeight)]
        case .nv12: return [(width, height), (chromaWidth * 2, chromaHeight)]
        }
    }

    /// A frame with the same picture in planes of its own, valid as long as it is kept (rows
    /// 64-byte aligned, with a spare row, as the converter reads them).
    public func copy() -> YUVFrame {
        let storage = YUVPlaneStorage(copying: planes)
        return YUVFrame(layout: layout, width: width, height: height, displaySize: displaySize, planes: storage.planes,
                        presentationTime: presentationTime, matrix: matrix, fullRange: fullRange,
                        converter: converter, storage: storage)
    }

    /// The picture converted to tightly packed RGBA at `size` (nil: `displaySize`), by the one
    /// picture converter of the engine that made the frame; nil when it cannot be converted.
    public func rgbaFrame(size: VideoSize? = nil) -> VideoFrame? {
        let target = size ?? displaySize
        guard !target.isEmpty, let converter else { return nil }
        return converter.rgbaFrame(self, size: target)
    }
}

/// The planes of a copied `YUVFrame`: one allocation, freed with the last copy that holds it.
private final class YUVPlaneStorage: @unchecked Sendable {
    // @unchecked: the bytes are written once, in init, and only read after that.
    private let bytes: UnsafeMutableRawPointer
    let planes: [YUVPlane]

    init(copying source: [YUVPlane]) {
        let strides = source.map { ($0.rowBytes + 63) / 64 * 64 }
        let offsets = zip(strides, source).reduce(into: [0]) { $0.append($0.last! + $1.0 * $1.1.rows) }
        // A spare row after the last plane: vector code reads a little past the last line.
        let count = offsets.last! + (strides.first ?? 0) + 64
        bytes = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 64)
        bytes.initializeMemory(as: UInt8.self, repeating: 0, count: count)
        var planes: [YUVPlane] = []
        for (index, plane) in source.enumerated() {
            let base = bytes + offsets[index]
            for row in 0..<plane.rows {
                (base + row * strides[index]).copyMemory(from: plane.baseAddress + row * plane.bytesPerRow, byteCount: plane.rowBytes)
            }
            planes.append(YUVPlane(baseAddress: UnsafePointer(base.assumingMemoryBound(to: UInt8.self)),
                                   bytesPerRow: strides[index], rowBytes: plane.rowBytes, rows: plane.rows))
        }
        self.planes = planes
    }

    deinit { bytes.deallocate() }
}

#if Swscale
internal import CSwscale
import FoundationEssentials
import PlaybackKit

// MARK: - Reading a YUVFrame

extension SourcePicture {
    /// The picture of `frame` as the converter reads it (its planes are borrowed as the
    /// frame's are).
    package init(_ frame: YUVFrame) {
        self.init(format: frame.layout == .nv12 ? .nv12 : .i420, width: frame.width, height: frame.height,
                  planes: frame.planes.map(\.baseAddress), strides: frame.planes.map(\.bytesPerRow),
                  matrix: frame.matrix == .bt709 ? .bt709 : .bt601, fullRange: frame.fullRange)
    }
}

/// `YUVFrame.rgbaFrame(size:)` for the frames an adapter makes: the one picture converter,
/// behind a lock (a copied frame may be converted on any thread).
package final class YUVFrameConverter: YUVFrameConverting, @unchecked Sendable {
    // @unchecked: `converter` is used only with `lock` held.
    private let lock = MutexLock()
    private let converter = PictureConverter()

    /// A converter with no buffer yet.
    package init() {}

    /// `frame` as tightly packed RGBA at `size`.
    package func rgbaFrame(_ frame: YUVFrame, size: VideoSize) -> VideoFrame? {
        lock.lock()
        defer { lock.unlock() }
        return converter.rgbaFrame(SourcePicture(frame), size: size, presentationTime: frame.presentationTime)
    }

    /// Any picture the converter reads (a thumbnail of an engine's own buffer) as tightly
    /// packed RGBA at `size`, stamped `presentationTime`.
    package func rgbaFrame(_ picture: SourcePicture, size: VideoSize, presentationTime: TimeInterval) -> VideoFrame? {
        lock.lock()
        defer { lock.unlock() }
        return converter.rgbaFrame(picture, size: size, presentationTime: presentationTime)
    }
}

// MARK: - Making I420 where the engine has none

/// Converts pictures that are not 4:2:0 YUV (a 4:4:4 or 10-bit decoder output, mpv's RGB
/// renderer) to I420 planes in a buffer of its own, reused from picture to picture: rows
/// 64-byte aligned and a spare row, as libswscale writes them. Not thread-safe.
package final class I420Converter {
    private let converter = PictureConverter()
    private var buffer: UnsafeMutableRawPointer?
    private var capacity = 0

    /// A converter with no buffer yet.
    package init() {}

    deinit { buffer?.deallocate() }

    /// The libavutil pixel format value of the format libavutil calls `name` ("rgb0"), for
    /// `SourcePixelFormat.libav`; -1 (none) when unknown.
    package static func pixelFormat(named name: String) -> Int32 { av_get_pix_fmt(name).rawValue }

    /// `source` converted to I420 at `size`: the three planes, valid until the next call;
    /// nil when libswscale cannot convert it. For an RGB source, `matrix` and `fullRange` of
    /// `source` say what YUV to make.
    package func convert(_ source: SourcePicture, size: VideoSize) -> [YUVPlane]? {
        guard !size.isEmpty else { return nil }
        let geometry = YUVFrame.planeGeometry(.i420, width: size.width, height: size.height)
        let strides = geometry.map { ($0.rowBytes + PackedLayout.alignment - 1) / PackedLayout.alignment * PackedLayout.alignment }
        var offsets = [0]
        for (stride, plane) in zip(strides, geometry) { offsets.append(offsets.last! + stride * plane.rows) }
        let needed = offsets.last! + strides[0] + PackedLayout.alignment
        if needed > capacity {
            buffer?.deallocate()
            buffer = UnsafeMutableRawPointer.allocate(byteCount: needed, alignment: PackedLayout.alignment)
            buffer?.initializeMemory(as: UInt8.self, repeating: 0, count: needed)
            capacity = needed
        }
        guard let buffer else { return nil }
        let bases = (0..<3).map { (buffer + offsets[$0]).assumingMemoryBound(to: UInt8.self) }
        guard converter.scale(source, crop: nil, to: size, format: AV_PIX_FMT_YUV420P,
                              planes: bases + [nil], strides: strides.map { Int32($0) } + [0]) else { return nil }
        return (0..<3).map {
            YUVPlane(baseAddress: UnsafePointer(bases[$0]), bytesPerRow: strides[$0],
                     rowBytes: geometry[$0].rowBytes, rows: geometry[$0].rows)
        }
    }
}
#endif

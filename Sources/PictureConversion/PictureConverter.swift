#if Swscale
internal import CSwscale
import FoundationEssentials
import PlaybackKit

// MARK: - What is converted

/// The layout of a source picture's pixels.
package enum SourcePixelFormat: Sendable, Equatable {
    /// 8-bit 4:2:0 in three planes Y, U, V.
    case i420
    /// 8-bit 4:2:0 in a Y plane and one plane of interleaved U, V.
    case nv12
    /// Any format libavutil names, by its `AVPixelFormat` value (what an `AVFrame` carries).
    case libav(Int32)
}

/// The YUV matrix a source picture was made with.
package enum ColorMatrix: Sendable, Equatable {
    /// ITU-R BT.601 (standard definition).
    case bt601
    /// ITU-R BT.709 (high definition).
    case bt709
}

/// A picture in memory that the converter reads: up to four planes with their strides, in
/// storage pixels. The planes are borrowed for the conversion only.
package struct SourcePicture {
    /// How the pixels are laid out.
    package var format: SourcePixelFormat
    /// Storage size in pixels.
    package var width: Int
    /// Storage height in pixels.
    package var height: Int
    /// The first byte of each plane (nil past the last plane).
    package var planes: [UnsafePointer<UInt8>?]
    /// Bytes from one row of each plane to the next.
    package var strides: [Int]
    /// The YUV matrix; nil leaves libswscale's default (BT.601).
    package var matrix: ColorMatrix?
    /// True for full-range (JPEG) YUV, false for limited (studio) range.
    package var fullRange: Bool

    /// A picture of `width` x `height` in `format` with the given planes and strides.
    package init(format: SourcePixelFormat, width: Int, height: Int, planes: [UnsafePointer<UInt8>?],
                 strides: [Int], matrix: ColorMatrix? = nil, fullRange: Bool = false) {
        self.format = format
        self.width = width
        self.height = height
        self.planes = planes
        self.strides = strides
        self.matrix = matrix
        self.fullRange = fullRange
    }
}

extension SourcePicture {
    /// A packed RGBA picture (bytes R, G, B, A, what `VideoFrame` holds), rows `bytesPerRow`
    /// apart, borrowed as any source picture is.
    package static func rgba(_ base: UnsafePointer<UInt8>, width: Int, height: Int, bytesPerRow: Int) -> SourcePicture {
        SourcePicture(format: .libav(AV_PIX_FMT_RGBA.rawValue), width: width, height: height, planes: [base],
                      strides: [bytesPerRow])
    }
}

/// The packed 32-bit layouts the converter writes.
package enum PackedFormat: Sendable, Equatable {
    /// Bytes R, G, B, A (what `VideoFrame` holds).
    case rgba
    /// Bytes B, G, R, A (what a 24-bit X11 visual takes).
    case bgra
}

// MARK: - Destination layout

/// How a packed picture the converter writes is laid out in memory.
///
/// libswscale's vector code stores whole vectors (up to 64 bytes) and finishes a row with a
/// full vector even when the row ends inside it, so a destination must have room past the
/// last pixel of every row. Rows are therefore 64-byte aligned (a row ends at or before the
/// next vector boundary, so a store that runs past the pixels stays inside the row's own
/// padding), the first byte is 64-byte aligned, and the buffer ends with one spare row.
/// The same rule is what libavutil uses for the pictures it allocates itself.
package struct PackedLayout: Equatable, Sendable {
    /// The vector size the rows and the buffer are aligned to.
    package static let alignment = 64
    /// Picture width in pixels.
    package let width: Int
    /// Picture height in pixels.
    package let height: Int
    /// Bytes from one row to the next: the row's 4-byte pixels, rounded up to `alignment`.
    package let bytesPerRow: Int
    /// Bytes the buffer holds: every row, and a spare row after the last.
    package let byteCount: Int

    /// The layout for a `width` x `height` picture of 4-byte pixels.
    package init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        bytesPerRow = (self.width * 4 + Self.alignment - 1) / Self.alignment * Self.alignment
        byteCount = bytesPerRow * (self.height + 1)
    }

    /// A layout of a caller's own choosing, for a buffer the caller made (its rows and size
    /// must then follow the rule above; the tests use it to show what breaks when not).
    package init(width: Int, height: Int, bytesPerRow: Int, byteCount: Int) {
        self.width = width
        self.height = height
        self.bytesPerRow = bytesPerRow
        self.byteCount = byteCount
    }
}

/// A converted picture in the converter's own buffer, valid until its next conversion.
package struct ConvertedPicture {
    /// The first pixel of the first row.
    package let base: UnsafeRawPointer
    /// The buffer's layout.
    package let layout: PackedLayout
    /// The picture's pixels, row after row, `layout.bytesPerRow` apart.
    package var bytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base, count: layout.bytesPerRow * layout.height)
    }
}

// MARK: - The converter

/// The one picture converter every adapter that converts pictures uses: libswscale, from
/// any planar or packed source picture (a crop of it, optionally) to packed RGBA or BGRA at
/// any size, into a buffer of its own that follows `PackedLayout`, reused from picture to
/// picture. It owns one `SwsContext`, rebuilt only when the geometry or formats change.
///
/// Not thread-safe: one thread (or a caller's lock) at a time.
package final class PictureConverter {
    private var context: OpaquePointer?
    private var contextKey: ContextKey?
    private var buffer: UnsafeMutableRawPointer?
    private var bufferLayout = PackedLayout(width: 0, height: 0)

    /// What the current context was made for.
    private struct ContextKey: Equatable {
        var source: Int32
        var sourceWidth: Int
        var sourceHeight: Int
        var target: Int32
        var width: Int
        var height: Int
        var matrix: ColorMatrix?
        var fullRange: Bool
    }

    /// A converter with no context and no buffer yet.
    package init() {}

    deinit {
        sws_freeContext(context)
        buffer?.deallocate()
    }

    /// Converts `crop` (storage pixels; the whole picture when nil) of `source` to `format`
    /// at `size`. Returns the picture in the converter's buffer, or nil when libswscale
    /// cannot convert it (unknown format, empty size).
    package func convert(_ source: SourcePicture, crop: PixelRect? = nil, to size: VideoSize,
                         format: PackedFormat = .rgba) -> ConvertedPicture? {
        guard size.width > 0, size.height > 0 else { return nil }
        let wanted = PackedLayout(width: size.width, height: size.height)
        let destination = reserve(wanted)
        guard convert(source, crop: crop, format: format, into: destination, layout: wanted) else { return nil }
        return ConvertedPicture(base: UnsafeRawPointer(destination), layout: wanted)
    }

    /// Converts `crop` of `source` to `format` at the layout's size into `destination`, which
    /// must hold `layout.byteCount` bytes and be `PackedLayout.alignment`-aligned. Returns
    /// false when libswscale cannot convert the picture.
    package func convert(_ source: SourcePicture, crop: PixelRect? = nil, format: PackedFormat = .rgba,
                         into destination: UnsafeMutableRawPointer, layout: PackedLayout) -> Bool {
        let target = format == .rgba ? AV_PIX_FMT_RGBA : AV_PIX_FMT_BGRA
        return scale(source, crop: crop, to: VideoSize(width: layout.width, height: layout.height), format: target,
                     planes: [destination.assumingMemoryBound(to: UInt8.self), nil, nil, nil],
                     strides: [Int32(layout.bytesPerRow), 0, 0, 0])
    }

    /// Converts `crop` of `source` to the libavutil format `format` at `size`, into the given
    /// destination planes and strides (which must follow the rule of `PackedLayout`: rows
    /// and planes 64-byte aligned, a spare row after the last). Returns false when
    /// libswscale cannot convert the picture.
    func scale(_ source: SourcePicture, crop: PixelRect?, to size: VideoSize, format target: AVPixelFormat,
               planes targets: [UnsafeMutablePointer<UInt8>?], strides targetStrides: [Int32]) -> Bool {
        guard source.width > 0, source.height > 0, size.width > 0, size.height > 0 else { return false }
        let sourceFormat = Self.libavFormat(source.format)
        guard let descriptor = av_pix_fmt_desc_get(sourceFormat) else { return false }
        let region = Self.region(crop, of: source, descriptor: descriptor.pointee)
        guard region.width > 0, region.height > 0 else { return false }
        let key = ContextKey(source: sourceFormat.rawValue, sourceWidth: region.width, sourceHeight: region.height,
                             target: target.rawValue, width: size.width, height: size.height,
                             matrix: source.matrix, fullRange: source.fullRange)
        guard let context = makeContext(key) else { return false }

        var planes = [UnsafePointer<UInt8>?](repeating: nil, count: 4)
        var strides = [Int32](repeating: 0, count: 4)
        let isPlanar = descriptor.pointee.flags & pk_pix_fmt_flag_planar() != 0
        let chromaShiftX = Int(descriptor.pointee.log2_chroma_w), chromaShiftY = Int(descriptor.pointee.log2_chroma_h)
        let pixelBytes = isPlanar ? 1 : max(1, Int(av_get_padded_bits_per_pixel(descriptor)) / 8)
        for plane in 0..<min(4, source.planes.count, source.strides.count) {
            guard let base = source.planes[plane] else { continue }
            let isChroma = plane == 1 || plane == 2
            let x = isChroma ? region.x >> chromaShiftX : region.x
            let y = isChroma ? region.y >> chromaShiftY : region.y
            // An interleaved chroma plane (NV12) has two bytes per chroma sample.
            let sampleBytes = isPlanar ? Self.bytesPerSample(descriptor.pointee, plane: plane) : pixelBytes
            planes[plane] = base + y * source.strides[plane] + x * sampleBytes
            strides[plane] = Int32(source.strides[plane])
        }
        var outputs = targets
        var outputStrides = targetStrides
        let rows = sws_scale(context, planes, strides, 0, Int32(region.height), &outputs, &outputStrides)
        return rows > 0
    }

    /// Converts like `convert` and copies the result into a `VideoFrame` of tightly packed
    /// RGBA rows (`bytesPerRow == width * 4`), stamped `presentationTime`.
    package func rgbaFrame(_ source: SourcePicture, crop: PixelRect? = nil, size: VideoSize,
                           presentationTime: TimeInterval) -> VideoFrame? {
        guard let converted = convert(source, crop: crop, to: size, format: .rgba) else { return nil }
        let rowBytes = size.width * 4
        let pixels = [UInt8](unsafeUninitializedCapacity: rowBytes * size.height) { out, count in
            let from = converted.base
            for row in 0..<size.height {
                (out.baseAddress! + row * rowBytes).initialize(
                    from: (from + row * converted.layout.bytesPerRow).assumingMemoryBound(to: UInt8.self), count: rowBytes)
            }
            count = rowBytes * size.height
        }
        return VideoFrame(width: size.width, height: size.height, bytesPerRow: rowBytes, pixels: pixels,
                          presentationTime: presentationTime)
    }

    // MARK: - Internals

    /// The context for `key`, made again only when the key changed.
    private func makeContext(_ key: ContextKey) -> OpaquePointer? {
        if let context, contextKey == key { return context }
        sws_freeContext(context)
        contextKey = nil
        // Same size: no scaling, only the conversion (point sampling keeps the pixels exact).
        let flags = key.sourceWidth == key.width && key.sourceHeight == key.height ? SWS_POINT : SWS_BILINEAR
        context = sws_getContext(Int32(key.sourceWidth), Int32(key.sourceHeight), AVPixelFormat(key.source),
                                 Int32(key.width), Int32(key.height), AVPixelFormat(key.target),
                                 flags, nil, nil, nil)
        guard let context else { return nil }
        if let matrix = key.matrix {
            // The matrix and range belong to the YUV side: the source, or (RGB to YUV) the target.
            let coefficients = sws_getCoefficients(matrix == .bt709 ? SWS_CS_ITU709 : SWS_CS_ITU601)
            // RGB is full range; YUV made from YUV is limited range.
            let sourceIsRGB = pk_pix_fmt_is_rgb(AVPixelFormat(key.source)) != 0
            let targetIsRGB = pk_pix_fmt_is_rgb(AVPixelFormat(key.target)) != 0
            let sourceRange: Int32 = sourceIsRGB || key.fullRange ? 1 : 0
            let targetRange: Int32 = targetIsRGB || (sourceIsRGB && key.fullRange) ? 1 : 0
            _ = sws_setColorspaceDetails(context, coefficients, sourceRange, coefficients, targetRange, 0, 1 << 16, 1 << 16)
        }
        contextKey = key
        return context
    }

    /// Makes the buffer fit `wanted`, keeping it when it is large enough.
    private func reserve(_ wanted: PackedLayout) -> UnsafeMutableRawPointer {
        if let buffer, bufferLayout.byteCount >= wanted.byteCount { return buffer }
        bufferLayout = wanted
        buffer?.deallocate()
        let fresh = UnsafeMutableRawPointer.allocate(byteCount: max(wanted.byteCount, PackedLayout.alignment),
                                                     alignment: PackedLayout.alignment)
        buffer = fresh
        return fresh
    }

    /// The part of `source` to read: `crop` clamped to the picture, its origin moved to a
    /// whole chroma sample (and its size grown by as much, so the right and bottom edges stay).
    private static func region(_ crop: PixelRect?, of source: SourcePicture, descriptor: AVPixFmtDescriptor) -> PixelRect {
        let full = PixelRect(x: 0, y: 0, width: source.width, height: source.height)
        guard let crop else { return full }
        let x0 = min(max(0, crop.x), source.width), y0 = min(max(0, crop.y), source.height)
        let x1 = min(source.width, max(x0, crop.x + crop.width)), y1 = min(source.height, max(y0, crop.y + crop.height))
        let alignedX = x0 & ~((1 << Int(descriptor.log2_chroma_w)) - 1)
        let alignedY = y0 & ~((1 << Int(descriptor.log2_chroma_h)) - 1)
        return PixelRect(x: alignedX, y: alignedY, width: x1 - alignedX, height: y1 - alignedY)
    }

    /// Bytes one sample of `plane` takes in a planar format (2 for NV12's interleaved plane).
    private static func bytesPerSample(_ descriptor: AVPixFmtDescriptor, plane: Int) -> Int {
        var step = 0
        withUnsafeBytes(of: descriptor.comp) { raw in
            for component in raw.bindMemory(to: AVComponentDescriptor.self).prefix(Int(descriptor.nb_components))
            where Int(component.plane) == plane {
                step = max(step, Int(component.step))
            }
        }
        return max(1, step)
    }

    /// The libavutil pixel format for `format`.
    static func libavFormat(_ format: SourcePixelFormat) -> AVPixelFormat {
        switch format {
        case .i420: AV_PIX_FMT_YUV420P
        case .nv12: AV_PIX_FMT_NV12
        case .libav(let value): AVPixelFormat(value)
        }
    }
}
#endif

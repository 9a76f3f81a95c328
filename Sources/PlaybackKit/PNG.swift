import CLibPNG
import FoundationEssentials

// MARK: - PNG through libpng

/// How hard `VideoFrame.pngData(compression:)` compresses.
public enum PNGCompression: Sendable, Equatable {
    /// No row filters and zlib level 3: about five times faster than `.small` on a 1080p
    /// frame, for files about a third larger. The default (thumbnails are made while people wait).
    case fast
    /// libpng's adaptive row filters and zlib's default level: the smallest files.
    case small
}

extension VideoFrame {
    /// The frame as a PNG file encoded by libpng, fast (see `PNGCompression.fast`). An opaque
    /// frame (every alpha byte 255, as decoded video is) is written as RGB, else as RGBA.
    public func pngData() throws -> Data { try pngData(compression: .fast) }

    /// The frame as a PNG file encoded by libpng with the given compression; RGB when every
    /// alpha byte is 255, else RGBA, 8 bits a channel.
    public func pngData(compression: PNGCompression) throws -> Data {
        guard width > 0, height > 0, bytesPerRow >= width * 4, pixels.count >= bytesPerRow * height else {
            throw PlaybackError(code: .invalidArgument, message: "png: frame \(width)x\(height) stride \(bytesPerRow) with \(pixels.count) bytes is not a whole RGBA picture")
        }
        let opaque = isOpaque
        let rgb = opaque ? rgbRows() : nil
        var image = png_image()
        image.version = pk_png_image_version()
        image.width = png_uint_32(width)
        image.height = png_uint_32(height)
        image.format = opaque ? pk_png_format_rgb() : pk_png_format_rgba()
        image.flags = compression == .fast ? pk_png_image_flag_fast() : 0
        let channels = opaque ? 3 : 4
        let stride = opaque ? width * 3 : bytesPerRow
        // One compression pass into a buffer sized for incompressible data (raw rows with their
        // filter bytes, plus deflate and chunk overhead); libpng reports the size it needs if
        // that is ever too small, and then a second pass writes it.
        let rawBytes = height * (width * channels + 1)
        var size = png_alloc_size_t(rawBytes + rawBytes / 64 + 4096)
        var output = Data(count: Int(size))
        var written: Int32 = 0
        for _ in 0..<2 {
            written = output.withUnsafeMutableBytes { out in
                (rgb ?? pixels).withUnsafeBytes { raw in
                    png_image_write_to_memory(&image, out.baseAddress, &size, 0, raw.baseAddress, png_int_32(stride), nil)
                }
            }
            if written != 0 || Int(size) <= output.count { break }
            output = Data(count: Int(size))
        }
        png_image_free(&image)
        guard written != 0 else {
            throw PlaybackError(code: .engine, message: "png: libpng failed to encode: \(Self.message(of: &image))")
        }
        output.count = Int(size)
        return output
    }

    // MARK: - RGB rows for opaque frames

    /// True when every pixel's alpha byte is 255.
    private var isOpaque: Bool {
        pixels.withUnsafeBufferPointer { raw in
            for y in 0..<height {
                var row = y * bytesPerRow + 3
                let end = row + width * 4
                while row < end {
                    if raw[row] != 255 { return false }
                    row += 4
                }
            }
            return true
        }
    }

    /// The picture as packed RGB rows (alpha dropped, no row padding).
    private func rgbRows() -> [UInt8] {
        let rowBytes = width * 3
        return [UInt8](unsafeUninitializedCapacity: rowBytes * height) { out, count in
            pixels.withUnsafeBufferPointer { raw in
                for y in 0..<height {
                    var from = y * bytesPerRow
                    var to = y * rowBytes
                    for _ in 0..<width {
                        out[to] = raw[from]
                        out[to + 1] = raw[from + 1]
                        out[to + 2] = raw[from + 2]
                        from += 4
                        to += 3
                    }
                }
            }
            count = rowBytes * height
        }
    }

    /// Decodes a PNG file into an RGBA frame (presentation time 0), through libpng.
    public init(pngData data: Data) throws {
        var image = png_image()
        image.version = pk_png_image_version()
        let begun = data.withUnsafeBytes { raw in
            png_image_begin_read_from_memory(&image, raw.baseAddress, raw.count)
        }
        guard begun != 0 else {
            throw PlaybackError(code: .unsupportedFormat, message: "png: not a PNG file: \(Self.message(of: &image))")
        }
        image.format = pk_png_format_rgba()
        let width = Int(image.width), height = Int(image.height)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        let finished = pixels.withUnsafeMutableBytes { out in
            png_image_finish_read(&image, nil, out.baseAddress, png_int_32(width * 4), nil)
        }
        png_image_free(&image)
        guard finished != 0 else {
            throw PlaybackError(code: .unsupportedFormat, message: "png: decoding failed: \(Self.message(of: &image))")
        }
        self.init(width: width, height: height, bytesPerRow: width * 4, pixels: pixels, presentationTime: 0)
    }

    private static func message(of image: inout png_image) -> String {
        withUnsafeBytes(of: &image.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}

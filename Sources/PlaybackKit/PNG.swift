import CLibPNG
import Foundation

// MARK: - PNG through libpng

extension VideoFrame {
    /// The frame as a PNG file (RGBA, 8 bits a channel), encoded by libpng.
    public func pngData() throws -> Data {
        guard width > 0, height > 0, bytesPerRow >= width * 4, pixels.count >= bytesPerRow * height else {
            throw PlaybackError(code: .invalidArgument, message: "png: frame \(width)x\(height) stride \(bytesPerRow) with \(pixels.count) bytes is not a whole RGBA picture")
        }
        var image = png_image()
        image.version = pk_png_image_version()
        image.width = png_uint_32(width)
        image.height = png_uint_32(height)
        image.format = pk_png_format_rgba()
        // One compression pass into a buffer sized for incompressible data (raw rows with their
        // filter bytes, plus deflate and chunk overhead); libpng reports the size it needs if
        // that is ever too small, and then a second pass writes it.
        let rawBytes = height * (width * 4 + 1)
        var size = png_alloc_size_t(rawBytes + rawBytes / 64 + 4096)
        var output = Data(count: Int(size))
        var written: Int32 = 0
        for _ in 0..<2 {
            written = output.withUnsafeMutableBytes { out in
                pixels.withUnsafeBytes { raw in
                    png_image_write_to_memory(&image, out.baseAddress, &size, 0, raw.baseAddress, png_int_32(bytesPerRow), nil)
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

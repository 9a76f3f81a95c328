#if Libass
internal import CLibass
import FoundationEssentials
import Glibc
import PlaybackKit

// MARK: - libass

/// libass's library (fonts) and renderer (frame size, fontconfig's fonts), which draw text
/// subtitles onto pictures. Owns both; every `SubtitleRendering` made from it keeps it alive,
/// as libass frees tracks with their library. Not thread-safe: its owner's lock guards every
/// use (the FFmpeg engine's subtitle book, `SubtitleOverlay`).
package final class SubtitleRenderer {
    fileprivate let library: OpaquePointer
    private let renderer: OpaquePointer
    private var frameSize = VideoSize.zero

    /// Sets libass up with fontconfig's default fonts (DejaVu on Debian) and the fonts the
    /// media carries (Matroska attachments); nil when libass cannot start.
    package init?(fonts: [EmbeddedFont]) {
        guard let library = ass_library_init() else { return nil }
        ass_set_message_cb(library, { level, format, arguments, _ in
            guard level <= 2, PlaybackLog.enabled(.debug), let format, let arguments else { return }
            var text = [CChar](repeating: 0, count: 512)
            _ = vsnprintf(&text, text.count, format, arguments)
            let message = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            PlaybackLog.log(.debug, "libass", message)
        }, nil)
        for font in fonts {
            font.data.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { data in
                    ass_add_font(library, font.name, data.baseAddress, Int32(data.count))
                }
            }
        }
        guard let renderer = ass_renderer_init(library) else {
            ass_library_done(library)
            return nil
        }
        self.library = library
        self.renderer = renderer
        ass_set_fonts(renderer, nil, "sans-serif", Int32(ASS_FONTPROVIDER_AUTODETECT.rawValue), nil, 1)
    }

    deinit {
        ass_renderer_done(renderer)
        ass_library_done(library)
    }

    /// The channel order of a picture to draw on.
    package enum PixelOrder: Sendable { case rgba, bgra }

    /// Draws what `rendering` shows at `milliseconds` onto the packed 4-byte picture at
    /// `pixels` (`width` x `height`, rows `bytesPerRow` apart), blending each libass bitmap in
    /// its colour.
    package func draw(_ rendering: SubtitleRendering, atMilliseconds milliseconds: Int64, onto pixels: UnsafeMutableRawPointer,
                      width: Int, height: Int, bytesPerRow: Int, order: PixelOrder) {
        draw(rendered(rendering, atMilliseconds: milliseconds, width: width, height: height),
             onto: pixels, width: width, height: height, bytesPerRow: bytesPerRow, order: order)
    }

    /// What libass shows of `rendering` at `milliseconds` on a `width` x `height` picture:
    /// the bitmaps, valid until the next render; nil when nothing shows.
    func rendered(_ rendering: SubtitleRendering, atMilliseconds milliseconds: Int64,
                              width: Int, height: Int) -> UnsafeMutablePointer<ASS_Image>? {
        guard width > 0, height > 0 else { return nil }
        let size = VideoSize(width: width, height: height)
        if size != frameSize {
            frameSize = size
            ass_set_frame_size(renderer, Int32(width), Int32(height))
            ass_set_storage_size(renderer, Int32(width), Int32(height))
        }
        var changed: Int32 = 0
        return ass_render_frame(renderer, rendering.track, milliseconds, &changed)
    }

    /// Blends every bitmap of `images` onto the packed 4-byte picture at `pixels`.
    func draw(_ images: UnsafeMutablePointer<ASS_Image>?, onto pixels: UnsafeMutableRawPointer,
                          width: Int, height: Int, bytesPerRow: Int, order: PixelOrder) {
        var image = images
        let (red, green, blue) = order == .rgba ? (0, 1, 2) : (2, 1, 0)
        while let current = image {
            Self.blend(current.pointee, onto: pixels.assumingMemoryBound(to: UInt8.self), width: width, height: height,
                       bytesPerRow: bytesPerRow, channels: (red, green, blue))
            image = current.pointee.next
        }
    }

    /// Blends one libass bitmap (an alpha mask in one colour, 0xRRGGBBTT with TT its
    /// transparency) onto the picture, clipped to it.
    private static func blend(_ image: ASS_Image, onto pixels: UnsafeMutablePointer<UInt8>, width: Int, height: Int,
                              bytesPerRow: Int, channels: (Int, Int, Int)) {
        let opacity = 255 - Int(image.color & 0xFF)
        guard opacity > 0, image.w > 0, image.h > 0, let bitmap = image.bitmap else { return }
        let colour = (Int(image.color >> 24), Int((image.color >> 16) & 0xFF), Int((image.color >> 8) & 0xFF))
        let left = Int(image.dst_x), top = Int(image.dst_y)
        let x0 = max(0, left), x1 = min(width, left + Int(image.w))
        let y0 = max(0, top), y1 = min(height, top + Int(image.h))
        guard x0 < x1, y0 < y1 else { return }
        for y in y0..<y1 {
            let mask = bitmap + (y - top) * Int(image.stride)
            let row = pixels + y * bytesPerRow
            for x in x0..<x1 {
                let k = Int(mask[x - left]) * opacity / 255
                guard k > 0 else { continue }
                let pixel = row + x * 4
                pixel[channels.0] = UInt8((colour.0 * k + Int(pixel[channels.0]) * (255 - k)) / 255)
                pixel[channels.1] = UInt8((colour.1 * k + Int(pixel[channels.1]) * (255 - k)) / 255)
                pixel[channels.2] = UInt8((colour.2 * k + Int(pixel[channels.2]) * (255 - k)) / 255)
            }
        }
    }
}

/// A font file the media carries, for libass.
package struct EmbeddedFont: Sendable {
    /// Its file name.
    package var name: String
    /// The font file's bytes.
    package var data: [UInt8]

    /// A font named `name` (its file name) with the font file's bytes.
    package init(name: String, data: [UInt8]) {
        self.name = name
        self.data = data
    }
}

/// One subtitle source as libass draws it: an `ASS_Track` with the source's header and the
/// events fed so far. Keeps its renderer (and so the library) alive. Guarded like the renderer.
package final class SubtitleRendering {
    fileprivate let track: UnsafeMutablePointer<ASS_Track>
    private let owner: SubtitleRenderer
    private var nextReadOrder = 0
    /// How many of the source's cues were fed.
    package var fed = 0
    /// How long a cue without an end is drawn, milliseconds.
    package static let openEndedMilliseconds: Int64 = 5000

    /// A track with the script header `header` (its styles and play resolution); nil when
    /// libass cannot make one.
    package init?(renderer: SubtitleRenderer, header: String) {
        guard let track = ass_new_track(renderer.library) else { return nil }
        self.track = track
        owner = renderer
        var bytes = Array(header.utf8).map { CChar(bitPattern: $0) }
        bytes.withUnsafeMutableBufferPointer { ass_process_codec_private(track, $0.baseAddress, Int32($0.count)) }
    }

    deinit { ass_free_track(track) }

    /// Adds an event ("Layer,Style,Name,MarginL,MarginR,MarginV,Effect,Text") shown from
    /// `start` to `end` (media seconds, without the subtitle delay).
    package func add(_ event: String, start: Double, end: Double?) {
        let startMilliseconds = Int64((start * 1000).rounded())
        let duration = end.map { Int64((($0 - start) * 1000).rounded()) } ?? Self.openEndedMilliseconds
        guard duration > 0 else { return }
        var bytes = Array("\(nextReadOrder),\(event)".utf8).map { CChar(bitPattern: $0) }
        nextReadOrder += 1
        bytes.withUnsafeMutableBufferPointer {
            ass_process_chunk(track, $0.baseAddress, Int32($0.count), startMilliseconds, duration)
        }
    }
}
#endif

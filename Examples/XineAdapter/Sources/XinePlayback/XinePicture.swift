import CXine
import FoundationEssentials
import PlaybackKit

// MARK: - A picture xine displayed

/// A picture of xine's raw video output, copied out of xine's planes (YV12 or YUY2, with the
/// raw output's pitches), with the size it is shown at and its times.
struct XinePicture: Sendable {
    /// XINE_VORAW_YV12 or XINE_VORAW_YUY2.
    let format: Int32
    /// The decoded picture's visible size (xine's planes are larger: padded by the decoder).
    let visible: VideoSize
    /// The display size (the pixel aspect applied).
    private(set) var natural: VideoSize
    /// The planes, one after another: Y, U, V for YV12, or the one interleaved plane of YUY2.
    let bytes: [UInt8]
    /// Bytes between rows of the first plane, and of the chroma planes.
    let pitches: (Int, Int)
    /// xine's clock when it displayed the picture (xine_get_current_vpts, 1/90000 s): tells
    /// two displays apart.
    let clock: Int64
    /// The picture's timestamp (pts, 1/90000 s, the stream's own), as the timestamp plugin
    /// noted it; nil when it did not see the picture.
    let timestamp: Int64?

    /// Copies the visible rows of a picture the raw output displays; nil when the buffer
    /// is not one of its two formats.
    init?(format: Int32, bufferWidth: Int, visible: VideoSize, natural: VideoSize,
          planes: (UnsafeRawPointer?, UnsafeRawPointer?, UnsafeRawPointer?), clock: Int64,
          timestamp: Int64?) {
        let height = visible.height, chromaRows = (height + 1) / 2
        var bytes: [UInt8]
        if format == pkx_raw_yv12(), let y = planes.0, let u = planes.1, let v = planes.2 {
            let luma = Int(pkx_yv12_luma_pitch(Int32(bufferWidth))), chroma = Int(pkx_yv12_chroma_pitch(Int32(bufferWidth)))
            bytes = [UInt8](repeating: 0, count: luma * height + 2 * chroma * chromaRows)
            bytes.withUnsafeMutableBytes { out in
                out.baseAddress!.copyMemory(from: y, byteCount: luma * height)
                (out.baseAddress! + luma * height).copyMemory(from: u, byteCount: chroma * chromaRows)
                (out.baseAddress! + luma * height + chroma * chromaRows).copyMemory(from: v, byteCount: chroma * chromaRows)
            }
            pitches = (luma, chroma)
        } else if format == pkx_raw_yuy2(), let plane = planes.0 {
            let pitch = Int(pkx_yuy2_pitch(Int32(bufferWidth)))
            bytes = [UInt8](repeating: 0, count: pitch * height)
            bytes.withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: plane, byteCount: pitch * height) }
            pitches = (pitch, 0)
        } else {
            return nil
        }
        self.format = format
        self.visible = visible
        self.natural = natural
        self.bytes = bytes
        self.clock = clock
        self.timestamp = timestamp
    }

    /// The picture as RGBA at its natural size, stamped `presentationTime`.
    func rgba(presentationTime: TimeInterval) -> VideoFrame {
        let rowBytes = natural.width * 4
        var pixels = [UInt8](repeating: 0, count: rowBytes * natural.height)
        bytes.withUnsafeBytes { source in
            let base = source.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let chroma = base + pitches.0 * visible.height
            pixels.withUnsafeMutableBytes { out in
                pkx_convert_to_rgba(format, base, chroma, chroma + pitches.1 * ((visible.height + 1) / 2),
                                    Int32(pitches.0), Int32(pitches.1), Int32(visible.width), Int32(visible.height),
                                    out.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(rowBytes),
                                    Int32(natural.width), Int32(natural.height))
            }
        }
        return VideoFrame(width: natural.width, height: natural.height, bytesPerRow: rowBytes, pixels: pixels,
                          presentationTime: presentationTime)
    }

    /// A digest of the pixels (FNV-1a over every seventh byte, and the size): equal for a
    /// picture displayed again, different for two frames of video.
    var digest: UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(bytes.count)
        bytes.withUnsafeBufferPointer { buffer in
            var index = 0
            while index < buffer.count {
                hash = (hash ^ UInt64(buffer[index])) &* 0x0000_0100_0000_01B3
                index += 7
            }
        }
        return hash
    }

    /// This picture at `other`'s natural size, when both have the same visible size.
    func resized(like other: XinePicture) -> XinePicture {
        guard other.visible == visible, other.natural != natural else { return self }
        var copy = self
        copy.natural = other.natural
        return copy
    }
}

// MARK: - Sizes

/// The visible size of the pictures the raw output displays. The output passes the size of
/// xine's planes, which the decoder pads (libavcodec's 320x240 arrives as 384x272) without
/// saying by how much; the stream's reported video size is the visible one. A size that does
/// not fit the planes is a size the decoder has not reached on screen yet: the last one that
/// fitted is kept.
struct SizeTracker {
    private var last: VideoSize?

    mutating func visible(buffer: VideoSize, reported: VideoSize) -> VideoSize {
        func fits(_ size: VideoSize) -> Bool {
            size.width > 0 && size.height > 0 && size.width <= buffer.width && size.height <= buffer.height
        }
        let size = fits(reported) ? reported : (last.flatMap { fits($0) ? $0 : nil } ?? buffer)
        last = size
        return size
    }

    /// The display size of a `visible` picture shown at display aspect `aspect` (width over
    /// height; 0 when unknown): the height kept, the width scaled.
    static func natural(visible: VideoSize, aspect: Double) -> VideoSize {
        guard aspect > 0, aspect.isFinite else { return visible }
        let width = Int((Double(visible.height) * aspect).rounded())
        return abs(width - visible.width) <= 1 ? visible : VideoSize(width: max(1, width), height: visible.height)
    }
}

// MARK: - The picture on screen

/// The picture on screen, for `thumbnailAtCurrentTime()` from any thread: kept as xine's
/// planes, converted to RGBA when first asked for.
final class XinePictureStore: Sendable {
    private struct Shown: Sendable {
        var picture: XinePicture
        var time: TimeInterval
        var converted: VideoFrame?
    }

    private let shown = Locked<Shown?>(nil)

    /// Makes an empty store.
    init() {}

    /// Puts `picture`, shown at media time `time`, on screen.
    func set(_ picture: XinePicture, time: TimeInterval) { shown.set(Shown(picture: picture, time: time)) }

    /// The natural size of the picture on screen (`.zero` before one).
    var latestNaturalSize: VideoSize { shown.withLock { $0?.picture.natural ?? .zero } }

    /// The picture on screen as RGBA, or nil before one.
    func thumbnail() -> VideoFrame? {
        guard let current = shown.get() else { return nil }
        if let converted = current.converted { return converted }
        let frame = current.picture.rgba(presentationTime: current.time)
        shown.withLock { value in
            if value?.picture.clock == current.picture.clock, value?.time == current.time { value?.converted = frame }
        }
        return frame
    }
}

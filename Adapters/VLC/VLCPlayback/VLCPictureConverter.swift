#if VLC
import CVLC
import FoundationEssentials
import PlaybackKit

/// Converts kept YUV pictures to RGBA at their display size through libswscale (the library
/// libVLC's own converter uses). Owns one `SwsContext`, made again when the picture's shape
/// changes and freed in deinit. Used with its picture buffer's lock held.
final class VLCPictureConverter {
    private var context: OpaquePointer?

    deinit { sws_freeContext(context) }

    /// `planes` (each `pitches` bytes a row) of a `size` picture in `format`, as an RGBA frame
    /// of `display` size; nil if libswscale cannot convert it.
    ///
    /// libVLC's format callback does not say which YUV matrix the stream uses: BT.709 is
    /// assumed from 720 rows up, BT.601 below (what players assume for unmarked video); the
    /// range is full for J420, limited otherwise.
    func rgbaFrame(format: VLCPictureFormat, planes: [UnsafeRawPointer], pitches: [Int], size: VideoSize,
                   display: VideoSize, presentationTime: TimeInterval) -> VideoFrame? {
        let source: AVPixelFormat
        var sourcePlanes = planes.map { Optional(UnsafePointer($0.assumingMemoryBound(to: UInt8.self))) }
        var sourcePitches = pitches.map { Int32($0) }
        switch format {
        case .i420, .j420: source = AV_PIX_FMT_YUV420P
        case .yv12:
            source = AV_PIX_FMT_YUV420P
            sourcePlanes.swapAt(1, 2)
            sourcePitches.swapAt(1, 2)
        case .nv12: source = AV_PIX_FMT_NV12
        case .rgba: return nil
        }
        // Same size: no scaling, only the conversion (point sampling keeps the pixels exact).
        let flags = size == display ? SWS_POINT : SWS_BILINEAR
        context = sws_getCachedContext(context, Int32(size.width), Int32(size.height), source,
                                       Int32(display.width), Int32(display.height), AV_PIX_FMT_RGBA,
                                       flags, nil, nil, nil)
        guard let context else { return nil }
        let matrix = sws_getCoefficients(size.height >= 720 ? SWS_CS_ITU709 : SWS_CS_ITU601)
        _ = sws_setColorspaceDetails(context, matrix, format == .j420 ? 1 : 0, matrix, 1, 0, 1 << 16, 1 << 16)
        let rowBytes = display.width * 4
        var pixels = [UInt8](repeating: 0, count: rowBytes * display.height)
        let rows = pixels.withUnsafeMutableBytes { out -> Int32 in
            var targets: [UnsafeMutablePointer<UInt8>?] = [out.baseAddress?.assumingMemoryBound(to: UInt8.self), nil, nil, nil]
            var targetPitches: [Int32] = [Int32(rowBytes), 0, 0, 0]
            while sourcePlanes.count < 4 { sourcePlanes.append(nil) }
            while sourcePitches.count < 4 { sourcePitches.append(0) }
            return sws_scale(context, sourcePlanes, sourcePitches, 0, Int32(size.height), &targets, &targetPitches)
        }
        guard rows > 0 else { return nil }
        return VideoFrame(width: display.width, height: display.height, bytesPerRow: rowBytes,
                          pixels: pixels, presentationTime: presentationTime)
    }
}
#endif

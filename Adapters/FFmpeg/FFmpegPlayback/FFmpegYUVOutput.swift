#if FFmpeg
import CFFmpeg
import FoundationEssentials
import PictureConversion
import PlaybackKit

/// The `.yuvFrames` output of the engine: the decoded `AVFrame` itself when the decoder
/// makes 8-bit 4:2:0 (I420, its full-range twin, NV12), its planes borrowed for the
/// handler's call; any other format converted to I420 once, into a reused buffer.
/// Presenter thread only.
final class FFmpegYUVOutput {
    private let toI420 = I420Converter()
    /// Serves `YUVFrame.rgbaFrame(size:)` for the frames handed out.
    private let converter = YUVFrameConverter()

    /// Hands the picture `frame` holds to `sink`'s `.yuvFrames` handler.
    func present(_ frame: UnsafeMutablePointer<AVFrame>, displaySize: VideoSize, time: TimeInterval, sink: EngineSink) {
        let picture = SourcePicture(frame: frame)
        let width = picture.width, height = picture.height
        guard width > 0, height > 0 else { return }
        let matrix: YUVColorMatrix = picture.matrix == .bt709 ? .bt709 : .bt601
        let layout: YUVPixelLayout?
        switch AVPixelFormat(frame.pointee.format) {
        case AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P: layout = .i420
        case AV_PIX_FMT_NV12: layout = .nv12
        default: layout = nil
        }
        let planes: [YUVPlane]
        var fullRange = picture.fullRange
        if let layout, picture.strides.prefix(layout.planeCount).allSatisfy({ $0 > 0 }) {
            let geometry = YUVFrame.planeGeometry(layout, width: width, height: height)
            var borrowed: [YUVPlane] = []
            for (index, plane) in geometry.enumerated() {
                guard let base = picture.planes[index] else { return }
                borrowed.append(YUVPlane(baseAddress: base, bytesPerRow: picture.strides[index],
                                         rowBytes: plane.rowBytes, rows: plane.rows))
            }
            planes = borrowed
        } else {
            // Made in limited range.
            guard let converted = toI420.convert(picture, size: VideoSize(width: width, height: height)) else { return }
            planes = converted
            fullRange = false
        }
        let delivered: YUVPixelLayout = planes.count == 2 ? .nv12 : .i420
        sink.presentYUVFrame(YUVFrame(layout: delivered, width: width, height: height, displaySize: displaySize,
                                      planes: planes, presentationTime: time, matrix: matrix,
                                      fullRange: fullRange, converter: converter))
    }
}
#endif

#if MPV
import FoundationEssentials
import PictureConversion
import PlaybackKit

/// The `.yuvFrames` output of the mpv adapter. libmpv hands pictures out only through its
/// render API, whose software renderer draws RGB alone (`rgb0`); so each new frame is drawn
/// there at its stored size (mpv stretching it to that size, `keepaspect=no`, undoes the
/// pixel aspect) and converted once to I420 by the shared converter, into a reused buffer.
final class MPVYUVOutput: @unchecked Sendable {
    // @unchecked: the converters are used only by the render thread (`MPVSession.receive`);
    // `displaySize` is Locked.
    /// The size the pictures are to be shown at (set by the event thread).
    let displaySize = Locked(VideoSize.zero)
    private let toI420 = I420Converter()
    /// Serves `YUVFrame.rgbaFrame(size:)` for the frames handed out.
    private let converter = YUVFrameConverter()

    /// Converts the drawn `picture` and hands it to `sink`'s `.yuvFrames` handler.
    func present(_ picture: MPVRenderedPicture, time: TimeInterval, sink: EngineSink) {
        guard let base = picture.pixels.baseAddress else { return }
        let matrix = YUVColorMatrix.assumed(forHeight: picture.size.height)
        let source = SourcePicture(format: .libav(Self.rgb0), width: picture.size.width, height: picture.size.height,
                                   planes: [base.assumingMemoryBound(to: UInt8.self)], strides: [picture.bytesPerRow],
                                   matrix: matrix == .bt709 ? .bt709 : .bt601, fullRange: false)
        guard let planes = toI420.convert(source, size: picture.size) else { return }
        sink.presentYUVFrame(YUVFrame(layout: .i420, width: picture.size.width, height: picture.size.height,
                                      displaySize: displaySize.get(), planes: planes, presentationTime: time, matrix: matrix,
                                      fullRange: false, converter: converter))
    }

    /// libavutil's AV_PIX_FMT_RGB0 (bytes R, G, B, unused), what the renderer draws.
    private static let rgb0 = I420Converter.pixelFormat(named: "rgb0")
}
#endif

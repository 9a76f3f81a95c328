#if VLC
import FoundationEssentials
import PictureConversion
import PlaybackKit

/// The picture kept for `thumbnailAtCurrentTime()`: left in its libVLC output's buffer (a
/// slot libVLC does not write while it is kept), converted (YUV) or copied (RGBA) only when
/// it is asked for. Thread-safe.
final class VLCPictureStore: Sendable {
    /// A picture kept in its buffer, with the time and size it is shown at.
    private struct KeptPicture {
        let buffer: VLCPictureBuffer
        var display: VideoSize
        var presentationTime: TimeInterval
    }

    private let kept = Locked<KeptPicture?>(nil)

    /// Keeps the picture `buffer` holds for thumbnails (its kept slot), shown at `display`.
    func keep(_ buffer: VLCPictureBuffer, display: VideoSize, presentationTime: TimeInterval) {
        kept.set(KeptPicture(buffer: buffer, display: display, presentationTime: presentationTime))
    }

    /// True when a picture is kept.
    var hasPicture: Bool { kept.get() != nil }

    /// The kept picture as RGBA at its display size, or nil.
    func latest() -> VideoFrame? {
        guard let picture = kept.get() else { return nil }
        return picture.buffer.keptFrame(display: picture.display, presentationTime: picture.presentationTime)
    }

    /// Hands the kept YUV picture to `sink`'s `.yuvFrames` handler, its planes borrowed for
    /// the call (nothing when the picture kept is RGBA).
    func presentKept(to sink: EngineSink) {
        guard let picture = kept.get() else { return }
        picture.buffer.presentKept(display: picture.display, presentationTime: picture.presentationTime, to: sink)
    }

    /// Calls `body` with the kept picture (its slot's planes, borrowed for the call) and the
    /// size it is shown at; nothing when none is kept.
    func withKeptPicture(_ body: (SourcePicture, VideoSize) -> Void) {
        guard let picture = kept.get() else { return }
        picture.buffer.withKept { body($0, picture.display) }
    }

    /// Stamps the kept picture with `time`.
    func setPresentationTime(_ time: TimeInterval) {
        kept.withLock { $0?.presentationTime = time }
    }

    /// Shows the kept picture at `display` from now on (it may have been drawn padded).
    func correct(to display: VideoSize) {
        guard !display.isEmpty else { return }
        kept.withLock { $0?.display = display }
    }

    /// Forgets the picture.
    func clear() { kept.set(nil) }
}
#endif

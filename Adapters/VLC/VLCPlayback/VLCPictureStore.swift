#if VLC
import FoundationEssentials
import PlaybackKit

/// The picture kept for `thumbnailAtCurrentTime()`: an RGBA copy (when libVLC delivers
/// RGBA, for the `.frames` output or a format the adapter cannot convert), or the YUV picture
/// left in a libVLC output's buffer, converted to RGBA only when it is asked for.
/// Thread-safe.
final class VLCPictureStore: Sendable {
    /// A YUV picture kept in its buffer, with the time and size it is shown at.
    private struct KeptPicture {
        let buffer: VLCPictureBuffer
        var display: VideoSize
        var presentationTime: TimeInterval
    }

    private let copy = LastFrameStore()
    private let kept = Locked<KeptPicture?>(nil)

    /// Copies an RGBA picture in (see `LastFrameStore.store`).
    func store(_ pixels: UnsafeRawBufferPointer, size: VideoSize, bytesPerRow: Int, presentationTime: TimeInterval) {
        kept.set(nil)
        copy.store(pixels, size: size, bytesPerRow: bytesPerRow, presentationTime: presentationTime)
    }

    /// Keeps the picture `buffer` holds for thumbnails (its kept slot), shown at `display`.
    func keep(_ buffer: VLCPictureBuffer, display: VideoSize, presentationTime: TimeInterval) {
        kept.set(KeptPicture(buffer: buffer, display: display, presentationTime: presentationTime))
        copy.clear()
    }

    /// True when a picture is kept.
    var hasPicture: Bool { kept.get() != nil || copy.latest() != nil }

    /// The kept picture as RGBA at its display size, or nil.
    func latest() -> VideoFrame? {
        if let picture = kept.get() {
            return picture.buffer.keptFrame(display: picture.display, presentationTime: picture.presentationTime)
        }
        return copy.latest()
    }

    /// Hands the kept YUV picture to `sink`'s `.yuvFrames` handler, its planes borrowed for
    /// the call (nothing when the picture kept is an RGBA copy).
    func presentKept(to sink: EngineSink) {
        guard let picture = kept.get() else { return }
        picture.buffer.presentKept(display: picture.display, presentationTime: picture.presentationTime, to: sink)
    }

    /// Stamps the kept picture with `time`.
    func setPresentationTime(_ time: TimeInterval) {
        let updated = kept.withLock { picture -> Bool in
            picture?.presentationTime = time
            return picture != nil
        }
        guard !updated, var frame = copy.latest() else { return }
        frame.presentationTime = time
        copy.store(frame)
    }

    /// Shows the kept picture at `display` from now on (it may have been drawn padded).
    func correct(to display: VideoSize) {
        guard !display.isEmpty else { return }
        let updated = kept.withLock { picture -> Bool in
            picture?.display = display
            return picture != nil
        }
        guard !updated, let frame = copy.latest(), frame.size != display else { return }
        copy.store(VLCPictureBuffer.resample(frame, to: display))
    }

    /// Forgets the picture.
    func clear() {
        kept.set(nil)
        copy.clear()
    }
}
#endif

#if VLC
import CVLC
import Foundation
import PlaybackKit

/// Receives libVLC's decoded pictures in memory (`libvlc_video_set_callbacks` and
/// `libvlc_video_set_format_callbacks`) as RGBA at the display size, keeps the last one for
/// thumbnails and hands them to the `.frames` handler when there is one.
final class VLCVideoCallbacks: @unchecked Sendable {
    // @unchecked: every stored property is immutable or Locked; pictures live in
    // `VLCPictureBuffer`s, one per libVLC video output.
    private let currentSize = Locked(VideoSize.zero)

    /// Storage size and display size expected for the next video output, learned from the
    /// media's tracks; libVLC 3 offers the decoder's padded buffer size instead (e.g. 320x258
    /// for 320x240), which would stretch the picture.
    private let sizeHint = Locked<(storage: VideoSize, display: VideoSize)?>(nil)
    private let store: LastFrameStore
    private let clock: VLCMediaClock
    private let sink: EngineSink
    private let notifyPicture = Locked(false)
    private let shownPicture = Locked(false)
    private let watch = Locked(Watch.off)
    private let lastFingerprint = Locked<UInt64?>(nil)
    private let onPicture: @Sendable () -> Void
    private let onSeekPicture: @Sendable () -> Void
    private let onNewPictureSize: @Sendable (VideoSize) -> Void
    /// Display sizes for pictures libVLC draws at another (padded) size, by drawn size.
    private let corrections = Locked<[VideoSize: VideoSize]>([:])

    /// Pictures go to `store` and, when the sink wants frames, to the sink; `onPicture` is told
    /// about the next picture after `notifyOnNextPicture()`, `onSeekPicture` about the first
    /// picture after a watched seek buffered.
    /// `onNewPictureSize` is told when a video output shows its first picture, with the size
    /// it draws at.
    init(store: LastFrameStore, clock: VLCMediaClock, sink: EngineSink,
         onPicture: @escaping @Sendable () -> Void, onSeekPicture: @escaping @Sendable () -> Void,
         onNewPictureSize: @escaping @Sendable (VideoSize) -> Void) {
        self.store = store
        self.clock = clock
        self.sink = sink
        self.onPicture = onPicture
        self.onSeekPicture = onSeekPicture
        self.onNewPictureSize = onNewPictureSize
    }

    /// Pictures drawn at `drawn` are delivered at `display` (libVLC stretched the visible
    /// picture over a padded buffer when the display size was not known in time).
    func correct(drawn: VideoSize, to display: VideoSize) {
        guard !drawn.isEmpty, !display.isEmpty else { return }
        corrections.withLock { $0[drawn] = drawn == display ? nil : display }
    }

    /// Sets the sizes expected for the next video output.
    func setSizeHint(storage: VideoSize, display: VideoSize) {
        guard !storage.isEmpty, !display.isEmpty else { return }
        sizeHint.set((storage, display))
    }

    /// Calls `onPicture` (once) when the next picture is displayed.
    func notifyOnNextPicture() { notifyPicture.set(true) }

    // MARK: - Watching the pictures of a start or seek

    /// A seek being watched: libVLC seeks to `start` and the picture for `target` is wanted.
    private struct SeekWatch: Equatable {
        var hold: Bool
        var start: Double
        var target: Double
        var rate: Double
        var frame: Double
    }

    /// How displayed pictures are watched while a start or seek settles.
    ///
    /// When libVLC 3 has buffered after a seek it waits for its decoders, shows the first
    /// decoded picture at once and sets its clock so that the seek position is shown 10 ms
    /// later; the pictures after it follow at their times. (Its buffering report comes before
    /// the decoder wait, so it cannot time them.)
    private enum Watch: Equatable {
        /// Every picture is kept.
        case off
        /// The start: the first picture is kept, later ones ignored (until released).
        case firstPicture(seen: Bool)
        /// A seek: waiting for libVLC's buffering report (under 100 %, then 100 %).
        case seekBuffering(SeekWatch, sawStart: Bool)
        /// A seek: buffered; waiting for the first picture.
        case seekBuffered(SeekWatch)
        /// A seek: the first picture was shown at `firstAt` (monotonic seconds); `start` is
        /// shown `wakeUp` later and the following pictures at their media times.
        case seekTiming(SeekWatch, firstAt: Double)
        /// A seek: the wanted picture was shown; later ones are ignored while holding.
        case seekShown(hold: Bool)
    }

    private static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// libVLC 3's video output wake-up delay after a seek.
    static let wakeUp = 0.010
    /// The middle of the measured timing error of pictures timed from the first one.
    static let timingBias = 0.003

    /// How long after the first picture following a seek the target is on screen.
    static func settleTime(frameDuration: Double) -> Double { wakeUp + clampedFrame(frameDuration) / 2 }

    private static func clampedFrame(_ duration: Double) -> Double { min(0.08, max(0.016, duration)) }

    /// Keeps the next picture displayed and ignores later ones (until `releaseHold()`).
    func holdFirstPicture() { watch.set(.firstPicture(seen: false)) }

    /// Watches the pictures of a seek to `start` about to be sent. `hold` (a paused seek):
    /// the picture shown at `target` media time is kept and later ones are ignored; without
    /// (a seek while playing): the first new picture after buffering is reported. Calls
    /// `onSeekPicture` at that picture.
    func watchSeek(hold: Bool, start: Double, target: Double, rate: Double, frameDuration: Double) {
        let seek = SeekWatch(hold: hold, start: start, target: target, rate: max(0.01, rate), frame: Self.clampedFrame(frameDuration))
        watch.set(.seekBuffering(seek, sawStart: false))
    }

    /// Keeps every picture again.
    func releaseHold() { watch.set(.off) }

    /// libVLC's buffering report, passed on from its event thread at once.
    func bufferingChanged(_ percent: Float) {
        watch.withLock { state in
            guard case .seekBuffering(let seek, let sawStart) = state else { return }
            if percent < 100 {
                state = .seekBuffering(seek, sawStart: true)
            } else if sawStart {
                state = .seekBuffered(seek)
            }
        }
    }

    /// Whether a picture displayed now is kept, and whether it is the one a seek waits for.
    /// `repeated`: the same picture as the one before (a redisplay).
    private func watchPicture(repeated: Bool) -> (keep: Bool, seekPicture: Bool) {
        watch.withLock { state in
            let now = Self.now()
            switch state {
            case .off, .seekBuffering:
                return (true, false)
            case .firstPicture(let seen):
                state = .firstPicture(seen: true)
                return (!seen, false)
            case .seekBuffered(let seek):
                guard !repeated else { return (true, false) }
                guard seek.hold else {
                    state = .seekShown(hold: false)
                    return (true, true)
                }
                state = .seekTiming(seek, firstAt: now)
                return wanted(seek, shownFor: seek.start, state: &state)
            case .seekTiming(let seek, let firstAt):
                guard !repeated else { return (true, false) }
                let shownFor = seek.start + max(0, now - firstAt - Self.wakeUp) * seek.rate
                return wanted(seek, shownFor: shownFor, state: &state)
            case .seekShown(let hold):
                return (!hold, false)
            }
        }
    }

    /// A held seek: pictures before the target are kept until the one at the target comes.
    /// Timed from the first picture, pictures shown on time come out 6 ms early to 10 ms late
    /// (measured); the threshold sits between the target frame and the one before.
    private func wanted(_ seek: SeekWatch, shownFor: Double, state: inout Watch) -> (keep: Bool, seekPicture: Bool) {
        guard shownFor >= seek.target - seek.frame / 2 + Self.timingBias else { return (true, false) }
        state = .seekShown(hold: true)
        return (true, true)
    }

    /// True once a picture was displayed.
    var hasShownPicture: Bool { shownPicture.get() }

    /// The size pictures are delivered at now.
    var pictureSize: VideoSize { currentSize.get() }

    /// Registers the callbacks on `player`; `self` must outlive the player.
    func install(on player: OpaquePointer) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        libvlc_video_set_callbacks(player, videoLockCallback, nil, videoDisplayCallback, context)
        libvlc_video_set_format_callbacks(player, videoFormatCallback, videoCleanupCallback)
    }

    // MARK: - Called by libVLC's video output thread

    /// Chooses the picture format for a new video output: RGBA at the display size. Returns
    /// the buffer the output draws into, or nil to refuse.
    fileprivate func configure(chroma: UnsafeMutablePointer<CChar>, width: inout UInt32, height: inout UInt32,
                               pitches: UnsafeMutablePointer<UInt32>, lines: UnsafeMutablePointer<UInt32>) -> VLCPictureBuffer? {
        let offered = VideoSize(width: Int(width), height: Int(height))
        var size = offered
        if let hint = sizeHint.get(),
           (hint.storage.width...(hint.storage.width + 64)).contains(offered.width),
           (hint.storage.height...(hint.storage.height + 64)).contains(offered.height) {
            size = hint.display
        }
        guard !size.isEmpty else { return nil }
        // "RGBA": bytes R, G, B, A in memory, what VideoFrame holds.
        for (index, byte) in "RGBA".utf8.enumerated() { chroma[index] = CChar(bitPattern: byte) }
        width = UInt32(size.width)
        height = UInt32(size.height)
        let buffer = VLCPictureBuffer(owner: self, size: size)
        pitches[0] = UInt32(buffer.pitch)
        lines[0] = UInt32(size.height)
        currentSize.set(size)
        PlaybackLog.log(.debug, "vlc", "video format: offered \(offered), delivering RGBA \(size)")
        return buffer
    }

    fileprivate func pictureDisplayed(_ picture: VLCPictureBuffer) {
        shownPicture.set(true)
        let fingerprint = picture.fingerprint()
        let repeated = lastFingerprint.withLock { last -> Bool in
            defer { last = fingerprint }
            return last == fingerprint
        }
        let watched = watchPicture(repeated: repeated)
        // Told after the picture is stored: the engine then reads it back.
        defer { if watched.seekPicture { onSeekPicture() } }
        guard watched.keep else {
            PlaybackLog.log(.debug, "vlc", "picture held back (libVLC shows it after the target)")
            return
        }
        if !picture.shown {
            picture.shown = true
            onNewPictureSize(picture.size)
        }
        let stamp = clock.stampPicture(repeated: repeated)
        let (bytes, size, pitch) = picture.output(correctedTo: corrections.get()[picture.size])
        store.store(bytes, size: size, bytesPerRow: pitch, presentationTime: stamp.time)
        if stamp.present, sink.frames != nil {
            sink.presentFrame(bytes, size: size, bytesPerRow: pitch, presentationTime: stamp.time)
        }
        let notify = notifyPicture.withLock { wanted -> Bool in
            defer { wanted = false }
            return wanted
        }
        if notify { onPicture() }
    }
}

// MARK: - C callbacks (libVLC's video output thread; they never call into libVLC)

private let videoFormatCallback: libvlc_video_format_cb = { opaque, chroma, width, height, pitches, lines in
    guard let opaque, let context = opaque.pointee, let chroma, let width, let height, let pitches, let lines else { return 0 }
    let owner = Unmanaged<VLCVideoCallbacks>.fromOpaque(context).takeUnretainedValue()
    guard let buffer = owner.configure(chroma: chroma, width: &width.pointee, height: &height.pointee, pitches: pitches, lines: lines) else {
        return 0
    }
    // From here on this output's opaque pointer is its buffer (released by the cleanup callback).
    opaque.pointee = Unmanaged.passRetained(buffer).toOpaque()
    return 1
}

private let videoCleanupCallback: libvlc_video_cleanup_cb = { opaque in
    guard let opaque else { return }
    Unmanaged<VLCPictureBuffer>.fromOpaque(opaque).release()
}

private let videoLockCallback: libvlc_video_lock_cb = { opaque, planes in
    guard let opaque else { return nil }
    planes?[0] = Unmanaged<VLCPictureBuffer>.fromOpaque(opaque).takeUnretainedValue().pixels
    return nil
}

private let videoDisplayCallback: libvlc_video_display_cb = { opaque, _ in
    guard let opaque else { return }
    let buffer = Unmanaged<VLCPictureBuffer>.fromOpaque(opaque).takeUnretainedValue()
    buffer.owner.pictureDisplayed(buffer)
}
#endif

#if VLC
import CVLC
import Dispatch
import FoundationEssentials
import Glibc
import PictureConversion
import PlaybackKit
import SubtitleOverlay
import WindowPresentation

/// Receives libVLC's decoded pictures in memory (`libvlc_video_set_callbacks` and
/// `libvlc_video_set_format_callbacks`), keeps the last one for thumbnails and hands them to
/// the `.frames` handler when there is one. They come in the decoder's own 4:2:0 YUV format
/// when it is one the adapter can read (libVLC then only copies each picture into our
/// pitches), else as I420 for a `.yuvFrames` handler or a window and as RGBA otherwise: a
/// `.yuvFrames` handler is given the slot's planes, a `.frames` handler a frame our converter
/// fills from the slot, and a thumbnail is converted when asked for.
final class VLCVideoCallbacks: @unchecked Sendable {
    // @unchecked: every stored property is immutable or Locked; pictures live in
    // `VLCPictureBuffer`s, one per libVLC video output.
    private let currentSize = Locked(VideoSize.zero)
    /// The serial of the video output made last (see `SeekWatch.staleOutput`).
    private let currentOutput = Locked(0)

    /// Storage size and display size expected for the next video output, learned from the
    /// media's tracks; libVLC 3 offers the decoder's padded buffer size instead (e.g. 320x258
    /// for 320x240), which would stretch the picture.
    private let sizeHint = Locked<(storage: VideoSize, display: VideoSize)?>(nil)
    private let store: VLCPictureStore
    private let pictureTimes: VLCPictureTimes
    private let sink: EngineSink
    /// Draws the selected subtitle on `.frames` pictures (libVLC's own drawing is kept off).
    private let subtitles: SubtitleOverlay?
    /// Draws the pictures into the app's window (`.window` output).
    private let window: X11WindowPresenter?
    /// Converts the pictures for the `.frames` handler; used only inside the frame
    /// presenter's `present`, whose lock serializes the video outputs' threads.
    private let frameConverter = PictureConverter()
    private let shownPicture = Locked(false)
    private let watch = Locked(Watch.off)
    /// The libVLC input thread of the last seek that waited for its decoders
    /// (`VLCLog.whenDecodersReady`), whose wait is forgotten with this object.
    private let decoderWaitThread = Locked<pthread_t?>(nil)
    private let onPicture: @Sendable () -> Void
    private let onSeekPicture: @Sendable (_ overshoot: Double?, _ framesPastTarget: Int?) -> Void
    private let onLanded: @Sendable (_ picture: Bool) -> Void
    private let onStepping: @Sendable () -> Void
    private let onNewPictureSize: @Sendable (VideoSize) -> Void
    /// Display sizes for pictures libVLC draws at another (padded) size, by drawn size.
    private let corrections = Locked<[VideoSize: VideoSize]>([:])

    /// Pictures go to `store` and, when the sink wants frames, to the sink; `onPicture` is told
    /// about the first picture after `holdFirstPicture()`, `onSeekPicture` about the first
    /// picture after a seek while playing and about the target picture of a paused seek (with
    /// the decoder's lag when the picture came a frame or more after the target, see
    /// `Watch`), `onLanded` when a paused seek has buffered (false) and when it then shows a
    /// picture (true).
    /// `onStepping` about each picture before the target of a held seek that steps to it.
    /// `onNewPictureSize` is told when a video output shows its first picture, with the size
    /// it draws at.
    init(store: VLCPictureStore, pictureTimes: VLCPictureTimes, sink: EngineSink, subtitles: SubtitleOverlay?,
         window: X11WindowPresenter?, onPicture: @escaping @Sendable () -> Void, onSeekPicture: @escaping @Sendable (_ overshoot: Double?, _ framesPastTarget: Int?) -> Void,
         onLanded: @escaping @Sendable (_ picture: Bool) -> Void, onStepping: @escaping @Sendable () -> Void,
         onNewPictureSize: @escaping @Sendable (VideoSize) -> Void) {
        self.store = store
        self.pictureTimes = pictureTimes
        self.sink = sink
        self.subtitles = subtitles
        self.window = window
        self.onPicture = onPicture
        self.onSeekPicture = onSeekPicture
        self.onLanded = onLanded
        self.onStepping = onStepping
        self.onNewPictureSize = onNewPictureSize
    }

    deinit {
        if let thread = decoderWaitThread.get() { VLCLog.cancelDecoderWait(thread: thread, owner: self) }
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

    // MARK: - Watching the pictures of a start or seek

    /// libVLC 3's wake-up delay: after a seek or a resume, its clock shows the input's
    /// position this long after it set the clock.
    static let wakeUp = 0.010

    /// How long (media seconds) past its target a paused seek that shows only pictures like
    /// the one before (a still scene: a title card, a slide, a cover picture with music)
    /// takes the picture on screen for the target's. A moving scene shows a new picture
    /// long before.
    static let stillSceneDelay = 0.5

    /// How long (seconds) after a seek buffered its pictures are taken for the seek's without
    /// libVLC's word that its decoders are ready (`VLCLog.whenDecodersReady`), should that
    /// never come. The word comes once the decoder took the seek's flush, after the picture it
    /// was making; while it makes that one, libVLC's video output shows the pictures it had
    /// queued before the seek (up to its pool of about 20, 0.8 s at 25 frames a second; longer
    /// when decoding is slow).
    static let decoderWaitLimit = 4.0

    /// How long (seconds) after libVLC's decoders were ready for a seek its first picture may
    /// take to come.
    static let seekPictureGrace = 1.5

    /// How much earlier than due (media seconds) the target picture of a paused seek may be
    /// shown and still be taken for it.
    static func earlyAllowance(frame: Double) -> Double { min(0.005, frame / 4) }

    /// How long after the first picture following a seek while playing the target is on
    /// screen.
    static func settleTime(frameDuration: Double) -> Double { wakeUp + clampedFrame(frameDuration) / 2 }

    private static func clampedFrame(_ duration: Double) -> Double { min(0.08, max(0.016, duration)) }

    /// Keeps the next picture displayed, tells `onPicture` about it, and ignores later ones
    /// (until `releaseHold()`). One state: a picture shown between arming the hold and
    /// asking to be told would be held and never told of.
    func holdFirstPicture() { watch.set(.firstPicture(seen: false)) }

    /// Watches the pictures of a seek while playing, about to be sent: the first new picture
    /// once libVLC's decoders are ready is reported through `onSeekPicture`, with how many
    /// frames after the target it is (see `Watch.seekDecoding`).
    func watchPlayingSeek(target: Double, rate: Double, frameDuration: Double) {
        let seek = SeekWatch(start: target, target: target, rate: max(0.01, rate), frame: max(0.001, frameDuration),
                             staleOutput: currentOutput.get())
        watch.set(.seekBuffering(seek, sawStart: false))
    }

    /// Watches a seek done playing for a paused one, about to be sent to `start`, a frame
    /// and a half or more before the frame starting at `target`: the picture at the target is
    /// reported through `onSeekPicture` (with an overshoot when the first picture libVLC
    /// showed was already past it), stays on screen, and later ones are ignored.
    ///
    /// Which frame the first picture is cannot be read from it: libVLC shows first what its
    /// preroll lets through, and at times passes over a picture after the seek without a
    /// report. But it shows that first picture at once (`wakeUp` before its clock's origin,
    /// where `start` is due), and each later one when due: the gap to the second picture
    /// tells the first's frame. When libVLC's output was too slow for the first one, the next
    /// comes when due and the gap is one frame: that tells nothing, and the seek is done again
    /// (reported as an overshoot of 0).
    /// `stepsToTarget`: the target is one of the last pictures, and `start` lies a few frames
    /// before it: once the picture is known, `onStepping` is told, and the session pauses
    /// the input and steps it to the target (see `SeekWatch.stepsToTarget`).
    func watchHeldSeek(start: Double, target: Double, rate: Double, frameDuration: Double, stepsToTarget: Bool = false) {
        let seek = SeekWatch(start: start, target: target, rate: max(0.01, rate), frame: max(0.001, frameDuration), hold: true,
                             stepsToTarget: stepsToTarget, staleOutput: currentOutput.get())
        watch.set(.seekBuffering(seek, sawStart: false))
    }

    /// Watches a paused seek to `start` about to be sent, for the frame starting at `target`:
    /// `onLanded` is called when libVLC has buffered there (from its input thread, before it
    /// sets its clock and takes the next command).
    func watchPausedSeek(start: Double, target: Double, rate: Double, frameDuration: Double) {
        let seek = SeekWatch(start: start, target: target, rate: max(0.01, rate), frame: Self.clampedFrame(frameDuration))
        watch.set(.landing(seek, sawStart: false))
    }

    /// The input is about to be resumed after a paused seek (also when libVLC did not report
    /// its buffering): from the resume on, the picture at the target is kept and later ones
    /// ignored (`onSeekPicture` at the target).
    func awaitResume() {
        watch.withLock { state in
            switch state {
            case .landing(let seek, _), .landed(let seek), .awaitingResume(let seek): state = .awaitingResume(seek)
            default: break
            }
        }
    }

    /// libVLC's Playing event, passed on from its input thread at once: the time the input
    /// resumed. It also corrects a resume only assumed: an input busy restarting its decoders
    /// (an HLS seek starts new streams) takes the resume late, and shows the picture its
    /// preroll let through before it does.
    func inputResumed() {
        let now = monotonicSeconds()
        watch.withLock { state in
            switch state {
            case .awaitingResume(let seek), .runningToTarget(let seek, _, _, assumed: true):
                state = .runningToTarget(seek, resumedAt: now, firstShownAt: nil, assumed: false)
            default:
                break
            }
        }
    }

    /// The input was resumed at `time` (monotonic seconds) but libVLC sent no Playing event
    /// (it was playing already): time the pictures from when the resume was sent.
    func assumeResumed(at time: Double) {
        watch.withLock { state in
            guard case .awaitingResume(let seek) = state else { return }
            state = .runningToTarget(seek, resumedAt: time, firstShownAt: nil, assumed: true)
        }
    }

    /// Keeps every picture again.
    func releaseHold() { watch.set(.off) }

    /// True while a held seek steps to its target and the target is still to come.
    var isSteppingToTarget: Bool {
        watch.withLock { state in
            if case .seekCounting(_, stepping: true) = state { return true }
            return false
        }
    }

    /// libVLC's buffering report, passed on from its event thread at once.
    func bufferingChanged(_ percent: Float) {
        let landed = watch.withLock { state -> Bool in
            switch state {
            case .seekBuffering(let seek, let sawStart):
                if percent < 100 {
                    state = .seekBuffering(seek, sawStart: true)
                } else if sawStart, seek.hold {
                    state = .seekBuffered(seek, bufferedAt: monotonicSeconds())
                } else if sawStart {
                    // On libVLC's input thread, before it waits for its decoders.
                    state = .seekDecoding(seek, bufferedAt: monotonicSeconds(), held: nil)
                    let thread = VLCLog.whenDecodersReady(owner: self) { [weak self] in self?.decodersReady() }
                    decoderWaitThread.set(thread)
                }
            case .landing(let seek, let sawStart):
                if percent < 100 {
                    state = .landing(seek, sawStart: true)
                } else if sawStart {
                    state = .landed(seek)
                    return true
                }
            default:
                break
            }
            return false
        }
        if landed { onLanded(false) }
    }

    /// True while a seek while playing waits for libVLC's decoders (up to `decoderWaitLimit`),
    /// or for its first picture since they were ready (up to `seekPictureGrace`).
    var isAwaitingSeekPicture: Bool {
        watch.withLock { state in
            switch state {
            case .seekDecoding(_, let bufferedAt, _): monotonicSeconds() - bufferedAt < Self.decoderWaitLimit
            case .seekTimed(_, let readyAt, _): monotonicSeconds() - readyAt < Self.seekPictureGrace
            default: false
            }
        }
    }

    /// libVLC's input is done waiting for its decoders after a seek buffered (from its
    /// thread, as it logs so): the pictures shown from now on are the seek's.
    private func decodersReady() {
        watch.withLock { state in
            guard case .seekDecoding(let seek, _, let held) = state else { return }
            state = .seekTimed(seek, readyAt: monotonicSeconds(), held: held)
        }
    }

    /// libVLC's count of video outputs changed (from its event thread, at once).
    func outputsChanged(_ count: Int) {
        watch.withLock { state in
            switch state {
            case .seekBuffering(var seek, let sawStart):
                seek.outputsChanged(count)
                state = .seekBuffering(seek, sawStart: sawStart)
            case .seekDecoding(var seek, let bufferedAt, let held):
                seek.outputsChanged(count)
                state = .seekDecoding(seek, bufferedAt: bufferedAt, held: held)
            case .seekTimed(var seek, let readyAt, let held):
                seek.outputsChanged(count)
                state = .seekTimed(seek, readyAt: readyAt, held: held)
            case .seekBuffered(var seek, let bufferedAt):
                seek.outputsChanged(count)
                state = .seekBuffered(seek, bufferedAt: bufferedAt)
            default:
                break
            }
        }
    }

    /// Whether a picture displayed now is kept, and whether a seek waits for it.
    /// `repeated`: the same picture as the one before (a redisplay); `identical`: it holds the
    /// same picture as the one before, however soon after its copy it came; `output`: the
    /// serial of the video output showing it.
    private func watchPicture(repeated: Bool, identical: Bool, output: Int) -> Verdict {
        watch.withLock { state in Self.verdict(repeated: repeated, identical: identical, output: output, state: &state) }
    }

    /// True once a picture was displayed.
    var hasShownPicture: Bool { shownPicture.get() }

    /// The size pictures are delivered at now.
    var pictureSize: VideoSize { currentSize.get() }

    /// Registers the callbacks on `player`; `self` must outlive the player.
    func install(on player: OpaquePointer) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        libvlc_video_set_callbacks(player, videoLockCallback, videoUnlockCallback, videoDisplayCallback, context)
        libvlc_video_set_format_callbacks(player, videoFormatCallback, videoCleanupCallback)
    }

    // MARK: - Called by libVLC's video output thread

    /// Chooses the picture format for a new video output: without a `.frames` handler, the
    /// offered 4:2:0 YUV format at the stored size (libVLC still copies it through its
    /// converter, as the output's visible area never matches the decoder's padded one, but
    /// without converting); otherwise RGBA at the display size. Returns the buffer the output
    /// draws into, or nil to refuse.
    fileprivate func configure(chroma: UnsafeMutablePointer<CChar>, width: inout UInt32, height: inout UInt32,
                               pitches: UnsafeMutablePointer<UInt32>, lines: UnsafeMutablePointer<UInt32>) -> VLCPictureBuffer? {
        let offered = VideoSize(width: Int(width), height: Int(height))
        let offeredChroma = String(cString: chroma)
        var storage = offered
        var display = offered
        if let hint = sizeHint.get(),
           (hint.storage.width...(hint.storage.width + 64)).contains(offered.width),
           (hint.storage.height...(hint.storage.height + 64)).contains(offered.height) {
            storage = hint.storage
            display = hint.display
        }
        guard !display.isEmpty else { return nil }
        let format: VLCPictureFormat
        if sink.wantsYUVFrames || window != nil {
            // The decoder's own 4:2:0 format; anything else libVLC converts to I420.
            format = VLCPictureFormat(yuvChroma: offeredChroma) ?? .i420
        } else {
            // The decoder's own 4:2:0 format, which our converter turns into RGBA once,
            // straight into the `.frames` handler's frame; anything else as RGBA from libVLC
            // (its conversion of a 4:4:4 picture of odd size to I420 leaves the last chroma
            // column unwritten, which would reach the frame's edge and the thumbnails).
            format = VLCPictureFormat(yuvChroma: offeredChroma) ?? .rgba
        }
        let size = format == .rgba ? display : storage
        // Four characters, e.g. "RGBA": bytes R, G, B, A in memory, what VideoFrame holds.
        for (index, byte) in format.chroma.utf8.enumerated() { chroma[index] = CChar(bitPattern: byte) }
        width = UInt32(size.width)
        height = UInt32(size.height)
        let buffer = VLCPictureBuffer(owner: self, size: size, display: display, format: format)
        for (index, pitch) in buffer.pitches.enumerated() { pitches[index] = UInt32(pitch) }
        for (index, count) in buffer.lines.enumerated() { lines[index] = UInt32(count) }
        currentSize.set(size)
        buffer.serial = currentOutput.withLock { serial in
            serial += 1
            return serial
        }
        PlaybackLog.log(.debug, "vlc", "video format: offered \(offeredChroma) \(offered), delivering \(format.chroma) \(size)")
        return buffer
    }

    /// libVLC shows the picture it wrote into `slot` of `picture`.
    fileprivate func pictureDisplayed(_ picture: VLCPictureBuffer, slot: Int) {
        shownPicture.set(true)
        let (repeated, identical, writtenAt) = picture.displayed(slot: slot)
        let watched = watchPicture(repeated: repeated, identical: identical, output: picture.serial)
        // Told after the picture is stored: the engine then reads it back.
        defer {
            if watched.seekPicture { onSeekPicture(watched.overshoot, watched.timedFrames) }
            if watched.landed { onLanded(true) }
            if watched.stepping { onStepping() }
        }
        guard watched.keep else {
            PlaybackLog.log(.debug, "vlc", "picture held back (libVLC shows it after the target)")
            return
        }
        if !picture.shown {
            picture.shown = true
            onNewPictureSize(picture.size)
        }
        if let heldTime = watched.presentKeptFirst {
            present(keptOf: picture, display: corrections.get()[picture.size] ?? picture.display, presentationTime: heldTime)
        }
        let stamp = pictureTimes.stampPicture(repeated: repeated, identical: identical, writtenAt: writtenAt,
                                              seekPicture: watched.seekPicture)
        if stamp.jumped { sink.positionJumped(to: stamp.time) }
        let correction = corrections.get()[picture.size]
        // The picture stays in its slot for thumbnails, converted or copied only when one is
        // asked for.
        if !repeated { picture.keepLastShown() }
        store.keep(picture, display: correction ?? picture.display, presentationTime: stamp.time)
        if stamp.present, let window {
            // Drawn from the kept picture, now and on expose or resize: the store always has
            // the latest.
            window.show { [store] draw in store.withKeptPicture(draw) }
        }
        if stamp.present {
            present(keptOf: picture, display: correction ?? picture.display, presentationTime: stamp.time)
        }
        if watched.first { onPicture() }
    }

    /// Hands the picture `picture` keeps to the `.yuvFrames` or `.frames` handler.
    private func present(keptOf picture: VLCPictureBuffer, display: VideoSize, presentationTime: Double) {
        if sink.wantsYUVFrames {
            picture.presentKept(display: display, presentationTime: presentationTime, to: sink)
        }
        if sink.frames != nil {
            // Converted (an RGBA one scaled to its display size, when libVLC drew it at a
            // padded one) once into the handler's frame; the subtitle is drawn there, so
            // the slot stays the clean picture thumbnails read.
            picture.withKept { source in
                sink.presentFrame(source, naturalSize: display, presentationTime: presentationTime,
                                  converter: frameConverter) { [subtitles] pixels, width, height, bytesPerRow in
                    subtitles?.draw(at: presentationTime, onto: pixels, width: width, height: height, bytesPerRow: bytesPerRow)
                }
            }
        }
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

// The picture identifier libVLC hands from the lock callback to the others is the slot
// number plus one (never null).

private let videoLockCallback: libvlc_video_lock_cb = { opaque, planes in
    guard let opaque, let planes else { return nil }
    let slot = Unmanaged<VLCPictureBuffer>.fromOpaque(opaque).takeUnretainedValue().beginWriting(planes: planes)
    return UnsafeMutableRawPointer(bitPattern: slot + 1)
}

private let videoUnlockCallback: libvlc_video_unlock_cb = { opaque, _, _ in
    guard let opaque else { return }
    Unmanaged<VLCPictureBuffer>.fromOpaque(opaque).takeUnretainedValue().endWriting()
}

private let videoDisplayCallback: libvlc_video_display_cb = { opaque, picture in
    guard let opaque else { return }
    let buffer = Unmanaged<VLCPictureBuffer>.fromOpaque(opaque).takeUnretainedValue()
    buffer.owner.pictureDisplayed(buffer, slot: Int(bitPattern: picture) - 1)
}
#endif

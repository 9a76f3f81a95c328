#if VLC
import CVLC
import Dispatch
import FoundationEssentials
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
    private let notifyPicture = Locked(false)
    private let shownPicture = Locked(false)
    private let watch = Locked(Watch.off)
    private let onPicture: @Sendable () -> Void
    private let onSeekPicture: @Sendable (_ overshoot: Double?) -> Void
    private let onLanded: @Sendable (_ picture: Bool) -> Void
    private let onStepping: @Sendable () -> Void
    private let onNewPictureSize: @Sendable (VideoSize) -> Void
    /// Display sizes for pictures libVLC draws at another (padded) size, by drawn size.
    private let corrections = Locked<[VideoSize: VideoSize]>([:])

    /// Pictures go to `store` and, when the sink wants frames, to the sink; `onPicture` is told
    /// about the next picture after `notifyOnNextPicture()`, `onSeekPicture` about the first
    /// picture after a seek while playing and about the target picture of a paused seek (with
    /// the decoder's lag when the picture came a frame or more after the target, see
    /// `Watch`), `onLanded` when a paused seek has buffered (false) and when it then shows a
    /// picture (true).
    /// `onStepping` about each picture before the target of a held seek that steps to it.
    /// `onNewPictureSize` is told when a video output shows its first picture, with the size
    /// it draws at.
    init(store: VLCPictureStore, pictureTimes: VLCPictureTimes, sink: EngineSink, subtitles: SubtitleOverlay?,
         window: X11WindowPresenter?, onPicture: @escaping @Sendable () -> Void, onSeekPicture: @escaping @Sendable (_ overshoot: Double?) -> Void,
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

    /// A seek being watched: libVLC seeks to `start` (seconds) and the picture for `target`
    /// (the start of the wanted frame) is wanted.
    private struct SeekWatch: Equatable {
        var start: Double
        var target: Double
        var rate: Double
        var frame: Double
        /// Keep the seek's picture on screen and ignore later ones (a seek done playing for a
        /// paused one, see `watchHeldSeek`).
        var hold = false
        /// A held seek to one of the last pictures: the pictures before the target are
        /// counted while paused, one step at a time (`onStepping`), as libVLC ends the input
        /// while playing before it shows its last picture.
        var stepsToTarget = false
        /// The serial of the video output that showed the pictures before the seek. An
        /// adaptive stream's seek makes new decoders: libVLC releases that output (it reports
        /// no video output), which may still show a picture it had queued after the seek's
        /// buffering is done; once released, its pictures are not the seek's.
        var staleOutput: Int?
        /// libVLC reported that no video output was left after the seek was sent, and no new
        /// one since.
        var outputReleased = false

        /// Follows libVLC's count of video outputs: a new (or reused) output after the
        /// release shows the seek's pictures.
        mutating func outputsChanged(_ count: Int) {
            if count == 0 {
                outputReleased = true
            } else if outputReleased {
                outputReleased = false
                staleOutput = nil
            }
        }

        /// True for a picture of the released output.
        func isStale(_ output: Int) -> Bool { outputReleased && output == staleOutput }
    }

    /// How displayed pictures are watched while a start or seek settles.
    ///
    /// A paused seek is done in two steps. libVLC seeks while paused; when it reports 100 %
    /// buffering its input thread goes on to wait for the decoders and sets its clock, and
    /// only then takes the next command. The picture it shows there (if any: a video output
    /// made while paused drops it as late) cannot be told apart: its accurate-seek preroll
    /// ends on a decode time, so with B-frames a picture a few frames before `start` may come
    /// first. Then the input is resumed: libVLC 3 moves its clock by the time it stayed
    /// paused, so the picture at `start` is due `wakeUp` after the resume and every later
    /// picture at its media time from there. The resume is known to the microsecond (libVLC
    /// sends its Playing event from the input thread as it unpauses), and pictures are never
    /// shown early, so the wanted picture is the first new one shown once it is due.
    ///
    /// libVLC does not wait for its decoder while paused, so after a long preroll (far from a
    /// keyframe, large pictures) the decoder may still be catching up when the target is due,
    /// and libVLC drops the target as too late: the first picture shown is then due a frame
    /// or more after the target. That is reported as an overshoot with the decoder's lag (how
    /// long after the resume the first picture came), and the seek is done again from further
    /// ahead.
    private enum Watch: Equatable {
        /// Every picture is kept.
        case off
        /// The start: the first picture is kept, later ones ignored (until released).
        case firstPicture(seen: Bool)
        /// A seek while playing: waiting for libVLC's buffering report (under 100 %, then
        /// 100 %).
        case seekBuffering(SeekWatch, sawStart: Bool)
        /// A seek while playing, buffered at `bufferedAt` (monotonic seconds): the first new
        /// picture is reported.
        case seekBuffered(SeekWatch, bufferedAt: Double)
        /// A held seek (`SeekWatch.hold`): its first picture was shown at `firstAt` (monotonic
        /// seconds) and kept for now; the gap to the next one tells which frame it was.
        case seekVerifying(SeekWatch, firstAt: Double)
        /// A held seek whose target comes `remaining` pictures later (libVLC stepping to it
        /// while paused when `stepping`).
        case seekCounting(remaining: Int, stepping: Bool)
        /// A paused seek to `start` was sent: waiting for libVLC's buffering report (under
        /// 100 %, then 100 %).
        case landing(SeekWatch, sawStart: Bool)
        /// The paused seek buffered: waiting for the picture libVLC shows there (when its
        /// video output knows it is paused; one made while paused drops it as late).
        case landed(SeekWatch)
        /// Waiting for the input to resume.
        case awaitingResume(SeekWatch)
        /// The input resumed at `resumedAt` (monotonic seconds): `start` is due `wakeUp` later,
        /// the following pictures at their media times.
        /// `firstShownAt`: when the first new picture after the resume was shown.
        /// `assumed`: no Playing event came; `resumedAt` is when the resume was sent (a
        /// Playing event coming after all times the pictures again).
        case runningToTarget(SeekWatch, resumedAt: Double, firstShownAt: Double?, assumed: Bool)
        /// A seek: the wanted picture was shown; later ones are ignored while holding.
        case seekShown(hold: Bool)
    }


    /// libVLC 3's wake-up delay: after a seek or a resume, its clock shows the input's
    /// position this long after it set the clock.
    static let wakeUp = 0.010

    /// How long (media seconds) past its target a paused seek that shows only pictures like
    /// the one before (a still scene: a title card, a slide, a cover picture with music)
    /// takes the picture on screen for the target's. A moving scene shows a new picture
    /// long before.
    static let stillSceneDelay = 0.5

    /// How much earlier than due (media seconds) the target picture of a paused seek may be
    /// shown and still be taken for it.
    static func earlyAllowance(frame: Double) -> Double { min(0.005, frame / 4) }

    /// How long after the first picture following a seek while playing the target is on
    /// screen.
    static func settleTime(frameDuration: Double) -> Double { wakeUp + clampedFrame(frameDuration) / 2 }

    private static func clampedFrame(_ duration: Double) -> Double { min(0.08, max(0.016, duration)) }

    /// Keeps the next picture displayed and ignores later ones (until `releaseHold()`).
    func holdFirstPicture() { watch.set(.firstPicture(seen: false)) }

    /// Watches the pictures of a seek while playing, about to be sent: the first new picture
    /// after buffering is reported through `onSeekPicture`.
    func watchPlayingSeek(target: Double, rate: Double, frameDuration: Double) {
        let seek = SeekWatch(start: target, target: target, rate: max(0.01, rate), frame: Self.clampedFrame(frameDuration),
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
                } else if sawStart {
                    state = .seekBuffered(seek, bufferedAt: monotonicSeconds())
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

    /// libVLC's count of video outputs changed (from its event thread, at once).
    func outputsChanged(_ count: Int) {
        watch.withLock { state in
            switch state {
            case .seekBuffering(var seek, let sawStart):
                seek.outputsChanged(count)
                state = .seekBuffering(seek, sawStart: sawStart)
            case .seekBuffered(var seek, let bufferedAt):
                seek.outputsChanged(count)
                state = .seekBuffered(seek, bufferedAt: bufferedAt)
            default:
                break
            }
        }
    }

    /// What to do with a picture displayed now.
    private struct Verdict {
        /// Keep it (for thumbnails and the `.frames` handler).
        var keep = true
        /// It is the picture a seek waits for.
        var seekPicture = false
        /// For the target of a paused seek shown a frame or more late: the decoder's lag (0 for
        /// a held seek whose picture could not be told: seek again).
        var overshoot: Double?
        /// It is the first picture after a paused seek buffered.
        var landed = false
        /// A picture before the target of a held seek stepping to it (`SeekWatch.stepsToTarget`).
        var stepping = false
    }

    /// Whether a picture displayed now is kept, and whether a seek waits for it.
    /// `repeated`: the same picture as the one before (a redisplay); `output`: the serial of
    /// the video output showing it.
    private func watchPicture(repeated: Bool, output: Int) -> Verdict {
        watch.withLock { state in
            switch state {
            case .off, .seekBuffering, .landing, .awaitingResume:
                return Verdict()
            case .landed(let seek):
                guard !repeated else { return Verdict() }
                state = .awaitingResume(seek)
                return Verdict(landed: true)
            case .firstPicture(let seen):
                state = .firstPicture(seen: true)
                return Verdict(keep: !seen)
            case .seekVerifying(let seek, let firstAt):
                guard !repeated else { return Verdict(keep: false) }
                let spacing = monotonicSeconds() - firstAt
                let frameAtRate = seek.frame / seek.rate
                guard abs(spacing - frameAtRate) >= frameAtRate / 4 else {
                    // The first picture came when due, not at once: its frame is unknown.
                    PlaybackLog.log(.debug, "vlc", "held seek to \(seek.target) s: the first picture came when due; seeking again")
                    state = .seekShown(hold: true)
                    return Verdict(keep: false, seekPicture: true, overshoot: 0)
                }
                // The second picture is due (frames after `start`, at the rate) that long after
                // the first was shown, less `wakeUp`: its frame, counted from the target.
                let gap = spacing - Self.wakeUp
                let second = Int((gap * seek.rate / seek.frame - (seek.target - seek.start) / seek.frame).rounded())
                PlaybackLog.log(.debug, "vlc", "held seek to \(seek.target) s: the second picture came \(Int(gap * 1000)) ms after the first's due time, frame \(second) from the target")
                if second < 0 {
                    // The target is still to come.
                    state = .seekCounting(remaining: -second, stepping: seek.stepsToTarget)
                    return Verdict(stepping: seek.stepsToTarget)
                }
                state = .seekShown(hold: true)
                switch second {
                case 0:
                    // This one is the target.
                    return Verdict(seekPicture: true)
                case 1:
                    // The first picture was the target (kept).
                    return Verdict(keep: false, seekPicture: true)
                default:
                    // The first picture was already past the target.
                    return Verdict(keep: false, seekPicture: true, overshoot: Double(second - 1) * seek.frame)
                }
            case .seekCounting(let remaining, let stepping):
                guard !repeated else { return Verdict(keep: false) }
                guard remaining <= 1 else {
                    state = .seekCounting(remaining: remaining - 1, stepping: stepping)
                    return Verdict(stepping: stepping)
                }
                state = .seekShown(hold: true)
                return Verdict(seekPicture: true)
            case .seekBuffered(let seek, let bufferedAt):
                guard !seek.isStale(output) else { return Verdict(keep: false) }
                // Pictures like the one before stand for new ones once they go on well after
                // the seek buffered (a still scene; see `stillSceneDelay`).
                guard !repeated || monotonicSeconds() - bufferedAt >= Self.stillSceneDelay / seek.rate else { return Verdict() }
                guard seek.hold else {
                    state = .seekShown(hold: false)
                    return Verdict(seekPicture: true)
                }
                // Kept for now; the next picture tells whether it is the target.
                state = .seekVerifying(seek, firstAt: monotonicSeconds())
                return Verdict()
            case .runningToTarget(let seek, let resumedAt, let firstShownAt, let assumed):
                let now = monotonicSeconds()
                let due = seek.start + max(0, now - resumedAt - Self.wakeUp) * seek.rate
                if repeated {
                    // A picture like the one before: a redisplay, or a new picture of a still
                    // scene (every frame alike). Once the target is well past due, playing,
                    // the picture on screen is the target's: it looks like the one before.
                    guard due >= seek.target + Self.stillSceneDelay else { return Verdict() }
                    PlaybackLog.log(.debug, "vlc", "paused seek to \(seek.target) s: no new-looking picture \(Self.stillSceneDelay) s past the target; a still scene")
                    state = .seekShown(hold: true)
                    return Verdict(seekPicture: true)
                }
                let first = firstShownAt ?? now
                state = .runningToTarget(seek, resumedAt: resumedAt, firstShownAt: first, assumed: assumed)
                // Pictures are never shown early (measured: 0.3 ms late at best), but late ones
                // are (up to 21 ms on a loaded machine): the target is the first picture shown
                // once it is due, less a small allowance; the frame before it would have to be
                // almost a whole frame late to pass for it.
                guard due >= seek.target - Self.earlyAllowance(frame: seek.frame) else { return Verdict() }
                state = .seekShown(hold: true)
                guard due < seek.target + seek.frame / 2 else {
                    return Verdict(seekPicture: true, overshoot: max(0, first - resumedAt - Self.wakeUp))
                }
                return Verdict(seekPicture: true)
            case .seekShown(let hold):
                return Verdict(keep: !hold)
            }
        }
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
        let (repeated, writtenAt) = picture.displayed(slot: slot)
        let watched = watchPicture(repeated: repeated, output: picture.serial)
        // Told after the picture is stored: the engine then reads it back.
        defer {
            if watched.seekPicture { onSeekPicture(watched.overshoot) }
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
        let stamp = pictureTimes.stampPicture(repeated: repeated, writtenAt: writtenAt, seekPicture: watched.seekPicture)
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
            let display = correction ?? picture.display
            if sink.wantsYUVFrames {
                picture.presentKept(display: display, presentationTime: stamp.time, to: sink)
            }
            if sink.frames != nil {
                // Converted (an RGBA one scaled to its display size, when libVLC drew it at a
                // padded one) once into the handler's frame; the subtitle is drawn there, so
                // the slot stays the clean picture thumbnails read.
                picture.withKept { source in
                    sink.presentFrame(source, naturalSize: display, presentationTime: stamp.time,
                                      converter: frameConverter) { [subtitles] pixels, width, height, bytesPerRow in
                        subtitles?.draw(at: stamp.time, onto: pixels, width: width, height: height, bytesPerRow: bytesPerRow)
                    }
                }
            }
        }
        notifyIfAsked()
    }

    /// Calls `onPicture` if `notifyOnNextPicture()` asked for it.
    private func notifyIfAsked() {
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

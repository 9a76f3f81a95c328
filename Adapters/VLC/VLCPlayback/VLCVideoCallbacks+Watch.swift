#if VLC
import FoundationEssentials
import PlaybackKit

// MARK: - Which picture a start or seek waits for

extension VLCVideoCallbacks {
    /// A seek being watched: libVLC seeks to `start` (seconds) and the picture for `target`
    /// (the start of the wanted frame) is wanted.
    struct SeekWatch: Equatable {
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

        /// The media time due on screen at `now` (monotonic seconds) when libVLC set its clock
        /// for `start` at `origin`: `start` is due `wakeUp` later, the rest at the rate.
        func due(at now: Double, clockSetAt origin: Double) -> Double {
            start + max(0, now - origin - VLCVideoCallbacks.wakeUp) * rate
        }
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
    enum Watch: Equatable {
        /// Every picture is kept.
        case off
        /// The start: the first picture is kept, later ones ignored (until released).
        case firstPicture(seen: Bool)
        /// A seek while playing: waiting for libVLC's buffering report (under 100 %, then
        /// 100 %).
        case seekBuffering(SeekWatch, sawStart: Bool)
        /// A seek while playing, buffered at `bufferedAt` (monotonic seconds); libVLC's input
        /// waits for its decoders to hold their pictures from the seek. Its video decoder shows
        /// the first picture it makes at once: the one at the target, or one it was making
        /// from what it read before the seek (it takes the flush only after that one). Which
        /// of the two cannot be told from the picture, so it is kept but not handed on
        /// (`held`: the output that showed it), and the pictures that follow are timed
        /// (`seekTimed`).
        case seekDecoding(SeekWatch, bufferedAt: Double, held: Int?)
        /// A seek while playing whose decoders were ready at `readyAt` (monotonic seconds):
        /// libVLC set its clock then, so the target is due `wakeUp` later and each later
        /// picture at its media time from there. The first new picture is the seek's, as many
        /// frames after the target as it came late (libVLC drops pictures due before it could
        /// show them). When that is the frame after the target's, the picture held while the
        /// decoders got ready was the target's: it is handed on first.
        case seekTimed(SeekWatch, readyAt: Double, held: Int?)
        /// A seek while playing (or a held seek) buffered at `bufferedAt` (monotonic seconds),
        /// whose pictures are not timed: the first new picture is reported.
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

    /// What to do with a picture displayed now.
    struct Verdict {
        /// Keep it (for thumbnails and the `.frames` handler).
        var keep = true
        /// It is the picture a seek waits for.
        var seekPicture = false
        /// For the target of a paused seek shown a frame or more late: the decoder's lag (0 for
        /// a held seek whose picture could not be told: seek again).
        var overshoot: Double?
        /// For the picture of a seek while playing timed from libVLC's clock: how many frames
        /// after the target's it is (libVLC dropped those as late).
        var timedFrames: Int?
        /// Hand the kept picture (the target's, held while libVLC's decoders got ready) on
        /// first, stamped this time.
        var presentKeptFirst: Double?
        /// It is the first picture after a paused seek buffered.
        var landed = false
        /// It is the first picture of a start or restart (`holdFirstPicture()`): `onPicture`
        /// is told once it is stored.
        var first = false
        /// A picture before the target of a held seek stepping to it (`SeekWatch.stepsToTarget`).
        var stepping = false
    }

    /// The verdict on a picture displayed now while pictures are watched as `state` says,
    /// which it moves on.
    static func verdict(repeated: Bool, identical: Bool, output: Int, state: inout Watch) -> Verdict {
        switch state {
        case .off, .seekBuffering, .landing, .awaitingResume:
            return Verdict()
        case .landed(let seek):
            guard !repeated else { return Verdict() }
            state = .awaitingResume(seek)
            return Verdict(landed: true)
        case .firstPicture(let seen):
            state = .firstPicture(seen: true)
            return Verdict(keep: !seen, first: !seen)
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
            // Stepping while paused every new picture differs from the one before: a
            // picture alike is a redisplay, whenever libVLC showed it.
            guard !(stepping ? identical : repeated) else { return Verdict(keep: false) }
            guard remaining <= 1 else {
                state = .seekCounting(remaining: remaining - 1, stepping: stepping)
                return Verdict(stepping: stepping)
            }
            state = .seekShown(hold: true)
            return Verdict(seekPicture: true)
        case .seekDecoding(let seek, let bufferedAt, let held):
            guard monotonicSeconds() - bufferedAt >= Self.decoderWaitLimit else {
                // Kept (for thumbnails) but not handed on: settling, its stamp is not presented.
                guard !seek.isStale(output), !repeated else { return Verdict() }
                state = .seekDecoding(seek, bufferedAt: bufferedAt, held: held ?? output)
                return Verdict()
            }
            PlaybackLog.log(.debug, "vlc", "no word of libVLC's decoders \(Self.decoderWaitLimit) s after the seek to \(seek.target) s buffered; taking its pictures")
            state = .seekBuffered(seek, bufferedAt: bufferedAt)
            return verdict(repeated: repeated, identical: identical, output: output, state: &state)
        case .seekTimed(let seek, let readyAt, let held):
            // A picture like the one before is the held one shown again.
            guard !seek.isStale(output), !repeated else { return Verdict(keep: false) }
            // Pictures are never shown early, late ones often (less than a frame: libVLC
            // drops those later still): the picture is the last one due by now.
            let due = seek.due(at: monotonicSeconds(), clockSetAt: readyAt)
            let late = Int(max(0, ((due - seek.target + Self.earlyAllowance(frame: seek.frame)) / seek.frame).rounded(.down)))
            state = .seekShown(hold: false)
            // One frame on: the held picture was the target's. After a picture made before the
            // seek, the target's own comes when due (no frame on), or several frames on when
            // the decoders were late (libVLC drops those due before it could show them).
            let heldIsTarget = late == 1 && held == output
            return Verdict(seekPicture: true, timedFrames: late, presentKeptFirst: heldIsTarget ? seek.target : nil)
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
            let due = seek.due(at: now, clockSetAt: resumedAt)
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
#endif

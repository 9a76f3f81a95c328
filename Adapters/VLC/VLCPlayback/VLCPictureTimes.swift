#if VLC
import Dispatch
import FoundationEssentials
import PlaybackKit

/// The media time of each picture libVLC 3 displays, and whether it goes on to the `.frames`
/// handler. libVLC's picture callbacks carry no timestamp, so a picture shown while playing
/// is stamped with libVLC's last time report (TimeChanged: the media time presented when it
/// is sent, only a few times a second) run on by the wall time since it at the playback rate,
/// and put on the start of its frame when the frame rate is known; a picture shown while
/// paused, or while a seek or the start settles, gets the time paused or sought at. While
/// paused a picture is handed on once, not at every redisplay, and while a seek settles
/// pictures are only kept for thumbnails.
///
/// The player's position is fed libVLC's time reports as they come (`VLCSession.timeReported`)
/// and, between them, `currentTime()` (see `VLCSession.tick` for why).
final class VLCPictureTimes: Sendable {
    /// How pictures are treated.
    enum Mode: Sendable, Equatable {
        /// A seek or the start is settling: keep pictures, stamp them with the target.
        case settling
        /// Paused: hand the first picture on, then only keep redisplays.
        case paused
        /// Playing: hand every picture on, stamped from libVLC's last time report.
        case running
        /// Resumed, waiting for the first new picture to start running (libVLC may hold the
        /// picture for a while, e.g. about a second after a rate change).
        case resuming
    }

    /// Wall seconds the time runs on past the last sign of progress (a new picture or a time
    /// report), so that it holds when libVLC stops (waiting for data).
    static let maximumLead = 0.4
    /// `maximumLead` for adaptive streams (`followWallClock`): libVLC's clock runs on while it
    /// holds the first picture after `play()` (about a second), and the pictures drop to it.
    static let adaptiveMaximumLead = 1.4

    private struct State {
        var mode = Mode.settling
        /// The last time report while running, or the time paused or sought at.
        var anchorMedia = 0.0
        var anchorWall = 0.0
        var rate = 1.0
        var lastStamp = -Double.infinity
        var presentedWhilePaused = false
        /// Paused while running: the time of the picture on screen, which libVLC may still
        /// follow with the pictures it had queued, a frame each (nil: paused or sought at a time).
        var pausedPicture: Double?
        var lastProgressWall = 0.0
        var frameDuration = 0.04
        /// The stream's frame rate is known: pictures shown while playing are stamped with
        /// their frame's start.
        var framesOnGrid = false
        /// See `followWallClock()`.
        var followsWall = false
        /// The last `RenderLead.count` render leads while running (see `displayLateness`).
        var renderLeads = RenderLeads()
        /// When each new picture shown while settling was displayed, from the one a seek
        /// while playing waits for on (monotonic seconds, the first `maximumSettlingShows`).
        var settlingShows: [Double] = []
        /// Resuming: the time of the picture on screen, which the first new one follows.
        var resumedFrom: Double?
        var maximumLead: Double { followsWall ? VLCPictureTimes.adaptiveMaximumLead : VLCPictureTimes.maximumLead }
    }

    private let state = Locked(State())

    /// The media time a picture shown at `now` gets.
    private static func time(_ s: State, at now: Double) -> Double {
        guard s.mode == .running else { return s.anchorMedia }
        let wall = min(now, max(s.lastProgressWall, s.anchorWall) + s.maximumLead)
        return s.anchorMedia + max(0, wall - s.anchorWall) * s.rate
    }

    /// How much later than the last picture a new one is stamped at least while running: less
    /// than any frame, so that the frame its time names stays the one it rounds to.
    static let minimumStep = 0.001

    /// How much earlier than a frame's start a picture's estimated time may be and still be
    /// taken for that frame: libVLC shows a picture a little before its date (by its render
    /// time estimate; the times estimated while playing came out 1-12 ms before the frames'
    /// starts), which rounding down would give to the frame before.
    static func earlyAllowance(frameDuration: Double) -> Double { min(0.015, frameDuration / 3) }

    /// The start of the frame shown at `time` (the last one starting at or before it), frames
    /// `frameDuration` apart from 0.
    static func frameStart(at time: Double, frameDuration: Double) -> Double {
        (time / frameDuration + 1e-6).rounded(.down) * frameDuration
    }

    /// `estimate` on the frame grid (the start of the frame shown) when the rate is known;
    /// otherwise as it is.
    private static func onFrameGrid(_ estimate: Double, _ s: State) -> Double {
        guard s.framesOnGrid else { return estimate }
        return frameStart(at: estimate + earlyAllowance(frameDuration: s.frameDuration), frameDuration: s.frameDuration)
    }

    /// How far a playing picture's estimated time may lie before (`early`) or after (`late`)
    /// the start of the frame that follows the last picture, in frames, and still be taken
    /// for that frame. libVLC shows each picture within a few milliseconds of its date, but a
    /// display callback (or the time report the estimate runs on from) now and then comes
    /// 15-30 ms late on a loaded machine, and then the estimate alone names the frame after.
    /// A frame libVLC drops (rare: 1 in 800 pictures under the address sanitizer and a load)
    /// puts the estimate a whole frame past it, outside the window, and the stamp follows the
    /// estimate again.
    static let sequenceWindow = (early: 0.5, late: 0.75)

    /// The stamp of a picture shown while playing whose estimated time is `estimate`: the
    /// frame after the last picture when the estimate lies within `sequenceWindow` of it, or
    /// anywhere before it when the picture differs from the last one (and the frame rate is
    /// known); otherwise the estimate on the frame grid. A new picture is a later frame, so
    /// an estimate further back only says the time report it runs on came late (measured once
    /// under the address sanitizer: 20 ms behind, which named the frame before); a picture
    /// like the last one may be a redisplay, and stays on the last one's frame. Either way
    /// after the last stamp: two estimates that round to one frame (one shown late, the next
    /// early) must not give two pictures one time.
    private static func runningStamp(estimate: Double, identical: Bool, _ s: State) -> Double {
        if s.framesOnGrid, s.lastStamp.isFinite {
            let next = frameStart(at: s.lastStamp + s.frameDuration, frameDuration: s.frameDuration)
            let offset = (estimate - next) / s.frameDuration
            if offset < sequenceWindow.late, offset >= -sequenceWindow.early || !identical { return next }
        }
        return max(onFrameGrid(estimate, s), s.lastStamp + minimumStep)
    }

    /// The last few render leads: the seconds from the end of libVLC's copy of a picture into
    /// its slot to its display callback.
    struct RenderLeads {
        static let count = 8
        private var leads: [Double] = []
        private var next = 0

        /// Adds `lead`, dropping the oldest beyond `count`.
        mutating func add(_ lead: Double) {
            if leads.count < Self.count { leads.append(lead) } else { leads[next] = lead }
            next = (next + 1) % Self.count
        }

        /// The median of the leads kept (nil before the first).
        var median: Double? {
            guard !leads.isEmpty else { return nil }
            let sorted = leads.sorted()
            return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
    }

    /// How much a render lead may exceed the median of the recent ones and still be taken as
    /// on time.
    static let renderLeadTolerance = 0.005

    /// How late (seconds) a picture written at `writtenAt` is displayed at `now`, by libVLC's
    /// own schedule: libVLC copies each picture into its slot ahead of its date (by about its
    /// render time estimate, 15-25 ms measured) and then waits for the date to display it, so
    /// the wait is nearly the same for each picture. A display callback that comes well after
    /// the usual wait was held up after the picture was ready (a busy machine), and the picture
    /// belongs to the time it would have been shown at. Records the lead (before taking the
    /// median, which a single late one does not move).
    private static func displayLateness(writtenAt: Double?, now: Double, _ s: inout State) -> Double {
        guard let writtenAt, writtenAt <= now, now - writtenAt < 1 else { return 0 }
        let lead = now - writtenAt
        s.renderLeads.add(lead)
        guard let usual = s.renderLeads.median else { return 0 }
        return max(0, lead - usual - renderLeadTolerance)
    }

    /// How many displays of new pictures settling records.
    static let maximumSettlingShows = 32

    /// Seconds since the last sign of progress while running (0 otherwise).
    func secondsWithoutProgress() -> Double {
        state.withLock { s in
            guard s.mode == .running else { return 0 }
            return monotonicSeconds() - max(s.lastProgressWall, s.anchorWall)
        }
    }

    /// The media time a picture shown now would get: while running, libVLC's last time
    /// report carried forward by the wall time since it at the rate (held once libVLC shows
    /// no progress for `maximumLead`); otherwise the time paused, resumed or sought at.
    func currentTime() -> Double { state.withLock { Self.time($0, at: monotonicSeconds()) } }

    /// The mode pictures are treated by now.
    var mode: Mode { state.get().mode }

    /// The media time of the picture on screen: the last one stamped while running, else the
    /// time paused, resumed or sought at.
    var shownTime: Double {
        state.withLock { s in
            (s.mode == .running && s.lastStamp.isFinite) ? s.lastStamp : s.anchorMedia
        }
    }

    /// Enters `mode` at `media` seconds.
    func enter(_ mode: Mode, at media: Double) {
        state.withLock { s in
            s.mode = mode
            s.anchorMedia = max(0, media)
            s.anchorWall = monotonicSeconds()
            s.lastProgressWall = s.anchorWall
            s.presentedWhilePaused = false
            s.pausedPicture = nil
            s.settlingShows = []
            s.resumedFrom = nil
            if mode != .running && mode != .resuming { s.lastStamp = -Double.infinity }
        }
    }

    /// Resumes (`watchingPictures`: from the first new picture, else at once) from the picture
    /// on screen: the one paused at, or the last libVLC showed after it.
    /// The position runs on from where it held either way.
    func resume(watchingPictures: Bool) {
        let (position, shown) = state.withLock { s in
            (Self.time(s, at: monotonicSeconds()), s.mode == .paused ? s.pausedPicture : nil)
        }
        enter(watchingPictures ? .resuming : .running, at: position)
        if watchingPictures, let shown { state.withLock { $0.resumedFrom = shown } }
    }

    /// Runs on after a seek to `target` while playing, which waited for the picture at the
    /// target: libVLC shows it within `settleTime` after the first picture once the seek
    /// buffered (that one may still be from before the seek: measured 12-20 ms before the
    /// target's, which comes at no frame interval from it). The time runs from when
    /// it was shown, and the pictures shown after it while settling (the seek finished late)
    /// count a frame each. `presentTarget` is called when the picture on screen is the one at
    /// the target, before any later one is stamped, to hand it on. Without a picture shown
    /// while settling, the time runs from now.
    func runAfterSeek(at target: Double, settleTime: Double, presentTarget: () -> Void) {
        state.withLock { s in
            let now = monotonicSeconds()
            let shows = s.mode == .settling ? s.settlingShows : []
            s.mode = .running
            s.anchorMedia = max(0, target)
            s.presentedWhilePaused = false
            s.pausedPicture = nil
            s.settlingShows = []
            s.lastProgressWall = now
            guard let first = shows.first else {
                s.anchorWall = now
                s.lastStamp = -Double.infinity
                return
            }
            let targetShow = shows.lastIndex { $0 <= first + settleTime } ?? 0
            let later = shows.count - 1 - targetShow
            s.anchorWall = shows[targetShow]
            let targetStamp = s.framesOnGrid ? Self.frameStart(at: s.anchorMedia, frameDuration: s.frameDuration) : s.anchorMedia
            s.lastStamp = max(s.anchorMedia, targetStamp + Double(later) * s.frameDuration)
            if later == 0 { presentTarget() }
        }
    }

    /// Enters `mode` at the time a picture shown now would get.
    func enter(_ mode: Mode) { enter(mode, at: currentTime()) }

    /// Pauses at the time a picture shown now would get; the picture on screen keeps its own
    /// stamp, and each new picture libVLC still shows is stamped a frame after the one before.
    func enterPaused() {
        state.withLock { s in
            let now = monotonicSeconds()
            let shown = s.mode == .running && s.lastStamp.isFinite ? s.lastStamp : nil
            s.anchorMedia = max(0, Self.time(s, at: now))
            s.mode = .paused
            s.anchorWall = now
            s.lastProgressWall = now
            s.presentedWhilePaused = true
            s.lastStamp = -Double.infinity
            s.pausedPicture = shown
        }
    }

    /// For adaptive streams (HLS, DASH), whose time libVLC 3 reports from its demuxer: the
    /// reports lag the pictures by up to 0.7 s and hold at segment boundaries, while the
    /// pictures follow libVLC's clock, which runs with the wall clock from each resume (after
    /// `play()` libVLC holds the first picture about a second, then drops frames to its
    /// clock). So a report behind the wall-clock time is not taken (one ahead still is); the
    /// first new picture after a resume gets the wall time since the resume; the time runs on
    /// without new pictures for `adaptiveMaximumLead`, not `maximumLead`; and after a hold
    /// (waiting for data) it runs on from where it held.
    func followWallClock() { state.withLock { $0.followsWall = true } }

    /// True after `followWallClock()`.
    var followsWallClock: Bool { state.get().followsWall }

    /// A time libVLC reported (seconds) for this very moment (its TimeChanged event, on its
    /// thread); the pictures that follow are stamped from it while running.
    func timeReported(_ media: Double) {
        state.withLock { s in
            guard s.mode == .running else { return }
            if s.followsWall, media <= Self.time(s, at: monotonicSeconds()) { return }
            s.anchorMedia = max(0, media)
            s.anchorWall = monotonicSeconds()
            s.lastProgressWall = s.anchorWall
        }
    }

    /// Sets the video frame duration (seconds), the step from a paused picture to the next;
    /// `nominal`: it is the stream's own (not a default), so pictures shown while playing
    /// are stamped with their frame's start.
    func setFrameDuration(_ seconds: Double, nominal: Bool) {
        guard seconds > 0 else { return }
        state.withLock { s in
            s.frameDuration = seconds
            s.framesOnGrid = nominal
        }
    }

    /// Changes the rate from the time a picture shown now would get.
    func setRate(_ rate: Double) {
        state.withLock { s in
            let now = monotonicSeconds()
            s.anchorMedia = Self.time(s, at: now)
            s.anchorWall = now
            s.rate = rate
        }
    }

    /// The time of a picture displayed now, whether it goes to the `.frames` handler, and
    /// whether it jumped past the pictures between (an adaptive stream's first picture after
    /// a resume, when libVLC dropped those to catch up with its clock).
    /// `repeated`: the same picture as before (libVLC redisplays while it waits); `identical`:
    /// it holds the same picture as the one before, however soon after its copy it came
    /// (what tells a redisplay while paused); `writtenAt`:
    /// when libVLC finished writing it into its slot (monotonic seconds), if known;
    /// `seekPicture`: it is the first picture after a seek while playing buffered (see
    /// `runAfterSeek`).
    func stampPicture(repeated: Bool, identical: Bool, writtenAt: Double? = nil,
                      seekPicture: Bool = false) -> (time: Double, present: Bool, jumped: Bool) {
        state.withLock { s in
            let now = monotonicSeconds()
            switch s.mode {
            case .settling:
                if seekPicture {
                    s.settlingShows = [now]
                } else if !repeated, !s.settlingShows.isEmpty, s.settlingShows.count < Self.maximumSettlingShows {
                    s.settlingShows.append(now)
                }
                return (s.anchorMedia, false, false)
            case .paused:
                defer { s.presentedWhilePaused = true }
                if let shown = s.pausedPicture {
                    // Paused, libVLC shows only the pictures it had queued and redisplays:
                    // a picture like the one before is a redisplay, however late it came.
                    let time = identical ? shown : shown + s.frameDuration
                    s.pausedPicture = time
                    s.anchorMedia = time
                    return (time, false, false)
                }
                return (s.anchorMedia, !s.presentedWhilePaused, false)
            case .resuming:
                // The first new picture after the one shown while paused.
                guard !repeated else { return (s.anchorMedia, false, false) }
                s.mode = .running
                let step = s.followsWall ? max(s.frameDuration, (now - s.anchorWall) * s.rate) : s.frameDuration
                let shown = s.resumedFrom ?? s.anchorMedia
                s.resumedFrom = nil
                s.anchorMedia = max(s.anchorMedia, Self.onFrameGrid(shown + step, s))
                s.anchorWall = now
                s.lastProgressWall = now
                s.lastStamp = s.anchorMedia
                return (s.anchorMedia, true, step > 2 * s.frameDuration)
            case .running:
                if repeated { return (s.lastStamp, false, false) }
                if s.followsWall, now - max(s.lastProgressWall, s.anchorWall) > s.maximumLead {
                    // After a hold the time runs on from where it held.
                    s.anchorMedia = Self.time(s, at: now)
                    s.anchorWall = now
                }
                s.lastProgressWall = now
                let shownAt = now - Self.displayLateness(writtenAt: writtenAt, now: now, &s)
                let time = Self.runningStamp(estimate: Self.time(s, at: shownAt), identical: identical, s)
                s.lastStamp = time
                return (time, true, false)
            }
        }
    }

    /// Notes that a picture was handed on while paused (presented by the engine itself).
    func markPresentedWhilePaused() { state.withLock { $0.presentedWhilePaused = true } }
}
#endif

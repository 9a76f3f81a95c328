#if VLC
import Foundation
import PlaybackKit

/// The engine's own estimate of the media time being presented, anchored on libVLC's
/// `TimeChanged` reports (exact when they are sent, but only a few per second) and run on by
/// the wall clock between them. It also stamps pictures and decides which reach the
/// `.frames` handler: while paused a picture is handed on once, not at every redisplay, and
/// while a seek settles pictures are only kept for thumbnails.
final class VLCMediaClock: Sendable {
    /// How pictures are treated.
    enum Mode: Sendable, Equatable {
        /// A seek or the start is settling: keep pictures, stamp them with the target.
        case settling
        /// Paused: hand the first picture on, then only keep redisplays.
        case paused
        /// Playing: hand every picture on with the running time.
        case running
    }

    private struct State {
        var mode = Mode.settling
        var anchorMedia = 0.0
        var anchorWall = 0.0
        var rate = 1.0
        var lastStamp = -Double.infinity
        var presentedWhilePaused = false
    }

    private let state = Locked(State())

    private static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    private static func estimate(_ s: State, at now: Double) -> Double {
        guard s.mode == .running else { return s.anchorMedia }
        return s.anchorMedia + max(0, now - s.anchorWall) * s.rate
    }

    /// The media time presented now, seconds.
    func current() -> Double { state.withLock { Self.estimate($0, at: Self.now()) } }

    /// The mode pictures are treated by now.
    var mode: Mode { state.get().mode }

    /// Enters `mode` with the clock at `media` seconds.
    func enter(_ mode: Mode, at media: Double) {
        state.withLock { s in
            s.mode = mode
            s.anchorMedia = max(0, media)
            s.anchorWall = Self.now()
            s.presentedWhilePaused = false
            if mode != .running { s.lastStamp = -Double.infinity }
        }
    }

    /// Enters `mode` from where the clock stands now.
    func enter(_ mode: Mode) { enter(mode, at: current()) }

    /// A time libVLC reported (seconds) for this very moment; used while running.
    func anchor(_ media: Double) {
        state.withLock { s in
            guard s.mode == .running else { return }
            s.anchorMedia = max(0, media)
            s.anchorWall = Self.now()
        }
    }

    /// Changes the rate from where the clock stands now.
    func setRate(_ rate: Double) {
        state.withLock { s in
            let now = Self.now()
            s.anchorMedia = Self.estimate(s, at: now)
            s.anchorWall = now
            s.rate = rate
        }
    }

    /// The time of a picture displayed now, and whether it goes to the `.frames` handler.
    func stampPicture() -> (time: Double, present: Bool) {
        state.withLock { s in
            switch s.mode {
            case .settling:
                return (s.anchorMedia, false)
            case .paused:
                defer { s.presentedWhilePaused = true }
                return (s.anchorMedia, !s.presentedWhilePaused)
            case .running:
                let time = max(Self.estimate(s, at: Self.now()), s.lastStamp)
                s.lastStamp = time
                return (time, true)
            }
        }
    }

    /// Notes that a picture was handed on while paused (presented by the engine itself).
    func markPresentedWhilePaused() { state.withLock { $0.presentedWhilePaused = true } }
}
#endif

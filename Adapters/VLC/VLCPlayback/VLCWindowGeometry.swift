#if VLC
import FoundationEssentials
import PlaybackKit
import X11Windows

/// Reads an X11 window's size on a connection of its own, for mapping scaling modes onto
/// libVLC's aspect and crop (which depend on the window's shape). Used on the session's queue.
final class VLCWindowGeometry {
    private let connection: X11Connection?
    private let window: UInt
    /// The size the scaling was last applied for.
    var appliedSize: VideoSize?

    /// Geometry of window `handle` on $DISPLAY.
    init(window handle: UInt) {
        connection = X11Connection()
        window = handle
    }

    /// The window's size now, or nil without a display or such window.
    var size: VideoSize? { connection?.size(of: window) }
}
#endif

#if VLC
/// The X11 windows the libVLC players of this process draw into. libVLC refuses a window that
/// another of its players still holds ("drawable is busy") and then draws into none; a player
/// closing on its own queue may still hold the window a new player is given (an app that
/// plays the next file in the same window, or a new window that got a closed one's id). A new
/// player waits until the window is free.
final class VLCWindowClaims: @unchecked Sendable {
    // @unchecked: `held` is read and written only with `changed` locked.
    private let changed = ConditionVariable()
    private var held: [UInt: Int] = [:]

    /// The claims of this process.
    static let shared = VLCWindowClaims()

    /// Claims window `handle`, waiting at most `timeout` seconds for another player to let go
    /// of it; false when it is still held then (the claim is taken all the same).
    func claim(_ handle: UInt, timeout: Double) -> Bool {
        changed.withLock {
            let deadline = monotonicSeconds() + timeout
            var free = true
            while held[handle, default: 0] > 0 {
                if !changed.wait(until: deadline) {
                    free = false
                    break
                }
            }
            held[handle, default: 0] += 1
            return free
        }
    }

    /// Lets go of window `handle` (its player is released).
    func release(_ handle: UInt) {
        changed.withLock {
            held[handle, default: 1] -= 1
            if held[handle] ?? 0 <= 0 { held[handle] = nil }
        }
        changed.broadcast()
    }
}
#endif

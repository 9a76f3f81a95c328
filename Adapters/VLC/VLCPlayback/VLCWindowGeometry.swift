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

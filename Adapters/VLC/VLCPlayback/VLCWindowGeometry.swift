#if VLC
import CVLC
import FoundationEssentials
import PlaybackKit

/// Reads an X11 window's size, for mapping scaling modes onto libVLC's aspect and crop.
enum VLCWindowGeometry {
    /// The size of window `handle`, or nil without a display or such window.
    static func size(ofWindow handle: UInt) -> VideoSize? {
        var width: Int32 = 0
        var height: Int32 = 0
        guard pk_vlc_x11_window_size(handle, &width, &height) == 0, width > 0, height > 0 else { return nil }
        return VideoSize(width: Int(width), height: Int(height))
    }
}
#endif

import PlaybackKit

#if GStreamer
import GStreamerPlayback
#endif
#if FFmpeg
import FFmpegPlayback
#endif
#if MPV
import MPVPlayback
#endif
#if VLC
import VLCPlayback
#endif

/// Registers the adapters this build compiled in (the package traits choose which).
public enum PlaybackBackends {
    /// Registers every compiled-in backend with `Backends`, in a fixed order:
    /// gstreamer, ffmpeg, mpv, vlc. Calling it again is harmless.
    public static func registerBuiltIns() {
        #if GStreamer
        Backends.register(GStreamerBackend())
        #endif
        #if FFmpeg
        Backends.register(FFmpegBackend())
        #endif
        #if MPV
        Backends.register(MPVBackend())
        #endif
        #if VLC
        Backends.register(VLCBackend())
        #endif
    }
}

#if GStreamer
import CGStreamer
import FoundationEssentials
import PlaybackKit

/// The GStreamer backend: players over `playbin`, each on its own GLib main loop thread.
public struct GStreamerBackend: PlaybackBackend {
    /// Makes the backend (GStreamer is initialised once per process, on first use).
    public init() {}

    /// "gstreamer".
    public var name: String { "gstreamer" }

    /// GStreamer's own version string, e.g. "GStreamer 1.22.0".
    public var engineVersion: String { GStreamerRuntime.version }

    /// A player for `url`; throws `.backendUnavailable` if GStreamer cannot be initialised.
    public func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        if let problem = GStreamerRuntime.initialisationError {
            throw PlaybackError(code: .backendUnavailable, message: "gstreamer: \(problem)")
        }
        return EnginePlayer(engine: GStreamerEngine(), url: url, options: options, label: "gstreamer")
    }
}

/// Process-wide GStreamer set-up.
enum GStreamerRuntime {
    /// nil once `gst_init_check` succeeded (it runs once, on first access); else GStreamer's
    /// reason.
    static let initialisationError: String? = {
        var error: UnsafeMutablePointer<GError>?
        guard gst_init_check(nil, nil, &error) != 0 else {
            let text = error.map { String(cString: $0.pointee.message) } ?? "gst_init failed"
            if let error { g_error_free(error) }
            return text
        }
        return nil
    }()

    /// "GStreamer 1.22.0".
    static var version: String {
        _ = initialisationError
        guard let text = gst_version_string() else { return "GStreamer" }
        defer { g_free(text) }
        return String(cString: text)
    }
}

#endif

#if GStreamer
import FoundationEssentials
import PlaybackKit

/// The GStreamer backend: players over `playbin`, each on its own GLib main loop thread.
public struct GStreamerBackend: PlaybackBackend {
    /// Makes the backend (GStreamer is initialised once per process, on first use).
    public init() {}

    /// "gstreamer".
    public var name: String { "gstreamer" }

    /// GStreamer's own version string, e.g. "GStreamer 1.22.0".
    public var engineVersion: String { GStreamerPipeline.libraryVersion }

    /// A player for `url`; throws `.backendUnavailable` if GStreamer cannot be initialised.
    public func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        if let problem = GStreamerPipeline.initialisationError {
            throw PlaybackError(code: .backendUnavailable, message: "gstreamer: \(problem)")
        }
        return EnginePlayer(engine: GStreamerEngine(), url: url, options: options, label: "gstreamer")
    }
}

#endif

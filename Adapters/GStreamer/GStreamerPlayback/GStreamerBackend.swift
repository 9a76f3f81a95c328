#if GStreamer
import FoundationEssentials
import PlaybackKit

/// The GStreamer backend: players over `playbin`, each on its own GLib main loop thread.
public struct GStreamerBackend: PlaybackBackend {
    /// True when every http(s) source is read through the loopback relay (libcurl), not only
    /// those given request headers (which GStreamer's HLS demuxer would not send when it
    /// fetches variant playlists and keys).
    public let relaysEveryRemoteSource: Bool

    /// Makes the backend (GStreamer is initialised once per process, on first use).
    /// `relaysEveryRemoteSource`: see the property.
    public init(relaysEveryRemoteSource: Bool = false) {
        self.relaysEveryRemoteSource = relaysEveryRemoteSource
    }

    /// "gstreamer".
    public var name: String { "gstreamer" }

    /// GStreamer's own version string, e.g. "GStreamer 1.22.0".
    public var engineVersion: String { GStreamerPipeline.libraryVersion }

    /// A player for `url`; throws `.backendUnavailable` if GStreamer cannot be initialised.
    public func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        if let problem = GStreamerPipeline.initialisationError {
            throw PlaybackError(code: .backendUnavailable, message: "gstreamer: \(problem)")
        }
        return EnginePlayer(engine: GStreamerEngine(relaysEveryRemoteSource: relaysEveryRemoteSource), url: url, options: options, label: "gstreamer")
    }
}

#endif

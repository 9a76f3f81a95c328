#if GStreamer
import Foundation
import PlaybackKit

/// The GStreamer backend (being written).
public struct GStreamerBackend: PlaybackBackend {
    /// Makes the backend.
    public init() {}
    public var name: String { "gstreamer" }
    public var engineVersion: String { "unknown" }
    public func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        throw PlaybackError(code: .backendUnavailable, message: "GStreamer adapter not built yet")
    }
}
#endif

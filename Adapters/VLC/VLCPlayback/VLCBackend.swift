#if VLC
import Foundation
import PlaybackKit

/// The VLC backend (being written).
public struct VLCBackend: PlaybackBackend {
    /// Makes the backend.
    public init() {}
    public var name: String { "vlc" }
    public var engineVersion: String { "unknown" }
    public func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        throw PlaybackError(code: .backendUnavailable, message: "VLC adapter not built yet")
    }
}
#endif

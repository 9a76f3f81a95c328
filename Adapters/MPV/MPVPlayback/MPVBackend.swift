#if MPV
import Foundation
import PlaybackKit

/// The MPV backend (being written).
public struct MPVBackend: PlaybackBackend {
    /// Makes the backend.
    public init() {}
    public var name: String { "mpv" }
    public var engineVersion: String { "unknown" }
    public func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        throw PlaybackError(code: .backendUnavailable, message: "MPV adapter not built yet")
    }
}
#endif

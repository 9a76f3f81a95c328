#if FFmpeg
import Foundation
import PlaybackKit

/// The FFmpeg backend (being written).
public struct FFmpegBackend: PlaybackBackend {
    /// Makes the backend.
    public init() {}
    public var name: String { "ffmpeg" }
    public var engineVersion: String { "unknown" }
    public func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        throw PlaybackError(code: .backendUnavailable, message: "FFmpeg adapter not built yet")
    }
}
#endif

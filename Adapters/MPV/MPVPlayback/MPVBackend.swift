#if MPV
import CMPV
import FoundationEssentials
import PlaybackKit

/// The libmpv backend: players over mpv's client API; `.frames` pictures through its software
/// render API, thumbnails otherwise through `screenshot-raw`.
public struct MPVBackend: PlaybackBackend {
    /// Makes the backend.
    public init() {}

    /// "mpv".
    public var name: String { "mpv" }

    /// The client API version of the loaded libmpv, e.g. "libmpv 2.0.0".
    public var engineVersion: String {
        let version = mpv_client_api_version()
        return "libmpv \(pk_mpv_api_major(version)).\(pk_mpv_api_minor(version)).0"
    }

    /// A player over a new `MPVEngine`.
    public func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        EnginePlayer(engine: MPVEngine(), url: url, options: options, label: "mpv")
    }
}
#endif

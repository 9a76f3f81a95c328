#if MPV
import FoundationEssentials
import PlaybackKit

/// The libmpv backend: players over mpv's client API; `.frames` pictures through its software
/// render API, thumbnails otherwise through `screenshot-raw`.
public struct MPVBackend: PlaybackBackend {
    /// Makes the backend.
    public init() {}

    /// "mpv".
    public var name: String { "mpv" }

    /// The client API version of libmpv, e.g. "libmpv 2.0.0" (loading libmpv if needed), or
    /// "libmpv unavailable: <reason>" when it cannot be loaded.
    public var engineVersion: String { MPVLibrary.versionDescription }

    /// A player over a new `MPVEngine`; loads libmpv on first use and throws
    /// `.backendUnavailable` with the reason when it cannot be loaded.
    public func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        try MPVLibrary.load()
        return EnginePlayer(engine: MPVEngine(), url: url, options: options, label: "mpv")
    }
}
#endif

#if VLC
import CVLC
import FoundationEssentials
import PlaybackKit

/// The libVLC 3 backend: each player drives one `libvlc_media_player_t` of the process-wide
/// libVLC instance.
public struct VLCBackend: PlaybackBackend {
    /// True when every http(s) source is read through the loopback relay (libcurl), not
    /// only those that need it (request headers beyond User-Agent and Referer, or playlists
    /// that may name local files): one http client and one set of authorities for all remote
    /// media.
    public let relaysEveryRemoteSource: Bool

    /// Makes the backend; libVLC itself is loaded when the first player is made.
    /// `relaysEveryRemoteSource`: see the property.
    public init(relaysEveryRemoteSource: Bool = false) {
        self.relaysEveryRemoteSource = relaysEveryRemoteSource
    }

    /// "vlc".
    public var name: String { "vlc" }

    /// "libVLC" and the library's version, e.g. "libVLC 3.0.24 Vetinari".
    public var engineVersion: String {
        guard let version = libvlc_get_version() else { return "libVLC" }
        return "libVLC \(String(cString: version))"
    }

    /// A player for `url`; throws `backendUnavailable` when libVLC cannot start.
    public func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        let instance = try VLCInstance.shared()
        return EnginePlayer(engine: VLCEngine(instance: instance, relaysEveryRemoteSource: relaysEveryRemoteSource), url: url, options: options, label: "vlc")
    }
}
#endif

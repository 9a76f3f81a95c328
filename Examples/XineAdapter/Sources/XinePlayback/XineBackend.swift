import CXine
import FoundationEssentials
import PlaybackKit

/// xine-lib 1.2 as a PlaybackKit backend: players are `EnginePlayer`s over a `XineEngine`,
/// with xine's raw video output (for `.frames` and thumbnails; `.window` shows nothing) and
/// its "none" audio output for `AudioOutput.null` (for `.system`, the output xine finds).
///
/// ```swift
/// Backends.register(XineBackend())
/// let player = try Backends.makePlayer(backend: "xine", url: url, options: PlaybackOptions())
/// ```
public struct XineBackend: PlaybackBackend {
    /// A backend over the xine-lib this program links.
    public init() {}

    /// "xine".
    public var name: String { "xine" }

    /// "xine-lib 1.2.13", as xine_get_version_string() says.
    public var engineVersion: String { "xine-lib \(String(cString: xine_get_version_string()))" }

    /// A player for `url`; the source is opened on `prepareToPlay()`.
    public func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        EnginePlayer(engine: XineEngine(), url: url, options: options, label: name)
    }
}

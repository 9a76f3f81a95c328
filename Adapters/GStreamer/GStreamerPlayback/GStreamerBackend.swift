#if GStreamer
import CGStreamer
import Foundation
import PlaybackKit

/// The GStreamer backend: players over `playbin`, each on its own GLib main loop thread.
public struct GStreamerBackend: PlaybackBackend {
    /// Makes the backend (GStreamer is initialised once per process, on first use).
    public init() {}

    /// "gstreamer".
    public var name: String { "gstreamer" }

    /// GStreamer's own version string, e.g. "GStreamer 1.22.0".
    public var engineVersion: String { GStreamerRuntime.version }

    /// A player for `url`; throws `.backendUnavailable` if GStreamer cannot be initialised.
    public func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        if let problem = GStreamerRuntime.initialisationError {
            throw PlaybackError(code: .backendUnavailable, message: "gstreamer: \(problem)")
        }
        return EnginePlayer(engine: GStreamerEngine(), url: url, options: options, label: "gstreamer")
    }
}

/// Process-wide GStreamer set-up.
enum GStreamerRuntime {
    /// nil once `gst_init_check` succeeded (it runs once, on first access); else GStreamer's
    /// reason.
    static let initialisationError: String? = {
        var error: UnsafeMutablePointer<GError>?
        guard gst_init_check(nil, nil, &error) != 0 else {
            let text = error.map { String(cString: $0.pointee.message) } ?? "gst_init failed"
            if let error { g_error_free(error) }
            return text
        }
        return nil
    }()

    /// "GStreamer 1.22.0".
    static var version: String {
        _ = initialisationError
        guard let text = gst_version_string() else { return "GStreamer" }
        defer { g_free(text) }
        return String(cString: text)
    }
}

/// `PlaybackEngine` over GStreamer: each `open` starts a `GStreamerSession` (a playbin on its
/// own loop thread); every call is posted to that session and returns at once.
final class GStreamerEngine: PlaybackEngine, @unchecked Sendable {
    // @unchecked: the one mutable member, `session`, is Locked (thumbnail() comes from any
    // thread).
    private let session = Locked<GStreamerSession?>(nil)

    init() {}

    deinit { close() }

    func open(_ source: MediaSource, options: PlaybackOptions, sink: EngineSink) {
        let next = GStreamerSession(source: source, options: options, sink: sink)
        let previous = session.withLock { current -> GStreamerSession? in
            defer { current = next }
            return current
        }
        previous?.close()
        next.start()
    }

    func play() { session.get()?.play() }
    func pause() { session.get()?.pause() }
    func seek(to seconds: TimeInterval, accurate: Bool) { session.get()?.seek(to: seconds, accurate: accurate) }
    func setRate(_ rate: Float) { session.get()?.setRate(rate) }
    func setVolume(_ volume: Float) { session.get()?.setVolume(volume) }
    func setScalingMode(_ mode: ScalingMode) { session.get()?.setScalingMode(mode) }

    func close() {
        let current = session.withLock { current -> GStreamerSession? in
            defer { current = nil }
            return current
        }
        current?.close()
    }

    func thumbnail() -> VideoFrame? { session.get()?.thumbnail() }
}
#endif

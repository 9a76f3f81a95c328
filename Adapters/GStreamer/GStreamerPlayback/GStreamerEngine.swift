#if GStreamer
import FoundationEssentials
import PlaybackKit

/// `PlaybackEngine` over GStreamer: each `open` starts a `GStreamerSession` (a playbin on its
/// own loop thread); every call is posted to that session and returns at once.
final class GStreamerEngine: PlaybackEngine, Sendable {
    /// The open session; Locked because thumbnail() comes from any thread.
    private let session = Locked<GStreamerSession?>(nil)

    /// Every http(s) source goes through the relay (`GStreamerBackend.relaysEveryRemoteSource`).
    private let relaysEveryRemoteSource: Bool

    init(relaysEveryRemoteSource: Bool = false) {
        self.relaysEveryRemoteSource = relaysEveryRemoteSource
    }

    deinit { close() }

    func open(_ source: MediaSource, options: PlaybackOptions, sink: EngineSink) {
        let next = GStreamerSession(source: source, options: options, relaysEveryRemoteSource: relaysEveryRemoteSource, sink: sink)
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
    var appliedVolume: Float? { session.get()?.appliedVolume }

    func selectTrack(kind: TrackKind, engineID: String?) { session.get()?.selectTrack(kind: kind, engineID: engineID) }
    func addSubtitle(_ url: URL) { session.get()?.addSubtitle(url) }
    func setSubtitleDelay(_ seconds: TimeInterval) { session.get()?.setSubtitleDelay(seconds) }
}
#endif

#if MPV
import FoundationEssentials
import PlaybackKit

/// The `PlaybackEngine` over libmpv: each `open` makes an `MPVSession` (its own core, event
/// thread and, for `.frames`, renderer); `close` ends it. Driven by `EnginePlayer`.
public final class MPVEngine: PlaybackEngine {
    /// The open session; set and cleared on the player queue, read by `thumbnail()` anywhere.
    private let current = Locked<MPVSession?>(nil)

    /// Makes an engine with no source open.
    public init() {}

    deinit {
        current.get()?.close()
    }

    /// Creates the session for `source` and starts loading it paused.
    public func open(_ source: MediaSource, options: PlaybackOptions, sink: EngineSink) {
        current.get()?.close()
        do {
            let session = try MPVSession(source: source, options: options, sink: sink)
            current.set(session)
            session.start()
        } catch {
            current.set(nil)
            sink.failed(error)
        }
    }

    /// Resumes.
    public func play() { current.get()?.setPaused(false) }

    /// Pauses on the current frame.
    public func pause() { current.get()?.setPaused(true) }

    /// Seeks; `seekCompleted` follows once the frame there is drawn.
    public func seek(to seconds: TimeInterval, accurate: Bool) {
        current.get()?.seek(to: seconds, accurate: accurate)
    }

    /// Sets the speed through mpv's `speed`.
    public func setRate(_ rate: Float) { current.get()?.setRate(rate) }

    /// Sets the volume through mpv's `volume`.
    public func setVolume(_ volume: Float) { current.get()?.setVolume(volume) }

    /// Maps the scaling mode onto a window output's keepaspect/panscan.
    public func setScalingMode(_ mode: ScalingMode) { current.get()?.setScalingMode(mode) }

    /// Ends the session; its core is torn down on its own event thread.
    public func close() {
        current.withLock { session in
            session?.close()
            session = nil
        }
    }

    /// The picture on screen now, at natural size; nil for audio only or before a frame.
    public func thumbnail() -> VideoFrame? { current.get()?.thumbnail() }
    /// mpv's `volume` property (0...100), as 0...1.
    public var appliedVolume: Float? { current.get()?.appliedVolume }

    /// Sets `aid`, `vid` or `sid` to mpv's track id (or "no").
    public func selectTrack(kind: TrackKind, engineID: String?) { current.get()?.selectTrack(kind: kind, engineID: engineID) }
    /// `sub-add` of the file.
    public func addSubtitle(_ url: URL) { current.get()?.addSubtitle(url) }
    /// mpv's `sub-delay`.
    public func setSubtitleDelay(_ seconds: TimeInterval) { current.get()?.setSubtitleDelay(seconds) }
}
#endif

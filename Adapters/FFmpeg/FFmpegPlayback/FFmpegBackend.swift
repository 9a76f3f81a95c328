#if FFmpeg
import CFFmpeg
import FoundationEssentials
import PlaybackKit

/// The FFmpeg backend: PlaybackKit's own player engine over libavformat, libavcodec,
/// libswscale, libswresample and libavfilter, with SDL2 for sound.
///
/// `AudioOutput.system` plays through SDL2's default audio device. On a machine where no
/// device can be opened it does not fail: it logs a warning (once) and consumes the audio
/// silently at real time, exactly like `AudioOutput.null`, so video keeps its pace and sync.
public struct FFmpegBackend: PlaybackBackend {
    /// Makes the backend.
    public init() {}

    /// "ffmpeg".
    public var name: String { "ffmpeg" }

    /// The FFmpeg release and the libavformat version, e.g.
    /// "FFmpeg 5.1.6 (libavformat 59.27.100)".
    public var engineVersion: String {
        let version = avformat_version()
        let release = String(cString: pk_av_version_info())
        return "FFmpeg \(release) (libavformat \(pk_av_version_major(version)).\(pk_av_version_minor(version)).\(pk_av_version_micro(version)))"
    }

    /// A player for `url` driven by an `FFmpegEngine`.
    public func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        EnginePlayer(engine: FFmpegEngine(), url: url, options: options, label: "ffmpeg")
    }
}

/// The `PlaybackEngine` over FFmpeg: each `open` starts a new `FFmpegSession`; `close`
/// aborts it (its threads end and free everything by themselves, without blocking the caller).
public final class FFmpegEngine: PlaybackEngine {
    private let session = Locked<FFmpegSession?>(nil)

    /// Makes an engine with nothing open.
    public init() {
        av_log_set_level(PlaybackLog.enabled(.debug) ? AV_LOG_INFO : AV_LOG_QUIET)
    }

    deinit { session.get()?.close() }

    /// Starts a session on its own read thread (which opens the source); an open session is
    /// closed first.
    public func open(_ source: MediaSource, options: PlaybackOptions, sink: EngineSink) {
        open(source, options: options, startingAt: 0, sink: sink)
    }

    /// The session seeks before it reads anything, so the start is never decoded.
    public var opensAtStartPosition: Bool { true }

    /// Like `open(_:options:sink:)`, prepared at `start` instead of the beginning.
    public func open(_ source: MediaSource, options: PlaybackOptions, startingAt start: TimeInterval, sink: EngineSink) {
        let fresh = FFmpegSession(source: source, options: options, startingAt: start, sink: sink)
        let previous = session.withLock { current -> FFmpegSession? in
            defer { current = fresh }
            return current
        }
        previous?.close()
        fresh.start()
    }

    /// Runs the master clock and the outputs.
    public func play() { session.get()?.play() }
    /// Freezes the master clock; the picture stays.
    public func pause() { session.get()?.pause() }
    /// Hands the seek to the read thread (keyframe before the target, then decoded up to it
    /// when `accurate`); `seekCompleted` follows once the frame there is shown.
    public func seek(to seconds: TimeInterval, accurate: Bool) { session.get()?.seek(to: seconds, accurate: accurate) }
    /// Sets the speed: audio through atempo (pitch kept), the clock scaled to match.
    public func setRate(_ rate: Float) { session.get()?.setRate(rate) }
    /// Sets the volume of the system audio output.
    public func setVolume(_ volume: Float) { session.get()?.setVolume(volume) }
    /// Sets how a `.window` output lays the picture out.
    public func setScalingMode(_ mode: ScalingMode) { session.get()?.setScalingMode(mode) }

    /// Aborts the session at once (blocking I/O included); its threads free everything.
    public func close() {
        let previous = session.withLock { current -> FFmpegSession? in
            defer { current = nil }
            return current
        }
        previous?.close()
    }

    /// Plays or shows the stream `engineID` names (a stream index, or "external:N" for the
    /// N-th subtitle file), or no track of `kind`: subtitles at once, audio and video on the
    /// read thread, which keeps the position.
    public func selectTrack(kind: TrackKind, engineID: String?) { session.get()?.selectTrack(kind: kind, engineID: engineID) }
    /// Reads the subtitle file on a thread of its own and lists it as a new track.
    public func addSubtitle(_ url: URL) { session.get()?.addSubtitle(url) }
    /// Shifts the subtitles libass draws.
    public func setSubtitleDelay(_ seconds: TimeInterval) { session.get()?.setSubtitleDelay(seconds) }

    /// The picture on screen, converted to RGBA at natural size now.
    public func thumbnail() -> VideoFrame? { session.get()?.thumbnail() }
    /// The gain the audio mixer applies to every sample.
    public var appliedVolume: Float? { session.get()?.appliedVolume }
}
#endif

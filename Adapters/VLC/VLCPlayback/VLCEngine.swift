#if VLC
import CVLC
import Dispatch
import FoundationEssentials
import PlaybackKit

/// The `PlaybackEngine` over libVLC 3. Every call is posted to the engine's own serial queue,
/// where the session (one `libvlc_media_player_t`) lives; libVLC's events are forwarded to the
/// same queue, so libVLC is never called from its own threads.
///
/// libVLC 3 behaviours corrected here:
/// - a seek while paused does not reliably show the new picture (the first picture after it
///   is dropped as late, or is a few frames before the target): paused seeks and the start are
///   done by playing muted until the picture at the target is shown, then pausing;
/// - after the end the player is in its Ended state and cannot seek: it is stopped and started
///   again, then seeks;
/// - unplayable files (text, random bytes, cut short) "play" to their end: they are caught by
///   the parse (no stream found) or by an end before the first picture, and fail;
/// - the memory video output is offered the decoder's padded buffer size (320x258 for
///   320x240): the size learned from the tracks is used instead, with the sample aspect applied;
/// - `TimeChanged` arrives about 4 times a second: positions come from a clock anchored on it.
final class VLCEngine: PlaybackEngine, @unchecked Sendable {
    // @unchecked: `session` is touched only on `queue`; `frames` is thread-safe.
    private let instance: VLCInstance
    /// Every http(s) source goes through the relay (`VLCBackend.relaysEveryRemoteSource`).
    private let relaysEveryRemoteSource: Bool
    private let queue = DispatchQueue(label: "playback.vlc.engine")
    private let frames = VLCPictureStore()
    /// The open session, reached only on `queue` (see `session`).
    private var confinedSession: VLCSession?
    /// The open session: libVLC is called only from `queue`, never from its own threads; a
    /// debug build stops at any access from another thread.
    private var session: VLCSession? {
        get {
            #if DEBUG
            dispatchPrecondition(condition: .onQueue(queue))
            #endif
            return confinedSession
        }
        set {
            #if DEBUG
            dispatchPrecondition(condition: .onQueue(queue))
            #endif
            confinedSession = newValue
        }
    }
    /// What the open session last read back of libVLC's volume.
    private let volumeReport = Locked<Float?>(nil)

    /// An engine playing through `instance`.
    init(instance: VLCInstance, relaysEveryRemoteSource: Bool = false) {
        self.instance = instance
        self.relaysEveryRemoteSource = relaysEveryRemoteSource
    }

    deinit {
        // The player's queue has closed the session before the last reference goes; release
        // anything left here.
        confinedSession?.close()
    }

    func open(_ source: MediaSource, options: PlaybackOptions, sink: EngineSink) {
        queue.async { [self] in
            session?.close()
            frames.clear()
            let session = VLCSession(instance: instance, queue: queue, frames: frames, source: source, options: options,
                                     relaysEveryRemoteSource: relaysEveryRemoteSource, sink: sink, appliedVolume: volumeReport)
            self.session = session
            session.start()
        }
    }

    func play() { queue.async { [self] in session?.play() } }
    func pause() { queue.async { [self] in session?.pause() } }
    func seek(to seconds: TimeInterval, accurate: Bool) { queue.async { [self] in session?.seek(to: seconds) } }
    func setRate(_ rate: Float) { queue.async { [self] in session?.setRate(rate) } }
    func setVolume(_ volume: Float) { queue.async { [self] in session?.setVolume(volume) } }
    func setScalingMode(_ mode: ScalingMode) { queue.async { [self] in session?.setScalingMode(mode) } }

    func selectTrack(kind: TrackKind, engineID: String?) {
        queue.async { [self] in session?.selectTrack(kind: kind, engineID: engineID) }
    }

    func addSubtitle(_ url: URL) {
        queue.async { [self] in session?.addSubtitleFile(url, select: true) }
    }

    func setSubtitleDelay(_ seconds: TimeInterval) {
        queue.async { [self] in session?.setSubtitleDelay(seconds) }
    }

    var appliedVolume: Float? { volumeReport.get() }

    func close() {
        queue.async { [self] in
            session?.close()
            session = nil
            frames.clear()
        }
    }

    func thumbnail() -> VideoFrame? { frames.latest() }
}
#endif

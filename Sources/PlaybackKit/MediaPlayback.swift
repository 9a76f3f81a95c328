import FoundationEssentials

/// A player that can tell what its engine itself reports, beside the values it stores: the
/// conformance suite reads it to see that a setting reached the engine. `EnginePlayer` (every
/// built-in backend) conforms; a player that wraps another forwards it.
public protocol EngineReportingPlayback: MediaPlayback {
    /// The volume (0...1) the engine reports it applies now; nil when it cannot tell.
    var engineReportedVolume: Float? { get }
    /// The tracks with the selection as the engine itself last reported it (`tracks` shows a
    /// selection as soon as it is asked for).
    var engineReportedTracks: [MediaTrack] { get }
}

/// One media player, whatever engine is behind it (ijkplayer's `IJKMediaPlayback` in Swift).
///
/// Every call returns promptly on any thread; outcomes arrive as events. Calls after
/// `shutdown()` are harmless no-ops.
public protocol MediaPlayback: AnyObject, Sendable {
    /// Opens the source; `.preparedToPlay` follows, or `.finished(.playbackError)`.
    func prepareToPlay()
    /// Plays; prepares first when needed; restarts from 0 after the end.
    func play()
    /// Pauses, holding the position and the picture.
    func pause()
    /// Stops: `.finished(.userExited)`, state `.stopped`; the player may be prepared again.
    func stop()
    /// Releases everything; every event stream finishes; later calls are no-ops.
    func shutdown()

    /// True once `.preparedToPlay` was sent, until stop, error or shutdown.
    var isPreparedToPlay: Bool { get }
    /// True while the state is `.playing`.
    var isPlaying: Bool { get }
    /// The current playback state.
    var playbackState: PlaybackState { get }
    /// The current load state.
    var loadState: LoadState { get }

    /// Seconds. Setting it seeks (accurate by default, see `PlaybackOptions.accurateSeek`);
    /// a seek requested before the player is prepared is remembered and done once it is;
    /// of several seeks in quick succession the last one wins.
    var currentPlaybackTime: TimeInterval { get set }
    /// Seconds; 0 while unknown or live.
    var duration: TimeInterval { get }
    /// The video's nominal frames per second, as the engine reported it at prepare; 0 when
    /// unknown, without video, or before prepare.
    var nominalFrameRate: Double { get }
    /// Shows the picture `count` frames after (negative: before) the one shown now and stays
    /// paused (pausing first while playing): an accurate seek to that frame's time, reported
    /// with `.seekCompleted`, clamped to the media; of several seeks and steps in quick
    /// succession the last wins, each step counting from the frame the one before aimed at.
    /// Does nothing without a known frame rate or before prepare.
    func stepFrames(_ count: Int)
    /// Media time buffered up to, in seconds.
    var playableDuration: TimeInterval { get }
    /// 0...100.
    var bufferingProgress: Int { get }
    /// Bytes read from the source so far.
    var numberOfBytesTransferred: Int64 { get }

    /// Display size (pixel aspect applied); `.zero` if none.
    var naturalSize: VideoSize { get }
    /// How the picture fits the viewport or window.
    var scalingMode: ScalingMode { get set }
    /// Start playing by itself once prepared; default false.
    var shouldAutoplay: Bool { get set }
    /// 1.0 is normal speed.
    var playbackRate: Float { get set }
    /// 0...1.
    var playbackVolume: Float { get set }

    /// The picture on screen now (or that would be, also with `VideoOutput.none`), at natural
    /// size; nil when there is none (audio only, nothing decoded yet).
    func thumbnailAtCurrentTime() -> VideoFrame?

    /// A fresh stream of events for each access; events are delivered in order.
    var events: AsyncStream<PlaybackEvent> { get }

    /// The name of the backend whose engine plays ("gstreamer", "ffmpeg", "mpv", "vlc"); ""
    /// while none is chosen (a player of `Backends.makePlayer(backends:url:options:)` before
    /// one of its engines has prepared the media).
    var backendName: String { get }

    // MARK: Tracks, subtitles, metadata, chapters

    /// The media's tracks: [] before prepare; complete, with a `.tracksChanged`, before
    /// `.preparedToPlay`.
    var tracks: [MediaTrack] { get }
    /// Plays (audio, video) or shows (subtitle) the track `id` instead of that kind's current
    /// one; before prepare it is applied at prepare. An unknown id is ignored.
    func selectTrack(id: String)
    /// No track of `kind`: no subtitle shown; no sound (the clock still runs); no picture.
    func deselectTrack(kind: TrackKind)
    /// Adds an external subtitle file (SRT, ASS/SSA or WebVTT; a file or http(s)) as a new
    /// track after the others, and selects it.
    func addSubtitle(url: URL)
    /// Seconds added to every cue's times (positive: later), for drawn subtitles and cue events.
    var subtitleDelay: TimeInterval { get set }
    /// The selected subtitle's cue on screen now.
    var currentSubtitle: SubtitleCue? { get }
    /// The media's tags; known when `.preparedToPlay` arrives.
    var metadata: MediaMetadata { get }
    /// The chapters in order; [] when the media has none.
    var chapters: [Chapter] { get }
}

// MARK: - Async helpers

extension MediaPlayback {
    /// Prepares and returns once `.preparedToPlay` arrives; throws the error of a
    /// `.finished(.playbackError)`, or a `PlaybackError(.engine)` if the player finished
    /// otherwise before it was prepared.
    public func prepare() async throws {
        let stream = events
        if isPreparedToPlay { return }
        prepareToPlay()
        for await event in stream {
            switch event {
            case .preparedToPlay:
                return
            case .finished(.playbackError(let error)):
                throw error
            case .finished(let reason):
                throw PlaybackError(code: .engine, message: "prepare: player finished (\(reason)) before it was prepared")
            default:
                continue
            }
        }
        if !isPreparedToPlay {
            throw PlaybackError(code: .engine, message: "prepare: player was shut down before it was prepared")
        }
    }

    /// Seeks and returns once the seek completed, was superseded by a later seek that
    /// completed, or the player finished; returns the position reached (the current
    /// position if the player finished first).
    @discardableResult
    public func seek(to seconds: TimeInterval) async -> TimeInterval {
        let stream = events
        currentPlaybackTime = seconds
        for await event in stream {
            switch event {
            case .seekCompleted(let position):
                return position
            case .finished:
                return currentPlaybackTime
            default:
                continue
            }
        }
        return currentPlaybackTime
    }
}

import FoundationEssentials

/// What an engine knows once it has opened a source.
public struct EngineMediaInfo: Sendable, Equatable {
    /// Seconds; 0 when unknown or live.
    public var duration: TimeInterval
    /// Display size with the pixel aspect applied; `.zero` without video.
    public var naturalSize: VideoSize
    /// The source has a video stream.
    public var hasVideo: Bool
    /// The source has an audio stream.
    public var hasAudio: Bool
    /// Where the engine is prepared, when it was opened at a start position
    /// (`open(_:options:startingAt:sink:)`) and went there; nil: at the start of the media.
    public var startPosition: TimeInterval?
    /// The video's nominal frames per second; nil when unknown or without video.
    public var frameRate: Double?
    /// Makes the description of an opened source.
    public init(duration: TimeInterval, naturalSize: VideoSize, hasVideo: Bool, hasAudio: Bool,
                startPosition: TimeInterval? = nil, frameRate: Double? = nil) {
        self.duration = duration
        self.naturalSize = naturalSize
        self.hasVideo = hasVideo
        self.hasAudio = hasAudio
        self.startPosition = startPosition
        self.frameRate = frameRate
    }
}

/// Buffer figures an engine reports while it reads.
public struct EngineBufferStatus: Sendable, Equatable {
    /// Media time buffered up to, seconds.
    public var playableDuration: TimeInterval
    /// 0...100.
    public var bufferingProgress: Int
    /// Bytes read from the source so far.
    public var bytesTransferred: Int64
    /// Makes buffer figures.
    public init(playableDuration: TimeInterval, bufferingProgress: Int, bytesTransferred: Int64) {
        self.playableDuration = playableDuration
        self.bufferingProgress = bufferingProgress
        self.bytesTransferred = bytesTransferred
    }
}

/// The primitive operations of one engine, driven by `EnginePlayer`, which owns the
/// contract's semantics (seek before prepare, last seek wins, restart after the end, stop,
/// shutdown, autoplay, the smooth position clock, events). An adapter implements only this.
///
/// Every method is called on the player's serial queue, one at a time, and must return
/// without waiting on the engine for long; `thumbnail()` alone may be called from any thread.
/// Outcomes are reported through the `EngineSink` handed to `open`.
public protocol PlaybackEngine: AnyObject {
    /// Starts opening `source`; later reports exactly one of `sink.prepared(_:)` or
    /// `sink.failed(_:)`. Prepared means paused at the start, with duration and size known
    /// and the first frame decoded.
    func open(_ source: MediaSource, options: PlaybackOptions, sink: EngineSink)
    /// True when the engine can open straight at a position (`open(_:options:startingAt:sink:)`),
    /// sparing the decoding of the start for a seek asked for before prepare. Default false.
    var opensAtStartPosition: Bool { get }
    /// Like `open(_:options:sink:)`, but prepared at the frame at `start` (accurately or at the
    /// keyframe before, as `options.accurateSeek` says): the engine reports the position it
    /// reached as `EngineMediaInfo.startPosition`, or nil when it opened at the start instead
    /// (e.g. `start` is past the end). Only called when `opensAtStartPosition` is true.
    func open(_ source: MediaSource, options: PlaybackOptions, startingAt start: TimeInterval, sink: EngineSink)
    /// Starts or resumes playback.
    func play()
    /// Pauses, keeping the picture.
    func pause()
    /// Seeks (accurately to the frame, or to the keyframe before); reports
    /// `sink.seekCompleted(_:)` once the frame there is decoded. Called only once prepared,
    /// also after the end (playback must then work from there). Play/pause state is kept.
    func seek(to seconds: TimeInterval, accurate: Bool)
    /// Sets the speed (1 is normal).
    func setRate(_ rate: Float)
    /// Sets the volume (0...1).
    func setVolume(_ volume: Float)
    /// Applies a scaling mode to a window output (frames are composed by PlaybackKit).
    func setScalingMode(_ mode: ScalingMode)
    /// Stops and releases the media; `open` may follow. Reports from before it are ignored.
    func close()
    /// The picture on screen now, at natural size; nil without one. Any thread.
    func thumbnail() -> VideoFrame?
    /// The volume (0...1) the engine itself reports it applies now, read from the engine (its
    /// property, its mixer), not the value last passed to `setVolume`; nil when it cannot tell
    /// or nothing is open. Any thread. Default nil.
    var appliedVolume: Float? { get }

    // MARK: Tracks and subtitles (EnginePlayer owns the ids, the rules and the cue clock)

    /// Plays or shows the track with the engine's own id `engineID` (as listed in
    /// `sink.tracksChanged`), or no track of `kind` when nil. Called only once the engine has
    /// reported its tracks (while opening, between `sink.tracksChanged` and `sink.prepared`,
    /// or once prepared). The engine reports the new selection with `sink.tracksChanged`.
    /// Default: nothing.
    func selectTrack(kind: TrackKind, engineID: String?)
    /// Adds an external subtitle file as a new track (listed after the others in the next
    /// `sink.tracksChanged`). The files of `PlaybackOptions.subtitleURLs` are the engine's to
    /// add while opening, listed before `sink.prepared`. Default: nothing.
    func addSubtitle(_ url: URL)
    /// Shifts drawn subtitles by `seconds` (positive: later). Default: nothing.
    func setSubtitleDelay(_ seconds: TimeInterval)
}

extension PlaybackEngine {
    /// Engines open at the start of the media unless they say otherwise.
    public var opensAtStartPosition: Bool { false }

    /// Engines that cannot read their volume back say nothing.
    public var appliedVolume: Float? { nil }

    /// Engines without tracks of their own ignore selections.
    public func selectTrack(kind: TrackKind, engineID: String?) {}

    /// Engines without external subtitles ignore them.
    public func addSubtitle(_ url: URL) {}

    /// Engines that draw no subtitles ignore the delay.
    public func setSubtitleDelay(_ seconds: TimeInterval) {}

    /// Opens at the start of the media (engines that cannot open at a position).
    public func open(_ source: MediaSource, options: PlaybackOptions, startingAt start: TimeInterval, sink: EngineSink) {
        open(source, options: options, sink: sink)
    }
}

/// How an engine reports to its player. Every method may be called from any thread and
/// returns at once; reports from a closed session are dropped.
public final class EngineSink: Sendable {
    enum Report: Sendable {
        case prepared(EngineMediaInfo)
        case failed(PlaybackError)
        case position(TimeInterval)
        case positionJumped(TimeInterval)
        case seekCompleted(TimeInterval)
        case ended
        case naturalSize(VideoSize)
        case duration(TimeInterval)
        case stalled(Bool)
        case tracks([EngineTrack])
        case metadata([String: String])
        case chapters([Chapter])
        case subtitleCue(SubtitleCue)
        case subtitleCuesReset
    }

    private let deliver: @Sendable (Report, Int) -> Void
    private let currentGeneration: @Sendable () -> Int
    let generation: Int
    /// Where `.frames` output goes; nil when the player has no frame handler.
    public let frames: FramePresenter?
    /// Where `.yuvFrames` output goes; nil when the player has none.
    private let yuvHandler: (@Sendable (YUVFrame) -> Void)?
    private let bufferStatus: Locked<EngineBufferStatus>

    init(generation: Int, frames: FramePresenter?, yuvFrames: (@Sendable (YUVFrame) -> Void)? = nil,
         bufferStatus: Locked<EngineBufferStatus>,
         currentGeneration: @escaping @Sendable () -> Int,
         deliver: @escaping @Sendable (Report, Int) -> Void) {
        self.generation = generation
        self.frames = frames
        self.yuvHandler = yuvFrames
        self.bufferStatus = bufferStatus
        self.currentGeneration = currentGeneration
        self.deliver = deliver
    }

    /// True while the session this sink belongs to is open.
    public var isCurrent: Bool { currentGeneration() == generation }

    /// Opened: paused at the start with the first frame decoded.
    public func prepared(_ info: EngineMediaInfo) { deliver(.prepared(info), generation) }
    /// Opening or playback failed.
    public func failed(_ error: PlaybackError) { deliver(.failed(error), generation) }
    /// The media time of the picture (or sound) being presented now.
    public func position(_ seconds: TimeInterval) { deliver(.position(seconds), generation) }
    /// While playing, the picture jumped to `seconds` (the engine dropped the pictures between
    /// to catch up with its clock): the position is set to it outright, where `position(_:)`
    /// corrects it a little at each report.
    public func positionJumped(to seconds: TimeInterval) { deliver(.positionJumped(seconds), generation) }
    /// The last requested seek landed at `seconds`.
    public func seekCompleted(_ seconds: TimeInterval) { deliver(.seekCompleted(seconds), generation) }
    /// The end of the media was reached.
    public func ended() { deliver(.ended, generation) }
    /// The display size changed.
    public func naturalSizeChanged(_ size: VideoSize) { deliver(.naturalSize(size), generation) }
    /// The duration became known or changed.
    public func durationChanged(_ seconds: TimeInterval) { deliver(.duration(seconds), generation) }
    /// Playback waits for data (true) or has enough again (false).
    public func stalled(_ waiting: Bool) { deliver(.stalled(waiting), generation) }
    /// The engine's track list changed (opened, a selection, an addition, a new stream): the
    /// whole list, in the container's stream order. While opening, report it before `prepared`.
    public func tracksChanged(_ tracks: [EngineTrack]) { deliver(.tracks(tracks), generation) }
    /// The media's tags (every tag, keys in any case); while opening, before `prepared`.
    public func metadataChanged(_ tags: [String: String]) { deliver(.metadata(tags), generation) }
    /// The media's chapters, in order; while opening, before `prepared`.
    public func chaptersChanged(_ chapters: [Chapter]) { deliver(.chapters(chapters), generation) }
    /// A cue of the selected subtitle track, in media time without `subtitleDelay`: reported
    /// when decoded (ahead of its time is fine) or when the engine shows it. The player's cue
    /// clock sends `.subtitleChanged` at its time.
    public func subtitleCue(_ cue: SubtitleCue) { deliver(.subtitleCue(cue), generation) }
    /// The cues reported so far no longer apply (the subtitle track changed; the engine
    /// flushed after a seek).
    public func subtitleCuesReset() { deliver(.subtitleCuesReset, generation) }
    /// New buffer figures; stored at once, read by the player's getters.
    public func bufferChanged(_ status: EngineBufferStatus) {
        guard isCurrent else { return }
        bufferStatus.set(status)
    }
    /// Presents one natural-size RGBA picture to the `.frames` handler, if any.
    public func presentFrame(_ pixels: UnsafeRawBufferPointer, size: VideoSize, bytesPerRow: Int, presentationTime: TimeInterval) {
        guard let frames, isCurrent else { return }
        frames.present(pixels, size: size, bytesPerRow: bytesPerRow, presentationTime: presentationTime)
    }
    /// True when the player has a `.yuvFrames` output: the engine hands each presented
    /// picture to `presentYUVFrame(_:)`.
    public var wantsYUVFrames: Bool { yuvHandler != nil }
    /// Hands one picture to the `.yuvFrames` handler, if any, on this thread; its planes need
    /// to stay valid only until this returns.
    public func presentYUVFrame(_ frame: YUVFrame) {
        guard let yuvHandler, isCurrent else { return }
        yuvHandler(frame)
    }
}

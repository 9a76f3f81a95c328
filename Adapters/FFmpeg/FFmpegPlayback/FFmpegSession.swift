#if FFmpeg
import CFFmpeg
import Dispatch
import FoundationEssentials
import PictureConversion
import PlaybackKit

/// One opened source and the threads that play it (ffplay's VideoState): the read thread
/// (which also opens), a video and an audio decoder thread, the video presenter and the audio
/// output. Made by `FFmpegEngine.open`, ended by `close()`; the last thread to finish drops
/// the last reference and every handle is freed.
final class FFmpegSession: @unchecked Sendable {
    // @unchecked: state shared between threads is guarded by `lock` (see "Shared state");
    // the "Stream facts" are written by the read thread before it starts the other threads
    // and only read afterwards (each decoder handle is then used by its own thread alone),
    // except the ones marked as the read thread's, which only it touches (the stream indices
    // it also writes under `lock`, for other threads to read there); the "Picture on screen"
    // is guarded by `pictureLock`; `subtitles` guards itself.

    let source: MediaSource
    let options: PlaybackOptions
    let sink: EngineSink
    let location: String
    let interrupt = InterruptFlag()
    let lock = MutexLock()
    let threads = DispatchGroup()

    // MARK: - Conditions (all bound to `lock`)

    let readerWake: MutexLock.Condition
    let videoPacketsReady: MutexLock.Condition
    let audioPacketsReady: MutexLock.Condition
    let videoFrameSpace: MutexLock.Condition
    let audioFrameSpace: MutexLock.Condition
    let presenterWake: MutexLock.Condition
    let audioOutputWake: MutexLock.Condition

    // MARK: - Shared state (guarded by `lock`)

    /// A pending seek handed from the engine to the read thread.
    struct SeekRequest { var target: Double; var accurate: Bool }
    /// A seek the read thread carried out, waiting for its frame to be presented.
    struct SeekInProgress { var serial: Int; var target: Double; var accurate: Bool }

    var aborted = false
    var paused = true
    var rate: Double = 1
    var volume: Double = 1
    var clock = MediaClock()
    /// Raised by every seek; packets and frames from an older serial are dropped.
    var serial = 0
    var seekRequest: SeekRequest?
    /// The keyframe search after the last seek (read thread only).
    var keyframeHunt: KeyframeHunt?
    var seekInProgress: SeekInProgress?
    /// Decoders drop frames that end before this (accurate seeks), for its serial.
    var discardBefore: (serial: Int, time: Double)?
    /// Raised by every seek and every audio track switch: audio packets and frames of an
    /// older one are dropped (the audio path's `serial`).
    var audioSerial = 0
    /// The audio decoder drops samples before this (accurate seeks, audio track switches),
    /// for its audio serial.
    var audioDiscardBefore: (serial: Int, time: Double)?
    /// The packets of the audio streams not playing, by stream index, kept from the position
    /// on for a switch to them.
    var idleAudioPackets: [Int32: PacketQueue] = [:]
    /// Audio deselected: decoded and paced as before, heard as silence.
    var audioMuted = false
    /// Video deselected: decoded and paced as before, not drawn.
    var videoHidden = false
    /// Audio and video track switches for the read thread, oldest first.
    var trackRequests: [TrackRequest] = []
    /// Subtitle files added while opening, read after `options.subtitleURLs`.
    var subtitleFilesWhileOpening: [URL] = []
    /// The tracks were listed at open: files added from now on are read on their own thread.
    var tracksListed = false
    var readerAtEnd = false
    var prepared = false
    var firstPictureShown = false
    var endedReported = false
    var stalled = false
    let packetPool = PacketPool()
    var videoPackets = PacketQueue()
    var audioPackets = PacketQueue()
    let videoFrames = FrameQueue(capacity: 2)
    let audioFrames = FrameQueue(capacity: 12)
    /// The serial for which each decoder returned AVERROR_EOF (fully drained).
    var videoDecoderFinished = -1
    var audioDecoderFinished = -1
    var videoFramesDecoded = 0
    var audioFramesDecoded = 0
    var lastDecodeError: Int32 = 0
    /// The audio output still holds converted samples it has not played.
    var audioOutputBusy = false
    /// A failure was reported; the presenter only waits for close.
    var failureReported = false
    /// Media time and duration of the picture on screen.
    var shownTime: Double = 0
    var shownDuration: Double = 0
    /// How a `.window` output lays the picture out.
    var scalingMode = ScalingMode.aspectFit

    // MARK: - Stream facts (written by the read thread before the other threads start)

    var format: FormatInput?
    /// The streams playing (the read thread's; it writes them under `lock`).
    var videoStreamIndex: Int32 = -1
    var audioStreamIndex: Int32 = -1
    /// The decoders of the streams playing at the start (each decoder thread's first).
    var videoDecoder: CodecDecoder?
    var audioDecoder: CodecDecoder?
    /// The facts of the streams playing (the read thread's).
    var videoTimeBase = AVRational(num: 1, den: 1)
    var audioTimeBase = AVRational(num: 1, den: 1)
    var videoFrameDuration = 0.04
    /// The video stream's nominal frames per second (its average rate, else its base rate);
    /// nil when the container gives neither.
    var videoFrameRate: Double?
    /// Packets of the video stream switched to are skipped up to its first keyframe (the
    /// read thread's).
    var videoAwaitingKeyframe = false
    /// The video stream's sample aspect from the container, upright, or 0/1 when the
    /// container gives none and the pictures' own applies (guarded by `pictureLock`).
    var videoAspect = AVRational(num: 0, den: 1)
    /// The audio, video and subtitle streams, in stream order.
    var streamTracks: [StreamTrack] = []
    /// The text subtitle streams' decoders, by stream index (the read thread's).
    var subtitleDecoders: [Int32: SubtitleDecoder] = [:]
    /// Subtitle sources, the selection and the drawing of subtitles.
    let subtitles: SubtitleBook
    /// Media time 0 in seconds of the source's timestamps: the container's start (0 for MP4
    /// and QuickTime), or the first picture when that comes just after it (`MediaStart`).
    var startTime: Double = 0
    /// The container's own start (chapters count from it, as the file gives them).
    var containerStartTime: Double = 0
    var duration: Double = 0
    var hasVideo: Bool { videoDecoder != nil }
    var hasAudio: Bool { audioDecoder != nil }
    /// The audio output, once the read thread made it (guarded by `lock`).
    var audioOutput: AudioRenderer?

    // MARK: - Picture on screen (guarded by `pictureLock`)

    let pictureLock = MutexLock()
    let displayed = OwnedFrame()
    var naturalSize = VideoSize.zero
    /// Media time of the picture in `displayed`.
    var displayedTime: Double = 0
    let thumbnailConverter = PictureConverter()

    /// Bytes the read thread may keep queued ahead of playback.
    let maxBufferBytes: Int
    /// Seconds of media per stream the read thread reads ahead at most (within the byte
    /// cap): little for local files, where reading is instant and memory is better spent
    /// elsewhere; more for network sources, to ride out slow patches. Reaching it counts as
    /// fully buffered (`bufferingProgress` 100).
    let readAheadSeconds: Double

    /// Where to open (a seek asked for before prepare), 0 for the start.
    let openingTarget: Double
    /// Where the opening seek landed, once its picture (or sound) is there (guarded by `lock`).
    var openedAt: Double?
    /// Nothing decoded after `openingTarget`: the session opened at the start instead.
    var openingFellBack = false

    init(source: MediaSource, options: PlaybackOptions, startingAt start: Double = 0, sink: EngineSink) {
        self.source = source
        self.options = options
        openingTarget = max(0, start)
        self.sink = sink
        location = source.isFile ? source.path : source.url.absoluteString
        let drawsOnPictures: Bool
        switch options.videoOutput {
        case .frames, .window: drawsOnPictures = true
        default: drawsOnPictures = false
        }
        subtitles = SubtitleBook(sink: sink, drawsOnPictures: drawsOnPictures)
        maxBufferBytes = max(256 * 1024, options.maxBufferBytes ?? 15 * 1024 * 1024)
        readAheadSeconds = source.isFile ? 1.5 : 10
        readerWake = lock.makeCondition()
        videoPacketsReady = lock.makeCondition()
        audioPacketsReady = lock.makeCondition()
        videoFrameSpace = lock.makeCondition()
        audioFrameSpace = lock.makeCondition()
        presenterWake = lock.makeCondition()
        audioOutputWake = lock.makeCondition()
    }

    // MARK: - Control (engine queue)

    /// Starts the read thread, which opens the source.
    func start() {
        DetachedThread.start(name: "ff.read") { [self] in readLoop() }
    }

    /// Runs `body` on a new worker thread counted in `threads` (the read thread waits for
    /// them before the session can go away).
    func spawn(_ name: String, _ body: @escaping @Sendable (FFmpegSession) -> Void) {
        threads.enter()
        DetachedThread.start(name: name) { [self] in
            body(self)
            threads.leave()
        }
    }

    /// Aborts everything at once; the threads finish and free the handles by themselves.
    func close() {
        interrupt.raise()
        lock.withLock {
            aborted = true
            wakeAll()
        }
    }

    /// Wakes every waiting thread (lock held).
    func wakeAll() {
        for condition in [readerWake, videoPacketsReady, audioPacketsReady, videoFrameSpace,
                          audioFrameSpace, presenterWake, audioOutputWake] {
            condition.broadcast()
        }
    }

    func play() {
        let output = lock.withLock { () -> AudioRenderer? in
            paused = false
            if prepared, !stalled { clock.setRunning(true) }
            presenterWake.broadcast()
            audioOutputWake.broadcast()
            return audioOutput
        }
        // Outside the session lock: SDL pauses a device under its own lock, which the audio
        // callback holds while it takes the session lock.
        output?.followPauseState()
    }

    func pause() {
        let output = lock.withLock { () -> AudioRenderer? in
            paused = true
            clock.setRunning(false)
            presenterWake.broadcast()
            return audioOutput
        }
        output?.followPauseState()
    }

    func seek(to seconds: TimeInterval, accurate: Bool) {
        lock.withLock {
            seekRequest = SeekRequest(target: max(0, seconds), accurate: accurate)
            readerWake.broadcast()
        }
    }

    func setRate(_ newRate: Float) {
        lock.withLock {
            rate = Double(newRate)
            clock.setSpeed(rate)
            presenterWake.broadcast()
        }
    }

    func setScalingMode(_ mode: ScalingMode) {
        lock.withLock {
            scalingMode = mode
            presenterWake.broadcast()
        }
    }

    func setVolume(_ newVolume: Float) {
        lock.withLock { volume = Double(min(1, max(0, newVolume))) }
    }

    /// The gain the audio renderer multiplies every sample by.
    var appliedVolume: Float { lock.withLock { Float(volume) } }

    // MARK: - Time

    /// Zero-based media seconds of a timestamp in `timeBase`, nil when it has none.
    func mediaTime(_ timestamp: Int64, _ timeBase: AVRational) -> Double? {
        guard timestamp != pk_av_nopts_value() else { return nil }
        return Double(timestamp) * pk_av_q2d(timeBase) - startTime
    }

    // MARK: - Reporting

    /// Reports a failure unless the session was closed (then nobody listens).
    func fail(_ error: PlaybackError) {
        let closed = lock.withLock { aborted }
        guard !closed else { return }
        PlaybackLog.log(.info, "ffmpeg", "\(error)")
        sink.failed(error)
    }
}
#endif

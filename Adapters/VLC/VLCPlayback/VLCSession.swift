#if VLC
import CVLC
import Dispatch
import FoundationEssentials
import HTTPRelay
import MediaProbe
import PlaybackKit
import SubtitleOverlay
import WindowPresentation

/// One opened source: the libVLC player, what is known about the media, and the state of the
/// start and of the seek in flight. Lives on the engine's queue; its parts are split over
/// VLCSession.swift (opening, commands), VLCSession+Seeking.swift and VLCSession+Events.swift.
final class VLCSession: @unchecked Sendable {
    // @unchecked: every variable below is touched only on `queue` (libVLC's events are posted
    // there); what libVLC's threads use (`pictureTimes`, `frames`, `videoForEvents`) is thread-safe.

    // MARK: - Types

    enum Phase { case parsing, starting, ready, finished }

    /// How the start proceeds. The media is opened paused (`:start-paused`, nothing is heard),
    /// then seeked to 0 while paused, which makes libVLC decode and show the first picture.
    /// An adaptive stream (HLS, DASH) plays muted to its first picture instead: its seek makes
    /// new decoders while paused, whose output drops the first pictures as late.
    enum StartStage {
        /// Waiting for the paused state the media starts in.
        case awaitingPause
        /// Seeked to 0; waiting for libVLC's buffering and the first picture.
        case buffering
        /// Buffered; waiting for the first picture.
        case waitingForPicture
        /// No picture came while paused: playing muted until one is shown.
        case playingForPicture
        /// Pausing after that.
        case pausing
    }

    /// How a seek proceeds.
    enum SeekStage {
        /// The input was started again (it opens paused): after the end, or to show the first
        /// frame.
        case restarting
        /// Restarted and seeked to 0 while paused: waiting for the first frame.
        case firstPicture
        /// An adaptive stream restarted after the end for a paused seek: playing muted to its
        /// first picture, to seek on from there.
        case playingToFirstPicture
        /// A paused seek with pictures to watch: sent while paused, a little before the target;
        /// waiting for libVLC to buffer there.
        case landing
        /// It buffered: the input was resumed (muted) and plays to the target.
        case runningToTarget
        /// A paused seek without pictures to watch: the input was resumed (muted); seek once
        /// it plays.
        case resuming
        /// Waiting for libVLC to buffer at the target.
        case buffering
        /// Buffered: waiting for the picture at the target.
        case awaitingPicture
        /// The picture at the target is on screen (or about to be).
        case settling
        /// Pausing again after a seek done while paused.
        case pausing
        /// A held seek to one of the last pictures: pausing the input before the target, then
        /// showing the pictures up to it one at a time (`stepToTarget`).
        case stepping
    }

    struct SeekOperation {
        var target: TimeInterval
        /// Where the seek is; every assignment counts as a new step, even to the same stage
        /// (a paused seek landing again after an overshoot).
        var stage: SeekStage { didSet { step += 1 } }
        /// Stages entered so far: a fallback scheduled in one step does nothing in a later one.
        private(set) var step = 0
        var sawBufferingStart = false
        let token: Int
        /// A restart the engine does on its own (recovering a stuck input): not reported.
        var silent = false
        /// How many frames before the target a paused seek lands (more after an overshoot).
        var runUpFrames = VLCSession.runUpFrames
        /// Paused seeks done again after an overshoot.
        var retries = 0
        /// libVLC's buffering reports under 100 % so far.
        var bufferingReports = 0
        /// A paused seek done playing (adaptive streams, see `seekPlayingToPause`).
        var playsToPause = false
        /// Pictures asked for one at a time on the way to the target (`stepToTarget`).
        var steps = 0
        /// For a seek while playing whose picture was timed from libVLC's clock: the media
        /// time of that picture (the target's, or a later one when libVLC dropped the
        /// target's as late).
        var timedPicture: TimeInterval?
    }

    /// How often positions and buffer figures are reported while playing.
    static let tickInterval = DispatchTimeInterval.milliseconds(50)
    /// Seconds without a new picture or time report, while playing, that count as a stall
    /// (libVLC may hold the picture for about a second after a rate change).
    static let stallAfter = 1.6
    /// How long libVLC may take to confirm a play or pause before the input is restarted.
    static let confirmationTimeout = 0.8
    /// A paused seek without pictures to watch plays muted from this long before the target, so
    /// that libVLC's decoder has caught up when the target is due.
    static let runUp = 0.3
    /// A paused seek with pictures to watch lands this many frames before the target and
    /// plays from there: the pictures before the target time the one at it.
    static let runUpFrames = 2.0
    /// A held seek (adaptive streams) to one of this many last pictures stops this many frames
    /// before the last one and steps from there while paused: libVLC ends a playing input once
    /// its last picture is decoded, before that picture is due, and never shows it.
    static let stepFramesBeforeEnd = 3.0
    /// How many steps a held seek may ask for on its way to the target (`stepToTarget`), and
    /// how long each waits for its picture before the next is asked for.
    static let stepLimit = 5
    static let stepWait = 0.25
    /// How often a paused seek that overshot the target is done again from further ahead.
    static let overshootRetries = 3
    /// How long a resume sent to a paused input may wait for libVLC's Playing event before
    /// the pictures are timed from the request instead: a last resort, as a paused input
    /// always sends it, but late when it restarts its decoders first (an HLS seek starts new
    /// streams: over 2 s under the address sanitizer).
    static let resumeConfirmationLimit = 5.0

    // MARK: - State

    let instance: VLCInstance
    let queue: DispatchQueue
    let frames: VLCPictureStore
    let source: MediaSource
    let options: PlaybackOptions
    let sink: EngineSink
    let pictureTimes = VLCPictureTimes()

    var player: VLCMediaPlayer?
    /// The loopback relay libVLC reads a remote source through, when it needs one
    /// (`needsRelay`); stopped when the session closes.
    var relay: HTTPRelay?
    /// Every http(s) source goes through the relay (`VLCBackend.relaysEveryRemoteSource`).
    let relaysEveryRemoteSource: Bool
    var video: VLCVideoCallbacks? {
        didSet { videoForEvents.set(video) }
    }
    /// `video` for libVLC's event thread.
    let videoForEvents = Locked<VLCVideoCallbacks?>(nil)
    var timer: DispatchSourceTimer?

    var phase = Phase.parsing
    var startStage = StartStage.awaitingPause
    /// The start's paused seek to 0 was sent a second time (`seekToFirstPictureAgainIfLate`).
    var startSoughtAgain = false
    var startSawBufferingStart = false
    var seekOperation: SeekOperation?
    var token = 0
    var wantsPlaying = false
    var vlcPlaying = false
    var ended = false
    /// The last part of sound alone still to be heard after libVLC ended its input (see
    /// `endReached`); nil otherwise.
    var soundTail: SoundTail?
    /// A seek stepped the input to one of its last pictures (`stepToTarget`): libVLC's
    /// adaptive demuxer then sits at its end and seeks no more, so the next seek starts the
    /// input again, as after the end.
    var steppedNearEnd = false
    var muted = false
    var volume: Float = 1
    var rate: Float = 1
    var stalled = false
    var bufferingPercent: Float = 0
    var tracks = VLCTrackSummary()
    var streamKinds = Set<Int32>()
    var duration: TimeInterval = 0
    var naturalSize = VideoSize.zero
    /// Draws the `.window` output's pictures into the app's window by the scaling mode, and
    /// again on expose and resize; stopped when the session closes.
    let windowPresenter: X11WindowPresenter?
    /// What libavformat read of a local file's container (tracks' flags, tags, chapters).
    var probe: StreamProbe?
    /// The media's own streams as the parse listed them (local files), before libVLC lists
    /// added subtitle files among them.
    var parsedStreams: [VLCStream]?
    /// Subtitle files added to the player, in order.
    var externalSubtitles: [VLCExternalSubtitle] = []
    /// The engine id of the subtitle whose cues were read (or are being read).
    var cuesReadFor: String?
    /// With a `.frames` output of a local file the selected subtitle is drawn by this overlay,
    /// not by libVLC (which blends it into the one picture it hands out, the thumbnails' too):
    /// libVLC's own subtitle selection stays off and `drawnSubtitle` is the selection.
    let subtitleOverlay: SubtitleOverlay?
    /// The libVLC ES id of the subtitle the overlay draws (`.frames` output only).
    var drawnSubtitle: Int32?
    /// The volume libVLC reports it applies (0...1), read back after each change, for
    /// `appliedVolume` on any thread.
    let appliedVolume: Locked<Float?>
    /// When play() or pause() was sent and libVLC has not confirmed it yet (monotonic s).
    var stateChangeSentAt: Double?
    /// True when libVLC's video output has been paused since it was made (one made while the
    /// input was paused, as at the start, believes it is playing and drops the picture of a
    /// paused seek as late).
    var outputKnowsPause = false
    /// The adaptive module (HLS, DASH) opened the source; known once the start paused.
    var isAdaptive = false

    init(instance: VLCInstance, queue: DispatchQueue, frames: VLCPictureStore, source: MediaSource,
         options: PlaybackOptions, relaysEveryRemoteSource: Bool = false, sink: EngineSink, appliedVolume: Locked<Float?>) {
        self.relaysEveryRemoteSource = relaysEveryRemoteSource
        self.appliedVolume = appliedVolume
        self.instance = instance
        self.queue = queue
        self.frames = frames
        self.source = source
        self.options = options
        self.sink = sink
        // A remote source's subtitles stay libVLC's: reading them ahead would fetch the media twice.
        if case .frames = options.videoOutput, source.isFile { subtitleOverlay = SubtitleOverlay() } else { subtitleOverlay = nil }
        windowPresenter = X11WindowPresenter.forOutput(options.videoOutput, engine: "vlc")
    }

    // MARK: - Opening

    /// Makes the player and starts parsing (files) or opening (network).
    func start() {
        VLCLog.clearProblem()
        let made: VLCMediaPlayer
        do {
            if source.isHTTP && relaysEveryRemoteSource || needsRelay { relay = try HTTPRelay(source: source, options: options) }
            // Read before the media is made: its options depend on the container.
            probeSource()
            made = try VLCMediaPlayer(instance: instance, source: source, location: relay?.location, mediaOptions: mediaOptions(),
                                      trustedOptions: trustedMediaOptions()) { [weak self, pictureTimes, videoForEvents, queue] event in
                // Timing matters for these three, so they are noted here, on libVLC's thread
                // (no libVLC call); everything goes on to the queue.
                if case .timeChanged(let milliseconds) = event { pictureTimes.timeReported(Double(milliseconds) / 1000) }
                if case .buffering(let percent) = event { videoForEvents.get()?.bufferingChanged(percent) }
                if case .playing = event { videoForEvents.get()?.inputResumed() }
                if case .videoOutputs(let count) = event { videoForEvents.get()?.outputsChanged(count) }
                queue.async { [weak self] in self?.handle(event) }
            }
        } catch {
            fail(error)
            return
        }
        player = made
        // Making the player opened the system audio output; what it complained about (no
        // sound server, say) is not about this source.
        VLCLog.clearProblem()
        startTimer()
        if source.isFile {
            phase = .parsing
            made.startParse(network: false, timeoutMilliseconds: 5000)
        } else {
            startPlayback()
        }
    }

    /// Containers (libavformat's names) whose local files libVLC reads with its libavformat
    /// demuxer instead of its own. libVLC 3's Ogg demuxer drops FLAC's sound as late (all of
    /// it as ffmpeg writes it, the first 0.7 s as libFLAC does), cannot seek in Opus, holds a
    /// Theora picture about a second after `play()` and gives sound alone a time once a
    /// second; its FLAC demuxer now and then ends the media on a seek while paused (2 runs
    /// of 30 under the address sanitizer); its TTA and VOC demuxers end 3 s of sound after
    /// 2.1 and 2.6 s. Its libavformat demuxer has none of these faults.
    static let containersForLibavformat: Set<String> = ["ogg", "flac", "tta", "voc"]

    private func mediaOptions() -> [String] {
        // Seeks are always accurate: libVLC 3's fast seek picks the keyframe by decode time
        // and never says where it landed, so the position could not match the picture.
        var list = [":start-paused", ":no-input-fast-seek"]
        // Through the relay, libcurl sends every header the app gave.
        for (name, value) in options.httpHeaders where relay == nil {
            switch name.lowercased() {
            case "user-agent": list.append(":http-user-agent=\(value)")
            case "referer", "referrer": list.append(":http-referrer=\(value)")
            default: break
            }
        }
        if let cap = options.maxBufferBytes, cap > 0 {
            // libVLC buffers by time: a quarter of the cap for the prefetch stream filter's
            // read-ahead in bytes, another for what the demuxer reads ahead of the picture (the
            // network caching, in ms: at 8 Mbit/s that quarter is 1 ms per 1 KiB, 100 ms to
            // 1 s); the rest is what the decoders and libVLC's own buffers hold beyond those.
            list.append(":prefetch-buffer-size=\(max(16, cap / 4096))")
            list.append(":prefetch-read-size=\(max(1024, min(cap / 4, 16384)))")
            if !source.isFile { list.append(":network-caching=\(min(1000, max(100, cap / 4096)))") }
        }
        if let encoding = subtitleEncodingOption() { list.append(encoding) }
        if let container = probe?.container, Self.containersForLibavformat.contains(container) {
            list.append(":demux=avformat")
        }
        return list
    }

    /// True when libVLC needs the relay for this source: remote media with a request header
    /// libVLC cannot send (it sends User-Agent and Referer itself), or whose playlists may
    /// name local files.
    private var needsRelay: Bool {
        guard source.isHTTP else { return false }
        if options.remoteMayReferenceLocalFiles { return true }
        return options.httpHeaders.keys.contains { !["user-agent", "referer", "referrer"].contains($0.lowercased()) }
    }

    /// Options libVLC takes for a media only when marked trusted: the app's authorities for
    /// https, as a folder the gnutls module trusts besides the system's (the relay, when
    /// there is one, verifies with them itself).
    private func trustedMediaOptions() throws(PlaybackError) -> [String] {
        guard source.isHTTP, relay == nil, let authorities = options.tlsCertificateAuthorities else { return [] }
        return [":gnutls-dir-trust=\(try TLSTrust.folder(holding: authorities).path)"]
    }

    func parsed(status: Int32) {
        guard phase == .parsing, let player else { return }
        tracks = player.trackSummary()
        parsedStreams = player.mediaStreams()
        // libVLC lists the streams of some containers (MPEG program streams: .mpg, .vob) only
        // once it demuxes: when libavformat found sound or picture there, the start decides.
        let probedStreams = probe?.streams.contains { $0.kind == .audio || $0.kind == .video } ?? false
        if status == Int32(libvlc_media_parsed_status_done.rawValue), !tracks.hasVideo, !tracks.hasAudio, !probedStreams {
            fail(PlaybackError(code: .unsupportedFormat, message: "open: libVLC found no audio or video stream in \(source.path)\(detail())"))
            return
        }
        startPlayback()
    }

    private func startPlayback() {
        guard let player else { return }
        switch options.videoOutput {
        case .none, .frames, .yuvFrames, .window:
            // A window too: libVLC's memory output hands the pictures to the window presenter.
            let callbacks = VLCVideoCallbacks(store: frames, pictureTimes: pictureTimes, sink: sink, subtitles: subtitleOverlay,
                                              window: windowPresenter, onPicture: { [weak self] in
                guard let self else { return }
                self.queue.async { [weak self] in self?.pictureArrived() }
            }, onSeekPicture: { [weak self] overshoot, framesPastTarget in
                guard let self else { return }
                self.queue.async { [weak self] in self?.seekPictureShown(overshoot: overshoot, framesPastTarget: framesPastTarget) }
            }, onLanded: { [weak self] picture in
                guard let self else { return }
                self.queue.async { [weak self] in
                    if picture { self?.landingPictureShown() } else { self?.pausedSeekBuffered() }
                }
            }, onStepping: { [weak self] in
                guard let self else { return }
                self.queue.async { [weak self] in self?.steppingPictureShown() }
            }, onNewPictureSize: { [weak self] drawn in
                guard let self else { return }
                self.queue.async { [weak self] in self?.newPictureSize(drawn, attempt: 0) }
            })
            if let storage = tracks.storageSize, let display = tracks.displaySize {
                callbacks.setSizeHint(storage: storage, display: display)
            }
            video = callbacks
            player.attachVideo(callbacks)
        }
        if options.audioOutput == .null { player.discardAudio() }
        addOpeningSubtitles()
        setMuted(true)
        pictureTimes.enter(.settling, at: 0)
        phase = .starting
        startStage = .awaitingPause
        player.play()
    }

    /// The media is open and paused: seek to 0, which decodes and shows the first picture.
    func startPaused() {
        guard phase == .starting, startStage == .awaitingPause, let player else { return }
        learnWhetherAdaptive()
        if isAdaptive, video != nil {
            // Its streams are made once it reads: whether one is video is not known yet.
            playForFirstPicture()
            return
        }
        if !expectsPicture, tracks.hasAudio {
            // Sound alone: no picture to decode, and a seek now would flush the decoders before
            // they read their headers, which libVLC's Speex decoder does not survive (it resets
            // bits it has not made yet: a segmentation fault in speex_bits_reset).
            finishStart()
            return
        }
        seekToFirstPicture(player)
        let current = token
        queue.asyncAfter(deadline: .now() + 1.5) { [weak self] in
            guard let self, self.token == current, self.phase == .starting,
                  self.startStage == .buffering || self.startStage == .waitingForPicture else { return }
            // A picture shown just now finishes the start (`pictureArrived`, queued): playing
            // and pausing again at once can leave libVLC's paused input with neither.
            guard self.video?.hasShownPicture != true else { return }
            self.playForFirstPicture()
        }
    }

    /// libVLC buffered at the start.
    func startBuffered() {
        guard phase == .starting, startStage == .buffering, startSawBufferingStart else { return }
        if expectsPicture, let video, !video.hasShownPicture {
            startStage = .waitingForPicture
            seekToFirstPictureAgainIfLate()
            return
        }
        finishStart()
    }

    /// How long after buffering the first picture of the start's paused seek may take before
    /// the seek is sent again.
    static let firstPictureGrace: TimeInterval = 0.25

    /// libVLC's video output is made with the first picture, and is not yet paused: when
    /// making it took longer than half a frame (a loaded machine), it drops that picture as
    /// late, and nothing is shown while paused. Once, the paused seek to 0 is sent again
    /// (the output, made now, shows it); should that picture not come either, the start
    /// plays for one (`playForFirstPicture`, from the timer `startPaused` set).
    private func seekToFirstPictureAgainIfLate() {
        guard !startSoughtAgain else { return }
        let current = token
        queue.asyncAfter(deadline: .now() + Self.firstPictureGrace) { [weak self] in
            guard let self, self.token == current, self.phase == .starting, self.startStage == .waitingForPicture,
                  let player = self.player, self.video?.hasShownPicture == false else { return }
            PlaybackLog.log(.debug, "vlc", "no first picture \(Self.firstPictureGrace) s after buffering; seeking to 0 again")
            self.startSoughtAgain = true
            self.seekToFirstPicture(player)
        }
    }

    /// The start's paused seek to 0, which decodes and shows the first picture (held for the
    /// start, and reported by `pictureArrived`).
    private func seekToFirstPicture(_ player: VLCMediaPlayer) {
        startStage = .buffering
        startSawBufferingStart = false
        video?.holdFirstPicture()
        player.setTime(0)
    }

    /// libVLC showed the first picture.
    func pictureArrived() {
        if phase == .ready {
            firstPictureShownForSeek()
            return
        }
        guard phase == .starting else { return }
        switch startStage {
        case .buffering, .waitingForPicture:
            finishStart()
        case .playingForPicture:
            pauseToFinishStart()
        case .awaitingPause, .pausing:
            break
        }
    }

    /// No picture while paused (some sources), or an adaptive stream: play muted until one is
    /// shown, then pause (an adaptive stream found to have no video pauses once it plays).
    private func playForFirstPicture() {
        guard let player else { return }
        if !expectsPicture, !isAdaptive {
            finishStart()
            return
        }
        startStage = .playingForPicture
        video?.holdFirstPicture()
        player.setPaused(false)
        let current = token
        // Half the open timeout, so this more precise error comes before the generic one.
        let deadline = max(1, options.openTimeout / 2)
        queue.asyncAfter(deadline: .now() + deadline) { [weak self] in
            guard let self, self.token == current, self.phase == .starting else { return }
            guard self.expectsPicture else {
                // No video stream appeared (finishing says so when there is none at all).
                self.pauseToFinishStart()
                return
            }
            self.fail(PlaybackError(code: .decode, message: "open: \(self.source.url.lastPathComponent) has a video stream but no picture was decoded in \(Int(deadline)) s\(self.detail())"))
        }
    }

    /// The input played during the start: an adaptive stream that plays with streams but
    /// none of video has no picture to wait for.
    func startAdvanced() {
        guard startStage == .playingForPicture, isAdaptive, !streamKinds.isEmpty, !expectsPicture else { return }
        pauseToFinishStart()
    }

    /// Sets `isAdaptive` once the adaptive module's log named the source (asked at the start's
    /// pause, and again when it finishes: a start that never paused asks only then).
    private func learnWhetherAdaptive() {
        guard !isAdaptive, let location = logLocation, VLCLog.takeAdaptive(location: location) else { return }
        isAdaptive = true
    }

    /// Pauses the start's muted play; the Paused event finishes the start. Should none come
    /// in time, libVLC never took the play (sent just before: its input was still busy with
    /// the paused seek, and stays paused, so it reports no pause either): the start is
    /// finished all the same; an input still playing is paused again.
    private func pauseToFinishStart() {
        startStage = .pausing
        player?.setPaused(true)
        let current = token
        queue.asyncAfter(deadline: .now() + Self.confirmationTimeout) { [weak self] in
            guard let self, self.token == current, self.phase == .starting, self.startStage == .pausing else { return }
            if self.vlcPlaying {
                PlaybackLog.log(.debug, "vlc", "the start's pause is not confirmed; pausing again")
                self.pauseToFinishStart()
            } else {
                PlaybackLog.log(.debug, "vlc", "libVLC stayed paused through the start's play; the start is done")
                self.finishStart()
            }
        }
    }

    func finishStart(attempt: Int = 0) {
        guard phase == .starting, let player else { return }
        if expectsPicture, knownNaturalSize() == nil, attempt < 20 {
            // libVLC lists the decoded size with the tracks a moment after the first picture
            // of some streams (MPEG-TS); the picture may be drawn padded until then.
            let current = token
            queue.asyncAfter(deadline: .now() + 0.05) { [weak self] in
                guard let self, self.token == current else { return }
                self.finishStart(attempt: attempt + 1)
            }
            return
        }
        let found = tracks.hasVideo || tracks.hasAudio || !streamKinds.isEmpty
        guard found else {
            fail(PlaybackError(code: source.isFile ? .unsupportedFormat : .network, message: "open: libVLC found no audio or video stream in \(source.url.absoluteString)\(detail())"))
            return
        }
        phase = .ready
        token += 1
        learnWhetherAdaptive()
        if isAdaptive {
            // HLS and DASH: libVLC's time reports lag its pictures (see `followWallClock`).
            pictureTimes.followWallClock()
        }
        setMuted(false)
        duration = probedDuration ?? Double(player.length) / 1000
        pictureTimes.setFrameDuration(frameDuration, nominal: tracks.frameRate != nil)
        naturalSize = currentNaturalSize()
        correctStoredPicture(to: naturalSize)
        let hasVideo = expectsPicture || (video?.hasShownPicture ?? false)
        let hasAudio = tracks.hasAudio || streamKinds.contains(libvlc_track_audio.rawValue)
        pictureTimes.enter(.paused, at: 0)
        presentShownPicture(at: 0)
        reportBuffer()
        reportTracks()
        reportTagsAndChapters()
        readBackVolume()
        sink.prepared(EngineMediaInfo(duration: duration, naturalSize: naturalSize, hasVideo: hasVideo, hasAudio: hasAudio,
                                      frameRate: hasVideo ? tracks.frameRate : nil))
    }

    /// A local file's duration as libavformat reads it, which the adapter reports rather than
    /// libVLC's: libVLC 3 times an MP3 by the bitrate of its first frame, which in ffmpeg's
    /// files is the LAME Info frame, coded at 64 kb/s (20.1 s for a 10 s stereo file at
    /// 128 kb/s, 11.5 s in mono), correcting it only as it plays. nil for remote sources (not
    /// probed).
    var probedDuration: TimeInterval? { probe?.duration }

    var expectsPicture: Bool {
        tracks.hasVideo || streamKinds.contains(libvlc_track_video.rawValue)
    }

    /// Pictures come through the video callbacks: after a resume, the first new one starts
    /// the running stamps (`VLCPictureTimes.Mode.resuming`).
    var watchesPictures: Bool { video != nil && expectsPicture }

    // MARK: - Commands

    func play() {
        wantsPlaying = true
        if ended, case .held(let remaining)? = soundTail {
            // Paused in the last part of sound alone, after libVLC's end: it plays on to the
            // end (libVLC's ended player would start again from the beginning).
            reportEnd(after: remaining)
            return
        }
        // After the end EnginePlayer seeks to 0 first (`seek(to:)` restarts the input).
        guard phase == .ready, seekOperation == nil, let player else { return }
        video?.releaseHold()
        player.play()
        if vlcPlaying {
            // libVLC has not reported the pause asked for just before: it may never take it
            // (it then sends neither Paused nor Playing and goes on playing), so the pictures
            // run on now; if it does take it, its Paused event says so.
            stateChangeSentAt = nil
            if pictureTimes.mode == .paused { pictureTimes.resume(watchingPictures: watchesPictures) }
        } else {
            stateChangeSentAt = monotonicSeconds()
        }
    }

    func pause() {
        wantsPlaying = false
        if ended, case .playing(let endsAt)? = soundTail {
            // The end of sound alone waits for its last part to be heard: that waits too.
            soundTail = .held(remaining: max(0, endsAt - monotonicSeconds()))
            token += 1
            return
        }
        guard phase == .ready, seekOperation == nil, !ended, let player else { return }
        // libVLC has not reported the play asked for just before: as in `play()`, its
        // Playing event says so if it takes it.
        stateChangeSentAt = vlcPlaying ? monotonicSeconds() : nil
        player.setPaused(true)
        pictureTimes.enterPaused()
    }

    func setRate(_ rate: Float) {
        self.rate = rate
        player?.setRate(rate)
        pictureTimes.setRate(Double(rate))
    }

    func setVolume(_ volume: Float) {
        self.volume = volume
        if !muted { player?.setVolume(Int((volume * 100).rounded())) }
        readBackVolume()
    }

    /// Notes the volume libVLC reports (not the one last set), for `appliedVolume`.
    func readBackVolume() {
        appliedVolume.set(player?.appliedVolume.map { Float($0) / 100 })
    }

    func setScalingMode(_ mode: ScalingMode) {
        windowPresenter?.setScalingMode(mode)
    }

    /// Releases the player; later events are ignored.
    func close() {
        guard phase != .finished || player != nil else { return }
        phase = .finished
        token += 1
        timer?.cancel()
        timer = nil
        player?.release()
        player = nil
        relay?.stop()
        relay = nil
        video = nil
        appliedVolume.set(nil)
        windowPresenter?.stop()
    }

    func fail(_ error: PlaybackError) {
        guard phase != .finished else { return }
        phase = .finished
        token += 1
        timer?.cancel()
        timer = nil
        relay?.stop()
        let failure = localReferenceRefusal() ?? error
        sink.failed(relay?.explaining(failure) ?? failure)
    }

    /// The `.forbiddenURL` error when this remote source's playlist named a local file: libVLC
    /// skips such segments (it reads local ones only for a local playlist) and then fails for
    /// want of streams.
    private func localReferenceRefusal() -> PlaybackError? {
        guard let location = logLocation, let reference = VLCLog.takeLocalReference(location: location) else { return nil }
        return ReferencePolicy(source: source, options: options).refusal(of: reference)
    }

    /// Where libVLC reads a remote source from as its log names it (`host:port/path?query`,
    /// the relay's when there is one); nil for a local file.
    var logLocation: String? {
        guard source.isHTTP, let url = relay.flatMap({ URL(string: $0.location) }) ?? Optional(source.url),
              let host = url.host else { return nil }
        var location = host
        if let port = url.port { location += ":\(port)" }
        location += url.path
        if let query = url.query { location += "?" + query }
        return location
    }


    /// libVLC's last complaint, for error messages.
    func detail() -> String {
        VLCLog.lastProblem().map { " (libVLC: \($0))" } ?? ""
    }
}
#endif

#if MPV
import CMPV
import Dispatch
import FoundationEssentials
import MediaProbe
import PictureConversion
import PlaybackKit
import WindowPresentation

/// One opened source on its own mpv core: the core (`MPVHandle`), the software renderer (for
/// `.frames` only), the event thread, and the bookkeeping that turns mpv's events into
/// `EngineSink` reports.
///
/// With a renderer, a prepare or a seek is done once the frame at its target is drawn; without
/// one (`.none`, `.window`) it is done at mpv's playback restart, which mpv sends only after the
/// video output took the first frame there (the one `screenshot-raw` then returns).
///
/// Threads: the player queue calls the control methods (they only queue async libmpv calls);
/// the event thread loops on `mpv_wait_event`, handles every event, and at the end tears the
/// core down; the render thread draws frames and hands them to `receive(_:)`.
final class MPVSession: @unchecked Sendable {
    // @unchecked: the fields under "Event thread state" are touched only by the event thread;
    // what the player queue and the render thread share with it is in `shared` (Locked); the
    // handle and the renderer are thread-safe owners.

    /// Ids of observed properties (MPV_EVENT_PROPERTY_CHANGE's reply_userdata).
    enum Observed: UInt64, CaseIterable {
        case timePos = 1, pause, eofReached, duration, displayWidth, displayHeight
        case cacheState, bufferingState, pausedForCache, streamPosition
        case trackList, metadata, chapterList, subText

        var name: String {
            switch self {
            case .timePos: "time-pos"
            case .pause: "pause"
            case .eofReached: "eof-reached"
            case .duration: "duration"
            case .displayWidth: "dwidth"
            case .displayHeight: "dheight"
            case .cacheState: "demuxer-cache-state"
            case .bufferingState: "cache-buffering-state"
            case .pausedForCache: "paused-for-cache"
            case .streamPosition: "stream-pos"
            case .trackList: "track-list"
            case .metadata: "metadata"
            case .chapterList: "chapter-list"
            case .subText: "sub-text"
            }
        }

        var format: mpv_format {
            switch self {
            case .timePos, .duration: MPV_FORMAT_DOUBLE
            case .pause, .eofReached, .pausedForCache: MPV_FORMAT_FLAG
            case .displayWidth, .displayHeight, .bufferingState, .streamPosition: MPV_FORMAT_INT64
            case .cacheState, .trackList, .metadata, .chapterList, .subText: MPV_FORMAT_NODE
            }
        }
    }

    /// Reply ids of async commands at or above this are seeks.
    private static let seekReplyBase: UInt64 = 1 << 32
    /// How long a seek or prepare waits for its frame to be drawn before reporting anyway.
    private static let frameWait: TimeInterval = 2
    /// How long a seek may go without mpv restarting playback before it is reported anyway.
    private static let seekGiveUp: TimeInterval = 5

    /// A seek handed to mpv, from the command to the drawn frame at its target.
    struct SeekRequest {
        let id: UInt64
        let target: TimeInterval
        /// The time sent to mpv: the target, or just after the start of the frame before it
        /// (`soughtFrameBefore`).
        let sent: TimeInterval
        let accurate: Bool
        let sentAt = monotonicSeconds()
        /// New frames drawn when the seek (or its step back) was sent.
        var framesAtSend: Int
        /// Sent while playing: a frame queued before the seek took effect may still be drawn
        /// after it was sent, so only a frame drawn after the restart is known to be new.
        let sentWhilePlaying: Bool
        /// New frames drawn when playback restarted at the target.
        var framesAtRestart = 0
        var acknowledged = false
        /// The position mpv reported when playback restarted there.
        var reached: TimeInterval?
        var restartedAt: Double?
        /// mpv lands an exact seek on the first frame at or after the target; when that is
        /// later than the target, one step back reaches the frame shown at the target.
        var steppedBack = false
        /// Sent, paused, to just after the start of the frame before the target's (one of the
        /// last frames, see `seek(to:accurate:)`): mpv then shows the frame at the target.
        var soughtFrameBefore = false
        /// How far before the target mpv's demuxer was asked to land (`hr-seek-demuxer-offset`).
        var demuxerOffset = MPVConfiguration.demuxerSeekOffset
    }

    /// State the player queue, the render thread and the event thread share.
    struct Shared {
        var closing = false
        var newFrames = 0
        /// `prepared` was reported (mirrors the event thread's flag for the render thread).
        var prepareReported = false
        /// The media time of the last new frame drawn.
        var lastNewFrameTime: TimeInterval = -1
        var seek: SeekRequest?
        /// The pause state last asked for (mpv starts paused).
        var pauseRequested = true
        /// mpv holds playback until its cache fills (`paused-for-cache`): the picture stays.
        var pausedForCache = false
        var nextSeekID = MPVSession.seekReplyBase
        /// A subtitle track is selected (drawn on `.frames` pictures, so thumbnails come from
        /// the decoder instead).
        var subtitleSelected = false
        /// The mpv id of the selected subtitle track whose cues were read from its file (see
        /// `readCues`); nil: cues come from `sub-text` as mpv shows them.
        var cuesReadFor: String?
        /// The display size last reported (mirrors the event thread's `naturalSize` for
        /// thumbnails, which other threads take).
        var naturalSize = VideoSize.zero
    }

    let handle: MPVHandle
    let renderer: MPVSoftwareRenderer?
    let sink: EngineSink
    let source: MediaSource
    private let options: PlaybackOptions
    let shared = Locked(Shared())
    /// With the software render API, the clockwise turn the adapter's filter gives the
    /// pictures (mpv's own is off there, see `MPVConfiguration.coreOptions`); nil when mpv
    /// turns them itself (the null output, whose screenshots come turned).
    let uprightTurn: Int?
    let frameTimes = MPVFrameTimes()
    /// Screenshots of the video output's frame for thumbnails without drawn pictures.
    let screenshots: MPVScreenshotTaker
    /// Converts the rendered pictures for the `.frames` handler; used only inside the frame
    /// presenter's `present` (the render thread).
    let frameConverter = PictureConverter()
    /// Converts drawn pictures for a `.yuvFrames` output (render thread).
    let yuvOutput: MPVYUVOutput?
    /// Draws a `.window` output's pictures into the app's window (and again on expose,
    /// resize or a new mode); stopped when the core is torn down.
    let windowPresenter: X11WindowPresenter?

    // MARK: - Event thread state

    private var fileLoaded = false
    private var restarted = false
    private var restartedAt: Double?
    var prepared = false
    private var failed = false
    private var hasVideo = false
    var hasAudio = false
    var paused = true
    var eofReached = false
    /// mpv reached the end while a seek to a time before it was under way: reported as the
    /// end once that seek is done and mpv is still at the end.
    var endAfterSeek = false
    /// The last position reported while playing, and when it came.
    var lastPlayedPosition: TimeInterval = 0
    var lastPlayedAt = monotonicSeconds()
    /// When the end is due: mpv declares it once the last audio is handed to the output, which
    /// still has to play it out (about 0.4 s); `ended()` waits for that tail.
    var endDue: Double?
    var duration: TimeInterval = 0
    var naturalSize = VideoSize.zero
    /// mpv's recent error lines (its own words for a failure), oldest first.
    private var errorLines: [String] = []
    /// A failure waiting for mpv's error lines, which arrive after the event that ends the file.
    private var pendingFailure: (error: () -> PlaybackError, since: Double)?
    var buffer = EngineBufferStatus(playableDuration: 0, bufferingProgress: 0, bytesTransferred: 0)
    /// Where the media starts on mpv's timeline, seconds: mpv counts from the container's
    /// start (0 in Matroska, the first timestamp of an MPEG stream), where the first picture
    /// can come a little later (7 ms in WebM with Opus, whose audio starts before it; 21 ms in
    /// MPEG-TS). A first picture that close to mpv's 0 (`MediaStart`) is the media's start,
    /// as on every engine: every time reported is mpv's less this, every seek target this
    /// more. Set once prepared (event thread), read by the render thread.
    let timelineOrigin = Locked<TimeInterval>(0)
    /// Copies of WebVTT files with STYLE or REGION blocks, which mpv's libavformat does not
    /// read; removed once the core is destroyed.
    private let readableSubtitles = WebVTTReadableCopies()

    // MARK: - Lifecycle

    /// Creates and initialises the core for `source` (and the renderer for `.frames`);
    /// `start()` then loads the file.
    init(source: MediaSource, options: PlaybackOptions, sink: EngineSink) throws(PlaybackError) {
        self.source = source
        self.options = options
        self.sink = sink
        // A local file's turn, read from its header; remote media are shown as stored.
        uprightTurn = MPVConfiguration.drawsThroughRenderAPI(options.videoOutput)
            ? (source.isFile ? StreamProbe.videoRotation(source.url) ?? 0 : 0) : nil
        let handle = try MPVHandle(options: MPVConfiguration.coreOptions(for: source, options: options, uprightTurn: uprightTurn),
                                   listOptions: MPVConfiguration.coreListOptions(for: source, options: options))
        self.handle = handle
        let frameTimes = self.frameTimes
        let shared = self.shared
        screenshots = MPVScreenshotTaker(handle: handle, fallbackTime: { frameTimes.latest }, playback: {
            let state = shared.get()
            return .init(seeking: state.seek != nil, advancing: !state.pauseRequested && !state.pausedForCache)
        })
        handle.requestLogMessages(level: "error")
        yuvOutput = sink.wantsYUVFrames ? MPVYUVOutput() : nil
        windowPresenter = X11WindowPresenter.forOutput(options.videoOutput, engine: "mpv")
        if MPVConfiguration.drawsThroughRenderAPI(options.videoOutput) {
            guard let context = handle.makeSoftwareRenderContext() else {
                handle.destroy()
                throw PlaybackError(code: .engine, message: "open: mpv's software render API is unavailable")
            }
            let receiver = MPVPictureReceiver()
            renderer = MPVSoftwareRenderer(context: context, makesAlphaOpaque: yuvOutput == nil,
                                           uptimeAheadOfCoreClock: handle.uptimeAheadOfCoreClock(),
                                           stamp: { request in receiver.session?.stamp(request) ?? 0 },
                                           onPicture: { picture in receiver.session?.receive(picture) },
                                           onIdle: { receiver.session?.rendererIdle() })
            receiver.session = self
        } else {
            renderer = nil
        }
        for property in Observed.allCases {
            handle.observe(property.name, format: property.format, id: property.rawValue)
        }
    }

    /// Starts the event thread and loads the source (paused).
    func start() {
        DetachedThread.start(name: "mpv-events") { [self] in runEventLoop() }
        handle.commandAsync(["loadfile", MPVConfiguration.loadTarget(for: source)])
    }

    /// Ends the session: no more reports; the event thread tears the core down and exits.
    func close() {
        shared.withLock { $0.closing = true }
        renderer?.forgetKept()
        handle.wakeup()
    }

    private var isClosing: Bool { shared.get().closing }

    // MARK: - Controls (player queue)

    /// Pauses or resumes.
    func setPaused(_ value: Bool) {
        let changed = shared.withLock { state -> Bool in
            defer { state.pauseRequested = value }
            return state.pauseRequested != value
        }
        handle.setFlagAsync("pause", value)
        // A screenshot taken before stands in while paused only if it was taken in this pause:
        // one from an earlier pause, or from before the pictures stopped, shows another frame.
        if changed { refreshScreenshots(invalidating: true) }
    }

    /// Seeks to `seconds`, to the exact frame or the keyframe before it.
    ///
    /// mpv shows the first frame from 5 ms before an exact target on; a paused seek that lands
    /// after the target steps one frame back. Among the last frames there is no frame after
    /// the target's to step back from, and with the video at its end mpv's time-pos follows
    /// the audio or repeats the target: a paused seek there goes to just after the start of
    /// the frame before instead, which shows the frame at the target.
    func seek(to seconds: TimeInterval, accurate: Bool) {
        let target = max(0, seconds) + timelineOrigin.get()
        var sent = target
        let paused = shared.get().pauseRequested
        if accurate, hasVideo, paused, duration > 0, let rate = handle.nominalFrameRate() {
            let frame = 1 / max(1, rate)
            if target >= duration - 2 * frame, target >= frame { sent = target - frame + 0.006 }
        }
        let (id, replaced) = shared.withLock { state -> (UInt64, SeekRequest?) in
            let id = state.nextSeekID, replaced = state.seek
            state.nextSeekID += 1
            var request = SeekRequest(id: id, target: target, sent: sent, accurate: accurate,
                                      framesAtSend: state.newFrames, sentWhilePlaying: !state.pauseRequested)
            if sent != target {
                request.soughtFrameBefore = true
                request.steppedBack = true
            }
            state.seek = request
            return (id, replaced)
        }
        restoreDemuxerOffset(after: replaced)
        if paused, accurate {
            // The frame a paused seek draws is the target's: mpv's position may come after it
            // is drawn (more than the wait for a sample when the machine is busy), and the last
            // sample before is of the old frame.
            frameTimes.record(target)
        }
        let argument = String(cFormat: "%.6f", sent)
        handle.commandAsync(["seek", argument, accurate ? "absolute+exact" : "absolute+keyframes"], replyID: id)
    }

    /// Sets the speed.
    func setRate(_ rate: Float) { handle.setDoubleAsync("speed", Double(rate)) }

    /// Sets the volume from 0...1 (mpv's scale is 0...100).
    func setVolume(_ volume: Float) { handle.setDoubleAsync("volume", Double(min(1, max(0, volume))) * 100) }

    /// The volume mpv reports (its `volume` property, 0...100), as 0...1.
    var appliedVolume: Float? { handle.getDouble("volume").map { Float($0 / 100) } }

    // MARK: - Tracks (player queue)

    /// Sets `aid`, `vid` or `sid` (nil: "no").
    func selectTrack(kind: TrackKind, engineID: String?) {
        if kind == .subtitle { shared.withLock { $0.subtitleSelected = engineID != nil } }
        handle.setStringAsync(MPVTracks.property(kind), engineID ?? "no")
    }

    /// Adds an external subtitle file without selecting it (the player selects it).
    func addSubtitle(_ url: URL) {
        handle.commandAsync(["sub-add", subtitleTarget(for: url), "auto"])
    }

    /// What `sub-add` loads for the subtitle file `url`: the file mpv reads (a readable copy of
    /// a styled WebVTT file), its encoding told to mpv first.
    private func subtitleTarget(for url: URL) -> String {
        let file = readableSubtitles.file(for: url)
        MPVTracks.prepareEncoding(of: file, handle: handle)
        return MPVConfiguration.loadTarget(for: MediaSource(file))
    }

    /// mpv's `sub-delay` (it moves drawn subtitles and when `sub-text` changes).
    func setSubtitleDelay(_ seconds: TimeInterval) {
        handle.setDoubleAsync("sub-delay", seconds)
    }

    /// Lays a window output's pictures out by `mode`, the one shown at once.
    func setScalingMode(_ mode: ScalingMode) {
        windowPresenter?.setScalingMode(mode)
    }

    /// The picture on screen now: the last drawn one, or else (`.none`) a screenshot of the
    /// frame the video output holds (the last one taken while the core is too busy to answer).
    func thumbnail() -> VideoFrame? {
        if let renderer, !thumbnailsAreScreenshots { return renderer.keptFrame() }
        guard var shot = screenshots.take() else { return nil }
        shot.presentationTime = mediaTime(shot.presentationTime)
        // mpv sizes a screenshot of a turned anamorphic picture its own way (a 320x240 stream of
        // pixel aspect 2:1 turned a quarter comes as 480x320): scaled to the display size the
        // player reports, as the other engines' thumbnails are.
        let natural = shared.get().naturalSize
        guard !natural.isEmpty, shot.size != natural else { return shot }
        return shot.pixels.withUnsafeBufferPointer { pixels in
            PictureConverter().rgbaFrame(.rgba(pixels.baseAddress!, width: shot.width, height: shot.height, bytesPerRow: shot.bytesPerRow),
                                         size: natural, presentationTime: shot.presentationTime)
        } ?? shot
    }

    /// Whether thumbnails are screenshots: no picture is drawn, or the drawn one is at the
    /// stored size (`.yuvFrames`) or carries the selected subtitle.
    private var thumbnailsAreScreenshots: Bool {
        renderer == nil || yuvOutput != nil || shared.get().subtitleSelected
    }

    /// The picture shown changed (`invalidating`: for good, a seek): where thumbnails
    /// are screenshots, one of the new picture is begun, so that a thumbnail soon after finds it.
    func refreshScreenshots(invalidating: Bool) {
        if invalidating { screenshots.invalidate() }
        if thumbnailsAreScreenshots { screenshots.refresh() }
    }

    // MARK: - Render thread

    /// The media time of the picture the renderer is about to draw.
    fileprivate func stamp(_ request: MPVDrawRequest) -> TimeInterval {
        // Before prepared the core is paused at the start: no later sample is coming.
        mediaTime(frameTimes.stamp(request, waitsForSample: shared.get().prepareReported))
    }

    /// A time on mpv's timeline as a time of the media (see `timelineOrigin`).
    func mediaTime(_ mpvTime: TimeInterval) -> TimeInterval {
        max(0, mpvTime - timelineOrigin.get())
    }

    /// A picture the renderer drew and keeps (for thumbnails and redraws; with `.yuvFrames`,
    /// whose pictures are drawn at the stored size, thumbnails are screenshots instead):
    /// present it, count it, and wake the event thread when a prepare or a seek waits for it.
    fileprivate func receive(_ picture: MPVRenderedPicture) {
        guard !isClosing else { return }
        let time = picture.time
        if let windowPresenter, let renderer {
            // Drawn from the kept picture, now and on expose, resize or a new mode.
            windowPresenter.show { draw in
                renderer.withKeptPicture { pixels, size, bytesPerRow, _ in
                    draw(.rgba(pixels.assumingMemoryBound(to: UInt8.self), width: size.width, height: size.height,
                               bytesPerRow: bytesPerRow), size)
                }
            }
        }
        if picture.isNewFrame, sink.frames != nil, let base = picture.pixels.baseAddress {
            sink.presentFrame(.rgba(base.assumingMemoryBound(to: UInt8.self), width: picture.size.width,
                                    height: picture.size.height, bytesPerRow: picture.bytesPerRow),
                              naturalSize: picture.size, presentationTime: time, converter: frameConverter)
        }
        if picture.isNewFrame, let yuvOutput { yuvOutput.present(picture, time: time, sink: sink) }
        count(isNewFrame: picture.isNewFrame, at: time)
    }

    /// Counts a drawn picture, once stored and handed over, so that whoever waits on the
    /// count finds the picture in place.
    private func count(isNewFrame: Bool, at time: TimeInterval) {
        let state = shared.withLock { state -> Shared in
            if isNewFrame {
                state.newFrames += 1
                state.lastNewFrameTime = time
            }
            return state
        }
        PlaybackLog.log(.debug, "mpv", "drew \(isNewFrame ? "frame" : "redraw") \(state.newFrames) at \(time)")
    }

    /// The renderer handled every request: wake the event thread if a prepare or seek waits.
    fileprivate func rendererIdle() {
        let state = shared.get()
        if !state.closing, !state.prepareReported || state.seek?.reached != nil { handle.wakeup() }
    }

    // MARK: - Event thread

    private func runEventLoop() {
        while !isClosing {
            var timeout = pendingFailure == nil ? 0.1 : 0.02
            if let due = endDue { timeout = min(timeout, max(0, due - monotonicSeconds())) }
            let event = handle.waitEvent(timeout: timeout)
            if isClosing { break }
            dispatch(event)
            checkWaits()
            if let failure = pendingFailure,
               event.event_id == MPV_EVENT_NONE || monotonicSeconds() - failure.since > 0.3 {
                pendingFailure = nil
                sink.failed(failure.error())
            }
        }
        renderer?.stop()
        windowPresenter?.stop()
        handle.destroy()
        readableSubtitles.removeAll()
    }

    private func dispatch(_ event: mpv_event) {
        switch event.event_id {
        case MPV_EVENT_PROPERTY_CHANGE:
            guard let property = event.data?.assumingMemoryBound(to: mpv_event_property.self).pointee,
                  let observed = Observed(rawValue: event.reply_userdata) else { return }
            propertyChanged(observed, property)
        case MPV_EVENT_FILE_LOADED:
            fileDidLoad()
        case MPV_EVENT_PLAYBACK_RESTART:
            playbackRestarted()
        case MPV_EVENT_VIDEO_RECONFIG:
            updateNaturalSize()
        case MPV_EVENT_COMMAND_REPLY:
            commandReplied(id: event.reply_userdata, status: event.error)
        case MPV_EVENT_END_FILE:
            guard let endFile = event.data?.assumingMemoryBound(to: mpv_event_end_file.self).pointee else { return }
            fileEnded(endFile)
        case MPV_EVENT_LOG_MESSAGE:
            guard let message = event.data?.assumingMemoryBound(to: mpv_event_log_message.self).pointee,
                  let text = message.text else { return }
            let prefix = message.prefix.map { String(cString: $0) } ?? "mpv"
            let line = String(cString: text).trimmingWhitespace()
            errorLines = Array((errorLines + [line]).suffix(3))
            PlaybackLog.log(.info, "mpv", "\(prefix): \(line)")
        default:
            break
        }
    }

    private func fileDidLoad() {
        fileLoaded = true
        errorLines.removeAll()  // what follows concerns playing, not opening
        hasVideo = (handle.getString("vid") ?? "no") != "no"
        hasAudio = (handle.getString("aid") ?? "no") != "no"
        duration = max(0, handle.getDouble("duration") ?? 0)
        for url in options.subtitleURLs {
            _ = handle.commandReturningNode(["sub-add", subtitleTarget(for: url), "auto"])
        }
        PlaybackLog.log(.debug, "mpv", "file loaded: video \(hasVideo), audio \(hasAudio), duration \(duration)")
    }

    private func playbackRestarted() {
        if !prepared {
            restarted = true
            restartedAt = monotonicSeconds()
            return
        }
        var reached = handle.getDouble("time-pos") ?? frameTimes.latest
        let frame = 1 / max(1, handle.nominalFrameRate() ?? 25)
        // mpv forgets its estimate of the pictures' rate at a seek and makes it again from the
        // first picture after it: none means the seek decoded no picture at all.
        let decodedNoPicture = hasVideo && handle.getDouble("estimated-vf-fps") == nil
        let again = shared.withLock { state -> SeekAgain? in
            guard var seek = state.seek, seek.acknowledged, seek.reached == nil else { return nil }
            PlaybackLog.log(.debug, "mpv", "restart at \(reached); frames \(seek.framesAtSend) -> \(state.newFrames)\(decodedNoPicture ? ", no picture" : "")")
            // Landed past the frame after the target, or on no picture: decoding began at a
            // keyframe after the target (or found none before the end), as where the demuxer's
            // seek lands on any packet (MPEG-TS) and the groups of pictures are longer than
            // the demuxer offset. Again from further back.
            if seek.accurate, hasVideo, !seek.steppedBack || seek.soughtFrameBefore,
               reached > seek.target + 1.5 * frame || decodedNoPicture,
               seek.demuxerOffset < min(seek.target, MPVConfiguration.widestDemuxerOffset) {
                seek.demuxerOffset = MPVConfiguration.widerDemuxerOffset(after: seek.demuxerOffset)
                seek.acknowledged = false
                seek.framesAtSend = state.newFrames
                state.seek = seek
                return .widened(seek.id, seek.sent, seek.demuxerOffset)
            }
            if seek.accurate, hasVideo, !seek.sentWhilePlaying, !seek.steppedBack, reached > seek.target + 0.001 {
                seek.steppedBack = true
                seek.acknowledged = false
                seek.framesAtSend = state.newFrames
                state.seek = seek
                return .stepBack(seek.id)
            }
            // Sent for the frame before (see `seek(to:accurate:)`): the frame at the target.
            if seek.soughtFrameBefore { reached = seek.target }
            seek.reached = reached
            seek.restartedAt = monotonicSeconds()
            seek.framesAtRestart = state.newFrames
            state.seek = seek
            return nil
        }
        switch again {
        case .widened(let id, let target, let offset)?:
            PlaybackLog.log(.debug, "mpv", "seek to \(target) landed at \(reached): again from \(offset) s before")
            sendExactSeek(to: target, demuxerOffset: offset, replyID: id)
            return
        case .stepBack(let id)?:
            frameTimes.record(reached)
            handle.commandAsync(["frame-back-step"], replyID: id)
        case nil:
            // mpv reports the target while it seeks and may not send the landing position
            // before the frame there is drawn: it is a sample for that frame too.
            frameTimes.record(reached)
        }
    }

    /// What a seek that restarted in the wrong place does next.
    private enum SeekAgain {
        /// Seek again with the demuxer landing this much before the target.
        case widened(UInt64, TimeInterval, TimeInterval)
        /// Step one frame back.
        case stepBack(UInt64)
    }

    /// Sends an exact seek with the demuxer asked to land `demuxerOffset` before the target.
    /// mpv reads the option when it carries the seek out, after the command: the option is put
    /// back once the seek is done (`checkWaits`) or replaced (`seek(to:accurate:)`).
    private func sendExactSeek(to target: TimeInterval, demuxerOffset: TimeInterval, replyID: UInt64) {
        handle.setDoubleAsync("hr-seek-demuxer-offset", demuxerOffset)
        handle.commandAsync(["seek", String(cFormat: "%.6f", target), "absolute+exact"], replyID: replyID)
    }

    /// Puts mpv's demuxer offset back after a seek that widened it.
    func restoreDemuxerOffset(after seek: SeekRequest?) {
        guard let seek, seek.demuxerOffset != MPVConfiguration.demuxerSeekOffset else { return }
        handle.setDoubleAsync("hr-seek-demuxer-offset", MPVConfiguration.demuxerSeekOffset)
    }

    private func commandReplied(id: UInt64, status: Int32) {
        guard id >= Self.seekReplyBase else {
            if status < 0 { PlaybackLog.log(.warning, "mpv", "command failed: \(MPVHandle.describe(status))") }
            return
        }
        let failedSeek = shared.withLock { state -> SeekRequest? in
            guard var seek = state.seek, seek.id == id else { return nil }
            if status < 0 {
                state.seek = nil
                return seek
            }
            seek.acknowledged = true
            state.seek = seek
            return nil
        }
        if let failedSeek {
            restoreDemuxerOffset(after: failedSeek)
            // mpv refused the seek (e.g. an unseekable stream): it lands where playback is.
            PlaybackLog.log(.warning, "mpv", "seek: \(MPVHandle.describe(status))")
            sink.seekCompleted(mediaTime(handle.getDouble("time-pos") ?? frameTimes.latest))
        }
    }

    private func fileEnded(_ endFile: mpv_event_end_file) {
        guard !failed else { return }
        if endFile.reason == MPV_END_FILE_REASON_ERROR {
            failed = true
            let status = endFile.error, loaded = fileLoaded
            pendingFailure = ({ [unowned self] in
                MPVConfiguration.loadError(status: status, source: source, loaded: loaded, detail: errorDetail)
            }, monotonicSeconds())
        } else if endFile.reason == MPV_END_FILE_REASON_EOF {
            if prepared {
                if !eofReached { reachedEnd() }
            } else {
                failed = true
                let target = MPVConfiguration.loadTarget(for: source)
                pendingFailure = ({ [unowned self] in
                    let detail = errorDetail.map { " (\($0))" } ?? ""
                    return PlaybackError(code: .unsupportedFormat, message: "open: \(target): nothing playable\(detail)")
                }, monotonicSeconds())
            }
        }
    }

    /// mpv reached the end: report it now, or once the audio output played out its tail.
    func reachedEnd() {
        let speed = max(0.01, handle.getDouble("speed") ?? 1)
        let remaining = (duration - lastPlayedPosition) / speed - (monotonicSeconds() - lastPlayedAt)
        let tail = hasAudio && !paused && duration > 0 ? min(1, max(0, remaining)) : 0
        if tail > 0.05 {
            PlaybackLog.log(.debug, "mpv", "end reached; audio tail \(tail) s still playing")
            endDue = monotonicSeconds() + tail
        } else {
            sink.ended()
        }
    }

    /// mpv's recent error lines joined, or nil.
    private var errorDetail: String? {
        errorLines.isEmpty ? nil : errorLines.joined(separator: "; ")
    }

    /// Reports what waited on a drawn frame: the prepare, or the seek in flight.
    private func checkWaits() {
        let now = monotonicSeconds()
        if let due = endDue, now >= due {
            endDue = nil
            if shared.get().seek == nil { sink.ended() }
        }
        if !prepared, !failed, fileLoaded, restarted {
            // The first frame drawn, and nothing more queued: mpv may hand the first frame
            // over again once playback restarted, and a seek must not take that for its own.
            let drawn = shared.get().newFrames > 0 && renderer?.isBusy != true
            let waitedTooLong = now - (restartedAt ?? now) > Self.frameWait
            if !hasVideo || renderer == nil || drawn || waitedTooLong {
                if hasVideo, renderer != nil, !drawn {
                    PlaybackLog.log(.warning, "mpv", "prepare: no frame drawn within \(Self.frameWait) s")
                }
                finishPrepare()
            }
        }
        guard prepared else { return }
        var finished: SeekRequest?
        let completed = shared.withLock { state -> TimeInterval? in
            guard let seek = state.seek else { return nil }
            guard let reached = seek.reached else {
                // mpv never restarted playback for it: it lands where playback is.
                guard now - seek.sentAt > Self.seekGiveUp else { return nil }
                PlaybackLog.log(.warning, "mpv", "seek to \(seek.target): no playback restart within \(Self.seekGiveUp) s")
                state.seek = nil
                finished = seek
                return frameTimes.latest
            }
            // A frame drawn after the restart is at the target. One drawn before it (but after
            // the seek was sent) may still be the old picture (one mpv had queued): it counts
            // when its time says it is the new one, which only matters while paused.
            let drawnAfterRestart = state.newFrames > seek.framesAtRestart
            let drawnAt = state.lastNewFrameTime + timelineOrigin.get()  // on mpv's timeline
            let drawnAtTarget = !seek.sentWhilePlaying && state.newFrames > seek.framesAtSend
                && (abs(drawnAt - reached) <= 0.002 || abs(drawnAt - seek.target) <= 0.002)
            let drawn = (drawnAfterRestart || drawnAtTarget) && renderer?.isBusy != true
            let waitedTooLong = now - (seek.restartedAt ?? now) > Self.frameWait
            guard !hasVideo || renderer == nil || drawn || waitedTooLong else { return nil }
            state.seek = nil
            finished = seek
            PlaybackLog.log(.debug, "mpv", "seek done at \(reached): frames \(seek.framesAtSend) -> \(state.newFrames)\(drawn ? "" : " (no new frame)")")
            return reached
        }
        restoreDemuxerOffset(after: finished)
        if let completed {
            // The drawn picture is the one at the target; it may have been drawn before the
            // new position reached this thread.
            if paused, renderer?.restampKept(mediaTime(completed)) == true {
                frameTimes.settle(at: completed)
            }
            // The picture is of the new place, while playing too.
            refreshScreenshots(invalidating: true)
            sink.seekCompleted(mediaTime(completed))
            if endAfterSeek {
                endAfterSeek = false
                if eofReached { reachedEnd() }
            }
        }
    }

    private func finishPrepare() {
        prepared = true
        measureTimelineOrigin()
        shared.withLock { $0.prepareReported = true }
        updateNaturalSize()
        if let known = handle.getDouble("duration"), known > 0 { duration = known }
        if let end = handle.getValue("demuxer-cache-state")?["cache-end"]?.double { buffer.playableDuration = end }
        if let position = handle.getInt("stream-pos") { buffer.bytesTransferred = max(buffer.bytesTransferred, Int64(position)) }
        reportBuffer()
        refreshScreenshots(invalidating: false)
        let info = EngineMediaInfo(duration: duration, naturalSize: hasVideo ? naturalSize : .zero,
                                   hasVideo: hasVideo, hasAudio: hasAudio, frameRate: hasVideo ? handle.nominalFrameRate() : nil)
        PlaybackLog.log(.debug, "mpv", "prepared: \(info)")
        reportTracks()
        sink.metadataChanged(MPVTracks.tags(handle))
        sink.chaptersChanged(MPVTracks.chapters(handle))
        sink.prepared(info)
    }

    /// Prepared at the start: the first picture's time on mpv's timeline is the media's start
    /// when it is that close to mpv's 0 (`MediaStart`, see `timelineOrigin`); the picture kept
    /// from the prepare is then at 0.
    private func measureTimelineOrigin() {
        guard hasVideo, let first = handle.getDouble("time-pos"), first > 0 else { return }
        let frame = 1 / max(1, handle.nominalFrameRate() ?? 25)
        guard MediaStart.isStart(firstPicture: first, start: 0, frameDuration: frame) else { return }
        timelineOrigin.set(first)
        frameTimes.settle(at: first)
        _ = renderer?.restampKept(0)
        PlaybackLog.log(.debug, "mpv", "the media starts at \(first) s on mpv's timeline")
    }
}

/// The render callback's way back to its session, set once the session exists.
private final class MPVPictureReceiver: @unchecked Sendable {
    // @unchecked: `session` is written once, before the first picture can be drawn (no file
    // is loaded until `start()`), and only read afterwards.
    weak var session: MPVSession?
}
#endif

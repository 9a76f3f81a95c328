import CXine
import Dispatch
import FoundationEssentials
import PlaybackKit

/// A `PlaybackEngine` over xine-lib 1.2: `EnginePlayer` drives it and owns the contract's
/// semantics; this type only reads and drives xine.
///
/// Every call into xine runs on one serial queue of the engine's own (`xine.engine`):
/// `xine_open` and `xine_play` block (opening, seeking, waiting for the first picture), and
/// the player's queue, which calls the methods below, must never wait on them. Reports go
/// to the `EngineSink` from this queue and from xine's video output thread (pictures,
/// positions, size changes), never from xine's event thread, whose events are posted to
/// the queue.
///
/// Positions and pictures are exact to the frame: xine lands a seek on the keyframe before
/// the target, and single steps display picture after picture up to it (see `land(at:)`);
/// every picture's time is its own timestamp, which a post plugin of the adapter's notes on
/// its way to the raw output (`pkx_timestamps` in CXine).
final class XineEngine: PlaybackEngine, @unchecked Sendable {
    // @unchecked: the variables under "On the queue" are touched only on `queue`; `screen`
    // and `listener` are Locked.
    private let queue = DispatchQueue(label: "xine.engine")
    /// The picture store of the current session, for `thumbnail()` from any thread.
    private let screen = Locked<XinePictureStore?>(nil)
    /// The event listener of the current session, which reads the volume from any thread.
    private let listener = Locked<XineEventListener?>(nil)

    // MARK: On the queue
    private var session: XineSession?
    private var sink: EngineSink?
    private var source: MediaSource?
    private var hasVideo = false
    private var playing = false
    private var rate: Float = 1
    private var volume: Float = 1
    /// One frame, seconds: the shortest step between two pictures' timestamps seen so far.
    private var measuredFrameDuration: TimeInterval?
    private var duration: TimeInterval = 0
    /// xine's network buffer control is buffering (its "Buffering..." progress below 100 %).
    private var buffering = false
    /// Playing, no picture came for `stallDelay`.
    private var waitingForPictures = false
    /// What the sink was told last.
    private var stalled = false
    /// Where the stream stands paused after landing; nil once it plays on.
    private var landedAt: TimeInterval?
    private var timer: DispatchSourceTimer?

    /// How often, while playing, the engine reads xine's position (for sound alone), the
    /// length and the bytes read, and looks for a stall.
    static let positionInterval: TimeInterval = 0.02
    /// The most single steps one seek takes (a GOP of 24 s at 25 fps).
    static let maximumSteps = 600
    /// How long a single step may take to display its picture.
    static let stepTimeout: TimeInterval = 0.5
    /// How many times one seek lands again (after xine landed past the target, or its steps
    /// stopped short).
    static let landingAttempts = 4
    /// How long playing may go without a picture before it counts as a stall.
    static let stallDelay: TimeInterval = 0.6
    /// How many times a step that displayed nothing is asked for again.
    static let stepAttempts = 6

    // MARK: - PlaybackEngine

    func open(_ source: MediaSource, options: PlaybackOptions, sink: EngineSink) {
        let store = XinePictureStore()
        screen.set(store)
        queue.async { [self] in start(source, options: options, sink: sink, store: store) }
    }

    func play() {
        queue.async { [self] in
            playing = true
            session?.events.holdPaused(false)
            resume()
        }
    }

    func pause() {
        queue.async { [self] in
            playing = false
            guard let session else { return }
            session.events.holdPaused(true)
            stopTimer()
            waitingForPictures = false
            reportStall()
            session.video.setMode(.ignoring)
            xine_set_param(session.stream, XINE_PARAM_SPEED, XINE_SPEED_PAUSE)
        }
    }

    func seek(to seconds: TimeInterval, accurate: Bool) {
        // Keyframe seeks land on the exact frame too: the steps that find a keyframe's time
        // are the steps that reach the target.
        queue.async { [self] in seekNow(seconds) }
    }

    func setRate(_ rate: Float) {
        queue.async { [self] in
            self.rate = rate
            if playing, let session { xine_set_param(session.stream, XINE_PARAM_FINE_SPEED, Self.fineSpeed(rate)) }
        }
    }

    func setVolume(_ volume: Float) {
        queue.async { [self] in
            self.volume = volume
            if let session { applyVolume(session) }
        }
    }

    func setScalingMode(_ mode: ScalingMode) {
        // No window output: `.frames` are composed by PlaybackKit.
    }

    func close() {
        screen.set(nil)
        queue.async { [self] in closeSession() }
    }

    func thumbnail() -> VideoFrame? { screen.get()?.thumbnail() }

    var appliedVolume: Float? { listener.get()?.amplifierVolume }

    // MARK: - Opening

    /// Opens `source` and lands paused on its first picture, then reports prepared (or the
    /// failure).
    private func start(_ source: MediaSource, options: PlaybackOptions, sink: EngineSink, store: XinePictureStore) {
        closeSession()
        guard sink.isCurrent else { return }
        do {
            let video = XineVideoOutput(store: store, sink: sink)
            let session = try XineSession(video: video, audio: options.audioOutput) { [weak self] event in
                guard let self else { return }
                queue.async { self.handle(event, from: sink) }
            }
            self.session = session
            listener.set(session.events)
            self.sink = sink
            self.source = source
            let info = try prepare(session, source)
            sink.metadataChanged(session.tags)
            sink.prepared(info)
        } catch let error as PlaybackError {
            closeSession()
            sink.failed(error)
        } catch {
            closeSession()
            sink.failed(PlaybackError(code: .engine, message: "xine: \(error)"))
        }
    }

    private func prepare(_ session: XineSession, _ source: MediaSource) throws -> EngineMediaInfo {
        let logged = session.log.count
        let mrl = source.isFile ? URL(fileURLWithPath: source.path).absoluteString : source.url.absoluteString
        guard xine_open(session.stream, mrl) == 1 else {
            throw XineErrors.openFailed(session, source: source, loggedBefore: logged)
        }
        if let refusal = XineErrors.refusedInput(session) { throw refusal }
        hasVideo = session.info(XINE_STREAM_INFO_HAS_VIDEO) != 0 && session.info(XINE_STREAM_INFO_VIDEO_HANDLED) != 0
        let hasAudio = session.info(XINE_STREAM_INFO_HAS_AUDIO) != 0 && session.info(XINE_STREAM_INFO_AUDIO_HANDLED) != 0
        guard hasVideo || hasAudio else { throw XineErrors.noDecoder(session, source: source) }
        applyVolume(session)
        let codec = xine_get_meta_info(session.stream, XINE_META_INFO_VIDEOCODEC).map { String(cString: $0) } ?? ""
        session.video.takeAspect(fromStream: codec != "theora")
        landedAt = try land(session, at: 0, fresh: true)
        // (After landing: xine's MPEG-TS and Ogg demuxers know the length only once they have
        // read some of the stream.)
        duration = session.length
        session.video.setMode(.ignoring)
        // (xine buffers while it opens a network stream; the player is not stalled for that.)
        buffering = false
        stalled = false
        // xine gives the frame duration in 90 kHz ticks.
        let frameTicks = session.info(XINE_STREAM_INFO_FRAME_DURATION)
        return EngineMediaInfo(duration: duration, naturalSize: session.video.store.latestNaturalSize,
                               hasVideo: hasVideo, hasAudio: hasAudio,
                               frameRate: hasVideo && frameTicks > 0 ? 90000 / Double(frameTicks) : nil)
    }

    // MARK: - Landing on a picture

    /// Starts the stream at `milliseconds` and pauses it there. xine_play lands on the
    /// keyframe at or before that time and displays it early (before its time, at no time
    /// xine tells) before it returns.
    ///
    /// `fromTheTop`: xine_play(0, 0), which reads the stream from its first byte instead of
    /// seeking (xine's MPEG-TS demuxer, asked to seek to the start of size-change.ts, lands
    /// in its second half); only on a fresh stream, as it returns before the picture is
    /// displayed, and pictures of before could be displayed first.
    private func playPaused(_ session: XineSession, at milliseconds: Int, fromTheTop: Bool = false) throws {
        guard xine_play(session.stream, 0, fromTheTop ? 0 : Int32(clamping: max(1, milliseconds))) == 1 else {
            throw XineErrors.playFailed(session, source: source)
        }
        xine_set_param(session.stream, XINE_PARAM_SPEED, XINE_SPEED_PAUSE)
    }

    /// One single step while paused: xine displays the next picture. Returns it and the
    /// picture displayed before it; nil when no picture came (the end of the stream).
    private func step(_ session: XineSession) -> (picture: XinePicture, before: XinePicture?)? {
        let before = session.video.lastRecorded.count
        // xine skips a step while another thread holds its port ticket ("rather miss 1
        // strobe than wait or freeze"): ask again, while the stream has not ended. (xine
        // can call the stream ended while pictures still wait to be stepped to: the sound,
        // which stepping drops, ran out.)
        var shown: (picture: XinePicture, before: XinePicture?)?
        for attempt in 0..<Self.stepAttempts where shown == nil && (attempt < 2 || session.isInPlay) {
            xine_set_param(session.stream, XINE_PARAM_VO_SINGLE_STEP, 1)
            shown = session.video.waitForDisplay(after: before, timeout: Self.stepTimeout)
        }
        return shown
    }

    /// The media time of a picture: its timestamp; xine's position when the timestamp
    /// plugin did not see it.
    private func time(of picture: XinePicture, _ session: XineSession) -> TimeInterval {
        session.video.mediaTime(of: picture) ?? session.position ?? 0
    }

    /// Lands paused on the picture presented at media time `target`, shows it and returns
    /// its time. xine_play lands on the keyframe at or before the target; then single steps
    /// display picture after picture until the one whose time span holds the target: the
    /// last before the first past it (past the target by a step, when the frame duration
    /// is not known yet, the picture before is shown). A demuxer that lands past the target
    /// (xine's MPEG-TS demuxer seeks by byte rate) is sent further back. (From the top of a
    /// stream xine displays the first picture again on the first step.)
    ///
    /// `fresh`: the stream was just opened (the landing on its first picture in prepare,
    /// whose timestamp becomes media time 0).
    private func land(_ session: XineSession, at target: TimeInterval, fresh: Bool = false) throws -> TimeInterval {
        let video = session.video
        video.setMode(.recording)
        guard hasVideo else {
            try playPaused(session, at: Int((target * 1000).rounded()), fromTheTop: fresh)
            return target
        }
        let slack = 0.0005
        var backoff: TimeInterval = 0
        for attempt in 0..<Self.landingAttempts {
            let startedAt = video.lastRecorded.count
            let fromTheTop = fresh && target == 0
            try playPaused(session, at: Int(((target - backoff) * 1000).rounded()), fromTheTop: fromTheTop)
            if fromTheTop { _ = video.waitForDisplay(after: startedAt, timeout: 2) }
            guard let first = step(session) else {
                // Nothing after the keyframe (the end of the stream): the keyframe.
                let early = video.lastRecorded
                guard early.count > startedAt, let picture = early.picture else { return target }
                return settle(video, on: picture, at: time(of: picture, session))
            }
            if fromTheTop { return landOnFirst(session, first) }
            var current = first.picture
            var currentTime = time(of: current, session)
            if currentTime > target + slack {
                // Past the target at once: the keyframe holds it (the picture displayed just
                // before, a frame earlier), or xine landed past it (xine's MP4 demuxer takes
                // the nearest keyframe, also a later one; what was displayed before is then a
                // picture from before the seek).
                let frame = measuredFrameDuration ?? Double(max(session.info(XINE_STREAM_INFO_FRAME_DURATION), 900)) / 90000
                guard let keyframe = first.before, abs(time(of: keyframe, session) + frame - currentTime) * 2 < frame,
                      time(of: keyframe, session) <= target + slack else {
                    backoff = backoff * 3 + 1
                    continue
                }
                // (At the size of the picture after it: the first pictures of a stream can
                // come before the decoder applied the pixel aspect.)
                return settle(video, on: keyframe.resized(like: current), at: time(of: keyframe, session))
            }
            var ranOut = false, missed = false
            for _ in 1..<Self.maximumSteps {
                if let frame = measuredFrameDuration, currentTime + frame > target + slack { break }
                guard let next = step(session) else {
                    ranOut = true
                    break
                }
                let nextTime = time(of: next.picture, session)
                if nextTime > currentTime, nextTime - currentTime < (measuredFrameDuration ?? .infinity) {
                    measuredFrameDuration = nextTime - currentTime
                    video.setFrameDuration(nextTime - currentTime)
                }
                if nextTime > target + slack {
                    // A step can display two pictures (the first is then not seen): when the
                    // one past the target is more than a frame after, the picture that holds
                    // the target may be the one missed.
                    if let frame = measuredFrameDuration, nextTime - currentTime > 1.5 * frame { missed = true }
                    current = current.resized(like: next.picture)
                    break
                }
                current = next.picture
                currentTime = nextTime
            }
            // The steps stopped short of the target, before the end of the media (xine called
            // the stream ended while paused: it does, after a seek that follows the end, when
            // the sound runs out first), or the picture that holds the target was missed:
            // land again.
            let frame = measuredFrameDuration ?? 0.04
            let shortOfTarget = ranOut && currentTime + frame <= target + slack && (duration <= 0 || currentTime + 2 * frame < duration)
            if shortOfTarget || missed, attempt < Self.landingAttempts - 1 { continue }
            return settle(video, on: current, at: currentTime)
        }
        return target
    }

    /// Lands on the first picture of a fresh stream, media time 0, after the first step
    /// from the top: xine displayed the first picture early, and the step displayed it again
    /// (or the second picture). Its timestamp becomes media time 0. xine's decoder gives the
    /// first picture of an MPEG-TS none (pts 0), and xine can display it from a copy the
    /// timestamp plugin never saw: the timestamp of a later picture, as many frames earlier,
    /// is taken then (stepping on to one). (Shown at the size of the second
    /// picture: the first pictures of a stream can come before the decoder applied the
    /// pixel aspect.)
    private func landOnFirst(_ session: XineSession, _ first: (picture: XinePicture, before: XinePicture?)) -> TimeInterval {
        let video = session.video
        let again = first.before.map { $0.bytes == first.picture.bytes } ?? false
        let firstPicture = again ? first.picture : (first.before ?? first.picture)
        var later: [XinePicture] = again || first.before == nil ? [] : [first.picture]
        let reported = Int64(session.info(XINE_STREAM_INFO_FRAME_DURATION))
        let frame = reported > 0 ? reported : 3600
        // A timestamp of 0 is xine's "none" only where the stream's own do not start at 0
        // (MPEG-TS); an MP4's first picture has 0 for a time.
        let layer = xine_get_meta_info(session.stream, XINE_META_INFO_SYSTEMLAYER).map { String(cString: $0) } ?? ""
        let zeroIsNone = layer == "MPEG_TS"
        func stamp(_ picture: XinePicture) -> Int64? { picture.timestamp.flatMap { $0 != 0 || !zeroIsNone ? $0 : nil } }
        if !video.hasStart {
            if let pts = stamp(firstPicture) ?? (again ? first.before.flatMap(stamp) : nil) {
                video.setStart(pts)
            } else {
                while later.count < 4, later.last.flatMap(stamp) == nil, let next = step(session)?.picture { later.append(next) }
                if let index = later.firstIndex(where: { stamp($0) != nil }), let pts = stamp(later[index]) {
                    // As many frames after the first as xine's position says (xine's network
                    // buffer control can have played the stream on for a moment), else the
                    // steps taken.
                    let counted = Int64(index + 1)
                    let frames = index == later.count - 1 ? session.position.map { Int64(($0 * 90000 / Double(frame)).rounded()) } : nil
                    video.setStart(pts - max(counted, frames ?? counted) * frame)
                } else {
                    video.setStart(0)
                }
            }
        }
        video.remember([(firstPicture, 0)] + later.map { ($0, time(of: $0, session)) })
        return settle(video, on: later.first.map { firstPicture.resized(like: $0) } ?? firstPicture, at: 0)
    }

    /// Shows `picture`, paused on it, at media time `time`.
    private func settle(_ video: XineVideoOutput, on picture: XinePicture, at time: TimeInterval) -> TimeInterval {
        let time = max(0, time)
        video.show(picture, at: time)
        return time
    }

    // MARK: - Seeking and playing

    private func seekNow(_ target: TimeInterval) {
        guard let session, let sink else { return }
        let target = max(0, target)
        if !playing, let landedAt, abs(target - landedAt) * 2 < (measuredFrameDuration ?? 0.04) {
            // Paused on that picture already.
            sink.seekCompleted(landedAt)
            return
        }
        stopTimer()
        session.events.holdPaused(true)
        xine_set_param(session.stream, XINE_PARAM_SPEED, XINE_SPEED_PAUSE)
        do {
            let reached = try land(session, at: target)
            landedAt = reached
            session.video.setMode(.ignoring)
            sink.seekCompleted(reached)
            if playing {
                session.events.holdPaused(false)
                resume()
            }
        } catch let error as PlaybackError {
            sink.failed(error)
        } catch {
            sink.failed(PlaybackError(code: .engine, message: "xine: \(error)"))
        }
    }

    /// Plays on from where the stream stands, at the rate asked for.
    private func resume() {
        guard let session else { return }
        landedAt = nil
        session.video.setMode(.live)
        xine_set_param(session.stream, XINE_PARAM_FINE_SPEED, Self.fineSpeed(rate))
        startTimer()
        reportStall()
    }

    private static func fineSpeed(_ rate: Float) -> Int32 {
        Int32(clamping: Int((Double(rate) * Double(XINE_FINE_SPEED_NORMAL)).rounded()))
    }

    /// The volume as xine's software amplifier (XINE_PARAM_AUDIO_AMP_LEVEL, 100 is unity):
    /// the "none" audio output has no mixer of its own.
    private func applyVolume(_ session: XineSession) {
        xine_set_param(session.stream, XINE_PARAM_AUDIO_AMP_LEVEL, Int32((volume * 100).rounded()))
    }

    // MARK: - Events and the timer

    private func handle(_ event: XineEvent, from eventSink: EngineSink) {
        guard let session, let sink, sink === eventSink else { return }
        switch event {
        case .finished:
            // A finish from before a later xine_play (a restart, a seek) is stale.
            guard !session.isInPlay else { return }
            stopTimer()
            session.video.setMode(.ignoring)
            sink.ended()
        case .progress(let description, let percent):
            guard description.hasPrefix("Buffering") else { return }
            buffering = percent < 100
            reportStall()
        case .message(let type, let text):
            PlaybackLog.log(.info, "xine", "message \(type): \(text)")
        }
    }

    /// Tells the sink when playing starts or stops waiting for data (paused, nothing waits:
    /// xine also buffers ahead while paused).
    private func reportStall() {
        let waiting = playing && (buffering || waitingForPictures)
        guard waiting != stalled, let sink else { return }
        stalled = waiting
        sink.stalled(waiting)
    }

    private func startTimer() {
        guard timer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: Self.positionInterval)
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
        self.timer = timer
    }

    private func stopTimer() {
        timer?.cancel()
        timer = nil
    }

    /// While playing: xine's position (for sound alone), the length, the bytes read, a stall.
    private func tick() {
        guard let session, let sink, playing else { return }
        let isFile = source?.isFile ?? true
        // With video the pictures give the position as xine displays them, and between two
        // of them it runs on by a frame at the most: when pictures come late (the network,
        // a slow decoder) the position waits for them. Sound alone: xine's position.
        let position: TimeInterval
        if hasVideo {
            let shown = session.video.lastShown
            let frame = measuredFrameDuration ?? 0.04
            position = shown.time + min(frame, (uptime() - shown.at) * Double(rate))
        } else {
            position = max(0, session.position ?? 0)
        }
        sink.position(position)
        // xine's network buffer control announces buffering when it pauses the stream
        // itself; a source that stops sending in the middle of a picture's data blocks the
        // demuxer without that. No picture for a while, playing from the network, is a stall
        // too (a file's data is always there: a slow decoder is no stall).
        if hasVideo, !isFile {
            waitingForPictures = uptime() - session.video.lastLiveDisplay > Self.stallDelay
            reportStall()
        }
        let length = session.length
        if length > 0, abs(length - duration) > 0.001 {
            duration = length
            sink.durationChanged(length)
        }
        sink.bufferChanged(EngineBufferStatus(playableDuration: isFile ? duration : position,
                                              bufferingProgress: stalled ? 0 : 100,
                                              bytesTransferred: pkx_bytes_read(session.stream)))
    }

    private func closeSession() {
        stopTimer()
        listener.set(nil)
        session?.close()
        session = nil
        sink = nil
        source = nil
        playing = false
        stalled = false
        buffering = false
        waitingForPictures = false
        landedAt = nil
        hasVideo = false
        measuredFrameDuration = nil
        duration = 0
    }
}

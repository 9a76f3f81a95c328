#if VLC
import CVLC
import Foundation
import PlaybackKit

/// One opened source: the libVLC player, what is known about the media, and the state of the
/// start and of the seek in flight. Lives on the engine's queue.
final class VLCSession: @unchecked Sendable {
    // @unchecked: every variable below is touched only on `queue` (libVLC's events are posted
    // there); `clock`, `frames` and `video` are thread-safe.

    // MARK: - Types

    private enum Phase { case parsing, starting, ready, finished }

    /// How the start proceeds: playing muted until buffered, then waiting for the first
    /// picture, then pausing.
    private enum StartStage { case buffering, settling, waitingForPicture, pausing }

    /// How a seek proceeds.
    private enum SeekStage {
        /// After the end: the input was stopped and started again; wait until it buffered.
        case restarting
        /// Wait for libVLC to buffer at the target.
        case buffering
        /// Buffered: the picture at the target is shown a moment later.
        case settling
        /// Pausing again after a seek done while paused.
        case pausing
    }

    private struct SeekOperation {
        var target: TimeInterval
        var stage: SeekStage
        var sawBufferingStart = false
        let token: Int
    }

    /// After libVLC has buffered at a start or seek target, it shows the first picture at once
    /// and the picture at the target 10 ms later (its wake-up delay); the next picture comes a
    /// frame later. The picture settles after this long.
    private static let settleDelay = DispatchTimeInterval.milliseconds(25)
    /// How often positions and buffer figures are reported while playing.
    private static let tickInterval = DispatchTimeInterval.milliseconds(50)

    // MARK: - State

    private let instance: VLCInstance
    private let queue: DispatchQueue
    private let frames: LastFrameStore
    private let source: MediaSource
    private let options: PlaybackOptions
    private let sink: EngineSink
    private let clock = VLCMediaClock()

    private var player: VLCMediaPlayer?
    private var video: VLCVideoCallbacks?
    private var timer: DispatchSourceTimer?

    private var phase = Phase.parsing
    private var startStage = StartStage.buffering
    private var seekOperation: SeekOperation?
    private var token = 0
    private var wantsPlaying = false
    private var vlcPlaying = false
    private var ended = false
    private var muted = false
    private var volume: Float = 1
    private var scalingMode = ScalingMode.aspectFit
    private var stalled = false
    private var bufferingPercent: Float = 0
    private var tracks = VLCTrackSummary()
    private var streamKinds = Set<Int32>()
    private var duration: TimeInterval = 0
    private var naturalSize = VideoSize.zero
    private var windowOutput = false

    init(instance: VLCInstance, queue: DispatchQueue, frames: LastFrameStore, source: MediaSource,
         options: PlaybackOptions, sink: EngineSink) {
        self.instance = instance
        self.queue = queue
        self.frames = frames
        self.source = source
        self.options = options
        self.sink = sink
    }

    // MARK: - Opening

    /// Makes the player and starts parsing (files) or playing (network).
    func start() {
        VLCLog.clearProblem()
        let made: VLCMediaPlayer
        do {
            made = try VLCMediaPlayer(instance: instance, source: source, mediaOptions: mediaOptions()) { [weak self, clock] event in
                // The time report is exact at the moment it is sent: anchor the clock here,
                // on libVLC's thread (no libVLC call), the rest goes to the queue.
                if case .timeChanged(let milliseconds) = event { clock.anchor(Double(milliseconds) / 1000) }
                guard let self else { return }
                self.queue.async { [weak self] in self?.handle(event) }
            }
        } catch {
            fail(error)
            return
        }
        player = made
        startTimer()
        if source.isFile {
            phase = .parsing
            made.startParse(network: false, timeoutMilliseconds: 5000)
        } else {
            startPlayback()
        }
    }

    private func mediaOptions() -> [String] {
        var list = [options.accurateSeek ? ":no-input-fast-seek" : ":input-fast-seek"]
        for (name, value) in options.httpHeaders {
            switch name.lowercased() {
            case "user-agent": list.append(":http-user-agent=\(value)")
            case "referer", "referrer": list.append(":http-referrer=\(value)")
            default: PlaybackLog.log(.warning, "vlc", "libVLC 3 cannot send the HTTP header \(name); it is left out")
            }
        }
        if let cap = options.maxBufferBytes, cap > 0 {
            // libVLC buffers by time; bound the prefetch stream filter's read-ahead in bytes.
            list.append(":prefetch-buffer-size=\(max(16, cap / 1024))")
            list.append(":prefetch-read-size=\(max(1024, min(cap, 16384)))")
        }
        return list
    }

    private func parsed(status: Int32) {
        guard phase == .parsing, let player else { return }
        tracks = player.trackSummary()
        if status == Int32(libvlc_media_parsed_status_done.rawValue), !tracks.hasVideo, !tracks.hasAudio {
            fail(PlaybackError(code: .unsupportedFormat, message: "open: libVLC found no audio or video stream in \(source.path)\(detail())"))
            return
        }
        startPlayback()
    }

    private func startPlayback() {
        guard let player else { return }
        switch options.videoOutput {
        case .window(let handle):
            windowOutput = true
            player.setWindow(UInt32(truncatingIfNeeded: handle))
        case .none, .frames:
            let callbacks = VLCVideoCallbacks(store: frames, clock: clock, sink: sink) { [weak self] in
                guard let self else { return }
                self.queue.async { [weak self] in self?.pictureArrived() }
            }
            if let storage = tracks.storageSize, let display = tracks.displaySize {
                callbacks.setSizeHint(storage: storage, display: display)
            }
            video = callbacks
            player.attachVideo(callbacks)
        }
        if options.audioOutput == .null { player.setAudioOutput("adummy") }
        setMuted(true)
        clock.enter(.settling, at: 0)
        phase = .starting
        startStage = .buffering
        player.play()
    }

    /// Buffered at the start: the first picture settles a moment later.
    private func startBuffered() {
        guard phase == .starting, startStage == .buffering else { return }
        startStage = .settling
        let current = token
        queue.asyncAfter(deadline: .now() + Self.settleDelay) { [weak self] in
            guard let self, self.token == current else { return }
            self.startSettled()
        }
    }

    private func startSettled() {
        guard phase == .starting, startStage == .settling else { return }
        let expectsPicture = tracks.hasVideo || streamKinds.contains(libvlc_track_video.rawValue)
        if expectsPicture, let video, !video.hasShownPicture {
            startStage = .waitingForPicture
            video.notifyOnNextPicture()
            let current = token
            queue.asyncAfter(deadline: .now() + 10) { [weak self] in
                guard let self, self.token == current, self.phase == .starting,
                      self.startStage == .waitingForPicture else { return }
                self.fail(PlaybackError(code: .decode, message: "open: \(self.source.url.lastPathComponent) has a video stream but no picture was decoded in 10 s\(self.detail())"))
            }
            return
        }
        pauseAfterStart()
    }

    private func pictureArrived() {
        guard phase == .starting, startStage == .waitingForPicture else { return }
        pauseAfterStart()
    }

    private func pauseAfterStart() {
        guard let player else { return }
        let found = tracks.hasVideo || tracks.hasAudio || !streamKinds.isEmpty
        guard found else {
            fail(PlaybackError(code: source.isFile ? .unsupportedFormat : .network, message: "open: libVLC found no audio or video stream in \(source.url.absoluteString)\(detail())"))
            return
        }
        startStage = .pausing
        player.setPaused(true)
        // A source that cannot pause (some live streams) sends no Paused event.
        let current = token
        queue.asyncAfter(deadline: .now() + 2) { [weak self] in
            guard let self, self.token == current, self.phase == .starting, self.startStage == .pausing else { return }
            self.finishStart()
        }
    }

    private func finishStart() {
        guard phase == .starting, let player else { return }
        phase = .ready
        token += 1
        setMuted(false)
        duration = Double(player.length) / 1000
        refreshTracks()
        naturalSize = currentNaturalSize()
        let hasVideo = tracks.hasVideo || streamKinds.contains(libvlc_track_video.rawValue) || (video?.hasShownPicture ?? false)
        let hasAudio = tracks.hasAudio || streamKinds.contains(libvlc_track_audio.rawValue)
        clock.enter(.paused, at: 0)
        presentShownPicture(at: 0)
        reportBuffer()
        sink.prepared(EngineMediaInfo(duration: duration, naturalSize: naturalSize, hasVideo: hasVideo, hasAudio: hasAudio))
    }

    // MARK: - Commands

    func play() {
        wantsPlaying = true
        guard phase == .ready, seekOperation == nil, let player else { return }
        if ended {
            seek(to: 0)
            return
        }
        player.play()
    }

    func pause() {
        wantsPlaying = false
        guard phase == .ready, seekOperation == nil, !ended, let player else { return }
        player.setPaused(true)
        clock.enter(.paused)
        clock.markPresentedWhilePaused()
    }

    func seek(to target: TimeInterval) {
        guard phase == .ready, let player else { return }
        token += 1
        let target = max(0, target)
        clock.enter(.settling, at: target)
        if ended {
            // libVLC's Ended state cannot seek: start the input again, seek once it buffered.
            ended = false
            player.stop()
            setMuted(true)
            player.play()
            seekOperation = SeekOperation(target: target, stage: .restarting, token: token)
        } else {
            seekOperation = SeekOperation(target: target, stage: .buffering, token: token)
            player.setTime(Int64((target * 1000).rounded()))
            if !wantsPlaying {
                // A paused seek shows its picture only when the input runs: play it muted
                // until the picture at the target is shown, then pause again.
                setMuted(true)
                player.setPaused(false)
            }
        }
        let current = token
        queue.asyncAfter(deadline: .now() + 8) { [weak self] in
            guard let self, let operation = self.seekOperation, operation.token == current else { return }
            PlaybackLog.log(.warning, "vlc", "seek to \(operation.target) s did not settle; reporting it done\(self.detail())")
            self.finishSeek()
        }
    }

    func setRate(_ rate: Float) {
        player?.setRate(rate)
        clock.setRate(Double(rate))
    }

    func setVolume(_ volume: Float) {
        self.volume = volume
        if !muted { player?.setVolume(Int((volume * 100).rounded())) }
    }

    func setScalingMode(_ mode: ScalingMode) {
        scalingMode = mode
        applyWindowScaling()
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
        video = nil
    }

    // MARK: - Seeking

    private func seekBuffered() {
        guard var operation = seekOperation, let player else { return }
        switch operation.stage {
        case .restarting:
            operation.stage = .buffering
            operation.sawBufferingStart = false
            seekOperation = operation
            player.setTime(Int64((operation.target * 1000).rounded()))
        case .buffering where operation.sawBufferingStart:
            operation.stage = .settling
            seekOperation = operation
            let current = operation.token
            queue.asyncAfter(deadline: .now() + Self.settleDelay) { [weak self] in
                guard let self, self.seekOperation?.token == current else { return }
                self.seekSettled()
            }
        default:
            break
        }
    }

    private func seekSettled() {
        guard var operation = seekOperation, operation.stage == .settling, let player else { return }
        if wantsPlaying {
            finishSeek()
        } else {
            operation.stage = .pausing
            seekOperation = operation
            player.setPaused(true)
        }
    }

    private func finishSeek() {
        guard let operation = seekOperation else { return }
        seekOperation = nil
        setMuted(false)
        if wantsPlaying {
            if !vlcPlaying { player?.play() }
            clock.enter(.running, at: operation.target)
        } else {
            if vlcPlaying { player?.setPaused(true) }
            clock.enter(.paused, at: operation.target)
            presentShownPicture(at: operation.target)
        }
        sink.seekCompleted(operation.target)
    }

    // MARK: - libVLC events

    private func handle(_ event: VLCEvent) {
        guard phase != .finished else { return }
        switch event {
        case .parsed(let status): parsed(status: status)
        case .opening: break
        case .buffering(let percent): buffering(percent)
        case .playing:
            vlcPlaying = true
            if phase == .ready, seekOperation == nil, !ended, clock.mode != .running { clock.enter(.running) }
        case .paused:
            vlcPlaying = false
            if phase == .starting, startStage == .pausing {
                finishStart()
            } else if let operation = seekOperation, operation.stage == .pausing {
                finishSeek()
            } else if phase == .ready, seekOperation == nil, clock.mode == .running {
                clock.enter(.paused)
                clock.markPresentedWhilePaused()
            }
        case .stopped:
            vlcPlaying = false
        case .endReached: endReached()
        case .encounteredError: encounteredError()
        case .lengthChanged(let milliseconds):
            guard milliseconds > 0 else { return }
            duration = Double(milliseconds) / 1000
            if phase == .ready { sink.durationChanged(duration) }
        case .timeChanged:
            break  // anchored on libVLC's thread
        case .videoOutputs(let count):
            if count > 0, phase == .ready { videoOutputChanged() }
        case .streamAdded(let kind):
            streamKinds.insert(kind)
        }
    }

    private func buffering(_ percent: Float) {
        bufferingPercent = percent
        if percent < 100 {
            if var operation = seekOperation {
                operation.sawBufferingStart = true
                seekOperation = operation
            } else if phase == .ready, vlcPlaying, !ended, !stalled {
                stalled = true
                sink.stalled(true)
            }
            return
        }
        if stalled {
            stalled = false
            sink.stalled(false)
        }
        if phase == .starting {
            startBuffered()
        } else if seekOperation != nil {
            seekBuffered()
        }
    }

    private func endReached() {
        vlcPlaying = false
        switch phase {
        case .parsing, .starting:
            let code: PlaybackError.Code = source.isFile ? .unsupportedFormat : .network
            fail(PlaybackError(code: code, message: "open: libVLC reached the end of \(source.url.absoluteString) before any picture or sound was played: not playable media\(detail())"))
        case .ready:
            ended = true
            token += 1
            seekOperation = nil
            setMuted(false)
            clock.enter(.paused, at: duration)
            clock.markPresentedWhilePaused()
            sink.ended()
        case .finished:
            break
        }
    }

    private func encounteredError() {
        let code: PlaybackError.Code
        if !source.isFile {
            code = .network
        } else if phase == .ready || !streamKinds.isEmpty {
            code = .decode
        } else {
            code = .unsupportedFormat
        }
        let step = phase == .ready ? "play" : "open"
        fail(PlaybackError(code: code, message: "\(step): libVLC could not play \(source.url.absoluteString)\(detail())"))
    }

    private func fail(_ error: PlaybackError) {
        guard phase != .finished else { return }
        phase = .finished
        token += 1
        timer?.cancel()
        timer = nil
        sink.failed(error)
    }

    // MARK: - Size, pictures, outputs

    private func refreshTracks() {
        guard let player else { return }
        let summary = player.trackSummary()
        if summary.hasVideo || summary.hasAudio { tracks = summary }
    }

    private func currentNaturalSize() -> VideoSize {
        if let display = tracks.displaySize {
            if let storage = tracks.storageSize { video?.setSizeHint(storage: storage, display: display) }
            return display
        }
        if let size = player?.videoOutputSize { return size }
        return video?.pictureSize ?? .zero
    }

    private func videoOutputChanged() {
        refreshTracks()
        let size = currentNaturalSize()
        guard size != naturalSize, !size.isEmpty else { return }
        naturalSize = size
        sink.naturalSizeChanged(size)
    }

    /// Hands the picture on screen to the `.frames` handler (once, while paused) with `time`.
    private func presentShownPicture(at time: TimeInterval) {
        guard var frame = frames.latest() else { return }
        frame.presentationTime = time
        frames.store(frame)
        clock.markPresentedWhilePaused()
        guard sink.frames != nil else { return }
        frame.pixels.withUnsafeBytes { bytes in
            sink.presentFrame(bytes, size: frame.size, bytesPerRow: frame.bytesPerRow, presentationTime: time)
        }
    }

    private func setMuted(_ mute: Bool) {
        guard let player else { return }
        muted = mute
        player.setMuted(mute)
        if !mute { player.setVolume(Int((volume * 100).rounded())) }
    }

    private func applyWindowScaling() {
        guard windowOutput, let player, case .window(let handle) = options.videoOutput else { return }
        let window = VLCWindowGeometry.size(ofWindow: handle)
        switch scalingMode {
        case .none:
            player.setWindowGeometry(scale: 1, aspectRatio: nil, crop: nil)
        case .aspectFit:
            player.setWindowGeometry(scale: 0, aspectRatio: nil, crop: nil)
        case .fill:
            let ratio = window.map { "\($0.width):\($0.height)" }
            player.setWindowGeometry(scale: 0, aspectRatio: ratio, crop: nil)
        case .aspectFill:
            let ratio = window.map { "\($0.width):\($0.height)" }
            player.setWindowGeometry(scale: 0, aspectRatio: nil, crop: ratio)
        }
    }

    // MARK: - Reports

    private func startTimer() {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.tickInterval, repeating: Self.tickInterval)
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
        self.timer = timer
    }

    private func tick() {
        guard phase == .ready || phase == .starting else { return }
        reportBuffer()
        guard phase == .ready, vlcPlaying, seekOperation == nil, !ended else { return }
        sink.position(clock.current())
    }

    private func reportBuffer() {
        guard let player else { return }
        let position = clock.current()
        let playable = source.isFile ? max(duration, position) : position + (stalled ? 0 : 1)
        sink.bufferChanged(EngineBufferStatus(
            playableDuration: playable, bufferingProgress: Int(min(100, max(0, bufferingPercent))),
            bytesTransferred: player.bytesRead))
    }

    /// libVLC's last complaint, for error messages.
    private func detail() -> String {
        VLCLog.lastProblem().map { " (libVLC: \($0))" } ?? ""
    }
}
#endif

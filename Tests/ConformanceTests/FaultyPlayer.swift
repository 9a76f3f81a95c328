import Foundation
import PlaybackKit
import PlaybackConformance

/// A real backend's player with one deliberate fault, to prove the conformance checks catch
/// it. Everything not touched by the fault is passed through to the real player.
final class FaultyPlayer: EngineReportingPlayback, Sendable {
    /// The deliberate faults.
    enum Fault: String, Sendable, CaseIterable {
        /// For 0.4 s after play() follows pause(), the position reads 1 s ahead.
        case jumpsAheadAfterResume
        /// A `.finished(.playbackError)` is reported as `.finished(.playbackEnded)`.
        case reportsEndForBrokenFile
        /// Seeks requested before the player is prepared are dropped.
        case ignoresSeekBeforePrepare
        /// While playing, the position reads 0.2 s behind every other 200 ms.
        case positionRunsBackwards
        /// `.seekCompleted` is never sent.
        case neverCompletesSeeks
        /// Setting `currentPlaybackTime` blocks until shutdown().
        case blocksInSeek
        /// `thumbnailAtCurrentTime()` waits 80 ms, as a synchronous round trip to the engine would.
        case slowThumbnail
        /// `.frames` output hands over each pair of frames in swapped order.
        case swapsFramePairs
        /// `.finished(.playbackEnded)` is sent twice.
        case endsTwice
        /// stop() sends no `.finished(.userExited)`.
        case stopsSilently
        /// playbackRate is remembered but never reaches the engine.
        case ignoresRate
        /// Making a player starts a thread that does not end with it (it ends 5 minutes later,
        /// long after the check).
        case leaksAThreadPerPlayer
        /// The first change of playbackVolume blocks 2 s, as a lock held across a slow engine
        /// round trip would while other calls come in.
        case slowCallsUnderLoad
        /// play() pauses the player that played before it, as an engine that owns one shared
        /// output would: only one plays at a time.
        case playsOneAtATime
        /// Released without shutdown(), the player keeps the real player alive (and playing)
        /// for 2 minutes instead of releasing it.
        case leaksInnerWhenReleased
        /// play() reaches the real player 0.5 s late, as an engine that prerolls on every
        /// start would: nothing moves for half a second after play().
        case slowStart
        /// playbackVolume is remembered but never reaches the engine.
        case ignoresVolume
        /// numberOfBytesTransferred stays 0.
        case countsNoBytes
        /// scalingMode is remembered but never reaches the player that composes the pictures.
        case ignoresScalingMode
        /// naturalSize keeps the first size, and later `.naturalSizeAvailable` events are dropped.
        case keepsFirstNaturalSize
        /// naturalSize ignores the pixel aspect: it reports the height's 4:3 width.
        case assumesFourByThree
        /// naturalSize of pixels narrower than tall stretches the height rather than shrink
        /// the width (narrow-pixels.mp4, 360x240 of 8:9 pixels: 360x270), as mpv's own
        /// display size does.
        case stretchesHeightOfNarrowPixels
        /// naturalSize of a picture whose display matrix stands it upright (portrait) is the
        /// stored landscape size, as an engine that ignores the matrix reports.
        case ignoresDisplayMatrix
        /// thumbnailAtCurrentTime() keeps returning the first picture it returned.
        case staleThumbnail
        /// `thumbnailAtCurrentTime()` is nil once the position is more than a few frames past
        /// the picture's time (read from its frame number), as an engine that drops the
        /// picture where the video ends before the sound would.
        case dropsPictureAfterVideoEnds
        /// `thumbnailAtCurrentTime()` shows the first picture it returned again while the
        /// position lies in the first three frames (past the first's middle), as an engine
        /// whose paused seeks there land on a picture other than the target's would.
        case firstPictureNearStart
        /// `.frames` pictures lose their last column, as a conversion one pixel short would.
        case dropsLastColumn
        /// `.frames` pictures leave the fourth byte of each pixel 0, as an "RGBX" picture
        /// handed on as RGBA would.
        case leavesAlphaZero
        /// `.frames` drops a picture that looks like the one before, as an engine that takes
        /// every such picture for a redisplay would (a still scene then stops).
        case dropsLikeFrames
        /// The first `.frames` picture carries the stream's own time, 0.78 s late, as an engine
        /// that stamps it before it knows where the media's timeline starts would.
        case stampsFirstFrameLate
        /// `.frames` hands each picture on twice, the second 20 ms later, as an engine that
        /// deinterlaces to the field rate would.
        case doublesPictures
        /// selectTrack(id:) is dropped.
        case ignoresTrackSelection
        /// `.subtitleChanged` reaches the app 300 ms late.
        case lateCues
        /// `.finished(.playbackEnded)` is dropped while a subtitle is selected, as an engine
        /// whose subtitle stream never delivers its end would never finish.
        case neverEndsWithSubtitles
        /// metadata has no tags.
        case dropsMetadata
        /// A media without video lists a video track for its cover picture, as an engine that
        /// takes an MP3's attached picture for a stream would.
        case listsCoverAsVideo
        /// Every chapter starts and ends half a second late.
        case shiftsChapters
        /// backendName is "", as a player that does not know which engine it drives.
        case namesNoBackend
        /// A player that fails (`.finished(.playbackError)`) starts a thread that outlives it
        /// (by 5 minutes), as an engine whose failed open leaves its reader running.
        case leaksAThreadWhenItFails
        /// httpHeaders never reach the engine.
        case dropsHTTPHeaders
        /// maxBufferBytes never reaches the engine: it reads ahead as far as it likes.
        case ignoresReadAheadCap
        /// Remote media may reference local files, whatever the options say.
        case trustsRemoteReferences
        /// `.stalled` is never reported, neither in loadState nor as an event.
        case hidesStalls
        /// While playing, playableDuration reads half a second behind the position.
        case playableBehindPosition
        /// openTimeout and stallTimeout are ten minutes, whatever the options say.
        case waitsForeverOnSilentServers
        /// A `.network` error is reported as `.engine`.
        case mislabelsNetworkErrors
        /// A `.window` output never reaches the engine (it plays with no picture), as an
        /// adapter that hands the window id to a sink that was never linked would.
        case dropsWindowOutput
        /// A `.window` output draws the selected subtitle a minute late (as an adapter whose
        /// window output never gets the subtitle stream would draw none).
        case lateWindowSubtitles
        /// `.yuvFrames` output hands over each pair of pictures in swapped order.
        case swapsYUVFramePairs
        /// `.yuvFrames` output hands each picture over only when the next one comes.
        case yuvOneFrameLate
        /// `.yuvFrames` pictures lose their last column.
        case yuvDropsLastColumn
        /// `.yuvFrames` I420 pictures come with their U and V planes swapped.
        case swapsChromaPlanes
        /// `.yuvFrames` pictures give their stored size as their displaySize.
        case yuvDisplaysStoredSize
        /// stepFrames(n) moves 2n frames, as a step that counts from the frame after the one shown.
        case stepsTwoFrames
        /// A seek in an MPEG-TS more than 1 s past the keyframe before it (long-gop.ts: keyframes
        /// at 0 and 10 s) lands on the next keyframe, as an engine whose demuxer's seek lands on
        /// any packet and whose decoder begins at the next keyframe would.
        case landsOnNextKeyframe
        /// `.frames` pictures are stretched from limited to full range once more, as an engine
        /// that takes a full-range picture for a limited-range one would show it (a grey of 40
        /// becomes 28; mid grey moves only from 130 to 132).
        case expandsRangeAgain
        /// `.yuvFrames` pictures say the other range than their samples use.
        case yuvFlipsRange
        /// `.frames` hands every picture on, however late, from a queue of its own: a handler
        /// slower than the frame rate falls ever further behind the clock, as a sink that
        /// renders every late picture.
        case queuesEveryPicture
        /// A pause does not hold the end: it comes when the rest would have played had the
        /// player not paused, as an engine that hands the last of the sound to its output at
        /// once and ends on a timer would.
        case endsOnTimeWhilePaused
        /// After a seek while playing, the picture the handler got last comes again stamped
        /// with the target, before the seek's own pictures (as libVLC 3 shows a picture its
        /// decoder made from what it read before the seek).
        case stampsStalePictureAtSeek
        /// Cue text outside ASCII comes out as its UTF-8 bytes read as Windows-1251 (as a
        /// UTF-16 subtitle file, turned to UTF-8 by the demuxer, then decoded again as the
        /// legacy code page guessed from the file's bytes).
        case decodesCueTextTwice
        /// A WebVTT subtitle file with a STYLE or REGION block gives no track and no cue (as
        /// libavformat 5.1 reads such a file).
        case dropsStyledWebVTT
    }

    let inner: any MediaPlayback
    let fault: Fault
    /// The media played, when known.
    let url: URL?
    private let resumedAt = Locked<TimeInterval?>(nil)
    private let pausedByCall = Locked(false)
    private let storedRate = Locked<Float>(1)
    private let storedVolume = Locked<Float>(1)
    private let storedScalingMode = Locked(ScalingMode.aspectFit)
    private let firstNaturalSize = Locked<VideoSize?>(nil)
    private let firstThumbnail = Locked<VideoFrame?>(nil)
    private let seekGate = DispatchSemaphore(value: 0)
    /// `stampsStalePictureAtSeek`: the target of a seek while playing whose stale picture is
    /// still to come, and the last picture handed on.
    private let staleSeek: Locked<(target: TimeInterval?, last: VideoFrame?)>
    /// Whether shutdown() was called (`leaksInnerWhenReleased` leaks only without it).
    private let shutDownCalled = Locked(false)
    /// Whether playbackVolume was set before (`slowCallsUnderLoad` blocks the first time).
    private let volumeChanged = Locked(false)
    /// The `playsOneAtATime` player that played last.
    private static let lastPlayer = Locked<WeakFaultyPlayer?>(nil)

    /// A faulty player held without keeping it alive.
    private struct WeakFaultyPlayer: Sendable {
        /// The player, or nil once it is gone.
        weak let player: FaultyPlayer?
    }

    /// Makes the real player with `backend` (its options bent for the fault when needed) and
    /// wraps it.
    static func make(_ fault: Fault, backend: any PlaybackBackend, url: URL, options: PlaybackOptions) throws -> FaultyPlayer {
        var options = options
        if fault == .swapsFramePairs, case .frames(let viewport, let handler) = options.videoOutput {
            let held = Locked<VideoFrame?>(nil)
            options.videoOutput = .frames(viewport: viewport) { frame in
                let earlier = held.withLock { slot -> VideoFrame? in
                    if let earlier = slot {
                        slot = nil
                        return earlier
                    }
                    slot = frame
                    return nil
                }
                if let earlier {
                    handler(frame)
                    handler(earlier)
                }
            }
        }
        if fault == .queuesEveryPicture, case .frames(let viewport, let handler) = options.videoOutput {
            let queue = DispatchQueue(label: "faulty-player.every-picture")
            options.videoOutput = .frames(viewport: viewport) { frame in queue.async { handler(frame) } }
        }
        if fault == .dropsLastColumn, case .frames(let viewport, let handler) = options.videoOutput {
            options.videoOutput = .frames(viewport: viewport) { frame in handler(FaultyPlayer.withoutLastColumn(frame)) }
        }
        if fault == .leavesAlphaZero, case .frames(let viewport, let handler) = options.videoOutput {
            options.videoOutput = .frames(viewport: viewport) { frame in
                var frame = frame
                for index in stride(from: 3, to: frame.pixels.count, by: 4) { frame.pixels[index] = 0 }
                handler(frame)
            }
        }
        if fault == .expandsRangeAgain, case .frames(let viewport, let handler) = options.videoOutput {
            options.videoOutput = .frames(viewport: viewport) { frame in
                var frame = frame
                for index in frame.pixels.indices where index % 4 != 3 {
                    let expanded = (Int(frame.pixels[index]) - 16) * 255 / 219
                    frame.pixels[index] = UInt8(clamping: expanded)
                }
                handler(frame)
            }
        }
        if fault == .dropsLikeFrames, case .frames(let viewport, let handler) = options.videoOutput {
            let last = Locked<[UInt8]?>(nil)
            options.videoOutput = .frames(viewport: viewport) { frame in
                let alike = last.withLock { previous -> Bool in
                    defer { previous = frame.pixels }
                    return previous == frame.pixels
                }
                if !alike { handler(frame) }
            }
        }
        if fault == .stampsFirstFrameLate, case .frames(let viewport, let handler) = options.videoOutput {
            let stamped = Locked(false)
            options.videoOutput = .frames(viewport: viewport) { frame in
                var frame = frame
                let first = stamped.withLock { done -> Bool in
                    defer { done = true }
                    return !done
                }
                if first { frame.presentationTime += 0.78 }
                handler(frame)
            }
        }
        if fault == .doublesPictures, case .frames(let viewport, let handler) = options.videoOutput {
            options.videoOutput = .frames(viewport: viewport) { frame in
                handler(frame)
                var field = frame
                field.presentationTime += 0.02
                handler(field)
            }
        }
        let staleSeek = Locked<(target: TimeInterval?, last: VideoFrame?)>((nil, nil))
        if fault == .stampsStalePictureAtSeek, case .frames(let viewport, let handler) = options.videoOutput {
            options.videoOutput = .frames(viewport: viewport) { frame in
                let stale = staleSeek.withLock { state -> VideoFrame? in
                    defer { state.last = frame }
                    guard let target = state.target, var last = state.last else { return nil }
                    state.target = nil
                    last.presentationTime = target
                    return last
                }
                if let stale { handler(stale) }
                handler(frame)
            }
        }
        if fault == .dropsWindowOutput, case .window = options.videoOutput { options.videoOutput = .none }
        options = bendingYUVOutput(fault, options)
        switch fault {
        case .dropsHTTPHeaders: options.httpHeaders = [:]
        case .dropsStyledWebVTT: options.subtitleURLs.removeAll(where: hasWebVTTStyleBlocks)
        case .ignoresReadAheadCap: options.maxBufferBytes = nil
        case .trustsRemoteReferences: options.remoteMayReferenceLocalFiles = true
        case .waitsForeverOnSilentServers:
            options.openTimeout = 600
            options.stallTimeout = 600
        default: break
        }
        if fault == .leaksAThreadPerPlayer {
            Thread.detachNewThread { Thread.sleep(forTimeInterval: 300) }
        }
        let inner = try backend.makePlayer(url: url, options: options)
        if fault == .lateWindowSubtitles, case .window = options.videoOutput { inner.subtitleDelay = 60 }
        if fault == .leaksAThreadWhenItFails {
            let events = inner.events
            Task {
                for await event in events {
                    guard case .finished(.playbackError) = event else { continue }
                    Thread.detachNewThread { Thread.sleep(forTimeInterval: 300) }
                }
            }
        }
        return FaultyPlayer(wrapping: inner, fault: fault, url: url, staleSeek: staleSeek)
    }

    /// True for a local WebVTT file with a STYLE or REGION block, which `dropsStyledWebVTT`
    /// leaves out.
    static func hasWebVTTStyleBlocks(_ url: URL) -> Bool {
        guard url.isFileURL, let text = try? String(contentsOf: url, encoding: .utf8), text.hasPrefix("WEBVTT") else { return false }
        return text.split(whereSeparator: \.isNewline).contains { $0.hasPrefix("STYLE") || $0.hasPrefix("REGION") }
    }

    /// `text`'s UTF-8 bytes read as Windows-1251 (only its letters А-я are mapped back; any
    /// other byte above 0x7F stands as "?"), as `decodesCueTextTwice` shows cue text.
    static func decodedTwice(_ text: String) -> String {
        String(String.UnicodeScalarView(text.utf8.map { byte -> Unicode.Scalar in
            switch byte {
            case 0..<0x80: Unicode.Scalar(byte)
            case 0xC0...0xFF: Unicode.Scalar(UInt32(byte) - 0xC0 + 0x410)!
            default: "?"
            }
        }))
    }

    /// `frame` one column narrower, rows packed tight.
    static func withoutLastColumn(_ frame: VideoFrame) -> VideoFrame {
        let width = max(0, frame.width - 1)
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * 4 * frame.height)
        for row in 0..<frame.height {
            let start = row * frame.bytesPerRow
            pixels.append(contentsOf: frame.pixels[start..<(start + width * 4)])
        }
        return VideoFrame(width: width, height: frame.height, bytesPerRow: width * 4, pixels: pixels,
                          presentationTime: frame.presentationTime)
    }

    init(wrapping inner: any MediaPlayback, fault: Fault, url: URL? = nil,
         staleSeek: Locked<(target: TimeInterval?, last: VideoFrame?)> = Locked((nil, nil))) {
        self.inner = inner
        self.fault = fault
        self.url = url
        self.staleSeek = staleSeek
    }

    deinit {
        if fault == .leaksInnerWhenReleased, !shutDownCalled.get() {
            let inner = inner
            DispatchQueue.global().asyncAfter(deadline: .now() + 120) { inner.shutdown() }
        }
    }

    private static func now() -> TimeInterval { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    // MARK: - Lifecycle

    func prepareToPlay() { inner.prepareToPlay() }

    func play() {
        let resuming = pausedByCall.withLock { paused -> Bool in
            defer { paused = false }
            return paused
        }
        if resuming {
            resumedAt.set(Self.now())
        }
        if fault == .playsOneAtATime {
            let previous = Self.lastPlayer.withLock { last -> FaultyPlayer? in
                defer { last = WeakFaultyPlayer(player: self) }
                return last?.player
            }
            if let previous, previous !== self { previous.inner.pause() }
        }
        if fault == .slowStart {
            let inner = inner
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { inner.play() }
            return
        }
        inner.play()
    }

    func pause() {
        pausedByCall.set(true)
        if fault == .endsOnTimeWhilePaused, inner.isPlaying { endWhenDue(after: inner.duration - inner.currentPlaybackTime) }
        inner.pause()
    }

    /// Ends the real player (a seek to its end, then play()) once `rest` has passed, if this
    /// player is still paused then (`endsOnTimeWhilePaused`).
    private func endWhenDue(after rest: TimeInterval) {
        DispatchQueue.global().asyncAfter(deadline: .now() + max(0, rest)) { [weak self] in
            guard let self, self.pausedByCall.get(), !self.shutDownCalled.get() else { return }
            self.inner.currentPlaybackTime = self.inner.duration
            self.inner.play()
        }
    }

    func stop() { inner.stop() }

    func shutdown() {
        shutDownCalled.set(true)
        inner.shutdown()
        for _ in 0..<64 { seekGate.signal() }
    }

    // MARK: - Properties

    var isPreparedToPlay: Bool { inner.isPreparedToPlay }
    var isPlaying: Bool { inner.isPlaying }
    var playbackState: PlaybackState { inner.playbackState }
    var loadState: LoadState {
        let real = inner.loadState
        return fault == .hidesStalls ? real.subtracting(.stalled) : real
    }

    var currentPlaybackTime: TimeInterval {
        get {
            let real = inner.currentPlaybackTime
            switch fault {
            case .jumpsAheadAfterResume:
                if let resumed = resumedAt.get(), Self.now() - resumed < 0.4 { return real + 1.0 }
                return real
            case .positionRunsBackwards:
                guard inner.isPlaying else { return real }
                return Int(Self.now() * 5) % 2 == 1 ? max(0, real - 0.2) : real
            default:
                return real
            }
        }
        set {
            switch fault {
            case .ignoresSeekBeforePrepare where !inner.isPreparedToPlay:
                return
            case .blocksInSeek:
                seekGate.wait()
                inner.currentPlaybackTime = newValue
            case .stampsStalePictureAtSeek where inner.isPlaying:
                staleSeek.withLock { $0.target = newValue }
                inner.currentPlaybackTime = newValue
            case .landsOnNextKeyframe where url?.pathExtension == "ts":
                let keyframeInterval = 10.0
                let previous = (newValue / keyframeInterval).rounded(.down) * keyframeInterval
                let next = previous + keyframeInterval
                inner.currentPlaybackTime = newValue - previous > 1 && next < inner.duration ? next : newValue
            default:
                inner.currentPlaybackTime = newValue
            }
        }
    }

    var duration: TimeInterval { inner.duration }
    var nominalFrameRate: Double { inner.nominalFrameRate }

    func stepFrames(_ count: Int) { inner.stepFrames(fault == .stepsTwoFrames ? 2 * count : count) }
    var playableDuration: TimeInterval {
        let real = inner.playableDuration
        guard fault == .playableBehindPosition, inner.isPlaying else { return real }
        return max(0, min(real, inner.currentPlaybackTime - 0.5))
    }
    var bufferingProgress: Int { inner.bufferingProgress }
    var numberOfBytesTransferred: Int64 { fault == .countsNoBytes ? 0 : inner.numberOfBytesTransferred }

    var naturalSize: VideoSize {
        let real = inner.naturalSize
        switch fault {
        case .keepsFirstNaturalSize:
            guard !real.isEmpty else { return real }
            return firstNaturalSize.withLock { first in
                if first == nil { first = real }
                return first!
            }
        case .assumesFourByThree:
            return Self.fourByThree(real)
        case .stretchesHeightOfNarrowPixels:
            return Self.stretchedHeight(real, url: url)
        case .ignoresDisplayMatrix:
            return real.height > real.width ? real.turned(by: 90) : real
        default:
            return real
        }
    }

    /// narrow-pixels.mp4's display size as an engine that stretches its height gives it.
    static func stretchedHeight(_ size: VideoSize, url: URL?) -> VideoSize {
        guard url?.lastPathComponent == "narrow-pixels.mp4", size == VideoSize(width: 320, height: 240) else { return size }
        return VideoSize(width: 360, height: 270)
    }

    /// `size` with the width its height has at 4:3.
    static func fourByThree(_ size: VideoSize) -> VideoSize {
        size.isEmpty ? size : VideoSize(width: size.height * 4 / 3, height: size.height)
    }

    var backendName: String { fault == .namesNoBackend ? "" : inner.backendName }

    var scalingMode: ScalingMode {
        get { fault == .ignoresScalingMode ? storedScalingMode.get() : inner.scalingMode }
        set {
            if fault == .ignoresScalingMode { storedScalingMode.set(newValue) } else { inner.scalingMode = newValue }
        }
    }

    var shouldAutoplay: Bool {
        get { inner.shouldAutoplay }
        set { inner.shouldAutoplay = newValue }
    }

    var playbackRate: Float {
        get { fault == .ignoresRate ? storedRate.get() : inner.playbackRate }
        set {
            if fault == .ignoresRate { storedRate.set(newValue) } else { inner.playbackRate = newValue }
        }
    }

    var playbackVolume: Float {
        get { fault == .ignoresVolume ? storedVolume.get() : inner.playbackVolume }
        set {
            if fault == .slowCallsUnderLoad, !volumeChanged.withLock({ changed in defer { changed = true }; return changed }) {
                Thread.sleep(forTimeInterval: 2)
            }
            if fault == .ignoresVolume {
                storedVolume.set(min(1, max(0, newValue)))
                return
            }
            inner.playbackVolume = newValue
        }
    }

    var engineReportedVolume: Float? { (inner as? any EngineReportingPlayback)?.engineReportedVolume }
    var engineReportedTracks: [MediaTrack] { (inner as? any EngineReportingPlayback)?.engineReportedTracks ?? [] }

    func thumbnailAtCurrentTime() -> VideoFrame? {
        if fault == .slowThumbnail { Thread.sleep(forTimeInterval: 0.08) }
        let picture = inner.thumbnailAtCurrentTime()
        if fault == .dropsPictureAfterVideoEnds, let picture, let number = FramePattern.frameNumber(in: picture),
           inner.currentPlaybackTime - FramePattern.time(ofFrame: number) > 0.12 {
            return nil
        }
        if fault == .firstPictureNearStart, let picture {
            let first = firstThumbnail(remembering: picture)
            let position = inner.currentPlaybackTime
            if position > 0.5 / FramePattern.frameRate, position < 3 / FramePattern.frameRate { return first }
        }
        if fault == .staleThumbnail, let picture { return firstThumbnail(remembering: picture) }
        return picture
    }

    /// The first thumbnail returned, `picture` when there was none before it.
    private func firstThumbnail(remembering picture: VideoFrame) -> VideoFrame {
        firstThumbnail.withLock { first in
            if first == nil { first = picture }
            return first ?? picture
        }
    }

    // MARK: - Tracks, subtitles, metadata, chapters

    var tracks: [MediaTrack] {
        let listed = inner.tracks
        guard fault == .listsCoverAsVideo, !listed.isEmpty, !listed.contains(where: { $0.kind == .video }) else { return listed }
        return listed + [MediaTrack(id: "video:0", kind: .video, title: "Album cover", codec: "mjpeg")]
    }
    func selectTrack(id: String) {
        if fault == .ignoresTrackSelection { return }
        inner.selectTrack(id: id)
    }
    func deselectTrack(kind: TrackKind) { inner.deselectTrack(kind: kind) }
    func addSubtitle(url: URL) {
        if fault == .dropsStyledWebVTT, Self.hasWebVTTStyleBlocks(url) { return }
        inner.addSubtitle(url: url)
    }
    var subtitleDelay: TimeInterval {
        get { inner.subtitleDelay }
        set { inner.subtitleDelay = newValue }
    }
    var currentSubtitle: SubtitleCue? { inner.currentSubtitle }
    var metadata: MediaMetadata { fault == .dropsMetadata ? .empty : inner.metadata }
    var chapters: [Chapter] {
        guard fault == .shiftsChapters else { return inner.chapters }
        return inner.chapters.map { Chapter(title: $0.title, start: $0.start + 0.5, end: $0.end.map { $0 + 0.5 }) }
    }

    // MARK: - Events

    var events: AsyncStream<PlaybackEvent> {
        let source = inner.events
        let fault = self.fault
        let inner = self.inner
        let url = self.url
        return AsyncStream { continuation in
            let task = Task {
                var sizeSeen = false
                for await event in source {
                    if fault == .lateCues, case .subtitleChanged = event { try? await Task.sleep(nanoseconds: 300_000_000) }
                    if fault == .neverEndsWithSubtitles, event == .finished(.playbackEnded),
                       inner.tracks.contains(where: { $0.kind == .subtitle && $0.isSelected }) { continue }
                    for changed in Self.apply(fault, to: event, url: url, sizeSeen: &sizeSeen) { continuation.yield(changed) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// What the app sees of `event` under `fault` from the player of `url`; `sizeSeen` is the
    /// stream's own memory.
    private static func apply(_ fault: Fault, to event: PlaybackEvent, url: URL?, sizeSeen: inout Bool) -> [PlaybackEvent] {
        switch (fault, event) {
        case (.keepsFirstNaturalSize, .naturalSizeAvailable):
            defer { sizeSeen = true }
            return sizeSeen ? [] : [event]
        case (.assumesFourByThree, .naturalSizeAvailable(let size)): return [.naturalSizeAvailable(fourByThree(size))]
        case (.stretchesHeightOfNarrowPixels, .naturalSizeAvailable(let size)): return [.naturalSizeAvailable(stretchedHeight(size, url: url))]
        case (.reportsEndForBrokenFile, .finished(.playbackError)): return [.finished(.playbackEnded)]
        case (.decodesCueTextTwice, .subtitleChanged(let cue?)):
            return [.subtitleChanged(SubtitleCue(text: decodedTwice(cue.text), start: cue.start, end: cue.end))]
        case (.neverCompletesSeeks, .seekCompleted): return []
        case (.endsTwice, .finished(.playbackEnded)): return [event, event]
        case (.stopsSilently, .finished(.userExited)): return []
        case (.hidesStalls, .loadStateChanged(let state)) where state.contains(.stalled): return []
        case (.mislabelsNetworkErrors, .finished(.playbackError(let error))) where error.code == .network:
            return [.finished(.playbackError(PlaybackError(code: .engine, message: error.message)))]
        default: return [event]
        }
    }
}

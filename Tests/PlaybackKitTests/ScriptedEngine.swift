import Dispatch
import FoundationEssentials
import PlaybackKit

/// The smallest complete `PlaybackEngine`, as docs/WritingAnAdapter.md shows it: it plays a
/// scripted clip, with no media at all (a length, a picture size and a frame rate), on a
/// timer of its own. Everything the contract says about prepare, play, pause, seeks, the
/// end, stop and shutdown comes from `EnginePlayer`; the engine only reports.
///
/// It uses PlaybackKit's public API alone (this file imports it plainly), as an engine in a
/// package of its own would.
final class ScriptedEngine: PlaybackEngine, @unchecked Sendable {
    // @unchecked: the variables below `queue` are touched only on `queue`; `picture` is Locked.

    /// The clip the engine pretends to play, or the failure it pretends to meet.
    struct Script: Sendable {
        var duration: TimeInterval = 1
        var size = VideoSize(width: 32, height: 16)
        var frameRate = 25.0
        /// When set, opening fails with it.
        var failure: PlaybackError?
    }

    private let script: Script
    /// The engine's own thread of work: the player's queue calls the methods below, which
    /// post here and return at once, as an engine's calls that block would need.
    private let queue = DispatchQueue(label: "scripted.engine")
    private let picture = Locked<VideoFrame?>(nil)
    private var sink: EngineSink?
    private var frame = 0
    private var rate = 1.0
    private var playing = false
    /// Counts the chains of ticks: a tick of an earlier chain (from before a pause) does nothing.
    private var chain = 0

    init(_ script: Script = Script()) { self.script = script }

    private var lastFrame: Int { max(0, Int((script.duration * script.frameRate).rounded(.up)) - 1) }

    // MARK: - PlaybackEngine

    func open(_ source: MediaSource, options: PlaybackOptions, sink: EngineSink) {
        queue.async { [self] in
            self.sink = sink
            if let failure = script.failure { return sink.failed(failure) }
            frame = 0
            show()
            sink.prepared(EngineMediaInfo(duration: script.duration, naturalSize: script.size, hasVideo: true, hasAudio: false))
        }
    }

    func play() {
        queue.async { [self] in
            guard !playing else { return }
            playing = true
            scheduleTick(of: chain)
        }
    }

    func pause() { queue.async { [self] in stopTicking() } }

    func seek(to seconds: TimeInterval, accurate: Bool) {
        queue.async { [self] in
            frame = min(lastFrame, Int((seconds * script.frameRate + 1e-6).rounded(.down)))
            show()
            sink?.seekCompleted(Double(frame) / script.frameRate)
        }
    }

    func setRate(_ rate: Float) { queue.async { [self] in self.rate = Double(rate) } }

    func setVolume(_ volume: Float) {}

    func setScalingMode(_ mode: ScalingMode) {}

    func close() {
        queue.async { [self] in
            stopTicking()
            sink = nil
            picture.set(nil)
        }
    }

    func thumbnail() -> VideoFrame? { picture.get() }

    // MARK: - The clock

    private func scheduleTick(of chain: Int) {
        queue.asyncAfter(deadline: .now() + 1 / (script.frameRate * rate)) { [weak self] in self?.tick(of: chain) }
    }

    private func stopTicking() {
        playing = false
        chain += 1
    }

    private func tick(of chain: Int) {
        guard playing, chain == self.chain else { return }
        guard frame < lastFrame else {
            stopTicking()
            sink?.ended()
            return
        }
        frame += 1
        show()
        sink?.position(Double(frame) / script.frameRate)
        scheduleTick(of: chain)
    }

    /// The picture of the current frame: one grey level a frame (its red byte is the frame
    /// number, modulo 256), kept for thumbnails and presented to a `.frames` handler.
    private func show() {
        let time = Double(frame) / script.frameRate
        var pixels = [UInt8](repeating: UInt8(truncatingIfNeeded: frame), count: script.size.width * script.size.height * 4)
        for alpha in stride(from: 3, to: pixels.count, by: 4) { pixels[alpha] = 255 }
        let shown = VideoFrame(width: script.size.width, height: script.size.height, bytesPerRow: script.size.width * 4,
                               pixels: pixels, presentationTime: time)
        picture.set(shown)
        pixels.withUnsafeBytes { bytes in
            sink?.presentFrame(bytes, size: script.size, bytesPerRow: shown.bytesPerRow, presentationTime: time)
        }
    }
}

/// The backend of the scripted engine: what an adapter's `PlaybackBackend` looks like.
struct ScriptedBackend: PlaybackBackend {
    var script = ScriptedEngine.Script()
    var name: String { "scripted" }
    var engineVersion: String { "scripted 1" }

    func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        EnginePlayer(engine: ScriptedEngine(script), url: url, options: options, label: name)
    }
}

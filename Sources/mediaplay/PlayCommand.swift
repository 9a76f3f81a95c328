import Dispatch
import FoundationEssentials
import Glibc
import CommandLineSupport
import PlaybackKit

/// `mediaplay play`: plays one file or a queue of them, to the end, with a live time widget on
/// a terminal (plain progress lines otherwise); space pauses, the arrow keys seek 5 s, n and p
/// go to the next and the previous item, q quits. `--loop one|all` repeats the item or the
/// queue. Without a terminal on stdin no key is read and the queue plays through.
final class PlayCommand: @unchecked Sendable {
    // @unchecked: mutable state is touched only on `queue`.
    private let arguments: Arguments
    private let queue = DispatchQueue(label: "mediaplay.play")
    private let isTerminal = isatty(STDOUT_FILENO) == 1
    private let keysEnabled = isatty(STDIN_FILENO) == 1
    private var savedTerminal = termios()
    private var rawMode = false
    private var lastPlainSecond = -1
    private var lastPlainStalled = false
    /// The position and duration last drawn: what the final line shows after `q` (a stopped
    /// player no longer has them).
    private var lastShown: (position: TimeInterval, duration: TimeInterval) = (0, 0)

    init(_ arguments: Arguments) throws {
        try arguments.check(known: ["--backend", "--audio", "--video", "--quiet", "--loop"])
        self.arguments = arguments
    }

    func run() async throws -> Int32 {
        var sources = arguments.operands.map(MediaSource.init(argument:))
        if sources.isEmpty {
            // No file given: the generated sample clip.
            sources = [MediaSource(try Mediaplay.sampleClip())]
            StandardStreams.writeError("mediaplay: playing the sample \(sources[0].path)\n")
        }
        let repeatMode = try Self.repeatMode(arguments.value("--loop"))
        var audio = try arguments.audioOutput()
        if audio == .system, arguments.value("--audio") == nil, !Self.audioDeviceExists() {
            StandardStreams.writeError("mediaplay: no audio device found; playing without sound (--audio null)\n")
            audio = .null
        }
        var options = PlaybackOptions(videoOutput: .none, audioOutput: audio)
        switch arguments.value("--video") ?? "none" {
        case "none": break
        case "frames": options.videoOutput = .frames(viewport: nil, handler: { _ in })
        case "yuv": options.videoOutput = .yuvFrames(handler: { _ in })
        case let other: throw PlaybackError(code: .invalidArgument, message: "--video takes none, frames or yuv, not '\(other)'")
        }
        let names = Backends.requestedNames(arguments.value("--backend"))
        guard !names.isEmpty else {
            throw PlaybackError(code: .invalidArgument, message: arguments.value("--backend") == nil ? "no backend is compiled in" : "--backend names no backend")
        }
        let playQueue = PlaybackQueue(urls: sources.map(\.url), backends: names, options: options)
        playQueue.repeatMode = repeatMode
        let quiet = arguments.flag("--quiet")
        let events = playQueue.events
        let failures = Task { [failures = playQueue.failures, count = sources.count] in
            var failed = 0
            for await failure in failures {
                failed += 1
                let what = count == 1 ? "" : "skipping \(failure.url.lastPathComponent) (item \(failure.index + 1) of \(count)): "
                StandardStreams.writeError("mediaplay: error: \(what)\(failure.error.description.replacing("\n", with: " "))\n")
            }
            return failed
        }
        playQueue.play()

        // Made only when drawn: a timer source released without ever being resumed crashes.
        let ticker: DispatchSourceTimer? = quiet ? nil : DispatchSource.makeTimerSource(queue: queue)
        if let ticker {
            ticker.schedule(deadline: .now() + 0.1, repeating: isTerminal ? 0.1 : 0.25)
            ticker.setEventHandler { [self] in if let player = playQueue.player { draw(player) } }
            ticker.resume()
        }
        let keys = keysEnabled ? startKeys(playQueue) : nil
        defer {
            keys?.cancel()
            ticker?.cancel()
            queue.sync { restoreTerminal() }
            playQueue.shutdown()
        }

        var endedDuration: TimeInterval?
        listening: for await event in events {
            switch event {
            case .itemChanged(let index):
                if !quiet { queue.sync { startItem(index, of: sources) } }
            case .finished:
                endedDuration = playQueue.player?.duration ?? 0
                break listening
            }
        }
        // The end, or q (which shuts the queue down): every failure is written before the last line.
        playQueue.shutdown()
        let failed = await failures.value
        if !quiet { queue.sync { finishLine(endedDuration.flatMap { $0 > 0 ? $0 : nil }) } }
        return failed == 0 ? 0 : 1
    }

    /// `--loop one|all|off`.
    static func repeatMode(_ value: String?) throws -> RepeatMode {
        switch value ?? "off" {
        case "off": return .off
        case "one": return .one
        case "all": return .all
        case let other: throw PlaybackError(code: .invalidArgument, message: "--loop takes one, all or off, not '\(other)'")
        }
    }

    /// True when a sound server or an ALSA playback device is there to play to.
    static func audioDeviceExists() -> Bool {
        let environment = ProcessInfo.processInfo.environment
        if environment["PULSE_SERVER"] != nil { return true }
        let runtime = environment["XDG_RUNTIME_DIR"] ?? "/run/user/\(getuid())"
        for socket in ["pulse/native", "pipewire-0"] where FileManager.default.fileExists(atPath: "\(runtime)/\(socket)") {
            return true
        }
        let devices = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/snd")) ?? []
        return devices.contains { $0.hasPrefix("pcm") && $0.hasSuffix("p") }
    }

    // MARK: - Widget

    /// `00:00:03 / 00:00:10 [###==-----]`: `#` played, `=` loaded ahead (playableDuration),
    /// then the state when not simply playing: paused, buffering (loadState `.stalled`).
    private func widget(_ player: any MediaPlayback) -> String {
        let position = player.currentPlaybackTime, duration = player.duration
        let width = 30
        func cells(_ seconds: TimeInterval) -> Int { duration > 0 ? max(0, min(width, Int(Double(width) * seconds / duration))) : 0 }
        let filled = cells(position)
        let loaded = max(filled, cells(player.playableDuration))
        let bar = String(repeating: "#", count: filled) + String(repeating: "=", count: loaded - filled)
            + String(repeating: "-", count: width - loaded)
        return "\(clockText(position)) / \(clockText(duration)) [\(bar)]\(stateText(player))"
    }

    /// " (paused)", " (buffering)", both, or nothing.
    private func stateText(_ player: any MediaPlayback) -> String {
        var words: [String] = []
        if player.playbackState == .paused { words.append("paused") }
        if player.loadState.contains(.stalled) { words.append("buffering") }
        return words.isEmpty ? "" : " (" + words.joined(separator: ", ") + ")"
    }

    private func draw(_ player: any MediaPlayback) {
        guard player.isPreparedToPlay else {
            if isTerminal { writeOut("\r\u{1B}[Kopening…") }
            return
        }
        lastShown = (player.currentPlaybackTime, player.duration)
        if isTerminal {
            writeOut("\r\u{1B}[K\(widget(player))")
        } else {
            let second = Int(player.currentPlaybackTime)
            let stalled = player.loadState.contains(.stalled)
            guard second != lastPlainSecond || stalled != lastPlainStalled else { return }
            lastPlainSecond = second
            lastPlainStalled = stalled
            writeOut("\(clockText(player.currentPlaybackTime)) / \(clockText(player.duration))\(stalled ? " (buffering)" : "")\n")
        }
    }

    /// The last line: the last item's full time at the end (`endedDuration`), or where it was
    /// last drawn after q.
    private func finishLine(_ endedDuration: TimeInterval?) {
        let shown = endedDuration.map { ($0, $0) } ?? lastShown
        guard shown.1 > 0 else { return }  // nothing played: every item failed
        let text = "\(clockText(shown.0)) / \(clockText(shown.1))"
        writeOut(isTerminal ? "\r\u{1B}[K\(text)\n" : "\(text)\n")
    }

    /// A new item: on a terminal the widget of the one before stays on its line; with several
    /// items a line names the new one.
    private func startItem(_ index: Int, of sources: [MediaSource]) {
        if isTerminal, lastShown.duration > 0 { writeOut("\n") }
        lastShown = (0, 0)
        lastPlainSecond = -1
        guard sources.count > 1 else { return }
        let source = sources[index]
        let name = source.isFile ? source.url.lastPathComponent : source.url.absoluteString
        writeOut("[\(index + 1)/\(sources.count)] \(name)\n")
    }

    /// Writes straight to stdout, unbuffered, so lines appear as they happen.
    private func writeOut(_ text: String) {
        StandardStreams.writeOutput(text)
    }

    // MARK: - Keys

    private func startKeys(_ playQueue: PlaybackQueue) -> DispatchSourceRead {
        queue.sync { enterRawMode() }
        let source = DispatchSource.makeReadSource(fileDescriptor: STDIN_FILENO, queue: queue)
        var pending: [UInt8] = []
        source.setEventHandler {
            var bytes = [UInt8](repeating: 0, count: 16)
            let count = read(STDIN_FILENO, &bytes, bytes.count)
            guard count > 0 else {
                source.cancel()
                return
            }
            pending.append(contentsOf: bytes[0..<count])
            while !pending.isEmpty {
                if pending[0] == 0x1B {
                    guard pending.count >= 3 else { return }
                    if let player = playQueue.player, pending[1] == 0x5B {
                        if pending[2] == 0x43 { Self.seek(player, by: 5) }
                        if pending[2] == 0x44 { Self.seek(player, by: -5) }
                    }
                    pending.removeFirst(3)
                    continue
                }
                switch pending.removeFirst() {
                case UInt8(ascii: " "):
                    if playQueue.player?.isPlaying == true { playQueue.pause() } else { playQueue.play() }
                case UInt8(ascii: "n"), UInt8(ascii: "N"):
                    playQueue.next()
                case UInt8(ascii: "p"), UInt8(ascii: "P"):
                    playQueue.previous()
                case UInt8(ascii: "q"), UInt8(ascii: "Q"), 0x03:
                    playQueue.shutdown()
                default:
                    break
                }
            }
        }
        source.resume()
        return source
    }

    private static func seek(_ player: any MediaPlayback, by delta: TimeInterval) {
        var target = player.currentPlaybackTime + delta
        if player.duration > 0 { target = min(target, player.duration) }
        player.currentPlaybackTime = max(0, target)
    }

    private func enterRawMode() {
        guard tcgetattr(STDIN_FILENO, &savedTerminal) == 0 else { return }
        var raw = savedTerminal
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        if tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 { rawMode = true }
    }

    private func restoreTerminal() {
        guard rawMode else { return }
        tcsetattr(STDIN_FILENO, TCSANOW, &savedTerminal)
        rawMode = false
    }
}

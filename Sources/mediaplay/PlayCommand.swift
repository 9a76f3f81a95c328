import Dispatch
import FoundationEssentials
import Glibc
import CommandLineSupport
import PlaybackKit

/// `mediaplay play`: plays one file or a queue of them, to the end, with a live time widget on
/// a terminal (plain progress lines otherwise) and the subtitle shown as it changes; the keys
/// are `PlayKeys`'. `--loop one|all` repeats the item or the queue; `--audio-lang`,
/// `--sub-lang` and `--sub` choose tracks as `PlaybackOptions` does. Without a terminal on
/// stdin no key is read and the queue plays through.
final class PlayCommand: @unchecked Sendable {
    // @unchecked: mutable state is touched only on `queue`.
    private let arguments: Arguments
    private let queue = DispatchQueue(label: "mediaplay.play")
    private let isTerminal = isatty(STDOUT_FILENO) == 1
    private let keysEnabled = isatty(STDIN_FILENO) == 1
    private var lastPlainSecond = -1
    private var lastPlainStalled = false
    /// The position and duration last drawn: what the final line shows after `q` (a stopped
    /// player no longer has them).
    private var lastShown: (position: TimeInterval, duration: TimeInterval) = (0, 0)
    /// The subtitle text last written, so each change is written once.
    private var lastSubtitle: String?

    init(_ arguments: Arguments) throws {
        try arguments.check(known: ["--backend", "--audio", "--video", "--quiet", "--loop", "--audio-lang", "--sub-lang", "--sub",
                                    "--window", "--size", "--fullscreen", "--open-timeout"])
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
        if let openTimeout = try arguments.openTimeout() { options.openTimeout = openTimeout }
        switch arguments.value("--video") ?? "none" {
        case "none": break
        case "frames": options.videoOutput = .frames(viewport: nil, handler: { _ in })
        case "yuv": options.videoOutput = .yuvFrames(handler: { _ in })
        case let other: throw PlaybackError(code: .invalidArgument, message: "--video takes none, frames or yuv, not '\(other)'")
        }
        let window = try WindowPlayer.fromArguments(arguments, sources: sources)
        if let window { options.videoOutput = .window(handle: window.videoWindow) }
        options.preferredAudioLanguages = Self.languages(arguments.value("--audio-lang"))
        options.preferredSubtitleLanguages = Self.languages(arguments.value("--sub-lang"))
        options.subtitleURLs = arguments.values("--sub").map { MediaSource(argument: $0).url }
        if !options.subtitleURLs.isEmpty, sources.count > 1 {
            throw PlaybackError(code: .invalidArgument, message: "--sub goes with one file to play, not \(sources.count)")
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
        let keys = keysEnabled ? PlayKeys(queue: queue, playQueue: playQueue, announce: { [self] in announce($0) }) : nil
        keys?.start()
        window?.start(playQueue)
        defer {
            window?.stop()
            keys?.stop()
            ticker?.cancel()
            playQueue.shutdown()
        }

        var endedDuration: TimeInterval?
        listening: for await event in events {
            switch event {
            case .itemChanged(let index):
                if !quiet { queue.sync { startItem(index, of: sources) } }
                keys?.itemStarted()
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

    /// `--audio-lang eng,fre`: the languages in order of preference.
    static func languages(_ value: String?) -> [String] {
        (value ?? "").split(separator: ",").map { String($0).trimmingWhitespace() }.filter { !$0.isEmpty }
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
        let subtitle = player.currentSubtitle.map { $0.text.split(whereSeparator: \.isNewline).joined(separator: " / ") }
        if subtitle != lastSubtitle {
            lastSubtitle = subtitle
            if let subtitle { announce("subtitle: \(subtitle)") }
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

    /// A line of its own above the widget (which the next tick draws again).
    private func announce(_ text: String) {
        writeOut(isTerminal ? "\r\u{1B}[K\(text)\n" : "\(text)\n")
    }

    /// Writes straight to stdout, unbuffered, so lines appear as they happen.
    private func writeOut(_ text: String) {
        StandardStreams.writeOutput(text)
    }
}

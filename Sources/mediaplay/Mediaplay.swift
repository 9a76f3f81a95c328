import Dispatch
import FoundationEssentials
import Glibc
import CommandLineSupport
import PlaybackBackends
import PlaybackConformance
import PlaybackKit

/// `mediaplay`: plays media and inspects it with any compiled-in engine.
@main
struct Mediaplay {
    static let usage = """
        usage: mediaplay <command> [--backend NAME] ...
          backends                                   list the engines compiled in, with versions
          play [options] [FILE|URL ...]              play to the end, several files as a queue;
                                                     without a file, a generated sample
          info [--json] FILE|URL                     duration, size, tracks, metadata, chapters
          thumbnail --at SECONDS -o OUT.png FILE|URL the frame at that time, as PNG
          conformance [--backend NAME|all] [--json] [--check NAME]... [--fixtures DIR]
                                                     run the conformance suite, print the matrix
                                                     (--make-fixtures: only make the test media; --list: the checks)
        The backend is --backend NAME, else $MEDIAPLAYBACK_BACKEND, else the first listed; a list
        (--backend vlc,ffmpeg) tries each in turn until one plays.
        'mediaplay COMMAND --help' shows a command's options.
        """

    /// Each command's own usage, for `mediaplay COMMAND --help`.
    static let commandUsage: [String: String] = [
        "backends": """
            usage: mediaplay backends
              one line per engine compiled in: its name and the engine's version
            """,
        "play": """
            usage: mediaplay play [--backend NAME[,NAME...]] [--audio null|system] [--video none|frames|yuv]
                                  [--audio-lang LANG[,LANG...]] [--sub-lang LANG[,LANG...]] [--sub FILE]...
                                  [--loop one|all] [--quiet] [--window [--size WxH] [--fullscreen]]
                                  [--open-timeout SECONDS] [FILE|URL ...]
              plays to the end; several files play as a queue. Keys on a terminal:
                space pause/play     left/right seek 5 s      n/p next/previous item
                a next audio track   s next subtitle (or off) 9/0 volume down/up   m mute
                [/] slower/faster    ,/. frame back/forward   i engine, source and streams
                q quit
              --audio-lang/--sub-lang prefer tracks in these languages; --sub adds a subtitle file
              (SRT, ASS/SSA, WebVTT) and shows it; the current subtitle is written as it changes.
              --window shows the video in an X11 window (640x360, or --size; --fullscreen): the
              time in its title, a seek bar at the bottom (click to seek); in the window space,
              arrows, ,/., n, p and q as above, f the next scaling mode, F fullscreen.
              --open-timeout gives up opening an item after SECONDS (20 unless given).
            """,
        "info": InfoCommand.usage,
        "thumbnail": """
            usage: mediaplay thumbnail [--backend NAME] --at SECONDS [--open-timeout SECONDS] -o OUT.png FILE|URL
              writes the picture shown at SECONDS as a PNG; --open-timeout gives up opening after
              SECONDS (20 unless given)
            """,
    ]

    /// Runs the command on a task (see `runCommandLineTool`).
    static func main() { runCommandLineTool { await run() } }

    /// Parses the command line, runs the command and exits with its status.
    static func run() async {
        PlaybackBackends.registerBuiltIns()
        var words = Array(CommandLine.arguments.dropFirst())
        guard let command = words.first else {
            StandardStreams.writeError(usage + "\n")
            exit(2)
        }
        words.removeFirst()
        // The conformance runner reads its own command line (--help included).
        if command == "conformance" { exit(await conformance(words)) }
        if words.contains("--help") || words.contains("-h"), let usage = commandUsage[command] {
            print(usage)
            exit(0)
        }
        do {
            let arguments = try Arguments(words)
            let status: Int32
            switch command {
            case "backends": status = try listBackends(arguments)
            case "play": status = try await PlayCommand(arguments).run()
            case "info": status = try await InfoCommand.run(arguments)
            case "thumbnail": status = try await thumbnail(arguments)
            case "help", "--help", "-h":
                print(usage)
                status = 0
            default:
                throw PlaybackError(code: .invalidArgument, message: "unknown command '\(command)' (try: mediaplay help)")
            }
            exit(status)
        } catch let error as PlaybackError {
            fail(error.description)
        } catch {
            fail("\(error)")
        }
    }

    /// One line on stderr, exit status 1.
    static func fail(_ message: String) -> Never {
        StandardStreams.writeError("mediaplay: error: \(message.replacing("\n", with: " "))\n")
        exit(1)
    }

    // MARK: - backends

    static func listBackends(_ arguments: Arguments) throws -> Int32 {
        try arguments.check(known: [])
        for backend in Backends.all {
            print("\(backend.name)\t\(backend.engineVersion)")
        }
        return Backends.all.isEmpty ? 1 : 0
    }

    // MARK: - thumbnail

    static func thumbnail(_ arguments: Arguments) async throws -> Int32 {
        try arguments.check(known: ["--backend", "--at", "-o", "--output", "--open-timeout"])
        let source = MediaSource(argument: try arguments.single("FILE or URL"))
        guard let output = arguments.value("-o", "--output") else {
            throw PlaybackError(code: .invalidArgument, message: "thumbnail needs -o OUT.png")
        }
        let time = try arguments.seconds("--at") ?? 0
        guard time >= 0 else { throw PlaybackError(code: .invalidArgument, message: "--at must not be negative") }
        var options = PlaybackOptions(videoOutput: .none, audioOutput: .null)
        if let openTimeout = try arguments.openTimeout() { options.openTimeout = openTimeout }
        let player = try Backends.makePlayer(backend: arguments.value("--backend"), url: source.url, options: options)
        defer { player.shutdown() }
        // Seeking before prepare lets engines that can open at a position skip the start.
        if time > 0 { player.currentPlaybackTime = time }
        try await player.prepare()
        if time > 0, player.duration > 0, time >= player.duration {
            throw PlaybackError(code: .invalidArgument, message: String(cFormat: "--at %.3f is past the end (%.3f s)", time, player.duration))
        }
        guard let frame = player.thumbnailAtCurrentTime() else {
            throw PlaybackError(code: .decode, message: "thumbnail: \(source.url.lastPathComponent) has no picture at \(time) s")
        }
        try frame.pngData().write(to: URL(fileURLWithPath: output))
        StandardStreams.writeError("mediaplay: wrote \(output) (\(frame.width)x\(frame.height), frame at \(String(cFormat: "%.3f", frame.presentationTime)) s)\n")
        return 0
    }

    // MARK: - conformance

    /// The fixtures folder of the checkout, made on first use.
    static func fixturesFolder() throws -> URL {
        try FixtureRecipe.make(checkout: packageRoot())
    }

    /// The generated sample `play` uses when no file is given.
    static func sampleClip() throws -> URL {
        try fixturesFolder().appendingPathComponent("frames.mp4")
    }

    /// `mediaplay conformance`: the library's runner (`ConformanceCommand`) over every
    /// compiled-in backend, with the checkout's fixtures and what this package expects of its
    /// engines (`ConformanceExpectation.builtInEngines`).
    static func conformance(_ words: [String]) async -> Int32 {
        guard !Backends.all.isEmpty else {
            StandardStreams.writeError("mediaplay: error: no backend is compiled in (build with a trait: GStreamer, FFmpeg, MPV or VLC)\n")
            return 2
        }
        return await ConformanceCommand.run(
            backends: Backends.all, expectations: ConformanceExpectation.builtInEngines, arguments: words,
            fixtures: packageRoot().appendingPathComponent("Fixtures"), program: "mediaplay conformance")
    }
}

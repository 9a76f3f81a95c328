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
          play [--audio null|system] [--video none|frames|yuv] [--quiet] [--loop one|all] [FILE|URL ...]
                                                     play to the end, several files as a queue (space: pause,
                                                     arrows: seek 5 s, n/p: next/previous, q: quit);
                                                     without a file, a generated sample
          info [--json] FILE|URL                     duration and natural size
          thumbnail --at SECONDS -o OUT.png FILE|URL the frame at that time, as PNG
          conformance [--backend NAME|all] [--json] [--check NAME]...
                                                     run the conformance suite, print the matrix
        The backend is --backend NAME, else $MEDIAPLAYBACK_BACKEND, else the first listed; a list
        (--backend vlc,ffmpeg) tries each in turn until one plays.
        """

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
        do {
            let arguments = try Arguments(words)
            let status: Int32
            switch command {
            case "backends": status = try listBackends(arguments)
            case "play": status = try await PlayCommand(arguments).run()
            case "info": status = try await info(arguments)
            case "thumbnail": status = try await thumbnail(arguments)
            case "conformance": status = try await conformance(arguments)
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

    // MARK: - info

    static func info(_ arguments: Arguments) async throws -> Int32 {
        try arguments.check(known: ["--backend", "--json"])
        let source = MediaSource(argument: try arguments.single("FILE or URL"))
        let player = try Backends.makePlayer(
            backend: arguments.value("--backend"), url: source.url,
            options: PlaybackOptions(videoOutput: .none, audioOutput: .null))
        defer { player.shutdown() }
        try await player.prepare()
        let size = player.naturalSize
        let backend = player.backendName
        let version = Backends.backend(named: backend)?.engineVersion ?? "unknown version"
        if arguments.flag("--json") {
            let object: [String: Any] = [
                "backend": backend,
                "url": source.url.absoluteString,
                "duration": player.duration,
                "width": size.width,
                "height": size.height,
                "hasVideo": !size.isEmpty,
            ]
            print(try JSONValue(object).text())
        } else {
            print("backend:  \(backend) (\(version))")
            print("source:   \(source.isFile ? source.path : source.url.absoluteString)")
            print("duration: \(String(cFormat: "%.3f", player.duration)) s (\(clockText(player.duration)))")
            print("size:     \(size.isEmpty ? "no video" : size.description)")
        }
        return 0
    }

    // MARK: - thumbnail

    static func thumbnail(_ arguments: Arguments) async throws -> Int32 {
        try arguments.check(known: ["--backend", "--at", "-o", "--output"])
        let source = MediaSource(argument: try arguments.single("FILE or URL"))
        guard let output = arguments.value("-o", "--output") else {
            throw PlaybackError(code: .invalidArgument, message: "thumbnail needs -o OUT.png")
        }
        let time = try arguments.seconds("--at") ?? 0
        guard time >= 0 else { throw PlaybackError(code: .invalidArgument, message: "--at must not be negative") }
        let player = try Backends.makePlayer(
            backend: arguments.value("--backend"), url: source.url,
            options: PlaybackOptions(videoOutput: .none, audioOutput: .null))
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

    static func conformance(_ arguments: Arguments) async throws -> Int32 {
        try arguments.check(known: ["--backend", "--json", "--check"])
        let fixtures = try fixturesFolder()
        let backend = arguments.value("--backend")
        let checks = arguments.values("--check")
        return await runConformanceCommand(
            backendName: backend == "all" ? nil : backend, json: arguments.flag("--json"),
            fixtures: fixtures, only: checks.isEmpty ? nil : Set(checks))
    }
}

import CommandLineSupport
import Dispatch
import FoundationEssentials
import Glibc
import PlaybackBackends
import PlaybackKit

/// `mediaplay-bench`: measures every adapter against its engine's own command-line player on
/// the same generated media, in one run (see BENCHMARKS.md). It plays through the `mediaplay`
/// built next to it, so build both first: `swift build -c release`.
@main
struct BenchMain {
    static let usage = """
        usage: mediaplay-bench [--backend NAME|all] [--json|--markdown] [--runs N] [--pictures]
          measures each engine against its own player (playback CPU, peak memory, thumbnails,
          time to prepared, seeks, players at once); needs the mediaplay built beside it
          --runs N     rounds of the playback comparisons and in-process figures (default 2)
          --pictures   only the whole-process measurements: playback and the thumbnail sweep
          thumbnails: a sweep of 2 clips x 3 positions (near the start, mid-GOP, near the end),
            max(7, N) runs of mediaplay and of ffmpeg -ss T -i F -frames:v 1 at each (84
            processes with N up to 7), about 15 s (ffmpeg) to 35 s (vlc) per backend;
            with every backend the bench runs past its 9.5 min budget (the playback rounds
            alone take about 13 min), and the sweep's runs are never cut to fit
        """

    /// Runs the command on a task (see `runCommandLineTool`).
    static func main() { runCommandLineTool { await run() } }

    /// Parses the command line, runs the bench and exits with its status.
    static func run() async {
        PlaybackBackends.registerBuiltIns()
        let words = Array(CommandLine.arguments.dropFirst())
        if words.first == "help" || words.contains("--help") || words.contains("-h") {
            print(usage)
            exit(0)
        }
        do {
            exit(try await runBenchCommand(try Arguments(words)))
        } catch let error as PlaybackError {
            StandardStreams.writeError("mediaplay-bench: error: \(error.description.replacing("\n", with: " "))\n")
            exit(1)
        } catch {
            StandardStreams.writeError("mediaplay-bench: error: \(error)\n")
            exit(1)
        }
    }
}

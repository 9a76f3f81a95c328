import FoundationEssentials
import CommandLineSupport
import PlaybackKit

/// `mediaplay-bench [--backend NAME|all] [--json|--markdown] [--runs N] [--pictures]`:
/// measures each backend against its engine's own command-line player on the same generated
/// media, in alternating runs, and prints medians, ratios and whether each target is met.
/// `--pictures`: only the whole-process measurements (playback CPU and memory with every
/// video output, against the own player and the RGBA floor, and the thumbnail sweep).
/// `--runs N` sets the rounds of the playback comparisons (and of the in-process figures);
/// the thumbnail sweep makes max(7, N) runs of each side at each of its positions.
func runBenchCommand(_ arguments: Arguments) async throws -> Int32 {
    try arguments.check(known: ["--backend", "--json", "--markdown", "--runs", "--pictures"])
    guard arguments.operands.isEmpty else {
        throw PlaybackError(code: .invalidArgument, message: "bench takes no operands (it generates its own media)")
    }
    let runsText = arguments.value("--runs") ?? String(Bench.defaultRuns)
    guard let runs = Int(runsText), (1...50).contains(runs) else {
        throw PlaybackError(code: .invalidArgument, message: "--runs takes a count from 1 to 50, not '\(runsText)'")
    }
    let wanted = arguments.value("--backend") ?? "all"
    let backends: [any PlaybackBackend] = wanted.lowercased() == "all" ? Backends.all : [try Backends.resolve(wanted)]
    guard !backends.isEmpty else {
        throw PlaybackError(code: .backendUnavailable, message: "no backend is compiled in")
    }

    let bench = try Bench(runs: runs)
    let started = monotonicSeconds()
    let loadAtStart = MachineInfo.loadAverage()
    let folder = packageRoot().appendingPathComponent("Fixtures/bench")
    let (media, mediaSeconds) = try await BenchMedia.prepare(in: folder, log: Bench.log)
    // Every whole-process measurement comes first, while this process is still small: on Linux
    // a spawned child's ru_maxrss starts from the high-water mark of the memory it had before
    // exec, which with vfork-style spawning is this process's.
    let startup = await ProcessMeasurements(mediaplay: bench.mediaplay, media: media, runs: runs, log: Bench.log).startup()
    Bench.log("mediaplay start-up alone: \(startup.summary)")
    var reports: [BackendReport] = []
    for backend in backends {
        let backendStarted = monotonicSeconds()
        var report = await bench.measureProcesses(backend, media: media)
        report.seconds = monotonicSeconds() - backendStarted
        reports.append(report)
    }
    // The concurrency search shares what is left of the time budget among the backends.
    let measurable = backends.indices.filter { reports[$0].unavailable == nil }
    for (order, index) in measurable.enumerated() where !arguments.flag("--pictures") {
        let left = Bench.timeBudget - (monotonicSeconds() - started)
        let share = left / Double(measurable.count - order) - Bench.inProcessFixedSeconds
        let budget = min(Bench.concurrencyBudget, max(Bench.concurrencyMinimum, share))
        await bench.measureInProcess(backends[index], media: media, concurrencyBudget: budget, into: &reports[index])
    }
    var machine = MachineInfo.current()
    machine.loadAtStart = loadAtStart
    machine.loadAtEnd = MachineInfo.loadAverage()
    let result = BenchResult(
        machine: machine, runs: runs,
        command: reproduceCommand(backend: wanted, runs: runs) + (arguments.flag("--pictures") ? " --pictures" : ""),
        reports: reports, targets: checkTargets(reports), startup: startup,
        mediaSeconds: mediaSeconds, totalSeconds: monotonicSeconds() - started)
    if arguments.flag("--json") {
        print(result.json)
    } else if arguments.flag("--markdown") {
        print(result.markdown)
    } else {
        print(result.text)
    }
    return reports.contains { $0.unavailable == nil } ? 0 : 1
}

/// The command that reproduces this run, with `--traits` when this build has fewer engines
/// than the default (all four).
func reproduceCommand(backend: String, runs: Int) -> String {
    let traitNames = ["gstreamer": "GStreamer", "ffmpeg": "FFmpeg", "mpv": "MPV", "vlc": "VLC"]
    let compiled = Backends.all.map(\.name)
    var command = "swift build -c release"
    if Set(compiled) != Set(traitNames.keys) {
        command += " --traits " + compiled.map { traitNames[$0] ?? $0 }.joined(separator: ",")
    }
    command += " && .build/release/mediaplay-bench --backend \(backend)"
    if runs != Bench.defaultRuns { command += " --runs \(runs)" }
    return command
}

/// One bench run's settings and the per-backend sequence of measurements.
struct Bench {
    let runs: Int
    /// The path of this very binary: children run the same build as the bench.
    let mediaplay: String
    let unprivileged = Unprivileged.ifRoot()
    /// Seconds the concurrency search may take per backend.
    static let concurrencyBudget: TimeInterval = 60
    /// The least the concurrency search gets, however late the bench is.
    static let concurrencyMinimum: TimeInterval = 15
    /// Runs of each side of a comparison: A B A B.
    static let defaultRuns = 2
    /// What the whole bench should stay within (the requirement is 10 minutes; generating the
    /// clips on a first run is counted too).
    static let timeBudget: TimeInterval = 570
    /// About what time to prepared and the seeks take per backend.
    static let inProcessFixedSeconds: TimeInterval = 8

    init(runs: Int) throws {
        self.runs = runs
        guard let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            throw PlaybackError(code: .engine, message: "bench: cannot find this program's path in /proc/self/exe")
        }
        // The players run as `mediaplay` child processes: the one built beside this program.
        let beside = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("mediaplay").path
        guard FileManager.default.isExecutableFile(atPath: beside) else {
            throw PlaybackError(code: .invalidArgument, message: "bench: no mediaplay beside \(path): build both first (swift build -c release)")
        }
        mediaplay = beside
    }

    /// Progress lines on stderr (the table goes to stdout).
    static let log: @Sendable (String) -> Void = { line in
        StandardStreams.writeError("bench: \(line)\n")
    }

    /// The whole-process measurements of one backend: playback CPU and peak memory against the
    /// engine's own player, then the thumbnail sweep against the ffmpeg command.
    func measureProcesses(_ backend: any PlaybackBackend, media: BenchMedia) async -> BackendReport {
        let log = Self.log
        let own = OwnPlayer.of(backend: backend.name, unprivileged: unprivileged)
        var report = BackendReport(
            name: backend.name, engineVersion: backend.engineVersion,
            ownPlayer: own?.label ?? "none", ownPlayerVersion: await own?.version() ?? "none")
        log("\(backend.name) (\(backend.engineVersion)) against \(report.ownPlayer) (\(report.ownPlayerVersion))")

        // A backend that cannot make a player (not built yet, engine missing) is reported as such.
        do {
            _ = try backend.makePlayer(url: URL(fileURLWithPath: media.playbackFile),
                                       options: PlaybackOptions(videoOutput: .none, audioOutput: .null))
        } catch {
            report.unavailable = "\(error)"
            log("  unavailable: \(error)")
            return report
        }
        guard let own else {
            report.unavailable = "the bench knows no own player for the engine '\(backend.name)'"
            return report
        }

        let processes = ProcessMeasurements(mediaplay: mediaplay, media: media, runs: runs, log: log)
        log("  playback CPU and peak memory: \(BenchMedia.playback.summary), \(runs) runs each")
        let series = await processes.playback(backend: backend.name, own: own)
        report.playNone = series[.none]!
        report.playOwn = series[.own]!
        report.playFrames = series[.frames]!
        report.playFloor = series[.floor]!
        report.playYUV = series[.yuv]!
        let thumbnailRuns = ProcessMeasurements.thumbnailRuns(runs: runs)
        let places = BenchMedia.thumbnailClips.map { clip in
            clip.shortName + " at " + clip.thumbnailPositions.map { String(cFormat: "%g", $0.seconds) }.joined(separator: ", ") + " s"
        }
        log("  thumbnail sweep: \(places.joined(separator: "; ")), \(thumbnailRuns) runs of each side")
        let scratch = FileManager.default.temporaryDirectory
        report.thumbnails = await processes.thumbnailSweep(backend: backend.name, runs: thumbnailRuns, folder: scratch)
        log(String(cFormat: "  thumbnail sweep took %.0f s: ", report.thumbnails.seconds) + report.thumbnails.ratioSummary)
        return report
    }

    /// The measurements through `Backends.makePlayer` in this process: time to prepared,
    /// accurate seeks, concurrency.
    func measureInProcess(_ backend: any PlaybackBackend, media: BenchMedia, concurrencyBudget: TimeInterval,
                          into report: inout BackendReport) async {
        let started = monotonicSeconds()
        let log = Self.log
        log("\(backend.name) in this process")
        let inProcess = InProcessMeasurements(media: media, runs: runs, log: log)
        log("  time to prepared")
        (report.prepare, report.prepareCold, report.pictureReadyWhenPrepared) = await inProcess.timeToPrepared(backend: backend)
        log("  accurate seeks")
        (report.seeks, report.seekWorstMiss) = await inProcess.seekLatency(backend: backend)
        log("  concurrency: \(BenchMedia.concurrency.summary), .frames output, null audio (within \(String(cFormat: "%.0f", concurrencyBudget)) s)")
        report.concurrency = await ConcurrencyMeasurement(media: media, budget: concurrencyBudget, log: log).run(backend: backend)
        report.seconds += monotonicSeconds() - started
    }
}

import FoundationEssentials
import Glibc
import CommandLineSupport
import PlaybackKit

// MARK: - The engines' own players

/// The command-line player that ships with an engine, run on the same file as the adapter.
struct OwnPlayer: Sendable {
    /// How the table names it, e.g. "mpv --vo=null --ao=null".
    var label: String
    /// The command that plays `file` to the end at real time with its outputs discarded.
    var command: @Sendable (String) -> [String]
    /// Added to the environment of that command.
    var environment: [String: String] = [:]
    /// The command that prints the player's version.
    var versionCommand: [String]
    /// Which line of that output names the version (0-based).
    var versionLine = 0

    /// The own player of the backend called `name`, or nil for a backend the bench does not know.
    static func of(backend name: String, unprivileged: Unprivileged?) -> OwnPlayer? {
        switch name {
        case "mpv":
            return OwnPlayer(
                label: "mpv --vo=null --ao=null",
                command: { ["mpv", "--no-config", "--vo=null", "--ao=null", "--really-quiet", $0] },
                versionCommand: ["mpv", "--no-config", "--version"])
        case "gstreamer":
            return OwnPlayer(
                label: "gst-launch-1.0 playbin (fakesink sync=true)",
                command: { file in
                    ["gst-launch-1.0", "-q", "playbin", "uri=\(URL(fileURLWithPath: file).absoluteString)",
                     "video-sink=fakesink sync=true", "audio-sink=fakesink sync=true"]
                },
                versionCommand: ["gst-launch-1.0", "--version"], versionLine: 1)
        case "ffmpeg":
            return OwnPlayer(
                label: "ffmpeg -re -i F -f null -",
                command: { ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-re", "-i", $0, "-f", "null", "-"] },
                versionCommand: ["ffmpeg", "-version"])
        case "vlc":
            // VLC refuses to run as root: when the bench is root, run it as nobody.
            let prefix = unprivileged?.prefix ?? []
            let environment = unprivileged.map { ["HOME": $0.home] } ?? [:]
            return OwnPlayer(
                label: "cvlc --vout=dummy --aout=dummy --play-and-exit" + (unprivileged == nil ? "" : " (as nobody)"),
                command: { prefix + ["cvlc", "--quiet", "--vout=dummy", "--aout=dummy", "--play-and-exit", "--no-video-title-show", $0] },
                environment: environment,
                versionCommand: prefix + ["cvlc", "--version"])
        default:
            return nil
        }
    }

    /// The player's version line, or "unknown".
    func version() async -> String {
        guard let text = await ChildProcess.output(of: versionCommand, environment: environment) else { return "unknown" }
        let lines = text.split(separator: "\n")
        guard versionLine < lines.count else { return "unknown" }
        let words = lines[versionLine].split(separator: " ")
        // "mpv 0.35.1 Copyright ...", "ffmpeg version 5.1.9 ...", "VLC version 3.0.24 ...".
        return words.prefix(words.count > 2 && words[1] == "version" ? 3 : 2).joined(separator: " ")
    }
}

/// How to run a command as the unprivileged user `nobody` (for VLC when the bench is root).
struct Unprivileged: Sendable {
    /// `setpriv` switches user and group and then executes the command itself, so the bench
    /// still waits on (and measures) the player's own process.
    var prefix: [String] { ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] }
    /// A home folder that user may write its settings into.
    var home: String

    /// Needed only when running as root; makes the home folder.
    static func ifRoot() -> Unprivileged? {
        guard getuid() == 0 else { return nil }
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("mediaplay-bench-nobody").path
        mkdir(home, 0o700)
        chown(home, 65534, 65534)
        return Unprivileged(home: home)
    }
}

// MARK: - Series of runs

/// The figures of one configuration over its runs.
struct Series: Sendable {
    /// One value per successful run.
    var values: [Double] = []
    /// Why the configuration stopped being measured, if it did.
    var failure: String?
    /// Runs that failed without stopping the series, with the reason.
    var misses: [String] = []

    /// The median of the values, nil without any.
    var median: Double? { Statistics.median(values) }
    /// The least and the largest value, nil without any.
    var minimum: Double? { values.min() }
    var maximum: Double? { values.max() }
    /// True when the configuration ran (and did not fail).
    var isMeasured: Bool { failure == nil && !values.isEmpty }
}

/// Playback CPU, peak memory and wall time of one player configuration.
struct PlaybackSeries: Sendable {
    /// User+sys CPU seconds per second of media.
    var cpu = Series()
    /// User+sys CPU seconds per wall second from 2 s after the start to the exit (playing,
    /// without start-up).
    var steadyCPU = Series()
    /// Peak resident memory in MiB.
    var peakMiB = Series()
    /// Wall seconds from start to exit.
    var wall = Series()

    mutating func record(_ usage: ChildUsage, mediaSeconds: Double) {
        cpu.values.append(usage.cpuSeconds / mediaSeconds)
        if let steady = usage.steadyCPUPerSecond { steadyCPU.values.append(steady) }
        if usage.peakIsChildOwn {
            peakMiB.values.append(Double(usage.peakResidentKiB) / 1024)
        } else {
            peakMiB.failure = String(cFormat: "hidden by the bench's own peak (%.0f MiB)", Double(usage.spawnerPeakKiB) / 1024)
        }
        wall.values.append(usage.wallSeconds)
    }

    mutating func fail(_ reason: String) {
        cpu.failure = reason
        steadyCPU.failure = reason
        peakMiB.failure = reason
        wall.failure = reason
    }

    var failure: String? { cpu.failure }
}

/// The cost of starting `mediaplay` without playing anything.
struct StartupCost: Sendable {
    var cpuSeconds = Series()
    var peakMiB = Series()
    var wallSeconds = Series()
    /// Shared libraries mapped (every compiled-in engine's).
    var libraries = 0

    var summary: String {
        guard cpuSeconds.isMeasured else { return "not measured" }
        return String(cFormat: "%.0f ms CPU, %.0f ms wall, peak ", (cpuSeconds.median ?? 0) * 1000, (wallSeconds.median ?? 0) * 1000)
            + (peakMiB.median.map { String(cFormat: "%.1f", $0) } ?? "—") + " MiB, \(libraries) shared libraries"
    }
}

// MARK: - Whole-process measurements

/// Measurements that run players as child processes: playback CPU and peak memory, and
/// thumbnails (BenchThumbnails.swift), each against its reference command, in alternating runs.
struct ProcessMeasurements {
    /// The `mediaplay` built beside the bench, so that a release bench measures the release build.
    let mediaplay: String
    let media: BenchMedia
    let runs: Int
    let log: @Sendable (String) -> Void

    /// When the steady playback CPU starts being counted, seconds after a player's start.
    static let steadySampleAfter: TimeInterval = 2

    /// What `playback` measures: `mediaplay play` with each video output, the engine's own
    /// player, and the RGBA floor (decoding and converting to RGBA at real time, nothing else).
    enum Configuration: Int, CaseIterable, Sendable {
        case none, own, frames, floor, yuv

        /// The command-line `--video` value of a `mediaplay play` configuration.
        var video: String? {
            switch self {
            case .none: "none"
            case .frames: "frames"
            case .yuv: "yuv"
            case .own, .floor: nil
            }
        }
    }

    /// The RGBA floor: `ffmpeg -re -i F -vf format=rgba -f null -`.
    static let floorLabel = "ffmpeg -re -i F -vf format=rgba -f null -"

    /// `mediaplay play` with `.none`, `.frames` and `.yuvFrames`, the own player, and the RGBA
    /// floor, on the 1080p clip: runs alternate (.none, own, .frames, floor, .yuvFrames,
    /// .none, ...). A configuration that fails once is not run again.
    func playback(backend: String, own: OwnPlayer) async -> [Configuration: PlaybackSeries] {
        let file = media.playbackFile
        let seconds = Double(BenchMedia.playback.seconds)
        let limit = seconds * 3 + 30
        var series = [Configuration: PlaybackSeries]()
        for configuration in Configuration.allCases { series[configuration] = PlaybackSeries() }
        for round in 1...runs {
            for configuration in Configuration.allCases where series[configuration]!.failure == nil {
                let command: [String]
                var environment: [String: String] = [:]
                let name: String
                switch configuration {
                case .own:
                    command = own.command(file)
                    environment = own.environment
                    name = own.label
                case .floor:
                    command = ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-re", "-i", file,
                               "-vf", "format=rgba", "-f", "null", "-"]
                    name = Self.floorLabel
                case .none, .frames, .yuv:
                    let video = configuration.video!
                    command = [mediaplay, "play", "--backend", backend, "--audio", "null", "--video", video, "--quiet", file]
                    name = "mediaplay --video \(video)"
                }
                let usage: ChildUsage
                do {
                    usage = try await ChildProcess.run(command, environment: environment, timeLimit: limit,
                                                       sampleAfter: Self.steadySampleAfter)
                } catch {
                    series[configuration]!.fail("\(error)")
                    continue
                }
                if usage.succeeded {
                    series[configuration]!.record(usage, mediaSeconds: seconds)
                    log("  run \(round) \(name): " + String(cFormat: "%.2f CPU s (%.3f per media s; %.3f per s after %.0f s), peak %.1f MiB, %.1f s wall",
                               usage.cpuSeconds, usage.cpuSeconds / seconds, usage.steadyCPUPerSecond ?? .nan,
                               Self.steadySampleAfter, Double(usage.peakResidentKiB) / 1024, usage.wallSeconds))
                } else {
                    log("  run \(round) \(name) failed: \(usage.failureDescription)")
                    series[configuration]!.fail(usage.failureDescription)
                }
            }
        }
        return series
    }

    /// What starting the binary alone costs: `mediaplay help` (every compiled-in engine's
    /// libraries linked, no engine used), the share of each figure that is not playback.
    func startup() async -> StartupCost {
        var cost = StartupCost()
        for _ in 1...runs {
            guard let usage = try? await ChildProcess.run([mediaplay, "help"], timeLimit: 30), usage.succeeded else { break }
            cost.cpuSeconds.values.append(usage.cpuSeconds)
            cost.wallSeconds.values.append(usage.wallSeconds)
            if usage.peakIsChildOwn { cost.peakMiB.values.append(Double(usage.peakResidentKiB) / 1024) }
        }
        cost.libraries = Self.linkedLibraryCount()
        return cost
    }

    /// The shared libraries mapped by this process, which is the same binary as the children
    /// (counted before any engine is used in it).
    static func linkedLibraryCount() -> Int {
        guard let maps = readWholeFile("/proc/self/maps") else { return 0 }
        let libraries = maps.split(separator: "\n").compactMap { line -> Substring? in
            guard let file = line.split(separator: " ", omittingEmptySubsequences: true).last, file.contains(".so") else { return nil }
            return file
        }
        return Set(libraries).count
    }
}

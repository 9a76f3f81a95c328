import FoundationEssentials
import Glibc
import CommandLineSupport
import PlaybackKit

// MARK: - Statistics

/// Medians and percentiles of small samples.
enum Statistics {
    /// The median (mean of the middle two for an even count); nil when empty.
    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The nearest-rank percentile (`fraction` in 0...1); nil when empty.
    static func percentile(_ values: [Double], _ fraction: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count, max(1, rank)) - 1]
    }

    /// `a / b` when both are there and b is not zero.
    static func ratio(_ a: Double?, _ b: Double?) -> Double? {
        guard let a, let b, b > 0 else { return nil }
        return a / b
    }

    /// a - b, or nil when either is missing.
    static func difference(_ a: Double?, _ b: Double?) -> Double? {
        guard let a, let b else { return nil }
        return a - b
    }
}

// MARK: - Figures of one backend

/// Everything the bench measured for one backend.
struct BackendReport: Sendable {
    var name: String
    var engineVersion: String
    var ownPlayer: String
    var ownPlayerVersion: String
    /// Set when the backend could not be measured at all.
    var unavailable: String?

    var playNone = PlaybackSeries()
    var playFrames = PlaybackSeries()
    var playOwn = PlaybackSeries()
    /// `.yuvFrames` playback, and the RGBA floor beside it.
    var playYUV = PlaybackSeries()
    var playFloor = PlaybackSeries()
    /// Thumbnails against the ffmpeg command at three positions of two clips.
    var thumbnails = ThumbnailSweep()
    var prepare = Series()
    var prepareCold: Double?
    var pictureReadyWhenPrepared = true
    var seeks = Series()
    var seekWorstMiss: Double?
    var concurrency = ConcurrencyResult()
    var seconds = 0.0

    var cpuRatio: Double? { Statistics.ratio(playNone.cpu.median, playOwn.cpu.median) }
    var framesCPURatio: Double? { Statistics.ratio(playFrames.cpu.median, playOwn.cpu.median) }
    /// `.frames` and `.yuvFrames` playback CPU over the RGBA floor's.
    var framesFloorRatio: Double? { Statistics.ratio(playFrames.cpu.median, playFloor.cpu.median) }
    var yuvFloorRatio: Double? { Statistics.ratio(playYUV.cpu.median, playFloor.cpu.median) }
    /// Peak memory of `.frames` and `.yuvFrames` playback over the RGBA floor's, MiB.
    var framesMemoryOverFloor: Double? { Statistics.difference(playFrames.peakMiB.median, playFloor.peakMiB.median) }
    var yuvMemoryOverFloor: Double? { Statistics.difference(playYUV.peakMiB.median, playFloor.peakMiB.median) }
    /// Steady playback CPU (.none, start-up left out) over the own player's.
    var steadyCPURatio: Double? { Statistics.ratio(playNone.steadyCPU.median, playOwn.steadyCPU.median) }
    /// Peak memory of `mediaplay play` (.none) over the own player's, MiB.
    var memoryExcess: Double? { Statistics.difference(playNone.peakMiB.median, playOwn.peakMiB.median) }
    var seekP50: Double? { Statistics.percentile(seeks.values, 0.5) }
    var seekP95: Double? { Statistics.percentile(seeks.values, 0.95) }

    /// The most the adapter's playback CPU may be of its engine's own player.
    var cpuLimit: Double { name == "ffmpeg" ? 1.10 : 1.05 }
}

// MARK: - Targets

/// One target from the requirements, checked against the figures.
struct TargetCheck: Sendable {
    var backend: String
    var target: String
    var figure: String
    /// nil: not measured.
    var met: Bool?

    var verdict: String {
        switch met {
        case true?: "met"
        case false?: "MISSED"
        case nil: "not measured"
        }
    }
}

/// The targets: playback CPU ≤ 1.05× the engine's own player (the FFmpeg engine ≤ 1.10×
/// `ffmpeg -re -f null` and the lowest of the four), every engine's thumbnail ≤ 2.0× the
/// ffmpeg command in every run of the sweep (each run against the ffmpeg run beside it), the
/// FFmpeg engine's ≤ 1.0× it (the median over the sweep), peak memory ≤ the own player's +
/// 20 MiB.
func checkTargets(_ reports: [BackendReport]) -> [TargetCheck] {
    var checks: [TargetCheck] = []
    for report in reports {
        let limit = report.cpuLimit
        checks.append(TargetCheck(
            backend: report.name,
            target: String(cFormat: "playback CPU (.none) ≤ %.2f× ", limit) + report.ownPlayer,
            figure: report.cpuRatio.map { String(cFormat: "%.3f×", $0) } ?? "—",
            met: report.cpuRatio.map { $0 <= limit }))
        checks.append(TargetCheck(
            backend: report.name,
            target: "peak memory ≤ own player + 20 MiB",
            figure: report.memoryExcess.map { String(cFormat: "%+.1f MiB", $0) } ?? "—",
            met: report.memoryExcess.map { $0 <= 20 }))
    }
    for report in reports where report.unavailable == nil {
        checks.append(TargetCheck(
            backend: report.name, target: "playback CPU .frames ≤ 1.15× the RGBA floor",
            figure: report.framesFloorRatio.map { String(cFormat: "%.3f×", $0) } ?? "—",
            met: report.framesFloorRatio.map { $0 <= 1.15 }))
        checks.append(TargetCheck(
            backend: report.name, target: "peak memory .frames ≤ RGBA floor + 30 MiB",
            figure: report.framesMemoryOverFloor.map { String(cFormat: "%+.1f MiB", $0) } ?? "—",
            met: report.framesMemoryOverFloor.map { $0 <= 30 }))
        checks.append(thumbnailEveryRunCheck(report))
    }
    if let ffmpeg = reports.first(where: { $0.name == "ffmpeg" }) {
        let others = reports.filter { $0.name != "ffmpeg" }
        let measured = others.compactMap { report in report.playNone.cpu.median.map { (report.name, $0) } }
        var met: Bool?
        var figure = "—"
        if let own = ffmpeg.playNone.cpu.median {
            let lowestOther = measured.min { $0.1 < $1.1 }
            figure = String(cFormat: "%.3f", own) + (lowestOther.map { " vs \($0.0) " + String(cFormat: "%.3f", $0.1) } ?? "")
            // With no other adapter measured (a one-engine run) there is nothing to compare.
            met = measured.isEmpty ? nil : measured.allSatisfy { own <= $0.1 }
            if measured.isEmpty {
                figure += " (no other adapter measured in this run)"
            } else if measured.count < others.count {
                figure += " (\(measured.count) of \(others.count) others measured)"
            }
        }
        checks.append(TargetCheck(backend: "ffmpeg", target: "lowest playback CPU (.none) of the adapters", figure: figure, met: met))
        let median = ffmpeg.thumbnails.medianPairedRatio
        checks.append(TargetCheck(
            backend: "ffmpeg", target: "thumbnail median ≤ 1.0× \(ThumbnailSweep.referenceLabel) over the sweep",
            figure: median.map { String(cFormat: "%.3f× (median of %ld paired runs)", $0, ffmpeg.thumbnails.pairedRatios.count) } ?? "—",
            met: median.map { $0 <= 1.0 }))
    }
    return checks
}

/// "thumbnail ≤ 2.0× ffmpeg in every run": the worst paired ratio of the backend's sweep, with
/// the position it came from and the runs that failed.
func thumbnailEveryRunCheck(_ report: BackendReport) -> TargetCheck {
    let sweep = report.thumbnails
    var figure = "—"
    if let worst = sweep.worstPairedRatio,
       let point = sweep.points.first(where: { $0.worstPairedRatio == worst }) {
        figure = String(cFormat: "worst %.3f×", worst) + " (\(point.clip.shortName) at \(point.position.summary)), "
            + String(cFormat: "median %.3f× over %ld paired runs", sweep.medianPairedRatio ?? .nan, sweep.pairedRatios.count)
    }
    let unmeasured = sweep.points.filter { $0.pairedRatios.isEmpty }
    if !unmeasured.isEmpty {
        figure += "; not measured at " + unmeasured.map { "\($0.clip.shortName) \($0.position.summary)" }.joined(separator: ", ")
    }
    if sweep.oursMissed > 0 { figure += "; \(sweep.oursMissed) of our runs failed" }
    return TargetCheck(
        backend: report.name,
        target: String(cFormat: "thumbnail ≤ %.1f× ffmpeg in every run", ThumbnailSweep.ratioLimit),
        figure: figure, met: sweep.everyRunWithinLimit)
}

// MARK: - Machine

/// The machine and build the figures come from.
struct MachineInfo: Sendable {
    var processor: String
    var cores: Int
    var memoryGiB: Double
    var system: String
    var kernel: String
    var build: String
    var date: String
    /// The 1-minute load average when the bench started and when it ended (the machine may
    /// be shared).
    var loadAtStart: Double = 0
    var loadAtEnd: Double = 0

    /// The 1-minute load average now.
    static func loadAverage() -> Double {
        Double(readWholeFile("/proc/loadavg")?.split(separator: " ").first ?? "") ?? 0
    }

    static func current() -> MachineInfo {
        let cpuinfo = readWholeFile("/proc/cpuinfo") ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingBlanks() } ?? "unknown"
        let release = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? ""
        let pretty = release.split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
            .map { String($0.dropFirst("PRETTY_NAME=".count)).trimming { $0 == "\"" } } ?? "Linux"
        var names = utsname()
        uname(&names)
        let kernel = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        #if DEBUG
        let build = "debug build (build with -c release for real figures)"
        #else
        let build = "release build"
        #endif
        return MachineInfo(
            processor: model, cores: ProcessInfo.processInfo.activeProcessorCount,
            memoryGiB: Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824,
            system: pretty, kernel: kernel, build: build, date: Date().formatted(.iso8601))
    }

    var summary: String {
        "\(processor), \(cores) cores, \(String(cFormat: "%.1f", memoryGiB)) GiB RAM, \(system) (Linux \(kernel)), \(build); "
            + String(cFormat: "load average %.2f at the start, %.2f at the end", loadAtStart, loadAtEnd)
    }
}

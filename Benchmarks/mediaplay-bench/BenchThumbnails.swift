import FoundationEssentials
import Glibc
import CommandLineSupport
import PlaybackKit

// MARK: - Where the thumbnails are taken

/// A time in a clip at which the sweep takes a thumbnail, and what kind of time it is.
struct ThumbnailPosition: Sendable {
    /// The three kinds of time the sweep covers in every clip.
    enum Kind: String, Sendable, CaseIterable {
        case nearStart = "near the start"
        case midGOP = "mid-GOP"
        case nearEnd = "near the end"

        /// The name the JSON output uses.
        var key: String {
            switch self {
            case .nearStart: "nearStart"
            case .midGOP: "midGOP"
            case .nearEnd: "nearEnd"
            }
        }
    }

    var kind: Kind
    /// Seconds from the start of the clip (the `--at` and `-ss` value).
    var seconds: Double

    /// `11 s (mid-GOP)`.
    var summary: String { String(cFormat: "%g s", seconds) + " (\(kind.rawValue))" }
}

extension BenchClip {
    /// The sweep's three positions in this clip, each costing a thumbnail something different:
    /// - near the start, 0.5 s: the first GOP, a few pictures after the first keyframe; mostly
    ///   what opening the file and starting the decoder cost, with no real seek.
    /// - mid-GOP: halfway between the keyframe at or before the middle of the clip and the next
    ///   one (11 s of the 20 s clip with 2 s GOPs, 12.5 s of the 25 s clip with 5 s GOPs): a
    ///   seek into the body of the file that lands as far from both keyframes as it can, so half
    ///   a GOP of pictures must be decoded and dropped before the one asked for.
    /// - near the end, 1 s before the end: still about 30 pictures before the last one (asking for the
    ///   very last picture tests the end of the stream, not the thumbnail), a seek across most
    ///   of the file into its last GOP (1 s after the last keyframe in the 1080p clip, 4 s in
    ///   the long-GOP clip, the most decoding of the sweep).
    var thumbnailPositions: [ThumbnailPosition] {
        let length = Double(seconds)
        let gop = Double(gopSeconds)
        let keyframeBeforeMiddle = (length / 2 / gop).rounded(.down) * gop
        return [
            ThumbnailPosition(kind: .nearStart, seconds: 0.5),
            ThumbnailPosition(kind: .midGOP, seconds: keyframeBeforeMiddle + gop / 2),
            ThumbnailPosition(kind: .nearEnd, seconds: length - 1),
        ]
    }
}

// MARK: - Figures

/// Every run of the sweep at one position of one clip: our thumbnails and the ffmpeg command's.
struct ThumbnailPoint: Sendable {
    var clip: BenchClip
    var position: ThumbnailPosition
    /// Wall seconds of `mediaplay thumbnail` and of the ffmpeg command, one value per run that
    /// wrote a PNG.
    var ours = Series()
    var ffmpeg = Series()
    /// CPU seconds (user + system) of the same runs: less sensitive to other work on the machine.
    var oursCPU = Series()
    var ffmpegCPU = Series()
    /// Our wall seconds over the ffmpeg command's in the same round (the two runs side by
    /// side), for each round in which both wrote a PNG, in round order.
    var pairedRatios: [Double] = []
    /// The same for CPU seconds.
    var pairedCPURatios: [Double] = []

    /// Our median wall time over the ffmpeg command's.
    var medianRatio: Double? { Statistics.ratio(ours.median, ffmpeg.median) }
    /// The largest of the paired ratios: the slowest round relative to its ffmpeg run.
    var worstPairedRatio: Double? { pairedRatios.max() }
    /// Our median CPU time over the ffmpeg command's.
    var medianCPURatio: Double? { Statistics.ratio(oursCPU.median, ffmpegCPU.median) }
    /// True when every paired round is within `limit`; nil when no round was paired.
    func everyRunWithin(_ limit: Double) -> Bool? {
        worstPairedRatio.map { $0 <= limit }
    }
}

/// The thumbnail sweep of one backend: every clip and position, and the figures over all.
struct ThumbnailSweep: Sendable {
    /// The most a thumbnail may take of the ffmpeg command's time, in every run.
    static let ratioLimit = 2.0
    /// Runs of each side at each position: at least this many, whatever `--runs` says.
    static let minimumRuns = 7
    /// The reference command, as the tables name it.
    static let referenceLabel = "ffmpeg -ss T -i F -frames:v 1"

    /// Runs of each side at each position that were asked for.
    var runs = 0
    var points: [ThumbnailPoint] = []
    /// Wall seconds the whole sweep took.
    var seconds = 0.0

    /// Every paired ratio of the sweep.
    var pairedRatios: [Double] { points.flatMap(\.pairedRatios) }
    /// The median of every paired ratio of the sweep (the runs of all positions together).
    var medianPairedRatio: Double? { Statistics.median(pairedRatios) }
    /// The largest paired ratio of the sweep: what "in every run" is checked with.
    var worstPairedRatio: Double? { pairedRatios.max() }
    /// The median and the largest paired ratio of CPU seconds.
    var medianPairedCPURatio: Double? { Statistics.median(points.flatMap(\.pairedCPURatios)) }
    var worstPairedCPURatio: Double? { points.flatMap(\.pairedCPURatios).max() }
    /// Our runs that failed (wrote no PNG), over the whole sweep.
    var oursMissed: Int { points.reduce(0) { $0 + $1.ours.misses.count } }
    /// The ffmpeg command's runs that failed.
    var ffmpegMissed: Int { points.reduce(0) { $0 + $1.ffmpeg.misses.count } }
    /// True when the sweep ran (at least one position has a paired round).
    var isMeasured: Bool { !pairedRatios.isEmpty }

    /// Whether every paired round is within `ratioLimit`: false as soon as one is over; nil
    /// when a position has no paired round at all (that position was not measured).
    var everyRunWithinLimit: Bool? {
        if let worst = worstPairedRatio, worst > Self.ratioLimit { return false }
        guard !points.isEmpty, points.allSatisfy({ !$0.pairedRatios.isEmpty }) else { return nil }
        return true
    }

    /// `1.31× (worst 1.62×)`, or a dash when nothing was paired.
    var ratioSummary: String {
        guard let median = medianPairedRatio, let worst = worstPairedRatio else { return "—" }
        return String(cFormat: "%.2f× (worst %.2f×)", median, worst)
    }

    /// `2 clips × 3 positions × 7 runs`.
    var shape: String {
        let clips = Set(points.map(\.clip.fileName)).count
        let positions = clips == 0 ? 0 : points.count / clips
        return "\(clips) clips × \(positions) positions × \(runs) runs"
    }
}

// MARK: - Measuring

extension ProcessMeasurements {
    /// The runs of each side the sweep makes at each position: `--runs`, but never fewer than
    /// `ThumbnailSweep.minimumRuns`.
    static func thumbnailRuns(runs: Int) -> Int { max(ThumbnailSweep.minimumRuns, runs) }

    /// A side that fails this many runs at a position before any succeeds is not run there again.
    static let thumbnailFailuresBeforeGivingUp = 3

    /// Wall seconds a thumbnail process may take before it is killed (they take about 0.2 to
    /// 1 s).
    static let thumbnailTimeLimit: TimeInterval = 30

    /// `mediaplay thumbnail --backend B --at T F -o OUT.png` against
    /// `ffmpeg -ss T -i F -frames:v 1 OUT.png`, whole processes, at every position of
    /// `BenchMedia.thumbnailClips`, `runs` rounds. Each round visits every position, ours then
    /// ffmpeg's, so a passing disturbance on the machine touches one round of many positions
    /// rather than many rounds of one, and each of our runs has its ffmpeg run right after it.
    /// A run counts only if it wrote a non-empty PNG; a failed run is noted in the series'
    /// misses. A side that fails its first `thumbnailFailuresBeforeGivingUp` runs at a position
    /// is not run there again.
    func thumbnailSweep(backend: String, runs: Int, folder: URL) async -> ThumbnailSweep {
        let started = monotonicSeconds()
        var sweep = ThumbnailSweep(runs: runs)
        for clip in BenchMedia.thumbnailClips {
            for position in clip.thumbnailPositions {
                sweep.points.append(ThumbnailPoint(clip: clip, position: position))
            }
        }
        for round in 1...runs {
            for index in sweep.points.indices {
                var point = sweep.points[index]
                guard point.ours.failure == nil, point.ffmpeg.failure == nil else { continue }
                let file = media.path(of: point.clip)
                let stamp = String(cFormat: "%g", point.position.seconds)
                let place = "\(point.clip.shortName) at \(point.position.summary)"
                var oursRun: ChildUsage?
                var ffmpegRun: ChildUsage?
                for side in 0..<2 {
                    let output = folder.appendingPathComponent("thumb-\(backend)-\(index)-\(side)-\(round).png").path
                    let command = side == 0
                        ? [mediaplay, "thumbnail", "--backend", backend, "--at", stamp, file, "-o", output]
                        : ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-ss", stamp, "-i", file, "-frames:v", "1", output]
                    switch await Self.runThumbnail(command, output: output) {
                    case .success(let usage):
                        if side == 0 {
                            point.ours.values.append(usage.wallSeconds)
                            point.oursCPU.values.append(usage.cpuSeconds)
                            oursRun = usage
                        } else {
                            point.ffmpeg.values.append(usage.wallSeconds)
                            point.ffmpegCPU.values.append(usage.cpuSeconds)
                            ffmpegRun = usage
                        }
                    case .failure(let failure):
                        log("  thumbnail round \(round) \(side == 0 ? "mediaplay" : "ffmpeg"), \(place), failed: \(failure.reason)")
                        if side == 0 { point.ours.misses.append(failure.reason) } else { point.ffmpeg.misses.append(failure.reason) }
                    }
                }
                if let oursRun, let ffmpegRun {
                    if let ratio = Statistics.ratio(oursRun.wallSeconds, ffmpegRun.wallSeconds) { point.pairedRatios.append(ratio) }
                    if let ratio = Statistics.ratio(oursRun.cpuSeconds, ffmpegRun.cpuSeconds) { point.pairedCPURatios.append(ratio) }
                    log("  thumbnail round \(round), \(place): " + String(cFormat: "%.3f s against ffmpeg %.3f s (%.2f×)",
                        oursRun.wallSeconds, ffmpegRun.wallSeconds, oursRun.wallSeconds / max(ffmpegRun.wallSeconds, 1e-9)))
                }
                Self.giveUpIfNeverSucceeded(&point.ours)
                Self.giveUpIfNeverSucceeded(&point.ffmpeg)
                sweep.points[index] = point
            }
        }
        for index in sweep.points.indices {
            if sweep.points[index].ours.values.isEmpty { sweep.points[index].ours.failure = sweep.points[index].ours.misses.last }
            if sweep.points[index].ffmpeg.values.isEmpty { sweep.points[index].ffmpeg.failure = sweep.points[index].ffmpeg.misses.last }
        }
        sweep.seconds = monotonicSeconds() - started
        return sweep
    }

    /// Why one thumbnail run did not count.
    struct ThumbnailFailure: Error {
        var reason: String
    }

    /// Runs one thumbnail command; it counts when it exits with status 0 having written a
    /// non-empty PNG at `output` (removed afterwards).
    static func runThumbnail(_ command: [String], output: String) async -> Result<ChildUsage, ThumbnailFailure> {
        unlink(output)
        defer { unlink(output) }
        do {
            let usage = try await ChildProcess.run(command, timeLimit: thumbnailTimeLimit)
            var status = stat()
            let size = stat(output, &status) == 0 ? Int(status.st_size) : 0
            if !usage.succeeded { return .failure(ThumbnailFailure(reason: usage.failureDescription)) }
            if size == 0 {
                let tail = usage.errorTail.split(separator: "\n").suffix(2).joined(separator: " | ")
                return .failure(ThumbnailFailure(reason: "exit status 0 but no PNG at \(output)" + (tail.isEmpty ? "" : ": " + tail)))
            }
            return .success(usage)
        } catch {
            return .failure(ThumbnailFailure(reason: "\(error)"))
        }
    }

    /// Marks a side that has failed `thumbnailFailuresBeforeGivingUp` runs without one success
    /// as failed, so that it is not run again at that position.
    static func giveUpIfNeverSucceeded(_ series: inout Series) {
        if series.values.isEmpty, series.misses.count >= thumbnailFailuresBeforeGivingUp {
            series.failure = series.misses.last
        }
    }
}

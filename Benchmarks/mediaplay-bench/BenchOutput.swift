import FoundationEssentials
import CommandLineSupport
import PlaybackKit

/// Everything one bench run produced, ready to print.
struct BenchResult: Sendable {
    var machine: MachineInfo
    var runs: Int
    var command: String
    var reports: [BackendReport]
    var targets: [TargetCheck]
    var startup: StartupCost
    var mediaSeconds: Double
    var totalSeconds: Double
}

// MARK: - Rows

/// One line of the table.
private struct Row {
    var backend: String
    var metric: String
    var ours: String
    var reference: String
    var ratio: String
    var target: String
    var met: String
}

private func ms(_ seconds: Double?) -> String { seconds.map { String(cFormat: "%.0f ms", $0 * 1000) } ?? "—" }
private func number(_ value: Double?, _ format: String) -> String { value.map { String(cFormat: format, $0) } ?? "—" }

/// A median, or the reason it is missing.
private func figure(_ series: Series, _ format: String) -> String {
    if let failure = series.failure, series.values.isEmpty { return "failed: " + shorten(failure) }
    var text = number(series.median, format)
    if !series.misses.isEmpty {
        text += " (\(series.misses.count) run\(series.misses.count == 1 ? "" : "s") failed: \(shorten(series.misses[0], to: 50)))"
    }
    return text
}

private func shorten(_ text: String, to limit: Int = 70) -> String {
    let line = text.replacing("\n", with: " ")
    return line.count <= limit ? line : String(line.prefix(limit - 1)) + "…"
}

private func rows(_ report: BackendReport, targets: [TargetCheck]) -> [Row] {
    let name = report.name
    if let unavailable = report.unavailable {
        return [Row(backend: name, metric: "unavailable", ours: shorten(unavailable), reference: "", ratio: "", target: "", met: "")]
    }
    func verdict(_ prefix: String) -> String {
        targets.first { $0.backend == name && $0.target.hasPrefix(prefix) }?.verdict ?? "—"
    }
    let own = "\(report.ownPlayer)"
    var list: [Row] = []
    list.append(Row(backend: name, metric: "playback CPU .none (CPU s per media s)",
                    ours: figure(report.playNone.cpu, "%.3f"), reference: figure(report.playOwn.cpu, "%.3f") + " " + own,
                    ratio: number(report.cpuRatio, "%.3f×"), target: String(cFormat: "≤ %.2f×", report.cpuLimit),
                    met: verdict("playback CPU")))
    list.append(Row(backend: name, metric: String(cFormat: "playback CPU .none, steady (CPU s per s, from %.0f s to the end)", ProcessMeasurements.steadySampleAfter),
                    ours: figure(report.playNone.steadyCPU, "%.3f"), reference: figure(report.playOwn.steadyCPU, "%.3f"),
                    ratio: number(report.steadyCPURatio, "%.3f×"), target: "—", met: "—"))
    list.append(Row(backend: name, metric: "playback CPU .frames (RGBA to a handler)",
                    ours: figure(report.playFrames.cpu, "%.3f"), reference: figure(report.playOwn.cpu, "%.3f"),
                    ratio: number(report.framesCPURatio, "%.3f×"), target: "—", met: "—"))
    let floor = ProcessMeasurements.floorLabel
    list.append(Row(backend: name, metric: "playback CPU .frames vs the RGBA floor",
                    ours: figure(report.playFrames.cpu, "%.3f"), reference: figure(report.playFloor.cpu, "%.3f") + " " + floor,
                    ratio: number(report.framesFloorRatio, "%.3f×"), target: "≤ 1.15×", met: verdict("playback CPU .frames")))
    list.append(Row(backend: name, metric: "playback CPU .yuvFrames (the decoder's 4:2:0 to a handler) vs the RGBA floor",
                    ours: figure(report.playYUV.cpu, "%.3f"), reference: figure(report.playFloor.cpu, "%.3f"),
                    ratio: number(report.yuvFloorRatio, "%.3f×"), target: "—", met: "—"))
    list.append(Row(backend: name, metric: "peak memory .none (MiB)",
                    ours: figure(report.playNone.peakMiB, "%.1f"), reference: figure(report.playOwn.peakMiB, "%.1f"),
                    ratio: number(report.memoryExcess, "%+.1f MiB"), target: "≤ +20 MiB", met: verdict("peak memory")))
    let framesExcess = report.playFrames.peakMiB.median.flatMap { ours in report.playOwn.peakMiB.median.map { ours - $0 } }
    list.append(Row(backend: name, metric: "peak memory .frames (MiB)",
                    ours: figure(report.playFrames.peakMiB, "%.1f"), reference: figure(report.playOwn.peakMiB, "%.1f"),
                    ratio: number(framesExcess, "%+.1f MiB"), target: "—", met: "—"))
    list.append(Row(backend: name, metric: "peak memory .frames vs the RGBA floor (MiB)",
                    ours: figure(report.playFrames.peakMiB, "%.1f"), reference: figure(report.playFloor.peakMiB, "%.1f"),
                    ratio: number(report.framesMemoryOverFloor, "%+.1f MiB"), target: "≤ +30 MiB", met: verdict("peak memory .frames")))
    list.append(Row(backend: name, metric: "peak memory .yuvFrames vs the RGBA floor (MiB)",
                    ours: figure(report.playYUV.peakMiB, "%.1f"), reference: figure(report.playFloor.peakMiB, "%.1f"),
                    ratio: number(report.yuvMemoryOverFloor, "%+.1f MiB"), target: "—", met: "—"))
    let sweep = report.thumbnails
    list.append(Row(backend: name, metric: "thumbnail sweep, whole process (s wall, fastest–slowest run; \(sweep.shape)): median (worst) paired ratio",
                    ours: sweep.range(ours: true), reference: sweep.range(ours: false) + " " + ThumbnailSweep.referenceLabel,
                    ratio: sweep.ratioSummary, target: String(cFormat: "≤ %.2f× every run", ThumbnailSweep.ratioLimit),
                    met: verdict("thumbnail ≤")))
    if name == "ffmpeg" {
        list.append(Row(backend: name, metric: "thumbnail sweep, median paired ratio (s wall)",
                        ours: "", reference: "", ratio: number(sweep.medianPairedRatio, "%.3f×"),
                        target: "≤ 1.00×", met: verdict("thumbnail median")))
    }
    let cpuRatio = sweep.medianPairedCPURatio.map { median in
        String(cFormat: "%.2f×", median) + (sweep.worstPairedCPURatio.map { String(cFormat: " (worst %.2f×)", $0) } ?? "")
    } ?? "—"
    list.append(Row(backend: name, metric: "thumbnail sweep, whole process (CPU s, lowest–highest median of a position): median (worst) paired ratio",
                    ours: sweep.cpuMedianRange(ours: true), reference: sweep.cpuMedianRange(ours: false),
                    ratio: cpuRatio, target: "—", met: "—"))
    var prepared = report.prepare.values.isEmpty && report.prepare.failure != nil
        ? "failed: " + shorten(report.prepare.failure!) : ms(report.prepare.median)
    if let cold = report.prepareCold { prepared += " (first \(ms(cold)))" }
    if !report.pictureReadyWhenPrepared { prepared += " (no picture when prepared!)" }
    list.append(Row(backend: name, metric: "time to prepared, 1080p (median)", ours: prepared, reference: "", ratio: "", target: "", met: ""))
    var seek = report.seeks.values.isEmpty && report.seeks.failure != nil
        ? "failed: " + shorten(report.seeks.failure!) : "\(ms(report.seekP50)) / \(ms(report.seekP95))"
    if let miss = report.seekWorstMiss { seek += String(cFormat: " (worst miss %.0f ms)", miss * 1000) }
    if report.seeks.failure != nil, !report.seeks.values.isEmpty { seek += " (then failed: \(shorten(report.seeks.failure!, to: 40)))" }
    list.append(Row(backend: name, metric: "accurate seek p50 / p95, 720p 60 s (20 seeks)", ours: seek, reference: "", ratio: "", target: "", met: ""))
    let concurrency = report.concurrency
    var players: String
    if let failure = concurrency.failure {
        players = "failed: " + shorten(failure)
    } else if concurrency.maxPlayers == 0, concurrency.firstFailure == nil {
        players = "—"  // not measured (--pictures)
    } else {
        players = "\(concurrency.maxPlayers)"
        if let failed = concurrency.firstFailure {
            players += " (\(failed.players) failed: \(shorten(failed.reason ?? "", to: 50)))"
        } else if concurrency.cappedByTime {
            players += " or more (time budget)"
        } else if concurrency.maxPlayers == ConcurrencyMeasurement.largestStep {
            players += " or more (largest step)"
        }
    }
    list.append(Row(backend: name, metric: "concurrent 480p players at real time", ours: players, reference: "", ratio: "", target: "", met: ""))
    return list
}

// MARK: - Text and Markdown

extension BenchResult {
    private var header: [String] {
        [
            "PlaybackKit bench, \(machine.date)",
            "machine: \(machine.summary)",
            "media: \(BenchMedia.playback.summary) (playback, memory, prepare, thumbnails); \(BenchMedia.longGOP.summary) (thumbnails); \(BenchMedia.seeking.summary) (seeks); \(BenchMedia.concurrency.summary) (concurrency)",
            "runs: \(runs) of each configuration, alternating; medians; thumbnails: \(ProcessMeasurements.thumbnailRuns(runs: runs)) runs of each side at each position. Command: \(command)",
            "mediaplay start-up alone (mediaplay help): \(startup.summary)",
        ]
    }

    /// A plain-text table.
    var text: String {
        let all = reports.flatMap { rows($0, targets: targets) }
        let titles = Row(backend: "backend", metric: "measure", ours: "PlaybackKit", reference: "reference", ratio: "ratio", target: "target", met: "met")
        let columns: [(Row) -> String] = [\.backend, \.metric, \.ours, \.reference, \.ratio, \.target, \.met]
        let widths = columns.map { column in ([titles] + all).map { column($0).count }.max() ?? 0 }
        func line(_ row: Row) -> String {
            zip(columns, widths).map { column, width in
                let cell = column(row)
                return cell + String(repeating: " ", count: max(0, width - cell.count))
            }.joined(separator: "  ").trimmingBlanks()
        }
        var lines = header + [""]
        lines.append(line(titles))
        var previous = ""
        for row in all {
            if row.backend != previous, previous != "" { lines.append("") }
            previous = row.backend
            lines.append(line(row))
        }
        lines.append(contentsOf: thumbnailSweepText)
        lines.append("")
        lines.append("targets:")
        for check in targets {
            lines.append("  [\(check.verdict)] \(check.backend): \(check.target): \(check.figure)")
        }
        lines.append(String(cFormat: "bench took %.0f s (media generation %.0f s)", totalSeconds, mediaSeconds))
        return lines.joined(separator: "\n")
    }

    /// The same table in Markdown, for the README.
    var markdown: String {
        let all = reports.flatMap { rows($0, targets: targets) }
        var lines = header.map { $0 + "  " }
        lines.append("")
        lines.append("| backend | measure | PlaybackKit | reference | ratio | target | met |")
        lines.append("|---|---|---|---|---|---|---|")
        for row in all {
            let cells = [row.backend, row.metric, row.ours, row.reference, row.ratio, row.target, row.met]
                .map { $0.replacing("|", with: "\\|") }
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        lines.append("")
        lines.append(contentsOf: summaryTable)
        lines.append(contentsOf: thumbnailSweepMarkdown)
        lines.append("")
        for check in targets {
            lines.append("- **\(check.verdict)** \(check.backend): \(check.target): \(check.figure)")
        }
        return lines.joined(separator: "\n")
    }

    /// One line per backend with the ratios and the in-process figures.
    private var summaryTable: [String] {
        var lines = [
            "| backend | CPU .none vs own player | steady CPU .none vs own | CPU .frames vs own player | CPU .frames vs RGBA floor | CPU .yuvFrames vs RGBA floor | peak .frames / .yuvFrames vs floor | peak memory vs own player | thumbnail vs ffmpeg | prepared | seek p50 / p95 | 480p players |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for report in reports where report.unavailable == nil {
            let cells = [
                report.name,
                number(report.cpuRatio, "%.3f×"),
                number(report.steadyCPURatio, "%.3f×"),
                number(report.framesCPURatio, "%.3f×"),
                number(report.framesFloorRatio, "%.3f×"),
                number(report.yuvFloorRatio, "%.3f×"),
                number(report.framesMemoryOverFloor, "%+.1f") + " / " + number(report.yuvMemoryOverFloor, "%+.1f MiB"),
                number(report.memoryExcess, "%+.1f MiB"),
                report.thumbnails.ratioSummary,
                ms(report.prepare.median),
                "\(ms(report.seekP50)) / \(ms(report.seekP95))",
                report.concurrency.failure == nil && report.concurrency.maxPlayers > 0 ? "\(report.concurrency.maxPlayers)" : "—",
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines
    }
}

// MARK: - JSON

extension BenchResult {
    /// Every figure, raw values included.
    var json: String {
        func series(_ s: Series) -> [String: Any] { s.jsonObject }
        func playback(_ p: PlaybackSeries) -> [String: Any] {
            ["cpuSecondsPerMediaSecond": series(p.cpu), "steadyCPUSecondsPerSecond": series(p.steadyCPU),
             "peakMiB": series(p.peakMiB), "wallSeconds": series(p.wall)]
        }
        let backends: [[String: Any]] = reports.map { report in
            var object: [String: Any] = [
                "name": report.name, "engineVersion": report.engineVersion,
                "ownPlayer": report.ownPlayer, "ownPlayerVersion": report.ownPlayerVersion,
                "seconds": report.seconds,
            ]
            if let unavailable = report.unavailable {
                object["unavailable"] = unavailable
                return object
            }
            object["playback"] = [
                "none": playback(report.playNone), "frames": playback(report.playFrames), "ownPlayer": playback(report.playOwn),
                "yuvFrames": playback(report.playYUV), "rgbaFloor": playback(report.playFloor),
                "framesFloorRatio": report.framesFloorRatio as Any, "yuvFloorRatio": report.yuvFloorRatio as Any,
                "cpuRatio": report.cpuRatio as Any, "steadyCPURatio": report.steadyCPURatio as Any,
                "framesCPURatio": report.framesCPURatio as Any,
                "memoryExcessMiB": report.memoryExcess as Any,
            ]
            object["thumbnail"] = report.thumbnails.jsonObject
            object["timeToPrepared"] = [
                "seconds": series(report.prepare), "firstSeconds": report.prepareCold as Any,
                "pictureReady": report.pictureReadyWhenPrepared,
            ]
            object["accurateSeek"] = [
                "seconds": series(report.seeks), "p50": report.seekP50 as Any, "p95": report.seekP95 as Any,
                "worstMissSeconds": report.seekWorstMiss as Any, "seed": InProcessMeasurements.seekSeed,
            ]
            object["concurrency"] = [
                "maxPlayers": report.concurrency.maxPlayers,
                "failure": report.concurrency.failure as Any,
                "cappedByTime": report.concurrency.cappedByTime,
                "steps": report.concurrency.steps.map { step -> [String: Any] in
                    ["players": step.players, "passed": step.passed, "worstDriftSeconds": step.worstDrift,
                     "worstFrameShare": step.worstFrameShare, "reason": step.reason as Any, "seconds": step.seconds]
                },
            ]
            return object
        }
        let object: [String: Any] = [
            "date": machine.date,
            "machine": [
                "processor": machine.processor, "cores": machine.cores, "memoryGiB": machine.memoryGiB,
                "system": machine.system, "kernel": machine.kernel, "build": machine.build,
                "loadAverageAtStart": machine.loadAtStart, "loadAverageAtEnd": machine.loadAtEnd,
            ],
            "command": command,
            "runs": runs,
            "thumbnailRuns": ProcessMeasurements.thumbnailRuns(runs: runs),
            "media": BenchMedia.allClips.map {
                ["label": $0.label, "width": $0.width, "height": $0.height, "fps": $0.framesPerSecond,
                 "seconds": $0.seconds, "gopSeconds": $0.gopSeconds, "file": $0.fileName]
            },
            "backends": backends,
            "targets": targets.map { check -> [String: Any] in
                ["backend": check.backend, "target": check.target, "figure": check.figure, "met": check.met as Any]
            },
            "startup": [
                "cpuSeconds": series(startup.cpuSeconds), "peakMiB": series(startup.peakMiB),
                "wallSeconds": series(startup.wallSeconds), "sharedLibraries": startup.libraries,
            ],
            "mediaGenerationSeconds": mediaSeconds,
            "totalSeconds": totalSeconds,
        ]
        return (try? JSONValue(object).text(pretty: true)) ?? "{}"
    }
}

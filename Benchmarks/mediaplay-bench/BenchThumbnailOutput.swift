import FoundationEssentials
import CommandLineSupport
import PlaybackKit

// MARK: - The sweep's tables

extension ThumbnailSweep {
    /// The column titles of the sweep's table.
    static let tableTitles = [
        "clip", "position", "ours s min / med / max", "ffmpeg s min / med / max",
        "median ratio", "worst paired ratio", String(cFormat: "every run ≤ %.1f×", ratioLimit),
        "CPU s ours / ffmpeg (medians)",
    ]

    /// One row per clip and position, cells in the order of `tableTitles`.
    var tableRows: [[String]] {
        points.map { point in
            let within = point.everyRunWithin(Self.ratioLimit)
            return [
                point.clip.shortName,
                point.position.summary,
                Self.spread(point.ours),
                Self.spread(point.ffmpeg),
                point.medianRatio.map { String(cFormat: "%.2f×", $0) } ?? "—",
                point.worstPairedRatio.map { String(cFormat: "%.2f×", $0) } ?? "—",
                within.map { $0 ? "yes" : "NO" } ?? "—",
                (point.oursCPU.median.map { String(cFormat: "%.3f", $0) } ?? "—") + " / "
                    + (point.ffmpegCPU.median.map { String(cFormat: "%.3f", $0) } ?? "—"),
            ]
        }
    }

    /// The line above a backend's table: what was run and how long it took.
    func tableCaption(backend: String) -> String {
        "thumbnail sweep, \(backend): `mediaplay thumbnail --backend \(backend) --at T F -o x.png` against `\(Self.referenceLabel) x.png`, "
            + "\(runs) runs of each at each position, alternating, each run paired with the ffmpeg run after it; "
            + String(cFormat: "wall seconds; took %.0f s", seconds)
    }

    /// `0.201 / 0.215 / 0.260`, with the failed runs after it, or why the side has no figure.
    static func spread(_ series: Series) -> String {
        if series.values.isEmpty { return series.failure.map { "failed: " + clipped($0) } ?? "—" }
        var text = String(cFormat: "%.3f / %.3f / %.3f", series.minimum ?? .nan, series.median ?? .nan, series.maximum ?? .nan)
        if !series.misses.isEmpty { text += " (\(series.misses.count) failed: \(clipped(series.misses[0])))" }
        if let failure = series.failure { text += " (stopped: \(clipped(failure)))" }
        return text
    }

    /// The fastest and slowest wall seconds of one side over the whole sweep, `0.201–0.845`.
    func range(ours: Bool) -> String {
        let values = points.flatMap { ours ? $0.ours.values : $0.ffmpeg.values }
        guard let low = values.min(), let high = values.max() else { return "—" }
        let missed = ours ? oursMissed : ffmpegMissed
        return String(cFormat: "%.3f–%.3f", low, high) + (missed > 0 ? " (\(missed) failed)" : "")
    }

    /// The lowest and highest of the positions' median CPU seconds of one side, `0.25–0.61`.
    func cpuMedianRange(ours: Bool) -> String {
        let medians = points.compactMap { ours ? $0.oursCPU.median : $0.ffmpegCPU.median }
        guard let low = medians.min(), let high = medians.max() else { return "—" }
        return String(cFormat: "%.3f–%.3f", low, high)
    }

    /// A failure reason on one line, cut to fit a cell.
    private static func clipped(_ text: String) -> String {
        let line = text.replacing("\n", with: " ")
        return line.count <= 50 ? line : String(line.prefix(49)) + "…"
    }
}

/// Rows of cells as plain text, each column padded to its widest cell.
func alignedTable(_ rows: [[String]]) -> [String] {
    let columns = rows.map(\.count).max() ?? 0
    let widths = (0..<columns).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
    return rows.map { row in
        row.enumerated().map { column, cell in
            cell + String(repeating: " ", count: max(0, widths[column] - cell.count))
        }.joined(separator: "  ").trimmingBlanks()
    }
}

/// A Markdown table with `titles` as its head.
func markdownTable(titles: [String], rows: [[String]]) -> [String] {
    func line(_ cells: [String]) -> String {
        "| " + cells.map { $0.replacing("|", with: "\\|") }.joined(separator: " | ") + " |"
    }
    return [line(titles), "|" + String(repeating: "---|", count: titles.count)] + rows.map(line)
}

extension BenchResult {
    /// Each measured backend's sweep as a plain-text table under its caption.
    var thumbnailSweepText: [String] {
        reports.filter { $0.unavailable == nil && !$0.thumbnails.points.isEmpty }.flatMap { report in
            ["", report.thumbnails.tableCaption(backend: report.name)]
                + alignedTable([ThumbnailSweep.tableTitles] + report.thumbnails.tableRows)
        }
    }

    /// Each measured backend's sweep as a Markdown table under its caption.
    var thumbnailSweepMarkdown: [String] {
        reports.filter { $0.unavailable == nil && !$0.thumbnails.points.isEmpty }.flatMap { report in
            ["", report.thumbnails.tableCaption(backend: report.name), ""]
                + markdownTable(titles: ThumbnailSweep.tableTitles, rows: report.thumbnails.tableRows)
        }
    }
}

// MARK: - JSON

extension Series {
    /// The raw values, their median, least and largest, and the failures.
    var jsonObject: [String: Any] {
        var object: [String: Any] = ["values": values]
        if let median { object["median"] = median }
        if let minimum { object["min"] = minimum }
        if let maximum { object["max"] = maximum }
        if let failure { object["failure"] = failure }
        if !misses.isEmpty { object["failedRuns"] = misses }
        return object
    }
}

extension ThumbnailSweep {
    /// The sweep for the JSON output: the overall figures and one entry per clip and position
    /// with every run's seconds.
    var jsonObject: [String: Any] {
        [
            "runs": runs,
            "reference": Self.referenceLabel,
            "ratioLimit": Self.ratioLimit,
            "medianPairedRatio": medianPairedRatio as Any,
            "worstPairedRatio": worstPairedRatio as Any,
            "medianPairedCPURatio": medianPairedCPURatio as Any,
            "worstPairedCPURatio": worstPairedCPURatio as Any,
            "everyRunWithinLimit": everyRunWithinLimit as Any,
            "seconds": seconds,
            "points": points.map { point -> [String: Any] in
                [
                    "clip": point.clip.fileName,
                    "clipSummary": point.clip.summary,
                    "position": point.position.kind.key,
                    "atSeconds": point.position.seconds,
                    "mediaplaySeconds": point.ours.jsonObject,
                    "ffmpegSeconds": point.ffmpeg.jsonObject,
                    "mediaplayCPUSeconds": point.oursCPU.jsonObject,
                    "ffmpegCPUSeconds": point.ffmpegCPU.jsonObject,
                    "pairedRatios": point.pairedRatios,
                    "pairedCPURatios": point.pairedCPURatios,
                    "medianRatio": point.medianRatio as Any,
                    "worstPairedRatio": point.worstPairedRatio as Any,
                    "medianCPURatio": point.medianCPURatio as Any,
                ]
            },
        ]
    }
}

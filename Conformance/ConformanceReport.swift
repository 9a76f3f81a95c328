import FoundationEssentials

// MARK: - Results

/// How one check ended.
public enum CheckOutcome: Sendable, Equatable {
    /// The player did what the contract says.
    case pass
    /// The player broke the contract (or hung); the reason says how.
    case fail(String)
    /// The check could not run here, for a reason the suite states (e.g. a missing fixture).
    case skipped(String)

    /// "pass", "fail" or "skipped".
    public var status: String {
        switch self {
        case .pass: "pass"
        case .fail: "fail"
        case .skipped: "skipped"
        }
    }

    /// The reason of a failure or skip.
    public var reason: String? {
        switch self {
        case .pass: nil
        case .fail(let reason), .skipped(let reason): reason
        }
    }
}

/// The result of one check.
public struct CheckResult: Sendable, Equatable, Codable {
    /// The check's stable name, e.g. "seek.accurate-frame".
    public var name: String
    /// How it ended.
    public var outcome: CheckOutcome
    /// How long it took, seconds.
    public var seconds: Double

    /// Makes a result.
    public init(name: String, outcome: CheckOutcome, seconds: Double) {
        self.name = name
        self.outcome = outcome
        self.seconds = seconds
    }

    private enum CodingKeys: String, CodingKey { case name, status, reason, seconds }

    /// Decodes `{"name", "status", "reason", "seconds"}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        seconds = try container.decode(Double.self, forKey: .seconds)
        let reason = try container.decodeIfPresent(String.self, forKey: .reason) ?? ""
        switch try container.decode(String.self, forKey: .status) {
        case "pass": outcome = .pass
        case "skipped": outcome = .skipped(reason)
        default: outcome = .fail(reason)
        }
    }

    /// Encodes `{"name", "status", "reason", "seconds"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(outcome.status, forKey: .status)
        try container.encodeIfPresent(outcome.reason, forKey: .reason)
        try container.encode((seconds * 1000).rounded() / 1000, forKey: .seconds)
    }
}

// MARK: - One backend

/// Every result of one run of the suite against one backend.
public struct ConformanceReport: Sendable, Equatable, Codable {
    /// The backend's name.
    public var backend: String
    /// The engine and its version.
    public var engineVersion: String
    /// When the run started.
    public var started: Date
    /// How long the run took, seconds.
    public var seconds: Double
    /// One result per check, in the order they ran.
    public var results: [CheckResult]

    /// Makes a report.
    public init(backend: String, engineVersion: String, started: Date, seconds: Double, results: [CheckResult]) {
        self.backend = backend
        self.engineVersion = engineVersion
        self.started = started
        self.seconds = seconds
        self.results = results
    }

    /// The results that failed.
    public var failures: [CheckResult] { results.filter { $0.outcome.status == "fail" } }
    /// The results that were skipped.
    public var skips: [CheckResult] { results.filter { $0.outcome.status == "skipped" } }
    /// The number of checks that passed.
    public var passCount: Int { results.filter { $0.outcome == .pass }.count }
    /// True when no check failed.
    public var allPassed: Bool { failures.isEmpty }

    /// The result of the check `name`, if it ran.
    public func result(_ name: String) -> CheckResult? { results.first { $0.name == name } }

    /// `backend: P passed, F failed, S skipped of N (T s)`.
    public var summaryLine: String {
        "\(backend): \(passCount) passed, \(failures.count) failed, \(skips.count) skipped of \(results.count) (\(Int(seconds.rounded())) s)"
    }
}

// MARK: - Several backends

/// The results of several backends side by side: a matrix of checks × backends.
public struct ConformanceMatrix: Sendable, Equatable, Codable {
    /// One report per backend, in the order they ran.
    public var reports: [ConformanceReport]

    /// Makes a matrix.
    public init(reports: [ConformanceReport]) { self.reports = reports }

    /// True when no check failed for any backend.
    public var allPassed: Bool { reports.allSatisfy(\.allPassed) }

    /// The matrix as text: one row per check, one column per backend, a summary line per
    /// backend, then the reason of every failure and skip.
    public func renderText() -> String {
        var names: [String] = []
        for report in reports {
            for result in report.results where !names.contains(result.name) { names.append(result.name) }
        }
        let nameWidth = max(5, names.map(\.count).max() ?? 0)
        let columns = reports.map { max(7, $0.backend.count) }
        func pad(_ text: String, _ width: Int) -> String {
            text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
        }
        var lines: [String] = []
        lines.append(([pad("check", nameWidth)] + zip(reports, columns).map { pad($0.backend, $1) }).joined(separator: "  "))
        lines.append(([String(repeating: "-", count: nameWidth)] + columns.map { String(repeating: "-", count: $0) }).joined(separator: "  "))
        for name in names {
            let cells = zip(reports, columns).map { report, width in
                pad(report.result(name).map { cell($0.outcome) } ?? "-", width)
            }
            lines.append(([pad(name, nameWidth)] + cells).joined(separator: "  "))
        }
        lines.append("")
        for report in reports {
            let version = report.engineVersion.isEmpty ? "" : " [\(report.engineVersion)]"
            lines.append(report.summaryLine + version)
        }
        let notes = reports.flatMap { report in
            report.results.compactMap { result -> String? in
                guard let reason = result.outcome.reason else { return nil }
                return "\(report.backend) \(result.name) \(result.outcome.status): \(reason)"
            }
        }
        if !notes.isEmpty {
            lines.append("")
            lines.append(contentsOf: notes)
        }
        let total = reports.reduce(0) { $0 + $1.failures.count }
        lines.append("")
        lines.append(total == 0 ? "conformance: every check passed" : "conformance: \(total) failure(s)")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The matrix as pretty-printed JSON.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(self)
    }

    private func cell(_ outcome: CheckOutcome) -> String {
        switch outcome {
        case .pass: "pass"
        case .fail(let reason): reason.hasPrefix("hang") ? "HANG" : "FAIL"
        case .skipped: "skip"
        }
    }
}

extension ConformanceReport {
    /// This report alone as a text matrix.
    public func renderText() -> String { ConformanceMatrix(reports: [self]).renderText() }
}

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

/// How one check came out once its attempts were measured against the backend's
/// expectations (`ConformanceExpectation`). Only `fail` fails a run; `unexpectedPass` fails a
/// strict one.
public enum CheckVerdict: String, Sendable, Codable, CaseIterable {
    /// Passed at the first attempt.
    case pass
    /// Failed every attempt, in a way no expectation covers.
    case fail
    /// Skipped for a reason the suite states.
    case skipped
    /// Failed, then passed on a later attempt: a race to find, reported until it is found.
    case flaky
    /// Failed as a `fails` expectation says.
    case expectedFailure = "xfail"
    /// Failed every attempt, as a `flaky` expectation allows.
    case listedFlaky = "xflaky"
    /// Passed although a `fails` expectation says it fails: the entry is out of date.
    case unexpectedPass = "xpass"
    /// Not run: an `unsupported` expectation says the engine cannot do it.
    case unsupported

    /// The verdict of a result with no expectations and one attempt.
    init(_ outcome: CheckOutcome) {
        switch outcome {
        case .pass: self = .pass
        case .fail: self = .fail
        case .skipped: self = .skipped
        }
    }

    /// The matrix's cell for this verdict.
    var cell: String {
        switch self {
        case .pass: "pass"
        case .fail: "FAIL"
        case .skipped: "skip"
        case .flaky: "FLAKY"
        case .expectedFailure: "xfail"
        case .listedFlaky: "xflaky"
        case .unexpectedPass: "XPASS"
        case .unsupported: "unsup"
        }
    }
}

/// One run of a check in a fresh player.
public struct CheckAttempt: Sendable, Equatable, Codable {
    /// How it ended.
    public var outcome: CheckOutcome
    /// How long it took, seconds.
    public var seconds: Double
    /// For a sweep check: each clip that failed (its path in the fixtures folder), with how.
    public var clipFailures: [String: String]
    /// Whether something failed outside the sweep's clips (a hang, a step before the first
    /// clip, the clean-up after the check); true for every failure of a check that is no sweep.
    public var failedOutsideClips: Bool

    /// An attempt that ended with `outcome`.
    public init(outcome: CheckOutcome, seconds: Double, clipFailures: [String: String] = [:],
                failedOutsideClips: Bool? = nil) {
        self.outcome = outcome
        self.seconds = seconds
        self.clipFailures = clipFailures
        self.failedOutsideClips = failedOutsideClips ?? (outcome.status == "fail" && clipFailures.isEmpty)
    }

    private enum CodingKeys: String, CodingKey { case status, reason, seconds, clipFailures, failedOutsideClips }

    /// Decodes `{"status", "reason", "seconds", "clipFailures", "failedOutsideClips"}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        outcome = try CheckOutcome(status: container.decode(String.self, forKey: .status),
                                   reason: container.decodeIfPresent(String.self, forKey: .reason))
        seconds = try container.decode(Double.self, forKey: .seconds)
        clipFailures = try container.decodeIfPresent([String: String].self, forKey: .clipFailures) ?? [:]
        failedOutsideClips = try container.decodeIfPresent(Bool.self, forKey: .failedOutsideClips)
            ?? (outcome.status == "fail" && clipFailures.isEmpty)
    }

    /// Encodes the attempt; the clips only for a sweep that had failures.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(outcome.status, forKey: .status)
        try container.encodeIfPresent(outcome.reason, forKey: .reason)
        try container.encode((seconds * 1000).rounded() / 1000, forKey: .seconds)
        if !clipFailures.isEmpty {
            try container.encode(clipFailures, forKey: .clipFailures)
            try container.encode(failedOutsideClips, forKey: .failedOutsideClips)
        }
    }
}

extension CheckOutcome {
    /// The outcome a report names `status` ("pass", "skipped", anything else a failure).
    init(status: String, reason: String?) {
        switch status {
        case "pass": self = .pass
        case "skipped": self = .skipped(reason ?? "")
        default: self = .fail(reason ?? "")
        }
    }
}

/// The result of one check: its verdict, and every attempt that led to it.
public struct CheckResult: Sendable, Equatable, Codable {
    /// The check's stable name, e.g. "seek.accurate-frame".
    public var name: String
    /// How the last attempt ended.
    public var outcome: CheckOutcome
    /// How long every attempt took together, seconds.
    public var seconds: Double
    /// What the result comes to, against the backend's expectations.
    public var verdict: CheckVerdict
    /// Every attempt, in order (one unless the first failed and the run allows more).
    public var attempts: [CheckAttempt]
    /// The reasons of the expectations that applied (listed failures, flaky or unsupported
    /// entries, or the `fails` entry a pass contradicts), one per entry.
    public var expected: [String]

    /// A result of one attempt, judged without expectations.
    public init(name: String, outcome: CheckOutcome, seconds: Double) {
        self.init(name: name, attempts: [CheckAttempt(outcome: outcome, seconds: seconds)],
                  verdict: CheckVerdict(outcome), expected: [])
    }

    /// A result of `attempts` (at least one), with its `verdict`.
    public init(name: String, attempts: [CheckAttempt], verdict: CheckVerdict, expected: [String]) {
        precondition(!attempts.isEmpty, "a result needs an attempt")
        self.name = name
        self.outcome = attempts[attempts.count - 1].outcome
        self.seconds = attempts.reduce(0) { $0 + $1.seconds }
        self.verdict = verdict
        self.attempts = attempts
        self.expected = expected
    }

    /// The attempt that passed after earlier ones failed (1-based), for a flaky result.
    public var passedOnAttempt: Int? { verdict == .flaky ? attempts.count : nil }

    /// Whether this result fails a run (`strict`: an unexpected pass does too).
    public func failsRun(strict: Bool = false) -> Bool {
        verdict == .fail || (strict && verdict == .unexpectedPass)
    }

    private enum CodingKeys: String, CodingKey { case name, status, reason, seconds, verdict, attempts, expected }

    /// Decodes `{"name", "status", "reason", "seconds", "verdict", "attempts", "expected"}`;
    /// a report without attempts is read as one attempt.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        seconds = try container.decode(Double.self, forKey: .seconds)
        outcome = try CheckOutcome(status: container.decode(String.self, forKey: .status),
                                   reason: container.decodeIfPresent(String.self, forKey: .reason))
        verdict = try container.decodeIfPresent(CheckVerdict.self, forKey: .verdict) ?? CheckVerdict(outcome)
        attempts = try container.decodeIfPresent([CheckAttempt].self, forKey: .attempts)
            ?? [CheckAttempt(outcome: outcome, seconds: seconds)]
        expected = try container.decodeIfPresent([String].self, forKey: .expected) ?? []
    }

    /// Encodes `{"name", "status", "reason", "seconds", "verdict", "attempts", "expected"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(outcome.status, forKey: .status)
        try container.encodeIfPresent(outcome.reason, forKey: .reason)
        try container.encode((seconds * 1000).rounded() / 1000, forKey: .seconds)
        try container.encode(verdict, forKey: .verdict)
        try container.encode(attempts, forKey: .attempts)
        if !expected.isEmpty { try container.encode(expected, forKey: .expected) }
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

    /// The results that fail the run: failed every attempt, in a way no expectation covers.
    public var failures: [CheckResult] { results.filter { $0.verdict == .fail } }
    /// The results that were skipped.
    public var skips: [CheckResult] { results.filter { $0.verdict == .skipped } }
    /// The results that failed, then passed on a later attempt.
    public var flakes: [CheckResult] { results.filter { $0.verdict == .flaky } }
    /// The results with `verdict`.
    public func results(_ verdict: CheckVerdict) -> [CheckResult] { results.filter { $0.verdict == verdict } }
    /// The number of checks that passed at the first attempt.
    public var passCount: Int { results(.pass).count }
    /// True when no check failed the run.
    public var allPassed: Bool { failures.isEmpty }

    /// The result of the check `name`, if it ran.
    public func result(_ name: String) -> CheckResult? { results.first { $0.name == name } }

    /// `backend: P passed, F failed, S skipped of N (T s)`, with the flaky, listed,
    /// unsupported and unexpectedly passing checks counted where there are any.
    public var summaryLine: String {
        var line = "\(backend): \(passCount) passed, \(failures.count) failed, \(skips.count) skipped of \(results.count)"
        let extras: [(CheckVerdict, String)] = [
            (.flaky, "flaky"), (.expectedFailure, "expected failures"), (.listedFlaky, "listed flaky failing"),
            (.unexpectedPass, "unexpected passes"), (.unsupported, "unsupported"),
        ]
        for (verdict, label) in extras {
            let count = results(verdict).count
            if count > 0 { line += ", \(count) \(label)" }
        }
        return line + " (\(Int(seconds.rounded())) s)"
    }

    /// One line per result that is no plain pass or skip, for the end of a run: `flaky:`,
    /// `listed:` (an expected failure or a listed flaky one), `xpass:`, `unsupported:` or
    /// `FAIL:`, then `backend/check` and what happened.
    public var noteLines: [String] {
        results.compactMap { result -> String? in
            let label = "\(backend)/\(result.name)"
            let reasons = result.attempts.compactMap(\.outcome.reason)
            let listed = result.expected.joined(separator: " | ")
            switch result.verdict {
            case .pass, .skipped:
                return nil
            case .flaky:
                return "flaky: \(label) (passed on attempt \(result.attempts.count)): \(reasons.joined(separator: " | "))"
            case .fail:
                return "FAIL: \(label) (\(result.attempts.count) attempt(s)): \(reasons.joined(separator: " | "))"
            case .expectedFailure:
                return "listed: \(label) failed as expected: \(reasons.last ?? "")"
            case .listedFlaky:
                return "flaky: \(label) (listed; failed all \(result.attempts.count) attempts): \(reasons.joined(separator: " | "))"
            case .unexpectedPass:
                return "xpass: \(label) passed although listed as failing (\(listed)): remove the entry"
            case .unsupported:
                return "unsupported: \(label): \(listed)"
            }
        }
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
                pad(report.result(name).map { cell($0) } ?? "-", width)
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
                switch result.verdict {
                case .pass: return nil
                case .skipped: return "\(report.backend) \(result.name) skipped: \(result.outcome.reason ?? "")"
                case .flaky, .listedFlaky:
                    let reasons = result.attempts.compactMap(\.outcome.reason).joined(separator: " | ")
                    return "\(report.backend) \(result.name) \(result.verdict.cell) (\(result.attempts.count) attempts): \(reasons)"
                case .unexpectedPass, .unsupported:
                    return "\(report.backend) \(result.name) \(result.verdict.cell): \(result.expected.joined(separator: " | "))"
                case .fail, .expectedFailure:
                    return "\(report.backend) \(result.name) \(result.verdict.cell): \(result.outcome.reason ?? "")"
                }
            }
        }
        if !notes.isEmpty {
            lines.append("")
            lines.append(contentsOf: notes)
        }
        let total = reports.reduce(0) { $0 + $1.failures.count }
        let flaky = reports.reduce(0) { $0 + $1.flakes.count }
        lines.append("")
        var verdict = total == 0 ? "conformance: every check passed" : "conformance: \(total) failure(s)"
        if flaky > 0 { verdict += " (\(flaky) flaky, passed on a later attempt)" }
        lines.append(verdict)
        return lines.joined(separator: "\n") + "\n"
    }

    /// The matrix as pretty-printed JSON.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(self)
    }

    private func cell(_ result: CheckResult) -> String {
        if result.verdict == .fail, result.outcome.reason?.hasPrefix("hang") == true { return "HANG" }
        return result.verdict.cell
    }
}

extension ConformanceReport {
    /// This report alone as a text matrix.
    public func renderText() -> String { ConformanceMatrix(reports: [self]).renderText() }
}

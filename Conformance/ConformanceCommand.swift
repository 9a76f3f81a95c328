import FoundationEssentials
import Glibc
import PlaybackKit

/// The conformance suite's command line, for any backends: `mediaplay conformance` runs it
/// with the built-in engines, and an adapter author's executable runs it with its own.
///
/// ```swift
/// // Sources/my-conformance/main.swift
/// import Glibc
/// import PlaybackConformance
///
/// exit(await ConformanceCommand.run(backends: [MyBackend()]))
/// ```
///
/// `my-conformance [--backend NAME[,NAME]...|all] [--check NAME]... [--attempts N] [--strict]
/// [--json] [--fixtures DIR]` makes the fixtures (once) and runs the suite, with a line per
/// check on stderr as it ends, then the matrix on stdout (or JSON with `--json`). `--check`
/// takes a check's name or a family (the part before the dot, e.g. `seek`) and may be
/// repeated. `--attempts N` runs a failed check again, in a fresh player, up to N attempts in
/// all: one that passes on a later attempt is reported `FLAKY` (and in the JSON with every
/// attempt's reason) and does not fail the run. `--make-fixtures` only makes the fixtures;
/// `--list` prints every check with what it proves.
///
/// `expectations` list what a backend is known not to pass (`ConformanceExpectation`):
/// failures and flaky checks it lists do not fail the run, unsupported checks do not run.
/// After the matrix, stderr gets one line per check that is no plain pass: `flaky: backend/check
/// …` for every flake, listed or not, so a flake stays visible until its race is found.
///
/// The exit status is 0 when no check failed in a way `expectations` do not cover (with
/// `--strict`, also none passed that an expectation says fails), 1 otherwise (or when the
/// fixtures could not be made), 2 on a usage error.
public enum ConformanceCommand {
    /// The expectation type under its earlier name: a check a backend is known to fail.
    public typealias KnownFailure = ConformanceExpectation

    /// The usage text, for the program named `program`.
    public static func usage(program: String) -> String {
        """
        usage: \(program) [--backend NAME[,NAME]...|all] [--check NAME]... [--attempts N] [--strict] [--json] [--fixtures DIR]
               \(program) --make-fixtures [--fixtures DIR]
               \(program) --list
          --backend NAME   one backend, or a list separated by commas (default: all)
          --check NAME     a check, or a family such as "seek"; may be repeated (default: every check)
          --attempts N     run a failed check again, in a fresh player, up to N attempts in all;
                           a pass on a later attempt is reported FLAKY and does not fail the run
          --strict         also fail when a check listed as failing passes (its entry is out of date)
          --json           the matrix as JSON on stdout
          --fixtures DIR   where the test media is made and read (default: \(defaultFixturesText))
          --make-fixtures  make the test media and exit
          --list           print every check and what it proves
        """
    }

    private static let defaultFixturesText = "./Fixtures"

    /// Parses `arguments` (without the program's name), runs what they ask for against
    /// `backends` with their `expectations`, prints the results and returns the exit status.
    /// `fixtures` is the folder used without `--fixtures` (default: `Fixtures` in the current
    /// directory); `program` names the program in messages.
    public static func run(backends: [any PlaybackBackend], expectations: [ConformanceExpectation] = [],
                           arguments: [String] = Array(CommandLine.arguments.dropFirst()),
                           fixtures: URL? = nil, program: String = programName) async -> Int32 {
        func complain(_ message: String) {
            StandardStreams.writeError("\(program): error: \(message)\n")
        }
        let options: Options
        do {
            options = try Options(arguments)
        } catch let error as UsageError {
            complain(error.message)
            StandardStreams.writeError(usage(program: program) + "\n")
            return 2
        } catch {
            complain("\(error)")
            return 2
        }
        if options.help {
            StandardStreams.writeOutput(usage(program: program) + "\n")
            return 0
        }
        if options.list {
            for entry in ConformanceSuite.catalogue { StandardStreams.writeOutput("\(entry.name)\t\(entry.summary)\n") }
            return 0
        }
        let folder = options.fixtures.map { URL(fileURLWithPath: $0) } ?? fixtures ?? FixtureRecipe.defaultFolder
        if options.makeFixturesOnly {
            do {
                StandardStreams.writeOutput(try FixtureRecipe.make(in: folder).path + "\n")
                return 0
            } catch {
                complain("\(error)")
                return 1
            }
        }

        var selected: [any PlaybackBackend] = []
        if let list = options.backend, list != "all" {
            // One name, or a list ("vlc,ffmpeg"): each is run.
            for name in Backends.names(in: list) {
                guard let backend = backends.first(where: { $0.name == name }) else {
                    let known = backends.map(\.name).joined(separator: ", ")
                    complain("unknown backend '\(name)'; known backends: \(known.isEmpty ? "none" : known)")
                    return 2
                }
                selected.append(backend)
            }
        } else {
            selected = backends
        }
        guard !selected.isEmpty else {
            complain("no backend to check")
            return 2
        }
        if let only = options.checks {
            let unknown = ConformanceSuite.unknownNames(in: only)
            guard unknown.isEmpty else {
                complain("unknown check(s) \(unknown.joined(separator: ", ")); known: \(ConformanceSuite.checkNames.joined(separator: ", "))")
                return 2
            }
        }
        let made: URL
        do {
            made = try FixtureRecipe.make(in: folder)
        } catch {
            complain("\(error)")
            return 1
        }

        // Standard output carries the matrix alone: what the engines print there while the
        // checks run (some plugins print their diagnostics to it) goes to standard error.
        let report = ReportOutput()
        var reports: [ConformanceReport] = []
        for backend in selected {
            reports.append(await runSuite(backend, fixtures: made, only: options.checks, attempts: options.attempts,
                                          expectations: expectations))
        }
        let matrix = ConformanceMatrix(reports: reports)
        if options.json {
            do {
                report.write(Array(try matrix.jsonData()) + Array("\n".utf8))
            } catch {
                report.close()
                complain("could not encode the report: \(error)")
                return 1
            }
        } else {
            report.write(Array(matrix.renderText().utf8))
        }
        report.close()
        for line in reports.flatMap(\.noteLines) { StandardStreams.writeError(line + "\n") }
        let failing = reports.flatMap { report in report.results.filter { $0.failsRun(strict: options.strict) } }
        return failing.isEmpty ? 0 : 1
    }

    /// `run(backends:expectations:…)` under its earlier name.
    @available(*, deprecated, renamed: "run(backends:expectations:arguments:fixtures:program:)")
    public static func run(backends: [any PlaybackBackend], knownFailures: [ConformanceExpectation],
                           arguments: [String] = Array(CommandLine.arguments.dropFirst()),
                           fixtures: URL? = nil, program: String = programName) async -> Int32 {
        await run(backends: backends, expectations: knownFailures, arguments: arguments, fixtures: fixtures, program: program)
    }

    /// This program's name, from its command line.
    public static var programName: String {
        CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? Substring($0)) } ?? "conformance"
    }

    /// Runs the suite against one backend, with a line on stderr for each check as it ends.
    private static func runSuite(_ backend: any PlaybackBackend, fixtures: URL, only: Set<String>?, attempts: Int,
                                 expectations: [ConformanceExpectation]) async -> ConformanceReport {
        let name = backend.name
        let suite = ConformanceSuite(backend: backend, fixtures: fixtures)
        let report = await suite.run(only: only, attempts: attempts, expectations: expectations) { progress in
            guard case .finished(let result) = progress else { return }
            var line = "[\(name)] \(result.name): \(result.verdict.rawValue) (\(String(cFormat: "%.1f", result.seconds)) s)"
            if result.attempts.count > 1 { line += " after \(result.attempts.count) attempts" }
            if let reason = result.outcome.reason { line += " — \(reason)" }
            StandardStreams.writeError(line + "\n")
        }
        StandardStreams.writeError(report.summaryLine + "\n")
        return report
    }
}

// MARK: - Standard output

/// Standard output kept for the report: while it is open, file descriptor 1 goes to standard
/// error, so that nothing else lands between the report's lines; `close()` puts it back.
private final class ReportOutput {
    private var saved: Int32

    init() {
        fflush(nil)
        saved = dup(STDOUT_FILENO)
        if saved >= 0 { dup2(STDERR_FILENO, STDOUT_FILENO) }
    }

    /// Writes all of `bytes` to the kept standard output.
    func write(_ bytes: [UInt8]) {
        fflush(nil)
        StandardStreams.write(bytes, to: saved >= 0 ? saved : STDOUT_FILENO)
    }

    /// Puts standard output back.
    func close() {
        guard saved >= 0 else { return }
        fflush(nil)
        dup2(saved, STDOUT_FILENO)
        Glibc.close(saved)
        saved = -1
    }
}

// MARK: - The command line

/// A mistake on the command line.
private struct UsageError: Error {
    let message: String
}

/// The options of one run, read from the command line.
private struct Options {
    var backend: String?
    var checks: Set<String>?
    var json = false
    var fixtures: String?
    var makeFixturesOnly = false
    var list = false
    var help = false
    var attempts = 1
    var strict = false

    /// Options that take a value (`--name value` or `--name=value`).
    static let valued: Set<String> = ["--backend", "--check", "--fixtures", "--attempts"]
    /// Options that take none.
    static let flags: Set<String> = ["--json", "--strict", "--make-fixtures", "--list", "--help", "-h"]

    init(_ words: [String]) throws {
        var index = 0
        while index < words.count {
            var word = words[index]
            index += 1
            var value: String?
            if word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
                value = String(word[word.index(after: equals)...])
                word = String(word[..<equals])
            }
            if Self.valued.contains(word) {
                if value == nil {
                    guard index < words.count else { throw UsageError(message: "\(word) needs a value") }
                    value = words[index]
                    index += 1
                }
                switch word {
                case "--backend": backend = value
                case "--check": checks = (checks ?? []).union([value ?? ""])
                case "--attempts":
                    guard let count = value.flatMap({ Int($0) }), count >= 1 else {
                        throw UsageError(message: "--attempts needs a whole number of at least 1, not '\(value ?? "")'")
                    }
                    attempts = count
                default: fixtures = value
                }
            } else if Self.flags.contains(word), value == nil {
                switch word {
                case "--json": json = true
                case "--strict": strict = true
                case "--make-fixtures": makeFixturesOnly = true
                case "--list": list = true
                default: help = true
                }
            } else if word.hasPrefix("-") {
                throw UsageError(message: "unknown option \(word)")
            } else {
                throw UsageError(message: "unexpected argument '\(word)'")
            }
        }
    }
}

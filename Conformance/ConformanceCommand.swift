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
/// `my-conformance [--backend NAME[,NAME]...|all] [--check NAME]... [--json] [--fixtures DIR]` makes
/// the fixtures (once) and runs the suite, with a line per check on stderr as it ends, then
/// the matrix on stdout (or JSON with `--json`). `--check` takes a check's name or a family
/// (the part before the dot, e.g. `seek`) and may be repeated. `--make-fixtures` only makes
/// the fixtures; `--list` prints every check with what it proves.
///
/// The exit status is 0 when every check passed (or was skipped for a stated reason) or
/// failed only as one of `knownFailures`, 1 when any other check failed (or the fixtures
/// could not be made), 2 on a usage error. Known failures still show as FAIL in the matrix,
/// each with its reason on stderr; one that passes is pointed out, so the list can shrink.
public enum ConformanceCommand {
    /// A check a backend is known to fail, with the reason: listed so that it stays visible
    /// (the matrix shows it as FAIL, the runner names it as known) while the rest of the
    /// suite guards against regressions.
    public struct KnownFailure: Sendable, Equatable {
        /// The backend's name.
        public let backend: String
        /// The check's full name.
        public let check: String
        /// What goes wrong, and why.
        public let reason: String

        /// A known failure of `check` on `backend`.
        public init(backend: String, check: String, reason: String) {
            self.backend = backend
            self.check = check
            self.reason = reason
        }
    }

    /// The usage text, for the program named `program`.
    public static func usage(program: String) -> String {
        """
        usage: \(program) [--backend NAME[,NAME]...|all] [--check NAME]... [--json] [--fixtures DIR]
               \(program) --make-fixtures [--fixtures DIR]
               \(program) --list
          --backend NAME   one backend, or a list separated by commas (default: all)
          --check NAME     a check, or a family such as "seek"; may be repeated (default: every check)
          --json           the matrix as JSON on stdout
          --fixtures DIR   where the test media is made and read (default: \(defaultFixturesText))
          --make-fixtures  make the test media and exit
          --list           print every check and what it proves
        """
    }

    private static let defaultFixturesText = "./Fixtures"

    /// Parses `arguments` (without the program's name), runs what they ask for against
    /// `backends`, prints the results and returns the exit status. `fixtures` is the folder
    /// used without `--fixtures` (default: `Fixtures` in the current directory); `program`
    /// names the program in messages.
    public static func run(backends: [any PlaybackBackend], knownFailures: [KnownFailure] = [],
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
            reports.append(await runSuite(backend, fixtures: made, only: options.checks))
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
        return judge(reports, knownFailures: knownFailures)
    }

    /// This program's name, from its command line.
    public static var programName: String {
        CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? Substring($0)) } ?? "conformance"
    }

    /// Runs the suite against one backend, with a line on stderr for each check as it ends.
    private static func runSuite(_ backend: any PlaybackBackend, fixtures: URL, only: Set<String>?) async -> ConformanceReport {
        let name = backend.name
        let suite = ConformanceSuite(backend: backend, fixtures: fixtures)
        let report = await suite.run(only: only) { progress in
            guard case .finished(let result) = progress else { return }
            var line = "[\(name)] \(result.name): \(result.outcome.status) (\(String(cFormat: "%.1f", result.seconds)) s)"
            if let reason = result.outcome.reason { line += " — \(reason)" }
            StandardStreams.writeError(line + "\n")
        }
        StandardStreams.writeError(report.summaryLine + "\n")
        return report
    }

    /// The exit status for `reports`: failures listed in `knownFailures` are reported on
    /// stderr, and only the others fail the run; a known failure that passed is pointed out.
    private static func judge(_ reports: [ConformanceReport], knownFailures: [KnownFailure]) -> Int32 {
        var unexpected = 0
        for report in reports {
            for result in report.results {
                let known = knownFailures.first { $0.backend == report.backend && $0.check == result.name }?.reason
                if result.outcome.status == "fail" {
                    if let known {
                        StandardStreams.writeError("conformance: \(report.backend) \(result.name): known failure (\(known))\n")
                    } else {
                        unexpected += 1
                    }
                } else if known != nil, result.outcome.status == "pass" {
                    StandardStreams.writeError("conformance: \(report.backend) \(result.name) passed although listed as a known failure\n")
                }
            }
        }
        return unexpected == 0 ? 0 : 1
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

    /// Options that take a value (`--name value` or `--name=value`).
    static let valued: Set<String> = ["--backend", "--check", "--fixtures"]
    /// Options that take none.
    static let flags: Set<String> = ["--json", "--make-fixtures", "--list", "--help", "-h"]

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
                default: fixtures = value
                }
            } else if Self.flags.contains(word), value == nil {
                switch word {
                case "--json": json = true
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

import Foundation
import PlaybackBackends
import PlaybackConformance
import PlaybackKit
import Testing

// MARK: - Fixtures and backends for the conformance tests

/// The fixtures folder, made by `FixtureRecipe` (scripts/make-fixtures.sh) once per process.
enum TestFixtures {
    /// The checkout's root.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The fixtures folder, made once per process.
    static let folder = Result { try FixtureRecipe.make(checkout: root) }

    /// The folder, or the error making it.
    static func ensure() throws -> URL { try folder.get() }

    /// The fixture `name`, made first when needed; the test fails when it is missing.
    static func file(_ name: String) throws -> URL {
        let url = try ensure().appendingPathComponent(name)
        try #require(FileManager.default.fileExists(atPath: url.path), "missing fixture \(name): run scripts/make-fixtures.sh")
        return url
    }
}

/// The names of the backends compiled into this build, or of those among them that
/// `PLAYBACK_TEST_BACKENDS` lists (comma-separated; scripts/check-all.sh --backend sets it).
func compiledBackendNames() -> [String] {
    PlaybackBackends.registerBuiltIns()
    return chosenForTests(Backends.all.map(\.name))
}

/// `names`, or those of them `PLAYBACK_TEST_BACKENDS` lists when it is set.
func chosenForTests(_ names: [String]) -> [String] {
    guard let list = ProcessInfo.processInfo.environment["PLAYBACK_TEST_BACKENDS"], !list.isEmpty else { return names }
    let chosen = Set(list.split(separator: ",").map(String.init))
    return names.filter(chosen.contains)
}

/// Every conformance test, one after another (playback suites must not run in parallel).
@Suite(.serialized) enum ConformanceRuns {
    /// How many times a failed check runs in all: a pass on a later attempt is reported flaky.
    static let attempts = 3

    /// Records an issue for every result of `report` that fails the run (a failure no
    /// expectation covers), and writes every other note (flaky, listed, unexpected passes)
    /// to standard error, so a flake stays visible.
    static func recordFailures(of report: ConformanceReport) {
        for line in report.noteLines { FileHandle.standardError.write(Data((line + "\n").utf8)) }
        for failure in report.failures {
            Issue.record("\(report.backend) failed \(failure.name): \(failure.outcome.reason ?? "")")
        }
    }
}

// MARK: - The whole suite per backend

extension ConformanceRuns {
    @Suite struct ConformanceSuiteTests {
        @Test("the whole conformance suite passes", arguments: compiledBackendNames())
        func wholeSuite(backend name: String) async throws {
            let fixtures = try TestFixtures.ensure()
            let backend = try #require(Backends.backend(named: name))
            let suite = ConformanceSuite(backend: backend, fixtures: fixtures)
            // The optional families (the window checks) have tests of their own that run only
            // where what they need is there.
            let families = Set(ConformanceSuite.families).subtracting(ConformanceSuite.optionalFamilies)
            let report = await suite.run(only: families, attempts: ConformanceRuns.attempts,
                                         expectations: ConformanceExpectation.builtInEngines) { progress in
                guard case .finished(let result) = progress else { return }
                let reason = result.outcome.reason.map { " — \($0)" } ?? ""
                FileHandle.standardError.write(Data("[\(name)] \(result.name): \(result.verdict.rawValue)\(reason)\n".utf8))
            }
            FileHandle.standardError.write(Data(report.renderText().utf8))
            let optional = ConformanceSuite.checkNames.filter { ConformanceSuite.optionalFamilies.contains(String($0.prefix { $0 != "." })) }
            #expect(report.results.count == ConformanceSuite.checkNames.count - optional.count)
            // A skipped check is not a pass: every check runs for every built-in backend.
            #expect(report.skips.isEmpty, "\(name) skipped \(report.skips.map { "\($0.name) (\($0.outcome.reason ?? ""))" })")
            ConformanceRuns.recordFailures(of: report)
        }

        @Test("check names are unique and every family of the contract is covered")
        func catalogue() {
            let names = ConformanceSuite.checkNames
            #expect(Set(names).count == names.count)
            let families = Set(names.map { String($0.prefix { $0 != "." }) })
            for family in ["lifecycle", "time", "seek", "end", "picture", "rate", "volume", "bad-input", "api", "http"] {
                #expect(families.contains(family), "no check in family \(family)")
            }
            #expect(ConformanceSuite.unknownNames(in: ["seek", "time.smooth", "no.such-check"]) == ["no.such-check"])
        }

        @Test("the report renders as a matrix and round-trips through JSON")
        func reportFormats() throws {
            let results = [
                CheckResult(name: "lifecycle.prepared", outcome: .pass, seconds: 0.5),
                CheckResult(name: "seek.storm", outcome: .fail("hang: the check did not finish within 30 s"), seconds: 30),
                CheckResult(name: "http.open", outcome: .skipped("fixture frames.mp4 is missing"), seconds: 0),
            ]
            let matrix = ConformanceMatrix(reports: [
                ConformanceReport(backend: "one", engineVersion: "1.0", started: Date(timeIntervalSince1970: 0), seconds: 31, results: results),
                ConformanceReport(backend: "two", engineVersion: "2.0", started: Date(timeIntervalSince1970: 0), seconds: 1, results: [results[0]]),
            ])
            let text = matrix.renderText()
            #expect(text.contains("seek.storm"))
            #expect(text.contains("HANG"))
            #expect(text.contains("one: 1 passed, 1 failed, 1 skipped of 3"))
            #expect(!matrix.allPassed)
            let decoded = try JSONDecoder.iso8601.decode(ConformanceMatrix.self, from: matrix.jsonData())
            #expect(decoded == matrix)
        }
    }
}

extension JSONDecoder {
    /// A decoder for the report's ISO 8601 dates.
    static var iso8601: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

import Foundation
import PlaybackBackends
import PlaybackConformance
import PlaybackKit
import Testing

extension ConformanceRuns {
    /// A player of `Backends.makePlayer(backends:url:options:)` is the player of the engine it
    /// chose, as far as the contract speaks: the lifecycle, seek, end, bad-input, api and time
    /// checks, and the stress checks of calls from several threads and of players released
    /// without shutdown(), pass through one whose first try is an unknown name.
    @Suite(.enabled(if: backendForFaults() != nil, "needs a compiled-in backend"))
    struct FallbackSuiteTests {
        @Test("the contract holds through a fallback player")
        func contractHoldsThroughFallback() async throws {
            let fixtures = try TestFixtures.ensure()
            let backend = try #require(backendForFaults())
            let suite = ConformanceSuite(name: "\(backend.name) after an unknown name", expectedPlayerBackendName: backend.name,
                                         fixtures: fixtures) { url, options in
                try Backends.makePlayer(backends: ["no-such-engine", backend.name], url: url, options: options)
            }
            let only: Set<String> = ["lifecycle", "seek", "end", "bad-input", "api", "time",
                                     "stress.state-storm", "stress.released-without-shutdown"]
            // Retried as the whole suite is: a check that passes on a later attempt is written
            // out as flaky, one that fails every attempt fails the test.
            let report = await suite.run(only: only, attempts: ConformanceRuns.attempts)
            #expect(report.results.count > 30)
            #expect(report.skips.isEmpty, "skipped \(report.skips.map(\.name))")
            for line in report.noteLines { FileHandle.standardError.write(Data(("through a fallback player " + line + "\n").utf8)) }
            for failure in report.failures {
                Issue.record("through a fallback player \(failure.name) failed: \(failure.outcome.reason ?? "")")
            }
        }
    }
}

import Foundation
import PlaybackConformance
import PlaybackKit
import Testing

/// A backend whose players cannot be made: every check fails, at once.
private struct RefusingBackend: PlaybackBackend {
    var name = "refusing"
    var engineVersion: String { "refusing 1" }
    func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        throw PlaybackError(code: .backendUnavailable, message: "refusing: no players here")
    }
}

extension ConformanceRuns {
    @Suite struct ConformanceCommandTests {
        @Test("a failure fails the run unless it is listed as known")
        func knownFailuresDecideTheExitStatus() async throws {
            let fixtures = try TestFixtures.ensure()
            let arguments = ["--check", "lifecycle.prepared"]
            let failing = await ConformanceCommand.run(backends: [RefusingBackend()], arguments: arguments, fixtures: fixtures, program: "test")
            #expect(failing == 1)
            let known = ConformanceExpectation.fails("refusing", "lifecycle.prepared", "it makes no players")
            let allowed = await ConformanceCommand.run(backends: [RefusingBackend()], expectations: [known], arguments: arguments,
                                                       fixtures: fixtures, program: "test")
            #expect(allowed == 0)
            let otherCheck = await ConformanceCommand.run(backends: [RefusingBackend()], expectations: [known],
                                                          arguments: ["--check", "lifecycle.stop"], fixtures: fixtures, program: "test")
            #expect(otherCheck == 1)
            // Listed as flaky, a check that fails every attempt does not fail the run either;
            // retried, it is still a failure where nothing lists it.
            let flaky = ConformanceExpectation.flaky("refusing", "lifecycle.prepared", "it makes no players")
            #expect(await ConformanceCommand.run(backends: [RefusingBackend()], expectations: [flaky], arguments: arguments + ["--attempts", "2"],
                                                 fixtures: fixtures, program: "test") == 0)
            #expect(await ConformanceCommand.run(backends: [RefusingBackend()], arguments: arguments + ["--attempts", "3"],
                                                 fixtures: fixtures, program: "test") == 1)
            // An unsupported check does not run, and does not fail the run.
            let unsupported = ConformanceExpectation.unsupported("refusing", "lifecycle.prepared", "it makes no players")
            #expect(await ConformanceCommand.run(backends: [RefusingBackend()], expectations: [unsupported], arguments: arguments,
                                                 fixtures: fixtures, program: "test") == 0)
        }

        @Test("--backend takes a list: each backend named runs")
        func aListOfBackendsRunsEach() async throws {
            let fixtures = try TestFixtures.ensure()
            let backends = [RefusingBackend(), RefusingBackend(name: "second")]
            let known = ConformanceExpectation.fails("refusing", "lifecycle.prepared", "it makes no players")
            let arguments = ["--check", "lifecycle.prepared", "--backend"]
            // Only the first is known to fail: the run fails when the second ran too.
            #expect(await ConformanceCommand.run(backends: backends, expectations: [known], arguments: arguments + ["refusing"],
                                                 fixtures: fixtures, program: "test") == 0)
            #expect(await ConformanceCommand.run(backends: backends, expectations: [known], arguments: arguments + ["refusing,second"],
                                                 fixtures: fixtures, program: "test") == 1)
            #expect(await ConformanceCommand.run(backends: backends, arguments: arguments + ["refusing,other"],
                                                 fixtures: fixtures, program: "test") == 2)
        }

        @Test("usage errors are status 2, before any check runs")
        func usageErrors() async {
            let folder = URL(fileURLWithPath: "/nonexistent/fixtures")
            #expect(await ConformanceCommand.run(backends: [RefusingBackend()], arguments: ["--backend", "other"], fixtures: folder, program: "test") == 2)
            #expect(await ConformanceCommand.run(backends: [RefusingBackend()], arguments: ["--check"], fixtures: folder, program: "test") == 2)
            #expect(await ConformanceCommand.run(backends: [RefusingBackend()], arguments: ["--check=no.such"], fixtures: folder, program: "test") == 2)
            #expect(await ConformanceCommand.run(backends: [], arguments: [], fixtures: folder, program: "test") == 2)
            for count in ["0", "two", "-1"] {
                #expect(await ConformanceCommand.run(backends: [RefusingBackend()], arguments: ["--attempts", count], fixtures: folder, program: "test") == 2)
            }
        }

        @Test("the fixture recipe says so when the ffmpeg CLI is missing")
        func recipeWithoutFFmpeg() throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fixtures-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
            setenv("PATH", "/nonexistent", 1)
            defer { setenv("PATH", path, 1) }
            do {
                try FixtureRecipe.make(in: folder)
                Issue.record("the recipe made fixtures without ffmpeg")
            } catch let error as PlaybackError {
                #expect(error.message.contains("the ffmpeg CLI"), "\(error.message)")
            }
        }

        @Test("a folder the recipe made is confirmed at once, by its stamp")
        func recipeConfirmsItsStamp() throws {
            let folder = try TestFixtures.ensure()
            let stamp = try String(contentsOf: folder.appendingPathComponent(".stamp"), encoding: .utf8)
            #expect(stamp.trimmingCharacters(in: .whitespacesAndNewlines) == FixtureRecipe.stamp)
            let start = Date()
            #expect(try FixtureRecipe.make(in: folder) == folder.standardizedFileURL)
            #expect(Date().timeIntervalSince(start) < 1)
        }
    }
}

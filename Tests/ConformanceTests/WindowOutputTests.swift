import Foundation
import PlaybackBackends
import PlaybackConformance
import PlaybackKit
import Testing
import X11Windows

/// Whether the window checks can run here: $DISPLAY, or an Xvfb this process starts.
func windowDisplayAvailable() -> Bool { VirtualDisplay.isAvailable }

extension ConformanceRuns {
    /// The optional `window` family per backend: `.window(handle:)` checked by grabbing the
    /// window. Runs where there is a display (Xvfb is started when $DISPLAY is unset); where
    /// there is none the test is reported as skipped, never passed.
    @Suite(.enabled(if: windowDisplayAvailable(), "needs an X display: $DISPLAY, or Xvfb installed"))
    struct WindowOutputTests {
        @Test("the window checks pass", arguments: compiledBackendNames())
        func windowFamily(backend name: String) async throws {
            let fixtures = try TestFixtures.ensure()
            let backend = try #require(Backends.backend(named: name))
            let report = await ConformanceSuite(backend: backend, fixtures: fixtures)
                .run(only: ["window"], attempts: ConformanceRuns.attempts, expectations: ConformanceExpectation.builtInEngines) { progress in
                    guard case .finished(let result) = progress else { return }
                    let reason = result.outcome.reason.map { " — \($0)" } ?? ""
                    FileHandle.standardError.write(Data("[\(name)] \(result.name): \(result.verdict.rawValue)\(reason)\n".utf8))
                }
            #expect(!report.results.isEmpty)
            #expect(report.skips.isEmpty, "\(name) skipped \(report.skips.map { "\($0.name) (\($0.outcome.reason ?? ""))" })")
            ConformanceRuns.recordFailures(of: report)
        }

        /// The window family catches faults: a window that never gets a picture, and scaling
        /// modes that never reach the engine. The FFmpeg engine is the player wrapped (its
        /// window output needs no engine of its own to take the window).
        @Test("a faulty player fails exactly the window checks it should", arguments: FaultCase.window)
        func faultyWindowPlayer(_ faultCase: FaultCase) async throws {
            PlaybackBackends.registerBuiltIns()
            try await expectCaught(faultCase, wrapping: #require(Backends.backend(named: "ffmpeg") ?? Backends.all.first))
        }
    }
}

extension FaultCase {
    /// The faults the window family must catch (run where there is a display).
    static let window: [FaultCase] = [
        FaultCase(fault: .dropsWindowOutput,
                  sample: ["window.scaling-aspect-fit", "window.seek-paused", "picture.scaling-fill"],
                  mustFail: ["window.scaling-aspect-fit", "window.seek-paused"], reasonContains: "probes wrong"),
        FaultCase(fault: .ignoresScalingMode,
                  sample: ["window.scaling-aspect-fit", "window.scaling-fill", "window.scaling-none"],
                  mustFail: ["window.scaling-fill", "window.scaling-none"], reasonContains: "probes wrong", label: "window"),
        FaultCase(fault: .lateWindowSubtitles,
                  sample: ["window.subtitles", "window.scaling-aspect-fit", "subtitles.drawn"],
                  mustFail: ["window.subtitles"], reasonContains: "text-coloured pixels"),
    ]
}

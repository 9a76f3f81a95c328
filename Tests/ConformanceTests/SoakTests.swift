import Foundation
import PlaybackBackends
@testable import PlaybackConformance
import PlaybackKit
import Testing

/// The soak (`scripts/soak.sh`, not part of every test run): a 10-minute file played to the
/// end with the position held to the wall clock, and 2,000 setup/teardown cycles, per backend,
/// printing threads, fds and resident memory before and after. Runs only with
/// `PLAYBACK_SOAK=1`; `PLAYBACK_SOAK_MEDIA` names the long file, `PLAYBACK_SOAK_BACKEND` one
/// backend (default: every compiled-in one).
enum Soak {
    static let enabled = ProcessInfo.processInfo.environment["PLAYBACK_SOAK"] == "1"
    static let media = ProcessInfo.processInfo.environment["PLAYBACK_SOAK_MEDIA"]
    static let cycles = Int(ProcessInfo.processInfo.environment["PLAYBACK_SOAK_CYCLES"] ?? "") ?? 2000
    /// The largest distance allowed between the position and the wall clock.
    static let driftLimit: TimeInterval = 0.1

    static func backends() -> [String] {
        if let one = ProcessInfo.processInfo.environment["PLAYBACK_SOAK_BACKEND"] { return [one] }
        return compiledBackendNames()
    }

    static func report(_ line: String) {
        FileHandle.standardError.write(Data("soak: \(line)\n".utf8))
    }
}

extension ConformanceRuns {
    @Suite(.enabled(if: Soak.enabled, "the soak runs only with PLAYBACK_SOAK=1 (scripts/soak.sh)"))
    struct SoakTests {
        /// Plays the long file to the end; every second the position is compared with the wall
        /// time since playback started.
        @Test("a 10-minute file plays to the end with the position within 100 ms of the wall clock", arguments: Soak.backends())
        func longPlayback(backend name: String) async throws {
            let path = try #require(Soak.media, "PLAYBACK_SOAK_MEDIA names the long file")
            let before = ProcessResources.current(releasingFreeMemory: true)
            let player = try Backends.makePlayer(backend: name, url: URL(fileURLWithPath: path),
                                                 options: PlaybackOptions(videoOutput: .none, audioOutput: .null))
            defer { player.shutdown() }
            let recorder = EventRecorder(player.events)
            player.prepareToPlay()
            try await recorder.waitFor(".preparedToPlay", timeout: 20) { $0 == .preparedToPlay }
            let duration = player.duration
            let mark = recorder.mark
            player.play()
            try await recorder.waitFor(".playing", since: mark, timeout: 10) { $0 == .playbackStateChanged(.playing) }
            // The clock starts at the first sample that has moved (the start may take a frame).
            var origin: (wall: TimeInterval, media: TimeInterval)?
            var worst = 0.0, worstAt = 0.0, samples = 0
            while !recorder.events(since: mark).contains(where: \.isFinished) {
                try await Task.sleep(nanoseconds: 1_000_000_000)
                let wall = monotonicSeconds(), media = player.currentPlaybackTime
                guard media < duration - 0.5 else { continue }
                guard let start = origin else {
                    if media > 0.2 { origin = (wall, media) }
                    continue
                }
                let drift = media - (start.media + wall - start.wall)
                samples += 1
                if abs(drift) > abs(worst) {
                    worst = drift
                    worstAt = media
                }
            }
            let finish = recorder.events(since: mark).first(where: \.isFinished)
            #expect(finish == .finished(.playbackEnded), "\(name): ended with \(finish.map(describe) ?? "nothing")")
            player.shutdown()
            let after = ProcessResources.current(releasingFreeMemory: true)
            Soak.report("\(name): \(format(duration)) s played, \(samples) samples, worst drift \(format(worst * 1000)) ms at \(format(worstAt)) s; before \(before), after \(after)")
            #expect(samples >= Int(duration) - 10, "\(name): only \(samples) samples")
            #expect(abs(worst) <= Soak.driftLimit, "\(name): the position drifted \(format(worst * 1000)) ms from the wall clock at \(format(worstAt)) s")
        }

        /// The setup/teardown cycles of `stress.setup-teardown`, many more of them.
        @Test("2,000 setup/teardown cycles leave threads, fds and memory where they were", arguments: Soak.backends())
        func cycles(backend name: String) async throws {
            let fixtures = try TestFixtures.ensure()
            let backend = try #require(Backends.backend(named: name))
            let context = CheckContext(fixtures: fixtures) { url, options in try backend.makePlayer(url: url, options: options) }
            var random = SplitMix64(seed: StressChecks.setupTeardownSeed)
            var baseline: ProcessResources?
            let started = monotonicSeconds()
            for cycle in 0..<Soak.cycles {
                if cycle == 25 { baseline = ProcessResources.current(releasingFreeMemory: true) }
                try await StressChecks.runTeardownCycle(StressChecks.TeardownPlan(cycle: cycle, using: &random), context)
            }
            _ = await context.cleanUp()
            let first = try #require(baseline)
            // The allowance of stress.setup-teardown, with more room for memory over ten times
            // as many cycles; idle pool threads get 15 s to exit.
            let allowance = ResourceAllowance(threads: 4, fileDescriptors: 8, residentBytes: 64 << 20)
            let excess = try await StressChecks.settle(to: first, within: allowance, timeout: 15)
            let after = ProcessResources.current(releasingFreeMemory: true)
            Soak.report("\(name): \(Soak.cycles) cycles in \(format(monotonicSeconds() - started)) s; after 25 cycles \(first), at the end \(after)")
            #expect(excess.isEmpty, "\(name): after \(Soak.cycles) cycles: \(excess.joined(separator: "; "))")
        }
    }
}

import FoundationEssentials
import PlaybackKit

/// Engine fallback (`Backends.makePlayer(backends:url:options:)`) with the engine under test
/// on either side of a failed try: an unknown name before it, a stand-in that refuses every
/// file before it (`RefusingBackend`), and the engine under test failing on a file that a
/// stand-in then "plays" (`StandInBackend`). The app sees only the events of the engine that
/// plays, what it set before the choice applies to that one, and failed tries leave no thread
/// or file descriptor behind. Also: every player names its backend.
enum FallbackChecks {
    /// The fallback checks, in the order they run.
    static let all: [Check] = [backendName, unknownName, afterFailure, engineFails, noLeak]

    /// A name no backend has.
    static let unknownEngine = "conformance-no-such-engine"

    // MARK: - fallback.backend-name

    static let backendName = Check(
        "fallback.backend-name",
        "backendName names the player's backend, before and after prepare (the suite's backend name when it was made from a backend)"
    ) { context in
        let p = try context.player("short.mp4")
        let before = p.player.backendName
        try expect(!before.isEmpty, "backendName is \"\" before prepare: a player a backend made names that backend from the start")
        if let expected = context.expectedPlayerBackendName {
            try expect(before == expected, "backendName is \"\(before)\", expected \"\(expected)\"")
        }
        try await p.prepare()
        try expect(p.player.backendName == before, "backendName changed from \"\(before)\" to \"\(p.player.backendName)\" at prepare")
    }

    // MARK: - fallback.unknown-name

    static let unknownName = Check(
        "fallback.unknown-name",
        "an unknown name before the backend under test is a failed try: the player plays with the backend under test, no error reaches the app; an unknown name alone ends in .finished(.playbackError(backendUnavailable)); an empty list throws invalidArgument"
    ) { context in
        let clip = try context.fixture("short.mp4")
        do {
            _ = try Backends.makePlayer(backends: [], url: clip, options: PlaybackOptions(audioOutput: .null))
            throw CheckFailure("makePlayer(backends: []) did not throw")
        } catch let error as PlaybackError {
            try expect(error.code == .invalidArgument, "makePlayer(backends: []) threw \(error), expected invalidArgument")
        }
        let plainName = try context.player(url: clip).player.backendName
        let p = try context.player(url: clip, trying: [Backends.candidate(named: unknownEngine), context.backendUnderTest])
        try expect(p.player.backendName == "", "backendName before an engine is chosen is \"\(p.player.backendName)\", expected \"\"")
        try await p.prepare()
        try expect(!p.player.backendName.isEmpty && p.player.backendName == plainName,
                   "after the unknown name backendName is \"\(p.player.backendName)\", expected the backend under test's (\"\(plainName)\", not empty)")
        try await p.play()
        try await p.waitForPosition(atLeast: 0.3, timeout: 5)
        let errors = p.recorder.events().filter(\.isError)
        try expect(errors.isEmpty, "the failed try's error reached the app: \(summary(errors))")

        let lone = try context.player(url: clip, trying: [Backends.candidate(named: unknownEngine)])
        lone.player.prepareToPlay()
        let reason = try await lone.recorder.waitForFinish(timeout: 5)
        guard case .playbackError(let error) = reason else {
            throw CheckFailure("an unknown name alone finished with \(reason), expected .playbackError(backendUnavailable)")
        }
        try expect(error.code == .backendUnavailable && error.message.contains(unknownEngine),
                   "an unknown name alone: \(error), expected backendUnavailable naming \(unknownEngine)")
    }

    // MARK: - fallback.after-failure

    /// How far the position may be from 1.5x real time over a second after the fallback.
    static let rateTolerance = 0.2

    static let afterFailure = Check(
        "fallback.after-failure",
        "after a backend that refuses the file (\(RefusingBackend.backendName)), the backend under test plays it: none of the refusing try's events reach the app, its player is shut down, and a seek (2 s), rate (1.5), volume (0.25), scaling mode (fill) and shouldAutoplay set before the choice apply to the player that plays"
    ) { context in
        let refusing = RefusingBackend()
        let plainName = try context.player("frames.mp4").player.backendName
        let p = try context.player(url: try context.fixture("frames.mp4"), trying: [refusing, context.backendUnderTest])
        p.player.currentPlaybackTime = 2
        p.player.playbackRate = 1.5
        p.player.playbackVolume = 0.25
        p.player.scalingMode = .fill
        try await p.prepare()
        try expect(refusing.counts.made == 1 && refusing.counts.shutDown == 1,
                   "\(refusing.counts.made) refusing players made, \(refusing.counts.shutDown) shut down; expected 1 and 1")
        try expect(p.player.backendName == plainName, "the player names \"\(p.player.backendName)\", expected \"\(plainName)\"")
        try expect(abs(p.position - 2) <= 0.25, "prepared at \(format(p.position)) s after a seek to 2 s before the choice")
        try expect(p.player.playbackRate == 1.5 && p.player.playbackVolume == 0.25 && p.player.scalingMode == .fill,
                   "after the choice rate \(p.player.playbackRate), volume \(p.player.playbackVolume), scaling \(p.player.scalingMode); set 1.5, 0.25, fill before")
        try expectNoDecoys(p)
        try await p.play()
        // As rate.double measures: after the start (0.3 s of media at the rate) and 0.3 s more.
        try await p.waitForPosition(atLeast: 2 + 0.3 * 1.5, timeout: 5)
        try await observe(for: 0.3)
        let start = (wall: monotonicSeconds(), position: p.position)
        try await observe(for: 1)
        let pace = (p.position - start.position) / (monotonicSeconds() - start.wall)
        try expect(abs(pace - 1.5) <= 1.5 * rateTolerance, "the rate set before the choice: the position advanced at \(format(pace))x, expected 1.5x ±\(Int(rateTolerance * 100))%")
        try expectNoDecoys(p)

        let autoplaying = try context.player(url: try context.fixture("short.mp4"), trying: [refusing, context.backendUnderTest])
        autoplaying.player.shouldAutoplay = true
        autoplaying.player.prepareToPlay()
        try await autoplaying.recorder.waitFor(".playbackStateChanged(.playing) with shouldAutoplay set before the choice", timeout: 10) {
            $0 == .playbackStateChanged(.playing)
        }
        try await autoplaying.waitForPosition(atLeast: 0.3, timeout: 5)
        try expectNoDecoys(autoplaying)
    }

    /// Fails when an event of a refusing try reached the app.
    static func expectNoDecoys(_ p: CheckPlayer) throws {
        let events = p.recorder.events()
        let leaked = events.filter { RefusingBackend.decoys.contains($0) || $0.error?.message.contains(RefusingBackend.backendName) == true }
        try expect(leaked.isEmpty, "events of the failed try reached the app: \(summary(leaked)) (all: \(summary(events)))")
    }

    // MARK: - fallback.engine-fails

    static let engineFails = Check(
        "fallback.engine-fails",
        "the backend under test fails on random bytes, and the next backend (\(StandInBackend.backendName)) plays them: no event of the failed try reaches the app; a missing file and a forbidden scheme end at once (sourceNotFound, forbiddenURL) without trying the next backend"
    ) { context in
        let standIn = StandInBackend()
        let p = try context.player(url: try context.fixture("random.mp4"), trying: [context.backendUnderTest, standIn])
        try await p.prepare(timeout: 12)
        try expect(p.player.backendName == StandInBackend.backendName,
                   "the player names \"\(p.player.backendName)\", expected \(StandInBackend.backendName)")
        let events = p.recorder.events()
        let foreign = events.filter { event in
            if event.isFinished { return true }
            if case .naturalSizeAvailable(let size) = event { return size != StandInBackend.size }
            return false
        }
        try expect(foreign.isEmpty, "events of the failed try reached the app: \(summary(foreign)) (all: \(summary(events)))")
        try expect(p.player.naturalSize == StandInBackend.size, "naturalSize is \(p.player.naturalSize), expected the stand-in's \(StandInBackend.size)")

        let missing = try context.fixture("frames.mp4").deletingLastPathComponent().appendingPathComponent("no-such-file.mp4")
        for (url, code) in [(missing, PlaybackError.Code.sourceNotFound), (URL(string: "ftp://127.0.0.1/x")!, .forbiddenURL)] {
            let ends = try context.player(url: url, trying: [context.backendUnderTest, standIn])
            ends.player.prepareToPlay()
            let reason = try await ends.recorder.waitForFinish(timeout: 10)
            guard case .playbackError(let error) = reason else {
                throw CheckFailure("\(url.absoluteString) finished with \(reason), expected .playbackError(\(code.rawValue))")
            }
            try expect(error.code == code, "\(url.absoluteString): \(error), expected \(code.rawValue)")
        }
        try expect(standIn.counts.made == 1, "the next backend was tried after a failure no engine can mend (\(standIn.counts.made - 1) times)")
    }

    // MARK: - fallback.no-leak

    /// How many failed tries `fallback.no-leak` makes after its warm-up: a leak of one thread
    /// or fd a try (+12) exceeds the allowance of `stress.released-without-shutdown`, which it
    /// shares (idle pool threads may stay; nothing else).
    static let leakTries = 12

    static let noLeak = Check(
        "fallback.no-leak",
        "\(leakTries) players whose first try, the backend under test on random bytes, fails before a stand-in prepares: each failed try is over within 10 s, and threads and fds come back to what they were",
        timeout: 90
    ) { context in
        let standIn = StandInBackend()
        for _ in 0..<2 { try await failThenShutDown(context, standIn) }
        let baseline = try await StressChecks.quietReading(context)
        var slowest: TimeInterval = 0
        for _ in 0..<leakTries { slowest = max(slowest, try await failThenShutDown(context, standIn)) }
        context.trace.set("waiting for the threads of \(leakTries) failed tries to exit")
        let excess = try await StressChecks.settle(to: baseline, within: StressChecks.releaseAllowance, timeout: StressChecks.settleTimeout)
        try expect(excess.isEmpty, "after \(leakTries) failed tries of the backend under test (the slowest took \(format(slowest)) s) and \(format(StressChecks.settleTimeout)) s to settle: \(excess.joined(separator: "; "))")
    }

    /// One player of `fallback.no-leak`: the backend under test fails on random.mp4, the
    /// stand-in prepares it; then shutdown. Returns how long the failed try took (from
    /// prepareToPlay() to `.preparedToPlay`).
    @discardableResult
    static func failThenShutDown(_ context: CheckContext, _ standIn: StandInBackend) async throws -> TimeInterval {
        let p = try context.player(url: try context.fixture("random.mp4"), retained: false, trying: [context.backendUnderTest, standIn])
        let start = monotonicSeconds()
        try await p.prepare(timeout: 10)
        let took = monotonicSeconds() - start
        try expect(p.player.backendName == StandInBackend.backendName, "the stand-in did not play random.mp4: \(summary(p.recorder.events()))")
        try await p.shutDown(within: StressChecks.shutdownLimit, "the player after a failed try")
        return took
    }
}

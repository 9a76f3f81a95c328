import FoundationEssentials
import Glibc
import CommandLineSupport
import PlaybackKit

/// When each frame reached the `.frames` handler, by media time.
final class FrameTimeline: Sendable {
    /// One presented frame: wall clock (monotonic seconds) and presentation time.
    struct Mark: Sendable {
        var wall: Double
        var media: Double
    }

    private let marks = Locked<[Mark]>([])

    init(capacity: Int) { marks.withLock { $0.reserveCapacity(capacity) } }

    /// Called from the engine's thread for every frame: cheap, no copy of the picture.
    func record(_ frame: VideoFrame) {
        let mark = Mark(wall: monotonicSeconds(), media: frame.presentationTime)
        marks.withLock { $0.append(mark) }
    }

    var all: [Mark] { marks.get() }
}

/// How one player of a concurrency step fared.
struct PlayerVerdict: Sendable {
    /// Spread of (wall since play − media time) over the frames presented after play, seconds:
    /// how far presentation drifted from real time.
    var drift: Double
    /// Frames presented, as a share of the clip's frames.
    var frameShare: Double
    var stalled: Bool
    /// How the player finished (nil: not within the time limit).
    var finish: FinishReason?
    /// Distinct frames shown, and the first and last media time among them.
    var distinctFrames = 0
    var firstMedia = 0.0
    var lastMedia = 0.0

    /// No stall, drift under 100 ms, at least 95 % of the frames shown, ended normally.
    var isRealTime: Bool {
        !stalled && drift < ConcurrencyMeasurement.driftLimit
            && frameShare >= ConcurrencyMeasurement.frameShareLimit && finish == .playbackEnded
    }
}

/// One step: `players` players at once.
struct ConcurrencyStep: Sendable {
    var players: Int
    var passed: Bool
    /// The largest drift of any player, seconds.
    var worstDrift: Double
    /// The smallest share of frames shown by any player.
    var worstFrameShare: Double
    /// Why the step failed, if it did.
    var reason: String?
    var seconds: Double
}

/// The concurrency result of one backend.
struct ConcurrencyResult: Sendable {
    var steps: [ConcurrencyStep] = []
    /// Set when the first step could not even start.
    var failure: String?
    /// True when the time budget ended the search before a step failed.
    var cappedByTime = false

    /// The most players that played together at real time (0 if even one did not).
    var maxPlayers: Int { steps.filter(\.passed).map(\.players).max() ?? 0 }
    /// The smallest count that failed, if any.
    var firstFailure: ConcurrencyStep? { steps.filter { !$0.passed }.min { $0.players < $1.players } }
}

/// The most players of the 480p clip that play together at real time, in this process, within
/// a time budget. One player is played first and the CPU it used predicts how many fit on this
/// machine; the search starts there, grows by a quarter while steps pass (or shrinks by a
/// quarter while they fail), then halves the gap between the most that passed and the fewest
/// that failed while time allows. Every count reported was played.
struct ConcurrencyMeasurement {
    static let driftLimit = 0.100
    static let frameShareLimit = 0.95
    /// The most players a step may have.
    static let largestStep = 64
    /// The share of the machine's cores the predicted start may fill.
    static let predictedLoad = 0.9

    let media: BenchMedia
    let budget: TimeInterval
    let log: @Sendable (String) -> Void

    func run(backend: any PlaybackBackend) async -> ConcurrencyResult {
        var result = ConcurrencyResult()
        let started = monotonicSeconds()
        var lastStepSeconds = 0.0
        func fits() -> Bool { monotonicSeconds() - started + lastStepSeconds * 1.5 <= budget }

        let cpuBefore = processCPUSeconds()
        guard let single = await step(backend: backend, players: 1, into: &result) else { return result }
        lastStepSeconds = single.seconds
        guard single.passed else { return result }
        let perPlayer = (processCPUSeconds() - cpuBefore) / Double(BenchMedia.concurrency.seconds)
        var count = Self.predictedStart(cpuPerPlayer: perPlayer, cores: ProcessInfo.processInfo.activeProcessorCount)
        log(String(cFormat: "  one player used %.2f CPU s per media s: starting at %ld players", perPlayer, count))

        var passed = 1, failed: Int?
        while count > passed, count < (failed ?? Self.largestStep + 1) {
            guard fits() else {
                result.cappedByTime = true
                return result
            }
            guard let step = await step(backend: backend, players: count, into: &result) else { return result }
            // A step of many players takes longer than the single one: budget with the last.
            lastStepSeconds = step.seconds
            if step.passed {
                passed = count
                count = failed.map { (passed + $0) / 2 } ?? min(Self.largestStep, max(count + 1, count * 5 / 4))
            } else {
                failed = count
                count = passed * 2 < count ? max(passed + 1, count * 3 / 4) : (passed + count) / 2
            }
        }
        return result
    }

    /// Where the search starts: the players whose CPU fills `predictedLoad` of the cores,
    /// at least 2.
    static func predictedStart(cpuPerPlayer: Double, cores: Int) -> Int {
        guard cpuPerPlayer > 0 else { return 2 }
        return min(largestStep, max(2, Int(Double(cores) * predictedLoad / cpuPerPlayer)))
    }

    /// User and system CPU seconds of this process so far (every thread).
    private func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_utime.seconds + usage.ru_stime.seconds
    }

    /// Runs one step and appends it; nil when players could not be made at all.
    private func step(backend: any PlaybackBackend, players count: Int, into result: inout ConcurrencyResult) async -> ConcurrencyStep? {
        let clip = BenchMedia.concurrency
        let started = monotonicSeconds()
        let timelines = (0..<count).map { _ in FrameTimeline(capacity: clip.frameCount + 16) }
        var players: [any MediaPlayback] = []
        for timeline in timelines {
            let options = PlaybackOptions(videoOutput: .frames(viewport: nil, handler: { timeline.record($0) }), audioOutput: .null)
            do {
                players.append(try backend.makePlayer(url: URL(fileURLWithPath: media.concurrencyFile), options: options))
            } catch {
                for player in players { await shutDown(player) }
                if result.steps.isEmpty {
                    result.failure = "\(error)"
                    return nil
                }
                let step = ConcurrencyStep(players: count, passed: false, worstDrift: 0, worstFrameShare: 0,
                                           reason: "making player \(players.count + 1): \(error)", seconds: monotonicSeconds() - started)
                result.steps.append(step)
                return step
            }
        }

        let verdicts = await playTogether(players, timelines: timelines, clip: clip)
        for player in players { player.shutdown() }
        for player in players { await shutDown(player) }

        let step = Self.judge(count: count, verdicts: verdicts, seconds: monotonicSeconds() - started)
        log(String(cFormat: "  %2ld players: ", count) + (step.passed ? "real time" : "FAILED")
            + String(cFormat: " (worst drift %.0f ms, fewest frames %.0f %%)", step.worstDrift * 1000, step.worstFrameShare * 100)
            + (step.reason.map { " — " + $0 } ?? ""))
        result.steps.append(step)
        return step
    }

    /// Prepares every player, starts them together and waits until every one finishes.
    private func playTogether(_ players: [any MediaPlayback], timelines: [FrameTimeline], clip: BenchClip) async -> [Result<PlayerVerdict, PlaybackError>] {
        // Open all at once, then wait for each.
        let openings = players.map { $0.events }
        for player in players { player.prepareToPlay() }
        var opened = [Bool](repeating: false, count: players.count)
        var failures: [Int: PlaybackError] = [:]
        for (index, stream) in openings.enumerated() {
            let event = await firstEvent(stream, within: 60, matching: endsOpening)
            if event == .preparedToPlay {
                opened[index] = true
            } else {
                failures[index] = PlaybackError(code: .engine, message: InProcessMeasurements.describe(event, waiting: "prepared", seconds: 60))
            }
        }
        guard failures.isEmpty else {
            return players.indices.map { index in
                failures[index].map { .failure($0) }
                    ?? .failure(PlaybackError(code: .engine, message: "not started: another player failed to open"))
            }
        }

        // Watch each player's events for a stall and the finish, then start them all.
        let limit = Double(clip.seconds) + 15
        let watches = players.map { player -> Task<(stalled: Bool, finish: FinishReason?), Never> in
            let stream = player.events
            return Task {
                let stalled = Locked(false)
                let finished = await firstEvent(stream, within: limit) { event in
                    if case .loadStateChanged(let state) = event, state.contains(.stalled) { stalled.set(true) }
                    if case .finished = event { return true }
                    return false
                }
                if case .finished(let reason)? = finished { return (stalled.get(), reason) }
                return (stalled.get(), nil)
            }
        }
        var playStarts: [Double] = []
        for player in players {
            playStarts.append(monotonicSeconds())
            player.play()
        }
        var verdicts: [Result<PlayerVerdict, PlaybackError>] = []
        for (index, watch) in watches.enumerated() {
            let outcome = await watch.value
            verdicts.append(.success(Self.verdict(timelines[index].all, playStart: playStarts[index], clip: clip,
                                                  stalled: outcome.stalled, finish: outcome.finish)))
        }
        return verdicts
    }

    /// Drift and frame share of one player from its frame timeline.
    static func verdict(_ marks: [FrameTimeline.Mark], playStart: Double, clip: BenchClip, stalled: Bool, finish: FinishReason?) -> PlayerVerdict {
        let lags = marks.filter { $0.wall >= playStart }.map { ($0.wall - playStart) - $0.media }
        let drift = lags.count >= 2 ? (lags.max()! - lags.min()!) : .infinity
        // Frames handed to the handler (engines hand each new picture once); distinct
        // presentation times are kept for the report, as some engines label pictures coarsely.
        let distinct = Set(marks.map { Int(($0.media * 1000).rounded()) }).count
        return PlayerVerdict(drift: drift, frameShare: Double(marks.count) / Double(max(1, clip.frameCount)),
                             stalled: stalled, finish: finish, distinctFrames: distinct,
                             firstMedia: marks.map(\.media).min() ?? 0, lastMedia: marks.map(\.media).max() ?? 0)
    }

    /// A step passes when every player played at real time.
    static func judge(count: Int, verdicts: [Result<PlayerVerdict, PlaybackError>], seconds: Double) -> ConcurrencyStep {
        var worstDrift = 0.0, worstShare = 1.0
        var reason: String?
        for (index, outcome) in verdicts.enumerated() {
            switch outcome {
            case .failure(let error):
                worstShare = 0
                reason = reason ?? "player \(index + 1): \(error.message)"
            case .success(let verdict):
                worstDrift = max(worstDrift, verdict.drift)
                worstShare = min(worstShare, verdict.frameShare)
                guard !verdict.isRealTime, reason == nil else { continue }
                if verdict.finish != .playbackEnded {
                    reason = "player \(index + 1) " + (verdict.finish.map { "finished with \($0)" } ?? "did not finish in time")
                } else if verdict.stalled {
                    reason = "player \(index + 1) stalled"
                } else if verdict.frameShare < frameShareLimit {
                    reason = String(cFormat: "player %ld showed %.0f %% of the frames (%ld distinct times, %.3f to %.3f s)", index + 1,
                                    verdict.frameShare * 100, verdict.distinctFrames, verdict.firstMedia, verdict.lastMedia)
                } else {
                    reason = String(cFormat: "player %ld drifted %.0f ms", index + 1, verdict.drift * 1000)
                }
            }
        }
        return ConcurrencyStep(players: count, passed: reason == nil, worstDrift: worstDrift.isFinite ? worstDrift : 0,
                               worstFrameShare: worstShare, reason: reason, seconds: seconds)
    }
}

import Dispatch
import FoundationEssentials
import PlaybackKit

/// The conformance suite: every check of the `MediaPlayback` contract, run against one
/// backend (or any player factory) with the fixtures `FixtureRecipe` makes.
///
/// Each check gets a fresh player, its own deadline (a check that does not finish in time
/// fails as a hang) and a clean-up that shuts every player it made down. Checks run one after
/// another, never in parallel. A failed check is a value in the report, never a crash; a
/// check is skipped only for a reason the suite states (a fixture missing, or no http at all
/// for the checks that need a stalling HTTP source, or no X display for the optional `window`
/// family). Players use null audio and, outside the `window` family, no window, so the suite
/// runs on a machine without a sound card or display; the `window` family starts Xvfb when
/// there is no $DISPLAY and Xvfb is installed.
///
/// An adapter's own tests can run it like this:
///
/// ```swift
/// let suite = ConformanceSuite(backend: MyBackend(), fixtures: fixturesFolder)
/// let report = await suite.run(only: ["seek", "time.smooth"])   // nil: every check
/// for failure in report.failures { Issue.record("\(failure.name): \(failure.outcome.reason ?? "")") }
/// print(report.renderText())
/// ```
public struct ConformanceSuite: Sendable {
    /// Makes the player under test for a URL and options.
    public typealias Factory = @Sendable (URL, PlaybackOptions) throws -> any MediaPlayback

    /// The name the report shows for the players under test.
    public let backendName: String
    /// The engine and its version, as the report shows it.
    public let engineVersion: String
    /// The folder with the fixtures.
    public let fixtures: URL
    /// The `backendName` the players under test must report; nil: any that is not empty.
    public let expectedPlayerBackendName: String?
    private let factory: Factory

    /// A suite for the players `factory` makes. `name` labels the report's column;
    /// `expectedPlayerBackendName` is what their `backendName` must be (nil: anything but "").
    public init(name: String = "custom", engineVersion: String = "", expectedPlayerBackendName: String? = nil,
                fixtures: URL, factory: @escaping Factory) {
        self.backendName = name
        self.engineVersion = engineVersion
        self.expectedPlayerBackendName = expectedPlayerBackendName
        self.fixtures = fixtures
        self.factory = factory
    }

    /// A suite for a registered backend: its players must report its name as `backendName`.
    public init(backend: any PlaybackBackend, fixtures: URL) {
        self.init(name: backend.name, engineVersion: backend.engineVersion, expectedPlayerBackendName: backend.name,
                  fixtures: fixtures) { url, options in
            try backend.makePlayer(url: url, options: options)
        }
    }

    // MARK: - The checks

    /// Every check, in the order they run.
    static let checks: [Check] =
        LifecycleChecks.all + TimeChecks.all + SeekChecks.all + EndChecks.all + PictureChecks.all
        + ScalingChecks.all + RateVolumeChecks.all + BadInputChecks.all + NetworkChecks.all + DisciplineChecks.all
        + TrackChecks.all + SizeChecks.all + RotationChecks.all + YUVChecks.all + FormatChecks.all + PixelFormatChecks.all + StressChecks.all + FallbackChecks.all + QueueChecks.all + WindowChecks.all

    /// The families that need more than the machine the suite always runs on: `window` (an X
    /// display). Without what they need their checks are skipped, never passed.
    public static let optionalFamilies: Set<String> = [WindowChecks.family]

    /// Every family's name, in the order they run.
    public static var families: [String] {
        var seen = Set<String>()
        return checkNames.map { String($0.prefix { $0 != "." }) }.filter { seen.insert($0).inserted }
    }

    /// The name and a one-line description of every check, in the order they run.
    public static var catalogue: [(name: String, summary: String)] { checks.map { ($0.name, $0.summary) } }

    /// The names of every check.
    public static var checkNames: [String] { checks.map(\.name) }

    /// The checks `only` selects: a check's full name, or its family (the part before the
    /// dot, e.g. "seek"). Nil selects all.
    static func selected(_ only: Set<String>?) -> [Check] {
        guard let only else { return checks }
        return checks.filter { check in
            only.contains(check.name) || only.contains(String(check.name.prefix { $0 != "." }))
        }
    }

    /// The names in `only` that select no check.
    public static func unknownNames(in only: Set<String>) -> [String] {
        only.filter { selected([$0]).isEmpty }.sorted()
    }

    // MARK: - Running

    /// Runs the checks (those `only` selects, or all) one after another and reports each.
    /// `progress` hears about every check as it starts and ends.
    ///
    /// A check that fails is run again in a fresh player, up to `attempts` times in all; one
    /// that passes on a later attempt is reported `flaky` (every attempt's reason kept) and
    /// does not fail the run. `expectations` (this backend's entries are used) say which
    /// checks, or which clips of a sweep, are known to fail, fail now and then, or cannot run
    /// at all: see `ConformanceExpectation`.
    public func run(only: Set<String>? = nil, attempts: Int = 1, expectations: [ConformanceExpectation] = [],
                    progress: (@Sendable (ConformanceProgress) -> Void)? = nil) async -> ConformanceReport {
        let started = Date()
        let book = ExpectationBook(expectations, backend: backendName)
        var results: [CheckResult] = []
        for check in Self.selected(only) {
            progress?(.started(check: check.name))
            let result = await run(check, attempts: max(1, attempts), book: book)
            results.append(result)
            progress?(.finished(result))
        }
        return ConformanceReport(backend: backendName, engineVersion: engineVersion, started: started,
                                 seconds: Date().timeIntervalSince(started), results: results)
    }

    /// Runs `check` until an attempt settles it (or `attempts` ran) and judges the attempts
    /// against `book`.
    private func run(_ check: Check, attempts limit: Int, book: ExpectationBook) async -> CheckResult {
        if let entry = book.unsupported(check.name) {
            return CheckResult(name: check.name, attempts: [CheckAttempt(outcome: .skipped("unsupported: \(entry.reason)"), seconds: 0)],
                               verdict: .unsupported, expected: [entry.reason])
        }
        return await book.result(of: check.name, attempts: limit) { await run(check) }
    }

    /// Runs one check with a fresh context, racing it against its deadline.
    private func run(_ check: Check) async -> CheckAttempt {
        let context = CheckContext(fixtures: fixtures, backendName: backendName,
                                   expectedPlayerBackendName: expectedPlayerBackendName, factory: factory)
        let start = monotonicSeconds()
        // The first ending wins: how the check ended, and whether the failure lies outside a
        // sweep's clips (every failure of a check that is no sweep), as opposed to the one
        // `eachClip` ends a sweep with.
        let ending = Watched<(outcome: CheckOutcome, outsideClips: Bool)?>(nil)
        let settle: @Sendable (CheckOutcome, Bool) -> Void = { outcome, outsideClips in
            ending.update { if $0 == nil { $0 = (outcome, outsideClips) } }
        }
        // Each check runs on its own thread, so a call that never returns blocks only that
        // thread, never the shared pool the runner and later checks need.
        let executor = CheckExecutor(label: "conformance.\(check.name)")
        let task = Task(executorPreference: executor) {
            do {
                try await check.body(context)
                settle(.pass, false)
            } catch let failure as CheckFailure {
                settle(.fail(failure.reason), true)
            } catch let failure as ClipSweepFailure {
                settle(.fail(failure.reason), false)
            } catch let skip as CheckSkip {
                settle(.skipped(skip.reason), false)
            } catch is CancellationError {
                settle(.fail("cancelled"), true)
            } catch {
                settle(.fail("unexpected error: \(error)"), true)
            }
        }
        let finished = await ending.wait(timeout: check.timeout) { $0 != nil }
        if !finished {
            settle(.fail("hang: the check did not finish within \(format(check.timeout)) s (last step: \(context.trace.get()))"), true)
            task.cancel()
        }
        var (result, outsideClips) = ending.read { $0 } ?? (.fail("no outcome"), true)
        if case .fail(let reason) = result, let log = context.serverLogs() {
            result = .fail(reason + " (" + log + ")")
        }
        if let problem = await context.cleanUp() {
            outsideClips = true
            if case .fail(let reason) = result {
                result = .fail(reason + "; " + problem)
            } else {
                result = .fail(problem)
            }
        }
        let failed = result.status == "fail"
        return CheckAttempt(outcome: result, seconds: monotonicSeconds() - start,
                            clipFailures: failed ? context.clipFailures.get() : [:],
                            failedOutsideClips: failed && outsideClips)
    }
}

/// What `ConformanceSuite.run` tells its progress handler.
public enum ConformanceProgress: Sendable {
    /// A check is starting.
    case started(check: String)
    /// A check ended with this result.
    case finished(CheckResult)
}

/// One check: a stable name, what it proves, its deadline and its body.
struct Check: Sendable {
    let name: String
    let summary: String
    let timeout: TimeInterval
    let body: @Sendable (CheckContext) async throws -> Void

    init(_ name: String, _ summary: String, timeout: TimeInterval = 30,
         _ body: @escaping @Sendable (CheckContext) async throws -> Void) {
        self.name = name
        self.summary = summary
        self.timeout = timeout
        self.body = body
    }
}

/// Runs one check's jobs on a serial queue of its own.
final class CheckExecutor: TaskExecutor {
    private let queue: DispatchQueue

    init(label: String) { queue = DispatchQueue(label: label) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

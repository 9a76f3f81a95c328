/// What a backend is expected to do on a check, or on one clip of a sweep check, when that is
/// not to pass: listed so that the defect stays visible in every report while the rest of the
/// suite guards against regressions.
///
/// There are three kinds:
/// - `fails`: a deterministic failure. It does not fail a run; a pass is reported as `XPASS`
///   (and fails a strict run, `--strict`), so the entry gets removed once the defect is fixed.
/// - `flaky`: an intermittent failure. The check is retried like any other; when it fails
///   every attempt the run goes on (the failure is recorded with every attempt's reason).
/// - `unsupported`: the engine cannot do it at all. The check does not run; the report shows
///   it as unsupported, never as a pass.
///
/// A sweep check (the picture-size and YUV sweeps, the format sweep's first pictures) judges
/// each clip on its own: an entry with a `clip` covers that clip alone, so one clip's defect
/// does not hide a regression on the others. An entry without a clip covers the whole check.
///
/// ```swift
/// let expectations: [ConformanceExpectation] = [
///     .unsupported("xine", "tracks.list", "xine's frontend API has no track list"),
///     .fails("xine", "seek.first-frames", clip: nil, "its ASF demuxer starts late"),
///     .flaky("xine", "picture-size.residues", clip: "sizes/79x58.webm", "now and then ..."),
/// ]
/// ```
public struct ConformanceExpectation: Sendable, Equatable, Codable {
    /// How a check is expected to end.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// It fails every time.
        case fails
        /// It fails now and then.
        case flaky
        /// The engine cannot do what it checks.
        case unsupported
    }

    /// The backend's name.
    public let backend: String
    /// The check's full name, e.g. "seek.first-frames".
    public let check: String
    /// The clip of a sweep check this entry covers (its path in the fixtures folder, e.g.
    /// "sizes/79x58.webm"); nil: the whole check.
    public let clip: String?
    /// How the check is expected to end.
    public let kind: Kind
    /// What goes wrong, and why.
    public let reason: String

    /// An entry of `kind` for `check` (or its `clip`) on `backend`.
    public init(backend: String, check: String, clip: String? = nil, kind: Kind, reason: String) {
        self.backend = backend
        self.check = check
        self.clip = clip
        self.kind = kind
        self.reason = reason
    }

    /// A check that fails every time: the initialiser of the earlier `KnownFailure`.
    @available(*, deprecated, message: "use ConformanceExpectation.fails(_:_:clip:_:), .flaky or .unsupported")
    public init(backend: String, check: String, reason: String) {
        self.init(backend: backend, check: check, kind: .fails, reason: reason)
    }

    /// A check (or a sweep's clip) that fails every time.
    public static func fails(_ backend: String, _ check: String, clip: String? = nil, _ reason: String) -> Self {
        Self(backend: backend, check: check, clip: clip, kind: .fails, reason: reason)
    }

    /// A check (or a sweep's clip) that fails now and then.
    public static func flaky(_ backend: String, _ check: String, clip: String? = nil, _ reason: String) -> Self {
        Self(backend: backend, check: check, clip: clip, kind: .flaky, reason: reason)
    }

    /// A check the engine cannot do at all; it is not run.
    public static func unsupported(_ backend: String, _ check: String, _ reason: String) -> Self {
        Self(backend: backend, check: check, clip: nil, kind: .unsupported, reason: reason)
    }

    /// `backend/check` or `backend/check [clip]`, as the reports name it.
    public var label: String { "\(backend)/\(check)" + (clip.map { " [\($0)]" } ?? "") }
}

// MARK: - Judging

/// The expectations of one backend, and how the attempts of a check measure against them.
struct ExpectationBook: Sendable {
    private let entries: [ConformanceExpectation]

    /// The entries of `backend` among `all`.
    init(_ all: [ConformanceExpectation], backend: String) {
        entries = all.filter { $0.backend == backend }
    }

    /// The entries for `check`.
    func entries(for check: String) -> [ConformanceExpectation] {
        entries.filter { $0.check == check }
    }

    /// The entry that makes `check` unsupported, if any.
    func unsupported(_ check: String) -> ConformanceExpectation? {
        entries(for: check).first { $0.kind == .unsupported && $0.clip == nil }
    }

    /// What one attempt of `check` comes to: passed, skipped, failed only as listed (and how),
    /// or failed in a way no entry covers.
    func judge(_ attempt: CheckAttempt, check: String) -> AttemptJudgement {
        switch attempt.outcome {
        case .pass: return .passed
        case .skipped: return .skipped
        case .fail: break
        }
        let listed = entries(for: check)
        let whole = listed.first { $0.clip == nil }
        var covering: [ConformanceExpectation] = []
        // What failed outside the clips of a sweep (a hang, a step before the first clip, the
        // clean-up) only a whole-check entry covers; each failed clip its own entry or that one.
        if attempt.failedOutsideClips {
            guard let whole else { return .uncovered }
            covering.append(whole)
        }
        for clip in attempt.clipFailures.keys {
            guard let entry = listed.first(where: { $0.clip == clip }) ?? whole else { return .uncovered }
            covering.append(entry)
        }
        return covering.contains { $0.kind != .fails } ? .listedFlaky : .listedFailure
    }

    /// Runs `attempt` until one settles `check` (a pass, a skip, or failures all listed as
    /// `fails`) or `limit` attempts ran, and gives the verdict: a pass on a later attempt is
    /// `flaky`; failing every attempt is `listedFlaky` when `flaky` entries cover it, else `fail`.
    func result(of check: String, attempts limit: Int, attempt: () async -> CheckAttempt) async -> CheckResult {
        var attempts: [CheckAttempt] = []
        var judgement = AttemptJudgement.uncovered
        while attempts.count < max(1, limit) {
            let next = await attempt()
            attempts.append(next)
            judgement = judge(next, check: check)
            if judgement.isSettled { break }
        }
        let verdict: CheckVerdict
        switch (judgement, attempts.count) {
        case (.passed, 1): verdict = contradictsPass(of: check) ? .unexpectedPass : .pass
        case (.listedFailure, 1): verdict = .expectedFailure
        case (.passed, _), (.listedFailure, _): verdict = .flaky
        case (.skipped, _): verdict = .skipped
        case (.listedFlaky, _): verdict = .listedFlaky
        case (.uncovered, _): verdict = .fail
        }
        let expected = verdict == .pass || verdict == .skipped ? [] : entries(for: check).map(\.reason)
        return CheckResult(name: check, attempts: attempts, verdict: verdict, expected: expected)
    }

    /// Whether a pass of `check` contradicts a `fails` entry for it.
    func contradictsPass(of check: String) -> Bool {
        entries(for: check).contains { $0.kind == .fails }
    }
}

/// What one attempt of a check comes to, against the expectations.
enum AttemptJudgement: Equatable {
    /// The check passed.
    case passed
    /// The check was skipped for a reason it stated.
    case skipped
    /// It failed, and every failure is listed as `fails`.
    case listedFailure
    /// It failed, every failure is listed, and at least one as `flaky`.
    case listedFlaky
    /// It failed in a way no entry covers.
    case uncovered

    /// Whether another attempt would add nothing: the result is settled.
    var isSettled: Bool { self == .passed || self == .skipped || self == .listedFailure }
}

import Foundation
@testable import PlaybackConformance
import Testing

/// The retry and expectation rules of the runner, on scripted attempts: no player, no clock.
@Suite struct ExpectationTests {
    /// Attempts handed out in turn, as a check's runs would end.
    final class Script: @unchecked Sendable {  // used from one task at a time
        private var attempts: [CheckAttempt]
        private(set) var runs = 0
        init(_ attempts: [CheckAttempt]) { self.attempts = attempts }
        func next() -> CheckAttempt {
            runs += 1
            return attempts.removeFirst()
        }
    }

    static let pass = CheckAttempt(outcome: .pass, seconds: 1)
    static func fail(_ reason: String) -> CheckAttempt { CheckAttempt(outcome: .fail(reason), seconds: 1) }
    static func sweep(_ failed: [String: String]) -> CheckAttempt {
        CheckAttempt(outcome: .fail(failed.map { "\($0): \($1)" }.joined(separator: "; ")), seconds: 1,
                     clipFailures: failed, failedOutsideClips: false)
    }

    func result(_ attempts: [CheckAttempt], limit: Int, _ entries: [ConformanceExpectation] = [],
                check: String = "seek.storm") async -> (CheckResult, runs: Int) {
        let script = Script(attempts)
        let result = await ExpectationBook(entries, backend: "engine").result(of: check, attempts: limit) { script.next() }
        return (result, script.runs)
    }

    @Test func aPassAtTheFirstAttemptIsAPassAndRunsOnce() async {
        let (result, runs) = await result([Self.pass], limit: 3)
        #expect(result.verdict == .pass && runs == 1 && !result.failsRun())
    }

    @Test func aPassOnALaterAttemptIsFlakyWithEveryReasonKept() async {
        let (result, runs) = await result([Self.fail("late"), Self.fail("later"), Self.pass], limit: 3)
        #expect(result.verdict == .flaky && runs == 3 && result.passedOnAttempt == 3)
        #expect(result.attempts.compactMap(\.outcome.reason) == ["late", "later"])
        #expect(!result.failsRun(strict: true))
        let report = ConformanceReport(backend: "engine", engineVersion: "", started: Date(), seconds: 3, results: [result])
        #expect(report.noteLines == ["flaky: engine/seek.storm (passed on attempt 3): late | later"])
        #expect(report.summaryLine.contains("1 flaky"))
    }

    @Test func failingEveryAttemptFailsTheRun() async {
        let (result, runs) = await result([Self.fail("a"), Self.fail("b")], limit: 2)
        #expect(result.verdict == .fail && runs == 2 && result.failsRun())
    }

    @Test func withOneAttemptAFailureIsNotRetried() async {
        let (result, runs) = await result([Self.fail("a"), Self.pass], limit: 1)
        #expect(result.verdict == .fail && runs == 1)
    }

    @Test func aListedFailureIsNotRetriedAndAPassContradictsIt() async {
        let entry = ConformanceExpectation.fails("engine", "seek.storm", "lands late")
        let (failed, runs) = await result([Self.fail("late"), Self.pass], limit: 3, [entry])
        #expect(failed.verdict == .expectedFailure && runs == 1 && !failed.failsRun(strict: true))
        let (passed, _) = await result([Self.pass], limit: 3, [entry])
        #expect(passed.verdict == .unexpectedPass && !passed.failsRun() && passed.failsRun(strict: true))
        // Another backend's entry covers nothing here.
        let (other, _) = await result([Self.fail("late")], limit: 1, [.fails("other", "seek.storm", "lands late")])
        #expect(other.verdict == .fail)
    }

    @Test func aListedFlakyCheckIsRetriedAndDoesNotFailTheRun() async {
        let entry = ConformanceExpectation.flaky("engine", "seek.storm", "now and then")
        let (failing, runs) = await result([Self.fail("a"), Self.fail("b"), Self.fail("c")], limit: 3, [entry])
        #expect(failing.verdict == .listedFlaky && runs == 3 && !failing.failsRun(strict: true))
        let (recovered, _) = await result([Self.fail("a"), Self.pass], limit: 3, [entry])
        #expect(recovered.verdict == .flaky)
        let (passed, _) = await result([Self.pass], limit: 3, [entry])
        #expect(passed.verdict == .pass, "a flaky entry that passes is no contradiction")
    }

    @Test func aSweepIsJudgedPerClip() async {
        let entries: [ConformanceExpectation] = [.fails("engine", "picture-size.residues", clip: "sizes/79x58.webm", "VP9")]
        // The listed clip alone failing: a listed failure.
        let (listed, _) = await result([Self.sweep(["sizes/79x58.webm": "grey"])], limit: 2, entries, check: "picture-size.residues")
        #expect(listed.verdict == .expectedFailure)
        // Another clip failing as well is a regression the entry does not hide.
        let (both, runs) = await result([Self.sweep(["sizes/79x58.webm": "grey", "sizes/64x48.mp4": "wrong size"]),
                                         Self.sweep(["sizes/79x58.webm": "grey", "sizes/64x48.mp4": "wrong size"])],
                                        limit: 2, entries, check: "picture-size.residues")
        #expect(both.verdict == .fail && runs == 2)
        // A failure outside the clips (a hang) needs an entry for the whole check.
        let hang = CheckAttempt(outcome: .fail("hang"), seconds: 150, clipFailures: ["sizes/79x58.webm": "grey"], failedOutsideClips: true)
        let (hung, _) = await result([hang], limit: 1, entries, check: "picture-size.residues")
        #expect(hung.verdict == .fail)
        let (whole, _) = await result([hang], limit: 1, [.flaky("engine", "picture-size.residues", "now and then")], check: "picture-size.residues")
        #expect(whole.verdict == .listedFlaky)
    }

    @Test func anUnsupportedEntryIsFoundAndTheBuiltInListNamesRealChecks() {
        let book = ExpectationBook([.unsupported("engine", "tracks.table", "no track list")], backend: "engine")
        #expect(book.unsupported("tracks.table")?.reason == "no track list")
        #expect(book.unsupported("tracks.mov-text") == nil)
        let names = Set(ConformanceSuite.checkNames)
        for entry in ConformanceExpectation.builtInEngines {
            #expect(names.contains(entry.check), "\(entry.label) names no check")
            #expect(["gstreamer", "ffmpeg", "mpv", "vlc"].contains(entry.backend), "\(entry.label)")
        }
        let clips = Set(SizeSweep.all.map(\.fixture) + FormatChecks.clips.map(\.path))
        for entry in ConformanceExpectation.builtInEngines {
            if let clip = entry.clip { #expect(clips.contains(clip), "\(entry.label) names no clip of a sweep") }
        }
    }

    @Test func aResultRoundTripsThroughJSONWithItsAttempts() throws {
        let result = CheckResult(name: "seek.storm", attempts: [Self.sweep(["sizes/64x48.mp4": "late"]), Self.pass],
                                 verdict: .flaky, expected: [])
        let encoder = JSONEncoder()
        let decoded = try JSONDecoder().decode(CheckResult.self, from: encoder.encode(result))
        #expect(decoded == result)
        let old = #"{"name":"seek.storm","status":"fail","reason":"late","seconds":1}"#
        let read = try JSONDecoder().decode(CheckResult.self, from: Data(old.utf8))
        #expect(read.verdict == .fail && read.attempts.count == 1)
    }
}

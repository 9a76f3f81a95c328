import Foundation
import PlaybackConformance
import Testing

/// The command line's argument handling: usage errors, help, the backend list and the
/// conformance runner's own options. Nothing here plays media, so every test's verdict is
/// the same on a loaded machine as on an idle one (the gate runs them).
@Suite(.serialized) struct MediaplayArgumentTests {
    @Test func backendsListsEachWithItsEngineVersion() throws {
        let result = try CLI.run(["backends"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            let fields = line.split(separator: "\t")
            #expect(fields.count == 2, "\(line)")
            #expect(fields.last.map { $0.rangeOfCharacter(from: .decimalDigits) != nil } == true, "no version in \(line)")
        }
    }

    @Test func unknownBackendIsOneClearLine() throws {
        let result = try CLI.run(["info", "--backend", "nonesuch", CLI.fixtures.appendingPathComponent("frames.mp4").path])
        #expect(result.status != 0)
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.contains("nonesuch"))
        for name in CLI.backends { #expect(result.stderr.contains(name)) }
    }

    @Test func unknownCommandAndMissingOperandFail() throws {
        let unknown = try CLI.run(["frobnicate"])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("unknown command"))
        let missing = try CLI.run(["thumbnail", "--at", "1"])
        #expect(missing.status != 0)
        #expect(missing.stderr.split(separator: "\n").count == 1)
    }

    @Test func conformanceRefusesAnUnknownBackendOrCheckWithStatus2() throws {
        let backend = try CLI.run(["conformance", "--backend", "nonesuch"])
        #expect(backend.status == 2)
        #expect(backend.stderr.contains("mediaplay conformance: error: unknown backend 'nonesuch'"), "\(backend.stderr)")
        let check = try CLI.run(["conformance", "--check", "no.such-check"])
        #expect(check.status == 2)
        #expect(check.stderr.contains("unknown check(s) no.such-check"), "\(check.stderr)")
        let option = try CLI.run(["conformance", "--frobnicate"])
        #expect(option.status == 2)
        #expect(option.stderr.contains("unknown option --frobnicate"), "\(option.stderr)")
        let attempts = try CLI.run(["conformance", "--attempts", "0"])
        #expect(attempts.status == 2)
        #expect(attempts.stderr.contains("--attempts needs a whole number of at least 1"), "\(attempts.stderr)")
    }

    @Test func conformanceListsItsChecksAndMakesFixturesWhereAsked() throws {
        let list = try CLI.run(["conformance", "--list"])
        #expect(list.status == 0)
        #expect(list.stdout.split(separator: "\n").count == ConformanceSuite.checkNames.count)
        #expect(list.stdout.contains("seek.storm\t"))
        let made = try CLI.run(["conformance", "--make-fixtures", "--fixtures", CLI.fixtures.path])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout == CLI.fixtures.standardizedFileURL.path + "\n")
    }

    @Test func subWithAQueueIsAClearError() throws {
        let cues = CLI.fixtures.appendingPathComponent("tracks/cues.srt")
        let short = CLI.fixtures.appendingPathComponent("short.mp4").path
        let result = try CLI.run(["play", "--audio", "null", "--sub", cues.path, short, short])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--sub goes with one file"), "\(result.stderr)")
    }

    @Test(arguments: ["backends", "play", "info", "thumbnail", "conformance"])
    func everyCommandAnswersHelp(command: String) throws {
        let result = try CLI.run([command, "--help"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("usage: mediaplay \(command)"), "\(result.stdout)")
    }

    @Test func sizeAndFullscreenNeedTheWindowAndAValidSize() throws {
        let withoutWindow = try CLI.run(["play", "--fullscreen", "--audio", "null", "x.mp4"])
        #expect(withoutWindow.status != 0 && withoutWindow.stderr.contains("--size and --fullscreen go with --window"))
        let badSize = try CLI.run(["play", "--window", "--size", "big", "--audio", "null", "x.mp4"])
        #expect(badSize.status != 0 && badSize.stderr.contains("--size takes WIDTHxHEIGHT"))
    }
}

import Foundation
import PlaybackConformance
import PlaybackKit
import Testing

/// Runs the built `mediaplay` binary the way a user does.
enum CLI {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The checkout (this file is Tests/MediaplayTests/MediaplayTests.swift).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `mediaplay` next to the test bundle in the build folder.
    static var binary: URL {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while folder.path != "/" {
            let candidate = folder.appendingPathComponent("mediaplay")
            if FileManager.default.isExecutableFile(atPath: candidate.path),
               !folder.path.hasSuffix("Sources") { return candidate }
            folder.deleteLastPathComponent()
        }
        return root.appendingPathComponent(".build/debug/mediaplay")
    }

    /// The fixtures, made on first use.
    static let fixtures: URL = (try? FixtureRecipe.make(checkout: root)) ?? root.appendingPathComponent("Fixtures")

    /// Runs `mediaplay arguments` with stdin from /dev/null and a time limit.
    static func run(_ arguments: [String], timeout: TimeInterval = 60, environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = root
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: Backends.environmentVariable)
        env.merge(environment) { $1 }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        let done = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in done.signal() }
        try process.run()
        // Read while it runs so a full pipe cannot block it.
        let outData = Locked(Data()), errData = Locked(Data())
        let readers = DispatchGroup()
        for (pipe, store) in [(out, outData), (err, errData)] {
            DispatchQueue.global().async(group: readers) {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                store.set(data)
            }
        }
        if done.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            // The test runner's threads block SIGTERM, and a child inherits that mask.
            if done.wait(timeout: .now() + 5) == .timedOut {
                kill(process.processIdentifier, SIGKILL)
                _ = done.wait(timeout: .now() + 5)
            }
            Issue.record("mediaplay \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
        }
        readers.wait()
        return Result(status: process.terminationStatus,
                      stdout: String(decoding: outData.get(), as: UTF8.self),
                      stderr: String(decoding: errData.get(), as: UTF8.self))
    }

    /// The backends this build has, from `mediaplay backends`.
    static let backends: [String] = {
        guard let result = try? run(["backends"]), result.status == 0 else { return [] }
        let names = result.stdout.split(separator: "\n").compactMap { $0.split(separator: "\t").first.map(String.init) }
        // Those PLAYBACK_TEST_BACKENDS lists, when it is set (scripts/check-all.sh --backend).
        guard let list = ProcessInfo.processInfo.environment["PLAYBACK_TEST_BACKENDS"], !list.isEmpty else { return names }
        let chosen = Set(list.split(separator: ",").map(String.init))
        return names.filter(chosen.contains)
    }()
}

@Suite(.serialized) struct MediaplayTests {
    @Test(arguments: CLI.backends)
    func missingFileIsOneLineAndNonZero(backend: String) throws {
        let result = try CLI.run(["play", "--backend", backend, "--audio", "null", "/nonexistent/clip.mp4"], timeout: 30)
        #expect(result.status != 0)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("sourceNotFound"))
        #expect(result.stderr.contains("/nonexistent/clip.mp4"))
    }

    @Test(arguments: CLI.backends)
    func brokenFileIsOneLineAndNonZero(backend: String) throws {
        let result = try CLI.run(["info", "--backend", backend, CLI.fixtures.appendingPathComponent("random.mp4").path], timeout: 30)
        #expect(result.status != 0)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("unsupportedFormat"), "\(result.stderr)")
    }

    @Test(arguments: CLI.backends)
    func thumbnailWritesTheFrameAtThatTime(backend: String) throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("mediaplay-\(backend)-\(UUID().uuidString).png")
        defer { try? FileManager.default.removeItem(at: output) }
        let result = try CLI.run(["thumbnail", "--backend", backend, "--at", "5", CLI.fixtures.appendingPathComponent("frames.mp4").path, "-o", output.path])
        #expect(result.status == 0, "\(result.stderr)")
        let frame = try VideoFrame(pngData: Data(contentsOf: output))
        #expect(frame.size == VideoSize(width: 320, height: 240))
        #expect(FramePattern.frameNumber(in: frame) == 125, "frame at 5 s of a 25 fps clip")
    }

    @Test(arguments: CLI.backends)
    func infoReportsDurationAndSizeAsJSON(backend: String) throws {
        let result = try CLI.run(["info", "--json", "--backend", backend, CLI.fixtures.appendingPathComponent("anamorphic.mp4").path])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(object?["width"] as? Int == 480)
        #expect(object?["height"] as? Int == 240)
        #expect(abs((object?["duration"] as? Double ?? 0) - 4) < 0.05)
    }

    @Test(arguments: CLI.backends)
    func playRunsToTheEndAndExitsZero(backend: String) throws {
        let result = try CLI.run(["play", "--backend", backend, "--audio", "null", CLI.fixtures.appendingPathComponent("short.mp4").path], timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("00:00:03 / 00:00:03"), "\(result.stdout)")
        #expect(result.stdout.contains("00:00:01 / 00:00:03"), "\(result.stdout)")
    }

    @Test(arguments: CLI.backends)
    func infoReadsHTTPAndHLSSources(backend: String) throws {
        let server = try LocalHTTPServer()
        defer { server.stop() }
        server.route("/frames.mp4", .content(try .file(CLI.fixtures.appendingPathComponent("frames.mp4"))))
        try server.routeFolder(CLI.fixtures.appendingPathComponent("hls"), at: "/hls")
        for path in ["/frames.mp4", "/hls/index.m3u8"] {
            let result = try CLI.run(["info", "--json", "--backend", backend, server.url(path).absoluteString], timeout: 30)
            #expect(result.status == 0, "\(path): \(result.stderr)")
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            #expect(abs((object?["duration"] as? Double ?? 0) - 10) < 0.1, "\(path): \(result.stdout)")
            #expect(object?["width"] as? Int == 320, "\(path): \(result.stdout)")
        }
    }

    @Test(arguments: CLI.backends)
    func playRunsAnHTTPSourceToTheEnd(backend: String) throws {
        let server = try LocalHTTPServer()
        defer { server.stop() }
        server.route("/short.mp4", .content(try .file(CLI.fixtures.appendingPathComponent("short.mp4"))))
        let result = try CLI.run(["play", "--backend", backend, "--audio", "null", server.url("/short.mp4").absoluteString], timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("00:00:03 / 00:00:03"), "\(result.stdout)")
    }

    /// `--open-timeout` gives up on a server that accepts and never answers after the time
    /// given, not the default 20 s; a time that is not above 0 is refused.
    @Test(arguments: CLI.backends)
    func openTimeoutGivesUpOnASilentServer(backend: String) throws {
        let server = try LocalHTTPServer()
        defer { server.stop() }
        server.route("/silent.mp4", .silent)
        let url = server.url("/silent.mp4").absoluteString
        for command in [["info"], ["play", "--audio", "null"]] {
            let started = monotonicSeconds()
            let result = try CLI.run(command + ["--backend", backend, "--open-timeout", "2", url], timeout: 15)
            let elapsed = monotonicSeconds() - started
            #expect(result.status != 0, "\(command[0]): \(result.stderr)")
            #expect(result.stderr.contains("network"), "\(command[0]): \(result.stderr)")
            #expect(elapsed > 1.9 && elapsed < 8, "\(command[0]) gave up after \(elapsed) s")
        }
        for bad in ["0", "-1", "soon"] {
            let refused = try CLI.run(["thumbnail", "--backend", backend, "--open-timeout", bad, "--at", "1", url, "-o", "/dev/null"])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("--open-timeout"), "\(bad): \(refused.stderr)")
        }
    }

    /// The time widget says (buffering) while the load state is stalled. The FFmpeg engine
    /// plays a source at 35% of its bitrate in deterministic stalls (other engines may buffer
    /// all of a clip this short before they start).
    @Test func playShowsBufferingFromASlowSource() throws {
        guard CLI.backends.contains("ffmpeg") else { return }
        let server = try LocalHTTPServer()
        defer { server.stop() }
        let clip = CLI.fixtures.appendingPathComponent("short.mp4")
        var content = try LocalHTTPServer.Content.indexFirstMP4(clip)
        content.bytesPerSecond = content.data.count / 3 * 35 / 100
        server.route("/short.mp4", .content(content))
        let result = try CLI.run(["play", "--backend", "ffmpeg", "--audio", "null", server.url("/short.mp4").absoluteString], timeout: 40)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("(buffering)"), "\(result.stdout)")
        #expect(result.stdout.contains("00:00:03 / 00:00:03"), "\(result.stdout)")
    }

    @Test func environmentChoosesTheBackend() throws {
        guard let last = CLI.backends.last else { return }
        let result = try CLI.run(["info", CLI.fixtures.appendingPathComponent("frames.mp4").path], environment: ["MEDIAPLAYBACK_BACKEND": last])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("backend:  \(last)"))
    }

    // MARK: - conformance (the library's runner)

    @Test func conformanceRunsAFamilyAndPrintsTheMatrixAsJSON() throws {
        guard let backend = CLI.backends.first else { return }
        let result = try CLI.run(["conformance", "--backend", backend, "--check", "bad-input.empty", "--check", "lifecycle.prepared", "--json"], timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let matrix = try decoder.decode(ConformanceMatrix.self, from: Data(result.stdout.utf8))
        #expect(matrix.reports.map(\.backend) == [backend])
        #expect(matrix.reports.first?.results.map(\.name) == ["lifecycle.prepared", "bad-input.empty"])
        #expect(result.stderr.contains("[\(backend)] lifecycle.prepared: pass"), "\(result.stderr)")
    }

    // MARK: - play queues

    @Test(arguments: CLI.backends)
    func playPlaysAQueueOfFiles(backend: String) throws {
        let files = ["short.mp4", "anamorphic.mp4"].map { CLI.fixtures.appendingPathComponent($0).path }
        let start = Date()
        let result = try CLI.run(["play", "--backend", backend, "--audio", "null"] + files, timeout: 30)
        let seconds = Date().timeIntervalSince(start)
        #expect(result.status == 0, "\(result.stderr)")
        for line in ["[1/2] short.mp4", "00:00:02 / 00:00:03", "[2/2] anamorphic.mp4", "00:00:04 / 00:00:04"] {
            #expect(result.stdout.contains(line), "no '\(line)' in \(result.stdout)")
        }
        #expect(seconds < 7 + 3, "3 s and 4 s of media took \(seconds) s")
    }

    @Test func aFailingItemIsSkippedWithOneLineAndTheQueueGoesOn() throws {
        let backend = try #require(CLI.backends.first)
        let files = ["random.mp4", "short.mp4"].map { CLI.fixtures.appendingPathComponent($0).path }
        let result = try CLI.run(["play", "--backend", backend, "--audio", "null"] + files, timeout: 30)
        #expect(result.status != 0)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("skipping random.mp4 (item 1 of 2)") && lines[0].contains("unsupportedFormat"), "\(result.stderr)")
        #expect(result.stdout.contains("[2/2] short.mp4") && result.stdout.contains("00:00:03 / 00:00:03"), "\(result.stdout)")
    }

    @Test func aListOfBackendsTriesEachInTurnFromTheArgumentOrTheEnvironment() throws {
        let backend = try #require(CLI.backends.last)
        let clip = CLI.fixtures.appendingPathComponent("frames.mp4").path
        let fromArgument = try CLI.run(["info", "--backend", "nonesuch,\(backend)", clip])
        let fromEnvironment = try CLI.run(["info", clip], environment: ["MEDIAPLAYBACK_BACKEND": "nonesuch,\(backend)"])
        for result in [fromArgument, fromEnvironment] {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("backend:  \(backend)"), "\(result.stdout)")
        }
        let invalid = try CLI.run(["play", "--loop", "twice", clip])
        #expect(invalid.status != 0 && invalid.stderr.contains("--loop"), "\(invalid.stderr)")
    }

}

import Dispatch
import FoundationEssentials
import Glibc
import PlaybackKit

/// The media the suite checks against, made with the ffmpeg CLI from lavfi sources
/// (`FixtureClips` and `FixtureTracks` list every clip and file). The recipe ships inside
/// this library, so it works from any package and any folder: an adapter author needs the
/// ffmpeg CLI on PATH and nothing of this package's checkout.
///
/// ```swift
/// let fixtures = try FixtureRecipe.make(in: URL(fileURLWithPath: "Fixtures"))
/// let report = await ConformanceSuite(backend: MyBackend(), fixtures: fixtures).run()
/// ```
///
/// Making them takes about 40 s on two cores, once: a stamp in the folder names the
/// recipe that made it, and a folder already made by this recipe is confirmed at once. One
/// run at a time: a second process (or thread) waits for the first, then finds the stamp.
public enum FixtureRecipe {
    /// The stamp of this recipe: a checksum over every clip's ffmpeg arguments, the text
    /// files' bytes and the broken inputs' description. A change to the recipe changes it, and
    /// the fixtures are made again.
    public static let stamp: String = {
        let text = (FixtureClips.main.map(\.description) + FixtureClips.streaming.map(\.description)
            + FixtureTracks.clips.map(\.description) + [FixtureTracks.description]
            + FixtureClips.formats.map(\.description) + FixtureClips.sizes.map(\.description)
            + PixelFormatClip.all.map(\.job.description)
            + [FixtureClips.turnedDescription, FixtureClips.brokenDescription]).joined(separator: "\n")
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325  // FNV-1a, 64 bits
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return "recipe-" + String(hash, radix: 16)
    }()

    /// The folder the command-line runner uses when it is given none: `Fixtures` in the
    /// current directory.
    public static var defaultFolder: URL {
        URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Fixtures")
    }

    /// Makes (or confirms) the fixtures in `folder`, creating it, and returns it. Throws a
    /// `PlaybackError` when the ffmpeg CLI is missing or a clip cannot be made.
    @discardableResult
    public static func make(in folder: URL) throws -> URL {
        let folder = folder.standardizedFileURL
        try createFolder(folder)
        let lock = open(folder.appendingPathComponent(".lock").path, O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
        guard lock >= 0 else { throw failure("cannot open \(folder.path)/.lock: \(String(cString: strerror(errno)))") }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else { throw failure("cannot lock \(folder.path)/.lock: \(String(cString: strerror(errno)))") }
        }
        let stampFile = folder.appendingPathComponent(".stamp")
        if let made = try? String(contentsOf: stampFile, encoding: .utf8), made.trimmingWhitespace() == stamp {
            return folder
        }
        guard let ffmpeg = Subprocess.find("ffmpeg"), let ffprobe = Subprocess.find("ffprobe") else {
            throw failure("the ffmpeg CLI (ffmpeg and ffprobe) is not on PATH; it makes the test media (Debian: apt-get install -y ffmpeg)")
        }
        StandardStreams.writeError("fixtures: making the test media in \(folder.path) with \(ffmpeg) (about 40 s, once)\n")
        let maker = FixtureMaker(folder: folder, ffmpeg: ffmpeg, ffprobe: ffprobe)
        try maker.makeAll()
        try Data((stamp + "\n").utf8).write(to: stampFile)
        return folder
    }

    /// Makes (or confirms) the fixtures of this package's checkout at `checkout`, in its
    /// `Fixtures/` folder, and returns that folder.
    @discardableResult
    public static func make(checkout: URL) throws -> URL {
        try make(in: checkout.appendingPathComponent("Fixtures"))
    }

    static func failure(_ message: String) -> PlaybackError {
        PlaybackError(code: .engine, message: "fixtures: \(message)")
    }

    static func createFolder(_ folder: URL) throws {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw failure("cannot create \(folder.path): \(error)")
        }
    }
}

// MARK: - Making them

/// One run of the recipe into one folder.
private struct FixtureMaker: Sendable {
    let folder: URL
    let ffmpeg: String
    let ffprobe: String

    /// How many ffmpeg processes run at once (the encoders use several threads each).
    static let parallelRuns = 4

    func makeAll() throws {
        for subfolder in ["formats", "sizes", "tracks", PixelFormatClip.folder] {
            try FixtureRecipe.createFolder(folder.appendingPathComponent(subfolder))
        }
        for file in FixtureTracks.textFiles {
            try write(file.bytes, to: file.path)
        }
        let encoders = try availableEncoders()
        // The longest runs first, so that the last to start are short.
        var work: [@Sendable () throws -> Void] = []
        work += (FixtureClips.streaming + FixtureTracks.clips + FixtureClips.main).map { job in { try run(job) } }
        work += FixtureClips.formats.map { job in { try make(job, encoders: encoders) } }
        work += FixtureClips.sizes.map { job in { try run(job) } }
        work += PixelFormatClip.all.map { clip in { try run(clip.job) } }
        try runInParallel(work)
        FixtureTracks.inputs.forEach { unlink(path($0)) }
        try joinSizeChange()
        try makeTurned()
        try makeBrokenInputs()
    }

    /// The turned clips: clips made above, copied with a display matrix each.
    private func makeTurned() throws {
        for clip in FixtureClips.turned {
            let partial = staged(clip.output)
            try runFFmpeg(FixtureClips.turnedArguments(input: clip.source, turn: clip.turn), output: partial)
            try move(partial, to: clip.output)
        }
    }

    private func path(_ relative: String) -> String { folder.appendingPathComponent(relative).path }

    /// Writes `bytes` to the file at `relative`, through a file beside it moved into place.
    private func write(_ bytes: [UInt8], to relative: String) throws {
        let partial = staged(relative)
        try Data(bytes).write(to: URL(fileURLWithPath: path(partial)))
        try move(partial, to: relative)
    }

    /// Where ffmpeg writes `relative` until it is whole: `.partial-<name>` beside it (the
    /// same extension, which ffmpeg picks the muxer by).
    private func staged(_ relative: String) -> String {
        let slash = relative.lastIndex(of: "/").map { relative.index(after: $0) } ?? relative.startIndex
        return relative[..<slash] + ".partial-" + relative[slash...]
    }

    /// Renames `partial` to `relative`, replacing what is there (a folder too).
    private func move(_ partial: String, to relative: String) throws {
        if rename(path(partial), path(relative)) != 0 {
            if errno == ENOTEMPTY || errno == EEXIST || errno == EISDIR {
                try? FileManager.default.removeItem(atPath: path(relative))
                if rename(path(partial), path(relative)) == 0 { return }
            }
            throw FixtureRecipe.failure("cannot move \(partial) to \(relative): \(String(cString: strerror(errno)))")
        }
    }

    /// Runs ffmpeg with `arguments` and the output file `output`; the input files (`-i` but
    /// for lavfi sources) and `output` are relative to the fixtures folder.
    private func runFFmpeg(_ arguments: [String], output: String, environment: [String: String] = [:]) throws {
        var resolved = arguments
        for index in resolved.indices.dropFirst() where resolved[index - 1] == "-i" {
            let lavfi = index >= 3 && resolved[index - 3] == "-f" && resolved[index - 2] == "lavfi"
            if !lavfi { resolved[index] = path(resolved[index]) }
        }
        let outcome: Subprocess.Outcome
        do {
            outcome = try Subprocess.run(ffmpeg, ["-nostdin", "-hide_banner", "-loglevel", "error", "-y"] + resolved + [path(output)],
                                         environment: environment)
        } catch let error as PlaybackError {
            throw FixtureRecipe.failure(error.message)
        }
        guard outcome.status == 0 else {
            throw FixtureRecipe.failure("ffmpeg exited with \(outcome.status) making \(output)")
        }
    }

    /// Makes `job`'s output: staged, then moved into place.
    private func run(_ job: FixtureJob) throws {
        let partial = staged(job.output)
        guard let segments = job.hlsSegments else {
            try runFFmpeg(job.arguments, output: partial)
            return try move(partial, to: job.output)
        }
        try? FileManager.default.removeItem(atPath: path(partial))
        try FixtureRecipe.createFolder(URL(fileURLWithPath: path(partial)))
        try runFFmpeg(job.arguments + ["-hls_segment_filename", path("\(partial)/segment%d.ts")], output: "\(partial)/index.m3u8")
        let playlist = try String(contentsOf: URL(fileURLWithPath: path("\(partial)/index.m3u8")), encoding: .utf8)
        let listed = playlist.split(whereSeparator: \.isNewline).filter { line in
            line.hasPrefix("segment") && line.hasSuffix(".ts") && line.dropFirst(7).dropLast(3).allSatisfy(\.isNumber)
        }
        guard listed.count == segments else {
            throw FixtureRecipe.failure("\(job.output)/index.m3u8 lists \(listed.count) segments, not \(segments)")
        }
        try move(partial, to: job.output)
    }

    /// The names of the encoders this ffmpeg build has.
    private func availableEncoders() throws -> Set<String> {
        let outcome = try Subprocess.run(ffmpeg, ["-hide_banner", "-encoders"], captureOutput: true)
        guard outcome.status == 0 else { throw FixtureRecipe.failure("ffmpeg -encoders exited with \(outcome.status)") }
        // Lines such as " V....D libx264   libx264 H.264 ...": six flag characters, then the name.
        var names = Set<String>()
        for line in outcome.text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard line.hasPrefix(" "), fields.count >= 2, fields[0].count == 6,
                  fields[0].allSatisfy({ $0 == "." || $0.isUppercase }) else { continue }
            names.insert(String(fields[1]))
        }
        return names
    }

    /// Makes one clip of the format sweep: beside its place, read back with ffprobe, then
    /// moved there, so that a run never shows a half-written clip.
    private func make(_ job: FormatJob, encoders: Set<String>) throws {
        let note = path(job.path + ".missing")
        let usable = job.ways.first { way in [way.videoEncoder, way.audioEncoder].compactMap { $0 }.allSatisfy(encoders.contains) }
        guard let way = usable else {
            let first = job.ways[0]
            let missing = [first.videoEncoder, first.audioEncoder].compactMap { $0 }.first { !encoders.contains($0) } ?? "?"
            let reason = job.missingReason ?? "this ffmpeg build has no \(missing) encoder"
            unlink(path(job.path))
            try Data((reason + "\n").utf8).write(to: URL(fileURLWithPath: note))
            StandardStreams.writeError("fixtures: \(job.path) not made: \(reason)\n")
            return
        }
        let partial = staged(job.path)
        try runFFmpeg(FormatJob.arguments(way), output: partial, environment: way.environment)
        let probe = try Subprocess.run(ffprobe, ["-v", "error", "-show_entries", "stream=index,codec_name", "-of", "csv=p=0", path(partial)],
                                       environment: way.environment, captureOutput: true)
        // (MPEG-TS lists its streams again under its program: the first of each index counts.)
        var seen = Set<Substring>()
        var found: [Substring] = []
        for line in probe.text.split(separator: "\n") {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count >= 2, !fields[1].isEmpty, seen.insert(fields[0]).inserted else { continue }
            found.append(fields[1])
        }
        guard probe.status == 0, found.joined(separator: ",") == job.codecs else {
            throw FixtureRecipe.failure("ffprobe reads \(job.path) as '\(found.joined(separator: ","))', expected '\(job.codecs)'")
        }
        try move(partial, to: job.path)
        unlink(note)
    }

    /// size-change.ts: its two parts one after the other (an MPEG-TS can be joined so).
    private func joinSizeChange() throws {
        let parts = FixtureClips.sizeChangeParts.map(path)
        var joined = Data()
        for part in parts { joined += try Data(contentsOf: URL(fileURLWithPath: part)) }
        try joined.write(to: URL(fileURLWithPath: path("size-change.ts")))
        parts.forEach { unlink($0) }
    }

    /// The broken inputs of the bad-input checks.
    private func makeBrokenInputs() throws {
        try Data().write(to: URL(fileURLWithPath: path("empty.mp4")))
        // frames.mp4 keeps its index (moov) at the end: cut at 2/5, it has none.
        let frames = try Data(contentsOf: URL(fileURLWithPath: path("frames.mp4")))
        try frames.prefix(frames.count * 2 / 5).write(to: URL(fileURLWithPath: path("truncated.mp4")))
        var random = SplitMix64(seed: FixtureClips.randomSeed)
        var bytes = [UInt8](repeating: 0, count: FixtureClips.randomLength)
        for index in stride(from: 0, to: bytes.count, by: 8) {
            withUnsafeBytes(of: random.next().littleEndian) { word in
                for offset in 0..<min(8, bytes.count - index) { bytes[index + offset] = word[offset] }
            }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path("random.mp4")))
        let text = String(repeating: "This is a text file, not media.\n", count: 200)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path("text.mp4")))
        try FixtureRecipe.createFolder(folder.appendingPathComponent("directory.mp4"))
    }

    /// Runs every piece of `work` on `parallelRuns` threads and waits for them all; throws
    /// the first error (the rest of the work still runs, so no process is left behind).
    private func runInParallel(_ work: [@Sendable () throws -> Void]) throws {
        let next = Locked(0)
        let firstError = Locked<(any Error)?>(nil)
        let group = DispatchGroup()
        for worker in 0..<Self.parallelRuns {
            group.enter()
            DetachedThread.start(name: "fixtures-\(worker)") {
                while true {
                    let index = next.withLock { value -> Int in
                        defer { value += 1 }
                        return value
                    }
                    guard index < work.count else { break }
                    do {
                        try work[index]()
                    } catch {
                        firstError.withLock { if $0 == nil { $0 = error } }
                    }
                }
                group.leave()
            }
        }
        group.wait()
        if let error = firstError.get() { throw error }
    }
}

import Foundation
import Glibc
import PlaybackKit
import Testing

/// `mediaplay play` on a pseudo-terminal, driven by its keys as a person would.
@Suite(.serialized) struct MediaplayKeyTests {
    /// A running `mediaplay` whose stdin and stdout are a pseudo-terminal.
    final class TerminalSession: @unchecked Sendable {
        // @unchecked: `output` is guarded by its lock; the rest is set once in init.
        let process = Process()
        private let master: Int32
        private let output = Locked("")
        private let reader = DispatchGroup()

        init(_ arguments: [String]) throws {
            // /dev/ptmx, unlocked (TIOCSPTLCK) and numbered (TIOCGPTN): the pair's other end.
            master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
            var unlock: Int32 = 0, number: UInt32 = 0
            guard master >= 0, ioctl(master, 0x4004_5431, &unlock) == 0, ioctl(master, 0x8004_5430, &number) == 0 else {
                throw PlaybackError(code: .engine, message: "no pseudo-terminal")
            }
            let terminal = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
            guard terminal >= 0 else { throw PlaybackError(code: .engine, message: "cannot open /dev/pts/\(number)") }
            process.executableURL = CLI.binary
            process.arguments = arguments
            process.currentDirectoryURL = CLI.root
            process.standardInput = FileHandle(fileDescriptor: terminal, closeOnDealloc: false)
            process.standardOutput = FileHandle(fileDescriptor: terminal, closeOnDealloc: false)
            process.standardError = FileHandle(fileDescriptor: terminal, closeOnDealloc: false)
            try process.run()
            close(terminal)
            let master = master, output = output
            DispatchQueue.global().async(group: reader) {
                var bytes = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = read(master, &bytes, bytes.count)
                    if count <= 0 { break }
                    output.withLock { $0 += String(decoding: bytes[0..<count], as: UTF8.self) }
                }
            }
        }

        /// Everything written so far.
        var text: String { output.get() }

        /// Types `keys`.
        func type(_ keys: String) {
            _ = keys.utf8CString.withUnsafeBufferPointer { write(master, $0.baseAddress, keys.utf8.count) }
        }

        /// Waits up to `timeout` seconds for `needle` to appear after `offset` characters.
        func waitFor(_ needle: String, after offset: Int = 0, timeout: TimeInterval = 10) -> Bool {
            let deadline = monotonicSeconds() + timeout
            while monotonicSeconds() < deadline {
                if String(text.dropFirst(offset)).contains(needle) { return true }
                usleep(20_000)
            }
            return false
        }

        /// Waits for the process to end (killing it after `timeout`), then for its output.
        func finish(timeout: TimeInterval = 10) -> Int32 {
            let deadline = monotonicSeconds() + timeout
            while process.isRunning, monotonicSeconds() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            close(master)
            reader.wait()
            return process.terminationStatus
        }
    }

    /// Each key and the line it must make the player write.
    static let keysAndAnswers: [(key: String, answer: String)] = [
        ("a", "audio: audio:1  fre  \"Français\""),
        ("a", "audio: audio:0  eng  \"English\""),
        ("s", "subtitle: subtitle:0  eng  \"English\""),
        ("s", "subtitle: subtitle:1  fre  \"Français\""),
        ("s", "subtitle: off"),
        ("9", "volume: 90 %"),
        ("m", "muted"),
        ("0", "volume: 100 %"),
        ("]", "speed: 1.25x"),
        ("[", "speed: 1.00x"),
        ("i", "chapters:"),
    ]

    /// `mediaplay play` of film.mkv with `backend`, paused with space once it plays (so that
    /// the film cannot end while keys are typed).
    static func pausedFilm(_ backend: String) throws -> TerminalSession {
        let film = CLI.fixtures.appendingPathComponent("tracks/film.mkv").path
        let session = try TerminalSession(["play", "--backend", backend, "--audio", "null", film])
        #expect(session.waitFor("00:00:00 / 00:00:06"), "no widget: \(session.text)")
        session.type(" ")
        #expect(session.waitFor("(paused)"), "space did not pause: \(session.text)")
        return session
    }

    @Test(arguments: CLI.backends)
    func everyKeyDoesWhatItSaysAndQQuits(backend: String) throws {
        let session = try Self.pausedFilm(backend)
        for (key, answer) in Self.keysAndAnswers {
            let offset = session.text.count
            session.type(key)
            #expect(session.waitFor(answer, after: offset), "'\(key)' did not answer \(answer): \(session.text.dropFirst(offset))")
        }
        session.type("q")
        #expect(session.finish() == 0, "\(session.text)")
    }

    /// The frame number and position of the last "frame N (S s)" line in `text`.
    static func lastStep(in text: Substring) -> (frame: Int, position: Double)? {
        // A line on the terminal starts by clearing it (ESC [ K).
        guard let line = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).last(where: { $0.contains("frame ") }),
              let start = line.range(of: "frame ") else { return nil }
        let words = line[start.lowerBound...].split(separator: " ")
        guard words.count >= 3, let frame = Int(words[1]), let position = Double(words[2].dropFirst()) else { return nil }
        return (frame, position)
    }

    @Test(arguments: CLI.backends)
    func dotWhilePausedMovesTheShownPositionByOneFrame(backend: String) throws {
        let session = try Self.pausedFilm(backend)
        var steps: [(frame: Int, position: Double)] = []
        for key in [".", ".", ","] {
            let offset = session.text.count
            session.type(key)
            #expect(session.waitFor(" s)", after: offset), "'\(key)' wrote no frame line: \(session.text.dropFirst(offset))")
            guard let step = Self.lastStep(in: session.text.dropFirst(offset)) else {
                Issue.record("'\(key)' wrote no readable frame line: \(session.text.dropFirst(offset))")
                break
            }
            steps.append(step)
        }
        session.type("i")
        #expect(session.waitFor("frames:   25 a second"), "'i' did not give the frame rate: \(session.text)")
        if steps.count == 3 {
            #expect(steps[1].frame == steps[0].frame + 1 && steps[2].frame == steps[0].frame, "frames after . . , : \(steps.map(\.frame))")
            let moved = steps[1].position - steps[0].position
            #expect(abs(moved - 1.0 / 25) < 0.5 / 25, "'.' moved the position \(moved) s, expected one frame (0.04 s)")
        }
        session.type("q")
        #expect(session.finish() == 0, "\(session.text)")
    }
}

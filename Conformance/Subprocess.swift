import FoundationEssentials
import Glibc
import PlaybackKit

/// Runs a command-line program and waits for it: the fixture recipe's ffmpeg CLI, the test
/// server's openssl tool. Standard input is /dev/null; standard error is this process's
/// (ffmpeg's own error lines stay visible) unless `quiet`; standard output is this process's,
/// read into memory, or with `quiet` thrown away.
enum Subprocess {
    /// How a run ended.
    struct Outcome {
        /// The exit status, or 128 + the signal when a signal ended it.
        let status: Int32
        /// What the program wrote to standard output, when it was captured.
        let output: [UInt8]
        /// The output as text.
        var text: String { String(decoding: output, as: UTF8.self) }
    }

    /// The full path of `program` on PATH, or nil when it is not installed there.
    static func find(_ program: String) -> String? {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") where !folder.isEmpty {
            let candidate = "\(folder)/\(program)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Runs `executable` (a full path, or a name looked up on PATH) with `arguments`, the
    /// environment of this process plus `environment`, and waits for it. `captureOutput`: standard output is read into the outcome instead of
    /// going to this process's; `quiet`: standard output and error go to /dev/null.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                    captureOutput: Bool = false, quiet: Bool = false) throws -> Outcome {
        guard let executable = executable.contains("/") ? executable : find(executable) else {
            throw PlaybackError(code: .engine, message: "\(executable) is not on PATH")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if quiet {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            if !captureOutput { posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0) }
        }
        var pipeEnds: [Int32] = [-1, -1]
        if captureOutput {
            guard pipe(&pipeEnds) == 0 else { throw failure("pipe", executable, errno) }
            // Neither end stays open in the child (its standard output is a copy of the write end).
            for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = mergedEnvironment(environment).map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }

        var pid: pid_t = 0
        let started = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        if captureOutput { close(pipeEnds[1]) }
        guard started == 0 else {
            if captureOutput { close(pipeEnds[0]) }
            throw failure("could not run", executable, started)
        }
        var output: [UInt8] = []
        if captureOutput {
            var chunk = [UInt8](repeating: 0, count: 16384)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress, $0.count) }
                if count > 0 {
                    output += chunk[..<count]
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            close(pipeEnds[0])
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw failure("waiting for", executable, errno) }
        }
        let signal = status & 0x7F
        return Outcome(status: signal == 0 ? (status >> 8) & 0xFF : 128 + signal, output: output)
    }

    /// This process's environment with `extra` set over it, as `NAME=value` strings.
    private static func mergedEnvironment(_ extra: [String: String]) -> [String] {
        var entries: [String] = []
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            let name = text.prefix { $0 != "=" }
            if extra[String(name)] == nil { entries.append(text) }
            index += 1
        }
        return entries + extra.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    }

    private static func failure(_ what: String, _ executable: String, _ code: Int32) -> PlaybackError {
        PlaybackError(code: .engine, message: "\(what) \(executable): \(String(cString: strerror(code)))")
    }
}

import FoundationEssentials
import Glibc
import PlaybackKit

/// Runs a command-line tool and waits for it (the fixtures script, openssl).
enum ChildProcess {
    /// Runs `arguments[0]` (looked up on PATH) with the rest as its arguments, with this
    /// process's environment and standard streams (`quiet`: its output goes to /dev/null),
    /// waits for it and returns its exit status (128 + the signal when a signal ended it).
    static func run(_ arguments: [String], quiet: Bool = false) throws -> Int32 {
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if quiet {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        var pid: pid_t = 0
        let started = posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
        guard started == 0 else {
            throw PlaybackError(code: .engine, message: "could not run \(arguments[0]): \(String(cString: strerror(started)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else {
                throw PlaybackError(code: .engine, message: "waiting for \(arguments[0]): \(String(cString: strerror(errno)))")
            }
        }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }
}

import FoundationEssentials
import Glibc
import PlaybackKit

/// The media the suite checks against, made by `scripts/make-fixtures.sh` (the ffmpeg CLI and
/// lavfi sources). The script returns at once when the folder is already up to date.
public enum FixtureRecipe {
    /// Makes (or confirms) the fixtures of the checkout at `checkout` in its `Fixtures/`
    /// folder, and returns that folder.
    public static func make(checkout: URL) throws -> URL {
        let folder = checkout.appendingPathComponent("Fixtures")
        let script = checkout.appendingPathComponent("scripts/make-fixtures.sh")
        guard FileManager.default.fileExists(atPath: script.path) else {
            throw PlaybackError(code: .invalidArgument, message: "fixtures: cannot find \(script.path) (run from the checkout)")
        }
        let status = try runScript(script.path, folder.path)
        guard status == 0 else {
            throw PlaybackError(code: .engine, message: "fixtures: \(script.path) exited with \(status)")
        }
        return folder
    }

    /// Runs `/bin/bash script argument` with this process's standard streams and environment,
    /// waits for it and returns its exit status (128 + the signal when a signal ended it).
    private static func runScript(_ script: String, _ argument: String) throws -> Int32 {
        let arguments = ["/bin/bash", script, argument]
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let started = posix_spawn(&pid, arguments[0], nil, nil, argv, environ)
        guard started == 0 else {
            throw PlaybackError(code: .engine, message: "fixtures: could not run \(script): \(String(cString: strerror(started)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else {
                throw PlaybackError(code: .engine, message: "fixtures: waiting for \(script): \(String(cString: strerror(errno)))")
            }
        }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }
}

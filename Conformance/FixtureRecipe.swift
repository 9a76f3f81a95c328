import FoundationEssentials
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
        let status: Int32
        do {
            status = try ChildProcess.run(["/bin/bash", script.path, folder.path])
        } catch let error as PlaybackError {
            throw PlaybackError(code: error.code, message: "fixtures: \(error.message)")
        }
        guard status == 0 else {
            throw PlaybackError(code: .engine, message: "fixtures: \(script.path) exited with \(status)")
        }
        return folder
    }
}

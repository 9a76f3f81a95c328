import Foundation
import PlaybackKit

/// Runs the conformance suite (being written).
func runConformanceCommand(backendName: String?, json: Bool, fixtures: URL, only: Set<String>?) async -> Int32 {
    FileHandle.standardError.write(Data("mediaplay: error: the conformance command is not built yet\n".utf8))
    return 1
}

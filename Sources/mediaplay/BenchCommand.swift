import Foundation
import PlaybackKit

/// Runs the benchmark (being written).
func runBenchCommand(_ arguments: Arguments) async throws -> Int32 {
    throw PlaybackError(code: .invalidArgument, message: "the bench command is not built yet")
}

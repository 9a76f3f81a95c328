import FoundationEssentials
import PlaybackKit

/// The stress checks.
enum StressChecks {
    static let all: [Check] = []
}

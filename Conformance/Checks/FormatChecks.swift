import FoundationEssentials
import PlaybackKit

/// The format checks.
enum FormatChecks {
    static let all: [Check] = []
}

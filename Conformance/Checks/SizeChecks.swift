import FoundationEssentials
import PlaybackKit

/// The picture-size checks.
enum SizeChecks {
    static let all: [Check] = []
}

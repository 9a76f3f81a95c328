import FoundationEssentials

/// The project's log: engines' messages and the players' own, to stderr when
/// `MEDIAPLAYBACK_LOG` is `debug`, `info` or `warning` (default: `error`).
public enum PlaybackLog {
    /// How much is printed.
    public enum Level: Int, Sendable, Comparable {
        /// Everything.
        case debug
        /// Notable steps.
        case info
        /// Recoverable trouble.
        case warning
        /// Failures.
        case error
        /// Nothing.
        case off
        /// Orders levels by severity.
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The level read from `MEDIAPLAYBACK_LOG` once.
    public static let level: Level = {
        switch ProcessInfo.processInfo.environment["MEDIAPLAYBACK_LOG"]?.lowercased() {
        case "debug": .debug
        case "info": .info
        case "warning", "warn": .warning
        case "off", "none": .off
        default: .error
        }
    }()

    /// True when messages of `level` are printed.
    public static func enabled(_ level: Level) -> Bool { level >= self.level && self.level != .off }

    /// Prints `message` at `level` with a tag naming its source.
    public static func log(_ level: Level, _ tag: String, _ message: @autoclosure () -> String) {
        guard enabled(level) else { return }
        StandardStreams.writeError("[\(tag)] \(message())\n")
    }

    /// A debug line from the players' core.
    static func debug(_ message: @autoclosure () -> String) {
        log(.debug, "playback", message())
    }
}

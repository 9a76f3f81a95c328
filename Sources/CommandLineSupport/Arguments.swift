import Dispatch
import FoundationEssentials
import Glibc
import PlaybackKit

/// The command line, split into options and operands, read option by option.
package struct Arguments {
    package private(set) var operands: [String] = []
    private var options: [(name: String, value: String?)] = []

    /// Options that take a value; everything else that starts with `-` is a flag.
    package static let valued: Set<String> = ["--backend", "--audio", "--video", "--at", "-o", "--output", "--check", "--runs", "--viewport", "--loop",
                                               "--audio-lang", "--sub-lang", "--sub", "--size", "--open-timeout"]

    /// Splits `words` (without the program name).
    package init(_ words: [String]) throws {
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            if word == "--" {
                operands.append(contentsOf: words[index...])
                break
            }
            if word.hasPrefix("-"), word.count > 1, Double(word) == nil {
                if let equals = word.firstIndex(of: "="), word.hasPrefix("--") {
                    options.append((String(word[..<equals]), String(word[word.index(after: equals)...])))
                } else if Self.valued.contains(word) {
                    guard index < words.count else {
                        throw PlaybackError(code: .invalidArgument, message: "\(word) needs a value")
                    }
                    options.append((word, words[index]))
                    index += 1
                } else {
                    options.append((word, nil))
                }
            } else {
                operands.append(word)
            }
        }
    }

    /// The last value given for any of `names`, or nil.
    package func value(_ names: String...) -> String? {
        options.last { names.contains($0.name) }?.value
    }

    /// Every value given for `name`, in order.
    package func values(_ name: String) -> [String] {
        options.filter { $0.name == name }.compactMap(\.value)
    }

    /// True when the flag `name` was given.
    package func flag(_ name: String) -> Bool { options.contains { $0.name == name } }

    /// Fails on options the command does not know.
    package func check(known: Set<String>) throws {
        if let unknown = options.first(where: { !known.contains($0.name) }) {
            throw PlaybackError(code: .invalidArgument, message: "unknown option \(unknown.name)")
        }
    }

    /// The one operand a command needs.
    package func single(_ what: String) throws -> String {
        guard operands.count == 1 else {
            throw PlaybackError(code: .invalidArgument, message: operands.isEmpty ? "missing \(what)" : "expected one \(what), got \(operands.count)")
        }
        return operands[0]
    }

    /// `--audio null|system`.
    package func audioOutput() throws -> AudioOutput {
        switch value("--audio") ?? "system" {
        case "system": return .system
        case "null": return .null
        case let other: throw PlaybackError(code: .invalidArgument, message: "--audio takes null or system, not '\(other)'")
        }
    }

    /// `--open-timeout SECONDS`: how long opening may take (`PlaybackOptions.openTimeout`);
    /// nil when not given.
    package func openTimeout() throws -> TimeInterval? {
        guard let seconds = try seconds("--open-timeout") else { return nil }
        guard seconds > 0 else {
            throw PlaybackError(code: .invalidArgument, message: "--open-timeout takes a number of seconds above 0, not '\(value("--open-timeout") ?? "")'")
        }
        return seconds
    }

    /// A number of seconds given to `name`.
    package func seconds(_ name: String) throws -> TimeInterval? {
        guard let text = value(name) else { return nil }
        guard let seconds = TimeInterval(text), seconds.isFinite else {
            throw PlaybackError(code: .invalidArgument, message: "\(name) takes seconds, not '\(text)'")
        }
        return seconds
    }
}

/// Formats seconds as `HH:MM:SS`.
package func clockText(_ seconds: TimeInterval) -> String {
    let whole = max(0, Int(seconds.isFinite ? seconds : 0))
    return String(cFormat: "%02ld:%02ld:%02ld", whole / 3600, (whole / 60) % 60, whole % 60)
}

/// The folder of the package the command runs in: the nearest folder at or above the current
/// one that holds a Package.swift (else the current folder).
package func packageRoot() -> URL {
    var folder = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    while folder.path != "/" {
        if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) { return folder }
        folder.deleteLastPathComponent()
    }
    return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
}

/// Runs a command-line tool's `body` on a task and parks the main thread until it is done
/// (`body` normally exits the process itself).
///
/// The main thread waits on a semaphore instead of entering the dispatch main loop (what an
/// `async` main does), because a main thread that leaves through `pthread_exit`, as the
/// dispatch main loop's does, is something valgrind's memcheck cannot follow; nothing in the
/// tools uses the main actor or the main queue.
package func runCommandLineTool(_ body: @escaping @Sendable () async -> Void) {
    // A parent may have started the tool with termination signals blocked (a child inherits
    // the mask); a command-line tool must still stop when told to.
    var termination = sigset_t()
    sigemptyset(&termination)
    for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&termination, signal) }
    pthread_sigmask(SIG_UNBLOCK, &termination, nil)
    let finished = DispatchSemaphore(value: 0)
    Task.detached {
        await body()
        finished.signal()
    }
    finished.wait()
}

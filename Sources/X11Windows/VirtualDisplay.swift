import FoundationEssentials
import Glibc
import PlaybackKit

/// The X display the window checks and the desktop player use: $DISPLAY when set, or else an
/// Xvfb server this process starts on a free display (when Xvfb is installed) and ends when it
/// exits. Starting sets $DISPLAY, so every engine in the process draws there.
public enum VirtualDisplay {
    /// Where the display came from.
    public enum Origin: Sendable, Equatable {
        /// $DISPLAY was set already.
        case environment(String)
        /// This process started Xvfb on this display.
        case started(String)
    }

    private static let state = Locked<Result<Origin, DisplayUnavailable>?>(nil)

    /// Makes sure a display is there (starting Xvfb at most once a process, waiting at most
    /// `timeout` seconds for it), and says which; throws why there is none.
    @discardableResult
    public static func ensure(timeout: TimeInterval = 10) throws(DisplayUnavailable) -> Origin {
        let result = state.withLock { slot -> Result<Origin, DisplayUnavailable> in
            if let slot { return slot }
            let made = Result { () throws(DisplayUnavailable) -> Origin in try find(timeout: timeout) }
            slot = made
            return made
        }
        return try result.get()
    }

    /// True when `ensure()` finds or starts a display.
    public static var isAvailable: Bool { (try? ensure()) != nil }

    private static func find(timeout: TimeInterval) throws(DisplayUnavailable) -> Origin {
        if let name = getenv("DISPLAY").map({ String(cString: $0) }), !name.isEmpty {
            guard X11Connection(display: name) != nil else {
                throw DisplayUnavailable(reason: "no X server answers on DISPLAY=\(name)")
            }
            return .environment(name)
        }
        guard let xvfb = executable(named: "Xvfb") else {
            throw DisplayUnavailable(reason: "DISPLAY is not set and Xvfb is not installed (apt-get install -y xvfb)")
        }
        let name = try startXvfb(at: xvfb, timeout: timeout)
        setenv("DISPLAY", name, 1)
        return .started(name)
    }

    /// The write end of the pipe a shell beside Xvfb reads: when this process ends, however it
    /// ends, the pipe closes and the shell ends Xvfb. Held open for the process's lifetime.
    nonisolated(unsafe) private static var lifeline: Int32 = -1

    /// Starts Xvfb with -displayfd (it picks a free display and writes its number once it
    /// accepts connections) under a shell that ends it when this process ends; returns ":N".
    private static func startXvfb(at path: String, timeout: TimeInterval) throws(DisplayUnavailable) -> String {
        var ready: [Int32] = [0, 0]
        var life: [Int32] = [0, 0]
        // Close-on-exec, so no other child (an engine's helper) holds the lifeline too.
        guard pipe(&ready) == 0, pipe(&life) == 0,
              (ready + life).allSatisfy({ fcntl($0, F_SETFD, FD_CLOEXEC) == 0 }) else {
            throw DisplayUnavailable(reason: "pipe() failed: \(String(cString: strerror(errno)))")
        }
        defer { close(ready[0]) }
        let script = "\"$0\" -displayfd 3 -screen 0 1280x1024x24 -nolisten tcp -noreset >/dev/null 2>&1 & "
            + "server=$!; exec 3>&-; read -r _; kill $server"
        let arguments = ["/bin/sh", "-c", script, path]
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, life[0], 0)
        posix_spawn_file_actions_adddup2(&actions, ready[1], 3)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        // The calling thread may block signals (Dispatch's threads do); the server must not
        // inherit that, or SIGTERM would never end it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, environ)
        close(ready[1])
        close(life[0])
        guard spawned == 0 else {
            close(life[1])
            throw DisplayUnavailable(reason: "could not start Xvfb: \(String(cString: strerror(spawned)))")
        }
        lifeline = life[1]
        // The number, then a newline, once the server is ready.
        var text = ""
        let deadline = monotonicSeconds() + timeout
        while !text.hasSuffix("\n") {
            let left = deadline - monotonicSeconds()
            var descriptor = pollfd(fd: ready[0], events: Int16(POLLIN), revents: 0)
            guard left > 0, poll(&descriptor, 1, Int32(left * 1000)) > 0 else {
                close(lifeline)  // ends the shell and the server it started
                throw DisplayUnavailable(reason: "Xvfb did not report a display within \(Int(timeout)) s")
            }
            var byte: UInt8 = 0
            guard read(ready[0], &byte, 1) == 1 else {
                throw DisplayUnavailable(reason: "Xvfb ended before it reported a display")
            }
            text.append(Character(UnicodeScalar(byte)))
        }
        return ":" + text.filter(\.isNumber)
    }

    /// The full path of `name` on $PATH, or nil.
    private static func executable(named name: String) -> String? {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }
}

/// Why there is no X display to draw on.
public struct DisplayUnavailable: Error, Sendable, CustomStringConvertible {
    /// What is missing, in a sentence.
    public let reason: String
    /// The reason.
    public var description: String { reason }
}

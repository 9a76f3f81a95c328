import Dispatch
import FoundationEssentials
import CommandLineSupport
import PlaybackKit

#if canImport(Glibc)
import Glibc
#endif

/// What one finished child process cost, read from `wait4`'s resource usage.
struct ChildUsage: Sendable {
    /// The exit code, or nil when a signal ended the process.
    var exitCode: Int32?
    /// The signal that ended the process, if any.
    var signal: Int32?
    /// User CPU seconds (the child and every descendant it waited for).
    var userSeconds: Double
    /// System CPU seconds (likewise).
    var systemSeconds: Double
    /// Peak resident set size in KiB (`ru_maxrss`).
    var peakResidentKiB: Int
    /// Wall seconds from spawn to exit.
    var wallSeconds: Double
    /// True when the bench killed the child because it outlived its time limit.
    var timedOut: Bool
    /// The last lines the child wrote to stderr (kept for error reports).
    var errorTail: String
    /// What the child wrote to stdout, when asked for.
    var output = ""
    /// CPU seconds the child had used at the mid-run sample (`sampleAfter`), nil without one.
    var cpuAtSample: Double?
    /// Wall seconds from spawn to the mid-run sample.
    var sampleWallSeconds: Double?
    /// This process's own peak resident size when the child was spawned, KiB. Linux starts a
    /// spawned child's `ru_maxrss` from it, so a child peak at or below it is not the child's.
    var spawnerPeakKiB = 0

    /// True when `peakResidentKiB` is the child's own peak, not this process's.
    var peakIsChildOwn: Bool { peakResidentKiB > spawnerPeakKiB }

    /// User plus system CPU seconds.
    var cpuSeconds: Double { userSeconds + systemSeconds }
    /// CPU seconds per wall second from the mid-run sample to the exit: the cost of playing,
    /// without start-up (nil without a sample).
    var steadyCPUPerSecond: Double? {
        guard let cpuAtSample, let sampleWallSeconds, wallSeconds - sampleWallSeconds > 0.5 else { return nil }
        return (cpuSeconds - cpuAtSample) / (wallSeconds - sampleWallSeconds)
    }
    /// Exited by itself with status 0.
    var succeeded: Bool { exitCode == 0 && !timedOut }

    /// One line saying why the child failed.
    var failureDescription: String {
        var text: String
        if timedOut {
            text = String(cFormat: "killed after %.0f s (time limit)", wallSeconds)
        } else if let signal {
            text = "ended by signal \(signal)"
        } else {
            text = "exit status \(exitCode ?? -1)"
        }
        // A crash report is long: its "Fatal error" or "crashed" lines say the most.
        let lines = errorTail.split(separator: "\n").map { $0.trimmingBlanks() }.filter { !$0.isEmpty }
        let telling = lines.filter { $0.contains("Fatal error") || $0.contains("crashed") || $0.hasPrefix("mediaplay: error") }
        let tail = (telling.isEmpty ? Array(lines.suffix(2)) : Array(telling.prefix(2))).joined(separator: " | ")
        if !tail.isEmpty { text += ": " + tail }
        return text
    }
}

/// The whole text of a file, read to its end (files under /proc report no size, so a reader
/// that trusts the size would stop early).
func readWholeFile(_ path: String) -> String? {
    let file = open(path, O_RDONLY | O_CLOEXEC)
    guard file >= 0 else { return nil }
    defer { close(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16 * 1024)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { continue }
        guard count >= 0 else { return nil }
        if count == 0 { break }
        bytes += chunk[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// The monotonic clock in seconds, for wall-time figures.
func monotonicSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Starts child processes with `posix_spawn` and reaps them with `wait4`, so that their CPU
/// time and peak memory are known exactly (Foundation's `Process` reaps children itself and
/// drops the resource usage).
enum ChildProcess {
    /// Runs `arguments` (looked up on PATH) with stdin and stdout on /dev/null, stderr kept,
    /// `environment` added to this process's environment, in its own process group. The child
    /// (and its group) is killed if it outlives `timeLimit` seconds.
    /// `sampleAfter`: seconds after the start at which the child's CPU time so far is read
    /// from /proc (for `ChildUsage.steadyCPUPerSecond`).
    static func run(_ arguments: [String], environment extra: [String: String] = [:], timeLimit: TimeInterval,
                    keepOutput: Bool = false, sampleAfter: TimeInterval? = nil) async throws -> ChildUsage {
        precondition(!arguments.isEmpty)
        let stem = FileManager.default.temporaryDirectory
            .appendingPathComponent("mediaplay-bench-\(getpid())-\(UUID().uuidString)").path
        let errorPath = stem + ".stderr"
        let outputPath = keepOutput ? stem + ".stdout" : "/dev/null"
        defer {
            unlink(errorPath)
            if keepOutput { unlink(outputPath) }
        }

        let spawnerPeak = ownPeakResidentKiB()
        let started = monotonicSeconds()
        let pid = try spawn(arguments, environment: extra, outputPath: outputPath, errorPath: errorPath)
        var usage = await reap(pid, timeLimit: timeLimit, sampleAfter: sampleAfter, started: started)
        usage.wallSeconds = monotonicSeconds() - started
        usage.spawnerPeakKiB = spawnerPeak
        if let data = FileManager.default.contents(atPath: errorPath) {
            usage.errorTail = String(decoding: data.suffix(2000), as: UTF8.self)
        }
        if keepOutput, let data = FileManager.default.contents(atPath: outputPath) {
            usage.output = String(decoding: data, as: UTF8.self)
        }
        return usage
    }

    /// This process's peak resident size (VmHWM), KiB.
    static func ownPeakResidentKiB() -> Int {
        guard let status = readWholeFile("/proc/self/status"),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    // MARK: - Spawning

    private static func spawn(_ arguments: [String], environment extra: [String: String], outputPath: String, errorPath: String) throws -> pid_t {
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in extra { environment[key] = value }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var defaultSignals = sigset_t()
        sigemptyset(&defaultSignals)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGCHLD] { sigaddset(&defaultSignals, signal) }
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &defaultSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var pid: pid_t = 0
        let status = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard status == 0 else {
            throw PlaybackError(code: .engine, message: "bench: cannot start \(arguments[0]): \(String(cString: strerror(status)))")
        }
        return pid
    }

    // MARK: - Reaping

    /// Waits on a thread of its own for `pid` to exit (killing its group at `timeLimit`), then
    /// reaps it with `wait4` for its resource usage.
    private static func reap(_ pid: pid_t, timeLimit: TimeInterval, sampleAfter: TimeInterval?, started: Double) async -> ChildUsage {
        await withCheckedContinuation { (continuation: CheckedContinuation<ChildUsage, Never>) in
            // `exited` turns true once the child is a zombie; the timers act only before that,
            // so they never touch a recycled process id.
            let exited = Locked(false)
            let killed = Locked(false)
            let sample = Locked<(cpu: Double, wall: Double)?>(nil)
            if let sampleAfter {
                DispatchQueue.global().asyncAfter(deadline: .now() + sampleAfter) {
                    exited.withLock { hasExited in
                        guard !hasExited, let cpu = cpuSecondsSoFar(pid) else { return }
                        sample.set((cpu, monotonicSeconds() - started))
                    }
                }
            }
            // After a normal exit the timer still fires once and finds nothing to do.
            DispatchQueue.global().asyncAfter(deadline: .now() + timeLimit) {
                exited.withLock { hasExited in
                    guard !hasExited else { return }
                    killed.set(true)
                    kill(-pid, SIGKILL)
                }
            }
            DetachedThread.start(name: "bench.reap") {
                var info = siginfo_t()
                while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1, errno == EINTR {}
                exited.set(true)
                var status: Int32 = 0
                var usage = rusage()
                while wait4(pid, &status, 0, &usage) == -1, errno == EINTR {}
                let signal = status & 0x7F
                continuation.resume(returning: ChildUsage(
                    exitCode: signal == 0 ? (status >> 8) & 0xFF : nil,
                    signal: signal == 0 ? nil : signal,
                    userSeconds: usage.ru_utime.seconds,
                    systemSeconds: usage.ru_stime.seconds,
                    peakResidentKiB: Int(usage.ru_maxrss),
                    wallSeconds: 0,
                    timedOut: killed.get(),
                    errorTail: "",
                    cpuAtSample: sample.get()?.cpu,
                    sampleWallSeconds: sample.get()?.wall))
            }
        }
    }

    /// User plus system CPU seconds a running process has used (all its threads), from
    /// /proc/PID/stat; nil when it cannot be read.
    private static func cpuSecondsSoFar(_ pid: pid_t) -> Double? {
        guard let stat = readWholeFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        // After "pid (comm)": state is field 3, utime field 14, stime field 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Runs a short command (a tool's `--version`) and returns its standard output, or nil
    /// when it cannot run or fails.
    static func output(of arguments: [String], environment: [String: String] = [:]) async -> String? {
        guard let usage = try? await run(arguments, environment: environment, timeLimit: 20, keepOutput: true),
              usage.succeeded else { return nil }
        return usage.output
    }
}

extension timeval {
    /// The time in seconds (resource-usage CPU times).
    var seconds: Double { Double(tv_sec) + Double(tv_usec) / 1e6 }
}

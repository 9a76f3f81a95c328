import FoundationEssentials
import Glibc
import PlaybackKit

/// Many players made and shut down, calls from several threads at once, several players
/// playing together, and players released without shutdown(): no leak of threads, file
/// descriptors or memory, no slow call, no hang, every player at real time.
///
/// The random choices come from `SplitMix64` with fixed seeds (named in every check's
/// summary and failure), so a run can be repeated.
enum StressChecks {
    /// The stress checks, in the order they run.
    static let all: [Check] = [setupTeardown, stateStorm, manyAtOnce, releasedWithoutShutdown]

    // MARK: - stress.setup-teardown

    /// The seed of `stress.setup-teardown`'s choices.
    static let setupTeardownSeed: UInt64 = 0x5EED_2026_1201_0001
    /// How many players `stress.setup-teardown` makes and shuts down.
    static let setupTeardownCycles = 200
    /// After how many cycles `stress.setup-teardown` takes its baseline of threads and fds: by
    /// then every engine has paid its one-time set-up (libraries, plugin registries, shared
    /// instances and their threads).
    static let baselineCycles = 10
    /// After which cycles `stress.setup-teardown` reads the resident memory for its baseline,
    /// which is the highest of these readings. Resident memory takes longer than the thread
    /// count to reach the level where it then holds: measured after `malloc_trim`, mpv's went
    /// 118 MiB after 10 cycles, 144-175 after 25, 178-205 after 50 to 100, then stayed within
    /// 171-205 up to 400 cycles, with no trend; ffmpeg (67-76 MiB) and gstreamer (86-91 MiB)
    /// are flat from 10 on, vlc 92-113 MiB from 25 on.
    static let memoryBaselineCycles: Set<Int> = [25, 50, 75, 100]
    /// How long any shutdown() may take.
    static let shutdownLimit: TimeInterval = 2
    /// How long the threads a teardown ends (the engine's, idle Dispatch workers) may take to
    /// exit before the process's resources are compared with the baseline.
    static let settleTimeout: TimeInterval = 12

    /// How far above the baseline `stress.setup-teardown` may leave the process after 200
    /// players.
    ///
    /// - threads +4: what may stay is idle threads that pools keep for reuse (GLib's thread
    ///   pool keeps unused ones, Dispatch keeps idle workers some seconds); measured after the
    ///   settle wait: +0 to +1 with every engine. A leak of one thread a player would be +190.
    /// - fds +8: measured +0 with every engine; a leak of one a player would be +190.
    /// - RSS +48 MiB over the memory baseline: glibc's per-thread arenas keep fragments, so the
    ///   resident size after a teardown, with the free memory handed back (`malloc_trim`),
    ///   still varies by up to about 30 MiB (mpv) between readings; a leak of 0.5 MiB a player
    ///   adds 50 MiB over the last 100 cycles alone (one player of a 320x240 clip holds several
    ///   MiB of decoder state and pictures).
    static let setupTeardownAllowance = ResourceAllowance(threads: 4, fileDescriptors: 8, residentBytes: 48 << 20)

    /// 200 players made and shut down at random moments (`TeardownPlan`); each shutdown()
    /// returns within `shutdownLimit` and ends the event stream; afterwards threads, fds and
    /// resident memory are within `setupTeardownAllowance` of the baseline.
    static let setupTeardown = Check(
        "stress.setup-teardown",
        "\(setupTeardownCycles) players made and shut down (after 0-300 ms of play, during a seek, during prepare, before prepare; seed \(hex(setupTeardownSeed))): every shutdown() returns within 2 s, and threads, fds and resident memory come back near what they were after the first cycles",
        timeout: 100
    ) { context in
        var random = SplitMix64(seed: setupTeardownSeed)
        var counts: ProcessResources?
        var memory = 0
        for cycle in 0..<setupTeardownCycles {
            if cycle == baselineCycles { counts = try await quietReading(context) }
            if memoryBaselineCycles.contains(cycle) {
                memory = max(memory, ProcessResources.current(releasingFreeMemory: true).residentBytes)
            }
            let plan = TeardownPlan(cycle: cycle, using: &random)
            try await runTeardownCycle(plan, context)
        }
        guard let counts else { return }
        let baseline = ProcessResources(threads: counts.threads, fileDescriptors: counts.fileDescriptors, residentBytes: memory)
        context.trace.set("waiting for the threads of \(setupTeardownCycles) players to exit")
        let excess = try await settle(to: baseline, within: setupTeardownAllowance, timeout: settleTimeout)
        try expect(excess.isEmpty, "after \(setupTeardownCycles) players (seed \(hex(setupTeardownSeed))) and \(format(settleTimeout)) s to settle, compared with the threads and fds after \(baselineCycles) and the highest resident memory after \(memoryBaselineCycles.sorted().map(String.init).joined(separator: ", ")): \(excess.joined(separator: "; "))")
    }

    /// When a cycle of `stress.setup-teardown` shuts its player down.
    enum TeardownMoment: String, Sendable {
        /// Prepared, played 0-300 ms, shut down.
        case afterPlaying = "after playing"
        /// Prepared, played 0-300 ms, seeked, shut down before the seek completes (0-20 ms
        /// later: at once, the seek would never reach the engine, as shutdown() cancels the
        /// work it has not started).
        case duringSeek = "during a seek"
        /// prepareToPlay(), shut down 0-50 ms later, before `.preparedToPlay` (at once, the
        /// engine would never start opening).
        case duringPrepare = "during prepare"
        /// Made and shut down without any other call.
        case beforePrepare = "before prepare"
    }

    /// One cycle of `stress.setup-teardown`, every random choice drawn in advance so that the
    /// sequence depends on the seed alone, never on timing.
    struct TeardownPlan: Sendable {
        /// The cycle's number, from 0.
        let cycle: Int
        /// The fixture played: short.mp4 or frames.mp4.
        let fixture: String
        /// When the player is shut down.
        let moment: TeardownMoment
        /// How long to play before the shutdown (or the seek), seconds.
        let playFor: TimeInterval
        /// Where the seek goes, seconds (within short.mp4's 3 s).
        let seekTarget: TimeInterval
        /// How long at most to wait before the shutdown, seconds, for `duringPrepare` and
        /// `duringSeek` (cut short by `.preparedToPlay` or `.seekCompleted`).
        let shutdownDelay: TimeInterval

        /// Draws the plan of cycle `cycle`: 35% after playing, 30% during a seek, 20% during
        /// prepare, 15% before prepare; short.mp4 or frames.mp4 half the time each.
        init(cycle: Int, using random: inout SplitMix64) {
            self.cycle = cycle
            fixture = random.next() % 2 == 0 ? "short.mp4" : "frames.mp4"
            switch random.next() % 100 {
            case 0..<35: moment = .afterPlaying
            case 35..<65: moment = .duringSeek
            case 65..<85: moment = .duringPrepare
            default: moment = .beforePrepare
            }
            playFor = Double(random.next() % 301) / 1000
            seekTarget = Double(random.next() % 2500) / 1000
            let delayMilliseconds: UInt64 = moment == .duringPrepare ? 51 : 21
            shutdownDelay = Double(random.next() % delayMilliseconds) / 1000
        }

        /// Names the cycle in failures.
        var label: String { "cycle \(cycle) (\(fixture), shutdown \(moment.rawValue))" }
    }

    /// Makes a player the context does not keep, takes it to the plan's moment, shuts it down
    /// (within `shutdownLimit`) and waits for its event stream to end; the player is gone
    /// when this returns.
    static func runTeardownCycle(_ plan: TeardownPlan, _ context: CheckContext) async throws {
        let p = try context.unretainedPlayer(plan.fixture)
        try await CheckFailure.naming(plan.label) {
            switch plan.moment {
            case .beforePrepare:
                break
            case .duringPrepare:
                let mark = p.mark
                p.step("prepareToPlay() in \(plan.label)")
                p.player.prepareToPlay()
                _ = await p.recorder.first(since: mark, timeout: plan.shutdownDelay) { $0 == .preparedToPlay || $0.isFinished }
            case .afterPlaying, .duringSeek:
                try await p.prepare()
                try await p.play()
                try await observe(for: plan.playFor)
                if plan.moment == .duringSeek {
                    let mark = p.mark
                    p.step("currentPlaybackTime = \(format(plan.seekTarget)) in \(plan.label)")
                    p.player.currentPlaybackTime = plan.seekTarget
                    _ = await p.recorder.first(since: mark, timeout: plan.shutdownDelay) { $0.seekPosition != nil }
                }
            }
        }
        try await p.shutDown(within: shutdownLimit, "\(plan.label) (seed \(hex(setupTeardownSeed)))")
    }

    // MARK: - stress.state-storm

    /// The seed of `stress.state-storm`; thread n draws from seed + n.
    static let stormSeed: UInt64 = 0x5EED_2026_1201_0002
    /// How many calls the storm makes in all.
    static let stormCalls = 500
    /// How many threads make them at once.
    static let stormThreads = 4
    /// How long any call of the storm may take (the storm is about load, so this is looser
    /// than the 50 ms of the api checks).
    static let stormCallLimit: TimeInterval = 1

    /// `stormCalls` random calls from `stormThreads` threads on one playing player; then it
    /// still plays to the end.
    static let stateStorm = Check(
        "stress.state-storm",
        "\(stormCalls) random calls (play, pause, stop, seeks, rate, volume, thumbnail) from \(stormThreads) threads at once on one player (seed \(hex(stormSeed))): each returns within 1 s, no error; afterwards a seek 1 s before the end and play() reach .finished(.playbackEnded)",
        timeout: 60
    ) { context in
        let p = try context.player("frames.mp4")
        try await p.prepare()
        let duration = p.player.duration
        try expect(duration > 2, "frames.mp4 reports duration \(format(duration)) s")
        try await p.play()
        try await p.waitForPosition(atLeast: 0.2, timeout: 5)
        let stormMark = p.mark
        p.step("\(stormCalls) calls from \(stormThreads) threads")
        let outcome = await storm(p.player, duration: duration)
        try expect(outcome.unfinished.isEmpty, "calls of the storm (seed \(hex(stormSeed))) did not return within \(format(stormDeadline)) s: \(outcome.unfinished.joined(separator: ", "))")
        try expect(outcome.slow.isEmpty, "slow calls in the storm (seed \(hex(stormSeed))), limit \(format(stormCallLimit)) s: \(outcome.slow.prefix(6).joined(separator: ", "))")
        let errors = p.recorder.events(since: stormMark).filter(\.isError)
        try expect(errors.isEmpty, "the player failed during the storm (seed \(hex(stormSeed))): \(summary(errors))")
        // Whatever state the storm left (stopped, ended, paused, playing, another rate): back
        // to normal speed, paused and prepared, then 1 s before the end and play to the end.
        p.player.playbackRate = 1
        p.player.pause()
        p.player.prepareToPlay()
        try await p.seek(to: duration - 1, timeout: 15)
        let mark = p.mark
        try await p.play()
        try await p.waitForEnd(since: mark, timeout: 10)
    }

    /// What the storm's threads found: calls slower than the limit, and calls that had not
    /// returned by the deadline.
    struct StormOutcome: Sendable {
        /// Each call that took longer than `stormCallLimit`, with its time.
        var slow: [String]
        /// The call each thread was still in at the deadline.
        var unfinished: [String]
    }

    /// How long the whole storm may take before its unfinished calls are reported.
    static let stormDeadline: TimeInterval = 30

    /// Runs the storm on `stormThreads` threads of their own and waits for them (at most
    /// `stormDeadline`); each thread makes its share of `stormCalls` with 0-8 ms between calls.
    static func storm(_ player: any MediaPlayback, duration: TimeInterval) async -> StormOutcome {
        let slow = Locked<[String]>([])
        let inFlight = Locked<[String?]>(Array(repeating: nil, count: stormThreads))
        let finished = Watched(0)
        let callsPerThread = stormCalls / stormThreads
        for index in 0..<stormThreads {
            DetachedThread.start(name: "storm-\(index)") {
                var random = SplitMix64(seed: stormSeed &+ UInt64(index))
                for number in 0..<callsPerThread {
                    let call = StormCall(using: &random, duration: duration)
                    inFlight.withLock { $0[index] = "thread \(index) call \(number): \(call)" }
                    let start = monotonicSeconds()
                    call.perform(on: player)
                    let took = monotonicSeconds() - start
                    inFlight.withLock { $0[index] = nil }
                    if took > stormCallLimit {
                        slow.withLock { $0.append("\(call) took \(Int((took * 1000).rounded())) ms (thread \(index) call \(number))") }
                    }
                    usleep(useconds_t(random.next() % 8000))
                }
                finished.update { $0 += 1 }
            }
        }
        _ = await finished.wait(timeout: stormDeadline) { $0 == stormThreads }
        return StormOutcome(slow: slow.get(), unfinished: inFlight.get().compactMap { $0 })
    }

    /// One call of the storm.
    enum StormCall: Sendable, CustomStringConvertible {
        /// play().
        case play
        /// pause().
        case pause
        /// stop().
        case stop
        /// thumbnailAtCurrentTime().
        case thumbnail
        /// currentPlaybackTime = the seconds.
        case seek(TimeInterval)
        /// playbackRate = the rate.
        case rate(Float)
        /// playbackVolume = the volume.
        case volume(Float)

        /// Draws a call: 30% seeks (within the first 70% of `duration`, so that the storm
        /// itself rarely reaches the end), 15% play, 13% pause, 4% stop, 10% rate, 12% volume,
        /// 16% thumbnail.
        init(using random: inout SplitMix64, duration: TimeInterval) {
            switch random.next() % 100 {
            case 0..<30: self = .seek(Double(random.next() % UInt64(max(1, duration * 700))) / 1000)
            case 30..<45: self = .play
            case 45..<58: self = .pause
            case 58..<62: self = .stop
            case 62..<72: self = .rate([0.5, 0.75, 1, 1.5, 2][Int(random.next() % 5)])
            case 72..<84: self = .volume(Float(random.next() % 101) / 100)
            default: self = .thumbnail
            }
        }

        /// Makes the call.
        func perform(on player: any MediaPlayback) {
            switch self {
            case .play: player.play()
            case .pause: player.pause()
            case .stop: player.stop()
            case .thumbnail: _ = player.thumbnailAtCurrentTime()
            case .seek(let target): player.currentPlaybackTime = target
            case .rate(let rate): player.playbackRate = rate
            case .volume(let volume): player.playbackVolume = volume
            }
        }

        /// The call as code.
        var description: String {
            switch self {
            case .play: "play()"
            case .pause: "pause()"
            case .stop: "stop()"
            case .thumbnail: "thumbnailAtCurrentTime()"
            case .seek(let target): "currentPlaybackTime = \(format(target))"
            case .rate(let rate): "playbackRate = \(format(Double(rate)))"
            case .volume(let volume): "playbackVolume = \(format(Double(volume)))"
            }
        }
    }

    // MARK: - stress.many-at-once

    /// How many players play together.
    static let togetherCount = 8
    /// How long they are measured playing together, seconds.
    static let togetherWindow: TimeInterval = 3
    /// How far each one's pace may be from real time.
    static let togetherTolerance = 0.20

    /// The files, in the order they are given to players: the distinct fixtures of about 4 s
    /// or more (the window and the start-up of them all), then second players of frames.mp4,
    /// video-only.mp4 and audio-only.m4a. There are only five distinct playable files long
    /// enough: short.mp4 (3 s) and the sweep clips (1 s sizes, 3 s formats) end before the
    /// window does, so three files play in two players each.
    static let togetherFixtures = ["frames.mp4", "video-only.mp4", "audio-only.m4a", "anamorphic.mp4", "size-change.ts",
                                   "frames.mp4", "video-only.mp4", "audio-only.m4a"]

    /// `togetherCount` players prepared at once, then played together; each one's position
    /// advances at real time over `togetherWindow`.
    static let manyAtOnce = Check(
        "stress.many-at-once",
        "\(togetherCount) players (frames.mp4, video-only.mp4, audio-only.m4a, anamorphic.mp4, size-change.ts; the first three twice) prepared, then played together: over \(format(togetherWindow)) s each position advances at real time ±\(Int(togetherTolerance * 100))%",
        timeout: 60
    ) { context in
        var players: [TogetherPlayer] = []
        for (index, name) in togetherFixtures.prefix(togetherCount).enumerated() {
            let second = togetherFixtures.prefix(index).contains(name)
            players.append(TogetherPlayer(player: try context.player(name), label: second ? "\(name) (second player)" : name))
        }
        for entry in players {
            entry.player.step("prepareToPlay() (\(entry.label))")
            entry.player.player.prepareToPlay()
        }
        for entry in players {
            entry.player.step("waiting for .preparedToPlay (\(entry.label))")
            try await CheckFailure.naming("\(entry.label), with \(togetherCount) players preparing at once") {
                try await entry.player.recorder.waitForPrepared(timeout: 15)
            }
        }
        let marks = players.map(\.player.mark)
        for entry in players {
            entry.player.step("play() (\(entry.label))")
            entry.player.player.play()
        }
        for (entry, mark) in zip(players, marks) {
            entry.player.step("waiting for .playing (\(entry.label))")
            try await entry.player.recorder.waitFor(".playbackStateChanged(.playing) of \(entry.label)", since: mark, timeout: 10) { $0 == .playbackStateChanged(.playing) }
        }
        // Until every position has moved (at most 2 s, so that the 4 s files do not end within
        // the window): one that does not move is measured all the same, and reported with its
        // pace.
        context.trace.set("waiting for the positions of \(players.count) players to move")
        let moving = monotonicSeconds() + 2
        while players.contains(where: { $0.player.position < 0.1 }), monotonicSeconds() < moving {
            try await observe(for: 0.01)
        }
        context.trace.set("\(players.count) players playing together for \(format(togetherWindow)) s")
        // Every player's position each quarter second, so that a failure shows where a pace
        // went wrong (a hold, a jump, a slow run).
        let samples = try await sample(every: 0.25, for: togetherWindow) {
            players.map { (wall: monotonicSeconds(), position: $0.player.position) }
        }
        let start = samples[0].value
        let end = samples[samples.count - 1].value
        var off: [String] = []
        for (index, entry) in players.enumerated() {
            let wall = end[index].wall - start[index].wall
            let advance = end[index].position - start[index].position
            let pace = advance / wall
            let finishes = entry.player.recorder.events(since: marks[index]).filter(\.isFinished)
            if !finishes.isEmpty {
                off.append("\(entry.label) finished (\(summary(finishes))) after advancing \(format(advance)) s in \(format(wall)) s")
            } else if abs(pace - 1) > togetherTolerance {
                let positions = samples.map { format($0.value[index].position) }.joined(separator: " ")
                off.append("\(entry.label) advanced \(format(advance)) s in \(format(wall)) s (\(format(pace))x; its position every 0.25 s: \(positions))")
            }
        }
        try expect(off.isEmpty, "with \(players.count) players together, expected 1x ± \(Int(togetherTolerance * 100))%: \(off.joined(separator: "; "))")
    }

    /// A player of `stress.many-at-once` and how failures name it.
    struct TogetherPlayer: Sendable {
        /// The player.
        let player: CheckPlayer
        /// Its file, and "(second player)" for the second player of a file.
        let label: String
    }

    // MARK: - stress.released-without-shutdown

    /// The fixtures of one round of `stress.released-without-shutdown`.
    static let releaseFixtures = ["frames.mp4", "short.mp4", "video-only.mp4", "audio-only.m4a"]
    /// How many rounds: 3 rounds of 4 players, so that a leak of one thread or fd a player
    /// (12 in all) exceeds the allowance.
    static let releaseRounds = 3
    /// How long a released player may take to be freed.
    static let freedTimeout: TimeInterval = 10

    /// How far above the baseline `stress.released-without-shutdown` may leave the process
    /// after 12 players released while playing: the same reasoning as
    /// `setupTeardownAllowance` (idle pool threads may stay; nothing else).
    static let releaseAllowance = ResourceAllowance(threads: 4, fileDescriptors: 8, residentBytes: nil)

    /// Players released while playing without shutdown() are freed and give back their
    /// threads and fds.
    static let releasedWithoutShutdown = Check(
        "stress.released-without-shutdown",
        "players released while playing, without shutdown() (\(releaseRounds) rounds of \(releaseFixtures.count)), are freed and give back every thread and fd",
        timeout: 90
    ) { context in
        // One player first pays the engine's one-time set-up (libraries, shared instances),
        // which stays for the process's life, before the baseline is taken.
        let warmUp = try await playAndRelease(["frames.mp4"], context)
        try await expectFreed(warmUp, "the warm-up player", context)
        let baseline = try await quietReading(context)
        for round in 1...releaseRounds {
            let released = try await playAndRelease(releaseFixtures, context)
            try await expectFreed(released, "round \(round)", context)
        }
        context.trace.set("waiting for the threads of \(releaseRounds * releaseFixtures.count) released players to exit")
        let excess = try await settle(to: baseline, within: releaseAllowance, timeout: settleTimeout)
        try expect(excess.isEmpty, "after \(releaseRounds * releaseFixtures.count) players released without shutdown() and \(format(settleTimeout)) s to settle: \(excess.joined(separator: "; "))")
    }

    /// Makes a player the context does not keep for each fixture, prepares and plays them
    /// together until each has played 0.2 s, then lets go of every reference (player, event
    /// recorder) without shutdown(). Returns weak references to the players.
    static func playAndRelease(_ names: [String], _ context: CheckContext) async throws -> [WeakPlayer] {
        let made = try names.map { try context.unretainedPlayer($0) }
        for p in made { try await p.prepare() }
        for p in made { try await p.play() }
        for p in made { try await p.waitForPosition(atLeast: 0.2, timeout: 5) }
        context.trace.set("releasing \(made.count) players without shutdown()")
        return made.map { WeakPlayer(player: $0.player) }
    }

    /// Fails unless every player `released` refers to is freed within `freedTimeout`
    /// (polled: nothing announces it).
    static func expectFreed(_ released: [WeakPlayer], _ what: String, _ context: CheckContext) async throws {
        context.trace.set("waiting for the players of \(what) to be freed")
        let deadline = monotonicSeconds() + freedTimeout
        while released.contains(where: { $0.player != nil }) {
            if monotonicSeconds() > deadline {
                let alive = released.filter { $0.player != nil }.count
                throw CheckFailure("\(what): \(alive) of \(released.count) players released without shutdown() were not freed within \(format(freedTimeout)) s (something still holds them)")
            }
            try await observe(for: 0.02)
        }
    }

    // MARK: - Reading the process

    /// How long the thread and fd counts must hold still for `quietReading`.
    static let quietSpan: TimeInterval = 0.5
    /// How long `quietReading` waits for them to hold still at most.
    static let quietTimeout: TimeInterval = 5

    /// A baseline reading once the threads and fds of the players just gone have gone too:
    /// polled every 50 ms until neither count has changed for `quietSpan` (at most
    /// `quietTimeout`), then read once more with the allocator's free memory released.
    static func quietReading(_ context: CheckContext) async throws -> ProcessResources {
        context.trace.set("waiting for the thread and fd counts to hold still for the baseline")
        let deadline = monotonicSeconds() + quietTimeout
        var reading = ProcessResources.current()
        var since = monotonicSeconds()
        while monotonicSeconds() - since < quietSpan, monotonicSeconds() < deadline {
            try await observe(for: 0.05)
            let next = ProcessResources.current()
            if next.threads != reading.threads || next.fileDescriptors != reading.fileDescriptors { since = monotonicSeconds() }
            reading = next
        }
        return ProcessResources.current(releasingFreeMemory: true)
    }

    /// Polls the process's resources every 100 ms until they are within `allowance` of
    /// `baseline`, for at most `timeout` seconds (threads take a moment to exit, and idle
    /// pool threads longer). Returns what is still over at the last reading (empty when
    /// nothing is).
    static func settle(to baseline: ProcessResources, within allowance: ResourceAllowance,
                       timeout: TimeInterval) async throws -> [String] {
        let deadline = monotonicSeconds() + timeout
        while true {
            let now = ProcessResources.current(releasingFreeMemory: allowance.residentBytes != nil)
            let excess = allowance.excess(of: now, over: baseline)
            if excess.isEmpty || monotonicSeconds() > deadline { return excess }
            try await observe(for: 0.1)
        }
    }
}

// MARK: - Helpers

/// SplitMix64 (Steele, Lea and Flood): a tiny, fast generator whose whole sequence follows
/// from its seed, for random choices a run can repeat.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator that starts from `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A seed as the checks print it.
func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16, uppercase: true) }

/// What this process holds now, read from /proc/self.
struct ProcessResources: Sendable, CustomStringConvertible {
    /// Entries of /proc/self/task.
    let threads: Int
    /// Entries of /proc/self/fd, less the one that reading the folder opens.
    let fileDescriptors: Int
    /// VmRSS of /proc/self/status, in bytes.
    let residentBytes: Int

    /// Reads them now. `releasingFreeMemory`: first hands the memory the C allocator holds
    /// free back to the system (glibc's `malloc_trim(0)`), so that the resident size counts
    /// what is in use rather than what the allocator's per-thread arenas happen to keep.
    static func current(releasingFreeMemory: Bool = false) -> ProcessResources {
        if releasingFreeMemory { releaseFreeMemory() }
        return ProcessResources(threads: entries(of: "/proc/self/task"),
                                fileDescriptors: entries(of: "/proc/self/fd") - 1,
                                residentBytes: residentSize())
    }

    /// Calls glibc's `malloc_trim(0)`, looked up at run time (Swift's Glibc module does not
    /// declare it); does nothing with a C library without it.
    private static func releaseFreeMemory() {
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
    }

    /// "N threads, N fds, RSS N MiB".
    var description: String { "\(threads) threads, \(fileDescriptors) fds, RSS \(mebibytes(residentBytes)) MiB" }

    /// The number of entries of a folder, "." and ".." left out; 0 when it cannot be read.
    private static func entries(of path: String) -> Int {
        guard let folder = opendir(path) else { return 0 }
        defer { closedir(folder) }
        var count = 0
        while let entry = readdir(folder) {
            let name = entry.pointee.d_name
            if name.0 == 0x2E && (name.1 == 0 || (name.1 == 0x2E && name.2 == 0)) { continue }
            count += 1
        }
        return count
    }

    /// VmRSS from /proc/self/status, in bytes; 0 when it cannot be read.
    private static func residentSize() -> Int {
        let file = open("/proc/self/status", O_RDONLY)
        guard file >= 0 else { return 0 }
        defer { close(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        let kibibytes = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) } ?? 0
        return kibibytes * 1024
    }
}

/// Bytes as MiB with one decimal.
func mebibytes(_ bytes: Int) -> String { String(cFormat: "%.1f", Double(bytes) / 1_048_576) }

/// How far above a baseline the process's resources may be.
struct ResourceAllowance: Sendable {
    /// Threads more than the baseline.
    let threads: Int
    /// Open file descriptors more than the baseline.
    let fileDescriptors: Int
    /// Resident bytes more than the baseline; nil: not compared.
    let residentBytes: Int?

    /// What in `now` exceeds the allowance over `baseline`, one phrase each; empty when
    /// nothing does.
    func excess(of now: ProcessResources, over baseline: ProcessResources) -> [String] {
        var over: [String] = []
        if now.threads > baseline.threads + threads {
            over.append("\(now.threads) threads, baseline \(baseline.threads) + \(threads) allowed")
        }
        if now.fileDescriptors > baseline.fileDescriptors + fileDescriptors {
            over.append("\(now.fileDescriptors) open fds, baseline \(baseline.fileDescriptors) + \(fileDescriptors) allowed")
        }
        if let residentBytes, now.residentBytes > baseline.residentBytes + residentBytes {
            over.append("resident memory \(mebibytes(now.residentBytes)) MiB, baseline \(mebibytes(baseline.residentBytes)) MiB + \(mebibytes(residentBytes)) MiB allowed")
        }
        return over
    }
}

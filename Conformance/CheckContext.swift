import FoundationEssentials
import Glibc
import PlaybackKit

// MARK: - Outcomes a check throws

/// Thrown by a check, or by a wait of `EventRecorder` or `FrameCollector`, that found the
/// player breaking the contract; `reason` says how.
public struct CheckFailure: Error, CustomStringConvertible {
    /// What went wrong, in a sentence.
    public let reason: String
    /// A failure for `reason`.
    public init(_ reason: String) { self.reason = reason }
    /// The reason.
    public var description: String { reason }

    /// Runs `body`; a failure it throws comes out with `subject` (a clip, a cycle) in front of
    /// its reason, so that a check over many subjects names the one that failed.
    @discardableResult
    static func naming<Result>(_ subject: String, _ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let failure as CheckFailure {
            throw CheckFailure("\(subject): \(failure.reason)")
        }
    }
}

/// The failure `CheckContext.eachClip` ends a sweep with: every failed clip is in the
/// context's `clipFailures`, so nothing failed outside them.
struct ClipSweepFailure: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// Thrown by a check that cannot run here, for a reason the suite states.
struct CheckSkip: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// Fails the check with `reason` unless `condition` holds.
func expect(_ condition: Bool, _ reason: @autoclosure () -> String) throws {
    if !condition { throw CheckFailure(reason()) }
}

/// Lets `seconds` of wall time pass on purpose, to measure or observe what happens meanwhile.
func observe(for seconds: TimeInterval) async throws {
    try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))
}

/// Samples `read` every `interval` seconds for `duration` seconds.
func sample<T: Sendable>(every interval: TimeInterval, for duration: TimeInterval,
                         _ read: () -> T) async throws -> [(time: TimeInterval, value: T)] {
    var samples: [(time: TimeInterval, value: T)] = []
    let start = monotonicSeconds()
    while true {
        let now = monotonicSeconds()
        samples.append((now, read()))
        if now - start >= duration { break }
        try await observe(for: interval)
    }
    return samples
}

// MARK: - A player under test

/// A player made for one check, with its events recorded from the start.
final class CheckPlayer: Sendable {
    let player: any MediaPlayback
    let recorder: EventRecorder
    /// What the `.frames` output delivered, when the player has one.
    let frames: FrameCollector?
    let url: URL
    private let trace: Locked<String>

    init(player: any MediaPlayback, recorder: EventRecorder, frames: FrameCollector?, url: URL, trace: Locked<String>) {
        self.player = player
        self.recorder = recorder
        self.frames = frames
        self.url = url
        self.trace = trace
    }

    /// Notes what the check is doing now, for the report of a hang.
    func step(_ what: String) { trace.set("\(url.lastPathComponent): \(what)") }

    var mark: Int { recorder.mark }
    var position: TimeInterval { player.currentPlaybackTime }

    /// Prepares and waits for `.preparedToPlay`.
    func prepare(timeout: TimeInterval = 10) async throws {
        let mark = recorder.mark
        step("prepareToPlay()")
        player.prepareToPlay()
        step("waiting for .preparedToPlay")
        try await recorder.waitFor(".preparedToPlay", since: mark, timeout: timeout) { $0 == .preparedToPlay }
    }

    /// Plays and waits for `.playbackStateChanged(.playing)`.
    func play(timeout: TimeInterval = 10) async throws {
        let mark = recorder.mark
        step("play()")
        player.play()
        step("waiting for .playing")
        try await recorder.waitFor(".playbackStateChanged(.playing)", since: mark, timeout: timeout) { $0 == .playbackStateChanged(.playing) }
    }

    /// Pauses and waits for `.playbackStateChanged(.paused)`.
    func pause(timeout: TimeInterval = 5) async throws {
        let mark = recorder.mark
        step("pause()")
        player.pause()
        step("waiting for .paused")
        try await recorder.waitFor(".playbackStateChanged(.paused)", since: mark, timeout: timeout) { $0 == .playbackStateChanged(.paused) }
    }

    /// Seeks and waits for a `.seekCompleted` near `target` (any, when `near` is nil);
    /// returns the position it reports.
    @discardableResult
    func seek(to target: TimeInterval, near tolerance: TimeInterval? = 0.25, timeout: TimeInterval = 10) async throws -> TimeInterval {
        let mark = recorder.mark
        step("currentPlaybackTime = \(format(target))")
        player.currentPlaybackTime = target
        step("waiting for .seekCompleted near \(format(target))")
        let expected = max(0, target)
        let entry = try await recorder.waitFor(".seekCompleted after seeking to \(format(target))", since: mark, timeout: timeout) { event in
            guard let position = event.seekPosition else { return false }
            guard let tolerance else { return true }
            return abs(position - expected) <= tolerance
        }
        return entry.event.seekPosition ?? 0
    }

    /// Shuts the player down (the call must return within `limit` seconds) and waits for its
    /// event stream to end (at most 5 s); `what` names the player in failures.
    func shutDown(within limit: TimeInterval, _ what: String) async throws {
        step("shutdown() in \(what)")
        let returned = await returnsWithin(limit) { [player] in player.shutdown() }
        try expect(returned, "\(what): shutdown() did not return within \(format(limit)) s")
        step("waiting for the event stream to end in \(what)")
        let ended = await recorder.waitForStreamEnd(timeout: 5)
        try expect(ended, "\(what): the event stream did not end within 5 s of shutdown()")
    }

    /// Waits for `.finished(.playbackEnded)` after `mark`.
    func waitForEnd(since mark: Int, timeout: TimeInterval) async throws {
        step("waiting for .finished(.playbackEnded)")
        try await recorder.waitFor(".finished(.playbackEnded)", since: mark, timeout: timeout) { $0 == .finished(.playbackEnded) }
    }

    /// Waits until the position has reached `seconds`, reading it every 10 ms.
    func waitForPosition(atLeast seconds: TimeInterval, timeout: TimeInterval) async throws {
        step("waiting for the position to reach \(format(seconds)) s")
        let deadline = monotonicSeconds() + timeout
        while position < seconds {
            if monotonicSeconds() > deadline {
                throw CheckFailure("the position did not reach \(format(seconds)) s within \(format(timeout)) s (it is \(format(position)) s, state \(player.playbackState))")
            }
            if let error = recorder.events().first(where: \.isError) {
                throw CheckFailure("the player failed while playing: \(describe(error))")
            }
            try await observe(for: 0.01)
        }
    }

    /// The frame number in `thumbnailAtCurrentTime()`; fails the check when there is no
    /// picture or no readable number.
    func thumbnailFrameNumber(_ context: String) throws -> Int {
        step("thumbnailAtCurrentTime() (\(context))")
        guard let picture = player.thumbnailAtCurrentTime() else {
            throw CheckFailure("\(context): thumbnailAtCurrentTime() is nil")
        }
        guard let number = FramePattern.frameNumber(in: picture) else {
            throw CheckFailure("\(context): the thumbnail (\(picture.width)x\(picture.height)) carries no readable frame number")
        }
        return number
    }

    /// Every state named by `.playbackStateChanged` since `mark`.
    func states(since mark: Int = 0) -> [PlaybackState] { recorder.events(since: mark).compactMap(\.state) }
}

// MARK: - What a check works with

/// Makes players for one check from the suite's factory, and cleans up after it: every player
/// is shut down and every local server stopped, whether the check passed, failed or hung.
final class CheckContext: Sendable {
    let fixtures: URL
    private let factory: ConformanceSuite.Factory
    /// The name of the players under test, as the report shows it.
    let backendName: String
    /// The `backendName` every player under test must report; nil: any that is not empty.
    let expectedPlayerBackendName: String?
    private let players = Locked<[any MediaPlayback]>([])
    private let queues = Locked<[PlaybackQueue]>([])
    /// The players made with `retained: false`, held weakly: clean-up shuts down those still alive.
    private let unretainedPlayers = Locked<[WeakPlayer]>([])
    private let servers = Locked<[LocalHTTPServer]>([])
    /// Temporary folders to delete after the check.
    private let folders = Locked<[URL]>([])
    private let closed = Locked(false)
    /// What the check was doing last, for the report of a hang.
    let trace = Locked("starting")
    /// Each clip of a sweep that failed, with how (see `eachClip`).
    let clipFailures = Locked<[String: String]>([:])

    init(fixtures: URL, backendName: String = "custom", expectedPlayerBackendName: String? = nil,
         factory: @escaping ConformanceSuite.Factory) {
        self.fixtures = fixtures
        self.backendName = backendName
        self.expectedPlayerBackendName = expectedPlayerBackendName
        self.factory = factory
    }

    /// Runs `exercise` on each of `clips` in turn, judging each on its own: a clip that fails
    /// is recorded under `key` (its path in the fixtures folder) and the sweep goes on with the
    /// next, so an expectation can cover one clip without hiding the others. Ends with one
    /// failure naming every clip that failed. A skip or a cancellation ends the sweep at once.
    func eachClip<Clip: Sendable>(_ clips: [Clip], key: (Clip) -> String,
                                  _ exercise: (Clip) async throws -> Void) async throws {
        for clip in clips {
            do {
                try await exercise(clip)
            } catch let failure as CheckFailure {
                clipFailures.withLock { $0[key(clip)] = failure.reason }
            } catch let skip as CheckSkip {
                throw CheckSkip("\(key(clip)): \(skip.reason)")
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                clipFailures.withLock { $0[key(clip)] = "unexpected error: \(error)" }
            }
        }
        let failed = clipFailures.get()
        guard failed.isEmpty else {
            let names = clips.map(key).filter { failed[$0] != nil }
            throw ClipSweepFailure(names.map { "\($0): \(failed[$0] ?? "")" }.joined(separator: "; "))
        }
    }

    /// The players under test as a backend, for the lists a fallback player or a queue tries.
    var backendUnderTest: any PlaybackBackend { FactoryBackend(name: backendName, factory: factory) }

    /// The fixture's URL; skips the check when it is missing.
    func fixture(_ name: String) throws -> URL {
        let url = fixtures.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw CheckSkip("fixture \(name) is missing from \(fixtures.path) (FixtureRecipe.make(in:) makes it)")
        }
        return url
    }

    /// A fresh player for `url` with null audio, its events recorded from the start.
    /// `frames`: a `.frames` output (into `viewport` when given) collected for the check.
    /// `retained`: the context keeps the player until clean-up shuts it down; when false it
    /// holds the player only weakly, so the player lives as long as the check holds it (its
    /// `CheckPlayer`), and clean-up shuts it down only if it is still alive then.
    /// `trying`: a player of `Backends.makePlayer(trying:url:options:)` over these backends
    /// instead of one of the player under test.
    func player(url: URL, frames: Bool = false, viewport: VideoSize? = nil, retained: Bool = true,
                trying backends: [any PlaybackBackend]? = nil,
                configure: (inout PlaybackOptions) -> Void = { _ in }) throws -> CheckPlayer {
        guard !closed.get() else { throw CancellationError() }
        let collector = frames ? FrameCollector(readsNumbers: viewport == nil) : nil
        var options = PlaybackOptions(videoOutput: .none, audioOutput: .null)
        // Under a memory checker opening takes as much longer as everything else.
        options.openTimeout *= SizeSweep.slowdown
        if let collector { options.videoOutput = .frames(viewport: viewport, handler: collector.handler) }
        configure(&options)
        let player: any MediaPlayback
        trace.set("making a player for \(url.lastPathComponent)")
        do {
            if let backends {
                player = try Backends.makePlayer(trying: backends, url: url, options: options)
            } else {
                player = try factory(url, options)
            }
        } catch {
            throw CheckFailure("making a player for \(url.lastPathComponent) threw: \(error)")
        }
        if retained {
            players.withLock { $0.append(player) }
        } else {
            unretainedPlayers.withLock { list in
                list.removeAll { $0.player == nil }
                list.append(WeakPlayer(player: player))
            }
        }
        trace.set("taking the events of the player for \(url.lastPathComponent)")
        let recorder = EventRecorder(player.events)
        trace.set("made a player for \(url.lastPathComponent)")
        return CheckPlayer(player: player, recorder: recorder, frames: collector, url: url, trace: trace)
    }

    /// A fresh player for the fixture `name`.
    func player(_ name: String, frames: Bool = false, viewport: VideoSize? = nil) throws -> CheckPlayer {
        try player(url: fixture(name), frames: frames, viewport: viewport)
    }

    /// A fresh player for the fixture `name` that the context does not keep (see
    /// `player(url:retained:)`): for checks that make many players one after another, or
    /// that release a player without shutdown().
    func unretainedPlayer(_ name: String) throws -> CheckPlayer {
        try player(url: fixture(name), retained: false)
    }

    /// A play queue of `urls` over `backends` (nil: the backend under test alone), with null
    /// audio and no picture (or the pictures at natural size into `frames`), shut down by
    /// clean-up.
    func queue(_ urls: [URL], trying backends: [any PlaybackBackend]? = nil, frames: FrameCollector? = nil) throws -> PlaybackQueue {
        guard !closed.get() else { throw CancellationError() }
        var options = PlaybackOptions(videoOutput: .none, audioOutput: .null)
        if let frames { options.videoOutput = .frames(viewport: nil, handler: frames.handler) }
        let queue = PlaybackQueue(urls: urls, trying: backends ?? [backendUnderTest], options: options)
        queues.withLock { $0.append(queue) }
        return queue
    }

    /// A local HTTP server on 127.0.0.1 with the suite's media (see `NetworkMedia`), https
    /// when `tls` is given; stopped after the check.
    func httpServer(tls: TLSServerIdentity? = nil) throws -> LocalHTTPServer {
        guard !closed.get() else { throw CancellationError() }
        let server: LocalHTTPServer
        do {
            server = try LocalHTTPServer(tls: tls)
        } catch {
            throw CheckFailure("the suite could not start its local HTTP server: \(error)")
        }
        servers.withLock { $0.append(server) }
        try NetworkMedia.install(on: server, context: self)
        return server
    }

    /// A fresh temporary folder, deleted after the check.
    func temporaryFolder() throws -> URL {
        guard !closed.get() else { throw CancellationError() }
        var template = Array("/tmp/playbackkit-check-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw CheckFailure("the suite could not make a temporary folder: \(String(cString: strerror(errno)))")
        }
        let folder = URL(fileURLWithPath: String(cString: made))
        folders.withLock { $0.append(folder) }
        return folder
    }

    /// A new test certificate authority (see `TestCertificates`), deleted after the check.
    func certificates() throws -> TestCertificates {
        guard !closed.get() else { throw CancellationError() }
        do {
            let made = try TestCertificates.make()
            folders.withLock { $0.append(made.folder) }
            return made
        } catch {
            throw CheckFailure("the suite could not make its test certificates: \(error)")
        }
    }

    /// What the check's local servers were asked and answered, one line each, or nil when it
    /// started none: added to a failure's reason, so a failed request shows which one it was.
    func serverLogs() -> String? {
        let list = servers.withLock { $0 }
        guard !list.isEmpty else { return nil }
        return list.map { "server log: " + NetworkChecks.describeRequests($0) }.joined(separator: "; ")
    }

    /// Shuts every player down (each call may take at most `limit` seconds) and stops the
    /// servers. Returns a problem to report, if any.
    func cleanUp(limit: TimeInterval = 2) async -> String? {
        closed.set(true)
        let made = players.withLock { list -> [any MediaPlayback] in
            defer { list.removeAll() }
            return list
        } + unretainedPlayers.withLock { list -> [any MediaPlayback] in
            defer { list.removeAll() }
            return list.compactMap(\.player)
        }
        var problems: [String] = []
        for queue in queues.withLock({ list -> [PlaybackQueue] in defer { list.removeAll() }; return list }) {
            let returned = await returnsWithin(limit) { queue.shutdown() }
            if !returned { problems.append("a queue's shutdown() did not return within \(format(limit)) s") }
        }
        for player in made {
            let returned = await returnsWithin(limit) { player.shutdown() }
            if !returned { problems.append("shutdown() did not return within \(format(limit)) s") }
        }
        for server in servers.withLock({ list -> [LocalHTTPServer] in defer { list.removeAll() }; return list }) {
            server.stop()
        }
        for folder in folders.withLock({ list -> [URL] in defer { list.removeAll() }; return list }) {
            try? FileManager.default.removeItem(at: folder)
        }
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }
}

/// The players a suite's factory makes, as a backend.
struct FactoryBackend: PlaybackBackend {
    let name: String
    let factory: ConformanceSuite.Factory
    var engineVersion: String { "" }
    func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback { try factory(url, options) }
}

/// A player held without keeping it alive.
struct WeakPlayer: Sendable {
    /// The player, or nil once its last strong reference is gone.
    weak let player: (any MediaPlayback)?
}

/// Runs `work` on another thread and reports whether it returned within `limit` seconds
/// (a call that never returns is left behind on its thread).
func returnsWithin(_ limit: TimeInterval, _ work: @escaping @Sendable () -> Void) async -> Bool {
    let done = Watched(false)
    DetachedThread.start {
        work()
        done.update { $0 = true }
    }
    return await done.wait(timeout: limit) { $0 }
}

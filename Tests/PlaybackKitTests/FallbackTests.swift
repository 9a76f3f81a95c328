import Foundation
import Testing
@testable import PlaybackKit

/// `Backends.makePlayer(backends:url:options:)` over scripted backends: which try plays, what
/// the app sees of the others, and what happens to them.
@Suite struct FallbackTests {
    let log = ScriptLog()
    let clip = URL(fileURLWithPath: "/media/clip.mp4")

    /// A backend whose players fail with `code` after sending decoy events.
    func failing(_ name: String, _ code: PlaybackError.Code) -> ScriptedBackend {
        ScriptedBackend(name: name, log: log) { _ in
            .fails(PlaybackError(code: code, message: "\(name) cannot"),
                   decoys: [.loadStateChanged(.stalled), .naturalSizeAvailable(VideoSize(width: 7, height: 7)),
                            .playbackStateChanged(.interrupted)])
        }
    }

    func good(_ name: String = "good") -> ScriptedBackend { ScriptedBackend(name: name, log: log) }

    /// The events up to and including the first `.preparedToPlay` or `.finished`.
    func eventsUntilSettled(_ inbox: Inbox<PlaybackEvent>) async -> [PlaybackEvent] {
        var events: [PlaybackEvent] = []
        while let event = await inbox.next() {
            events.append(event)
            if event == .preparedToPlay { break }
            if case .finished = event { break }
        }
        return events
    }

    @Test func anEmptyListThrowsInvalidArgument() {
        #expect(throws: PlaybackError(code: .invalidArgument, message: "makePlayer: the list of backends to try is empty")) {
            _ = try Backends.makePlayer(backends: [], url: clip, options: PlaybackOptions())
        }
    }

    @Test func anUnknownNameIsAFailedTry() async throws {
        Backends.register(good("fallback-registered"))
        let player = try Backends.makePlayer(backends: ["no-such-engine", "fallback-registered"], url: clip, options: PlaybackOptions())
        defer { player.shutdown() }
        #expect(player.backendName == "")
        let inbox = Inbox(player.events)
        player.prepareToPlay()
        let events = await eventsUntilSettled(inbox)
        #expect(events.last == .preparedToPlay, "\(events)")
        #expect(!events.contains { if case .finished = $0 { true } else { false } })
        #expect(player.backendName == "fallback-registered")
        #expect(player.isPreparedToPlay)
    }

    @Test func onlyTheEventsOfTheEngineThatPlaysReachTheApp() async throws {
        let player = try Backends.makePlayer(trying: [failing("first", .unsupportedFormat), failing("second", .decode), good()],
                                             url: clip, options: PlaybackOptions())
        defer { player.shutdown() }
        let inbox = Inbox(player.events)
        player.prepareToPlay()
        let events = await eventsUntilSettled(inbox)
        #expect(events == [.loadStateChanged([.playable, .playthroughOK]), .preparedToPlay])
        #expect(player.backendName == "good")
        #expect(log.lines.contains("first clip.mp4: shutdown"))
        #expect(log.lines.contains("second clip.mp4: shutdown"))
        #expect(!log.lines.contains("good clip.mp4: shutdown"))
        #expect(await inbox.next() == .playbackStateChanged(.paused))
    }

    @Test(arguments: [PlaybackError.Code.sourceNotFound, .network, .forbiddenURL, .invalidArgument])
    func aFailureNoEngineCanMendEndsAtOnce(_ code: PlaybackError.Code) async throws {
        let player = try Backends.makePlayer(trying: [failing("first", code), good()], url: clip, options: PlaybackOptions())
        defer { player.shutdown() }
        let inbox = Inbox(player.events)
        player.prepareToPlay()
        let events = await eventsUntilSettled(inbox)
        #expect(events == [.finished(.playbackError(PlaybackError(code: code, message: "first cannot")))])
        #expect(log.players.map(\.backend) == ["first"], "the next backend must not be tried")
        #expect(player.backendName == "")
        #expect(player.playbackState == .stopped)
    }

    @Test func whenEveryTryFailsOneErrorNamesThemAll() async throws {
        let player = try Backends.makePlayer(trying: [failing("first", .unsupportedFormat), failing("second", .decode),
                                                      Backends.candidate(named: "no-such-engine")],
                                             url: clip, options: PlaybackOptions())
        defer { player.shutdown() }
        let inbox = Inbox(player.events)
        player.prepareToPlay()
        let events = await eventsUntilSettled(inbox)
        guard events.count == 1, case .finished(.playbackError(let error)) = events[0] else {
            Issue.record("expected one .finished(.playbackError), got \(events)")
            return
        }
        #expect(error.code == .decode, "the last failure that is not backendUnavailable decides")
        for name in ["first", "second", "no-such-engine", "clip.mp4"] { #expect(error.message.contains(name), "\(error.message)") }
        // A new round starts from the first backend.
        player.prepareToPlay()
        #expect(await inbox.next()?.error?.code == .decode)
        #expect(log.players.map(\.backend) == ["first", "second", "first", "second"])
    }

    @Test func aFrameStepReachesOnlyTheChosenPlayer() async throws {
        let player = try Backends.makePlayer(trying: [failing("first", .engine), good()], url: clip, options: PlaybackOptions())
        defer { player.shutdown() }
        player.stepFrames(1)  // nothing is chosen: no frame rate, nothing to step
        #expect(player.nominalFrameRate == 0)
        try await player.prepare()
        #expect(player.nominalFrameRate == 25)
        player.stepFrames(-2)
        #expect(await log.wait { $0.lines.contains("good clip.mp4: step -2") })
        #expect(!log.lines.contains { $0.hasSuffix("step 1") }, "a step before the choice was passed on")
    }

    @Test func settingsMadeBeforeTheChoiceReachThePlayerThatPlays() async throws {
        let player = try Backends.makePlayer(trying: [failing("first", .engine), good()], url: clip, options: PlaybackOptions())
        defer { player.shutdown() }
        player.currentPlaybackTime = 2.5
        player.playbackRate = 1.5
        player.playbackVolume = 0.25
        player.scalingMode = .fill
        player.shouldAutoplay = true
        #expect(player.currentPlaybackTime == 2.5)
        #expect(player.playbackRate == 1.5 && player.playbackVolume == 0.25 && player.scalingMode == .fill && player.shouldAutoplay)
        let inbox = Inbox(player.events)
        player.prepareToPlay()
        _ = await eventsUntilSettled(inbox)
        #expect(await inbox.next() == .playbackStateChanged(.playing), "shouldAutoplay applies")
        let chosen = try #require(log.players(for: "clip.mp4").last)
        #expect(chosen.backend == "good")
        #expect(chosen.currentPlaybackTime == 2.5 && chosen.playbackRate == 1.5 && chosen.playbackVolume == 0.25)
        #expect(chosen.scalingMode == .fill && chosen.shouldAutoplay)
        // Once chosen, calls go straight to it.
        player.playbackVolume = 0.5
        player.pause()
        #expect(await inbox.next() == .playbackStateChanged(.paused))
        #expect(chosen.playbackVolume == 0.5)
    }

    @Test func playBeforePrepareGoesOnToPlayWithTheEngineThatPrepares() async throws {
        let player = try Backends.makePlayer(trying: [failing("first", .unsupportedFormat), good()], url: clip, options: PlaybackOptions())
        defer { player.shutdown() }
        let inbox = Inbox(player.events)
        player.play()
        #expect(await eventsUntilSettled(inbox).last == .preparedToPlay)
        #expect(await inbox.next() == .playbackStateChanged(.playing))
        #expect(player.isPlaying)
    }

    @Test func stopWhileTryingEndsTheRound() async throws {
        let hanging = ScriptedBackend(name: "hanging", log: log) { _ in .hangs }
        let player = try Backends.makePlayer(trying: [hanging, good()], url: clip, options: PlaybackOptions())
        defer { player.shutdown() }
        let inbox = Inbox(player.events)
        player.prepareToPlay()
        #expect(await log.wait { $0.lines.contains("hanging clip.mp4: prepare") })
        player.stop()
        #expect(await inbox.next() == .finished(.userExited))
        #expect(log.lines.contains("hanging clip.mp4: shutdown"))
        #expect(log.players.map(\.backend) == ["hanging"])
    }

    @Test func picturesOfAFailedTryNeverReachTheHandler() async throws {
        let sizes = Locked<[VideoSize]>([])
        let options = PlaybackOptions(videoOutput: .frames(viewport: nil) { frame in sizes.withLock { $0.append(frame.size) } })
        let player = try Backends.makePlayer(trying: [failing("first", .decode), good()], url: clip, options: options)
        defer { player.shutdown() }
        let inbox = Inbox(player.events)
        player.prepareToPlay()
        #expect(await eventsUntilSettled(inbox).last == .preparedToPlay)
        #expect(sizes.get() == [VideoSize(width: 2, height: 2)])
    }

    @Test func shutdownReleasesTheTryAndEndsTheStreams() async throws {
        let hanging = ScriptedBackend(name: "hanging", log: log) { _ in .hangs }
        let player = try Backends.makePlayer(trying: [hanging], url: clip, options: PlaybackOptions())
        let inbox = Inbox(player.events)
        player.prepareToPlay()
        #expect(await log.wait { $0.lines.contains("hanging clip.mp4: prepare") })
        player.shutdown()
        #expect(await inbox.waitForEnd())
        #expect(log.lines.last == "hanging clip.mp4: shutdown")
        player.play()
        player.currentPlaybackTime = 3
        #expect(log.lines.last == "hanging clip.mp4: shutdown", "calls after shutdown() are no-ops")
    }

    @Test func aPlayerReleasedWithoutShutdownShutsItsEngineDown() async throws {
        var player: (any MediaPlayback)? = try Backends.makePlayer(trying: [good()], url: clip, options: PlaybackOptions())
        let inbox = Inbox(player!.events)
        player?.prepareToPlay()
        #expect(await inbox.next() == .loadStateChanged([.playable, .playthroughOK]))
        weak let released = player
        player = nil
        #expect(await log.wait { $0.lines.contains("good clip.mp4: shutdown") })
        #expect(released == nil)
        #expect(await inbox.waitForEnd())
    }
}

extension PlaybackEvent {
    /// The error of a `.finished(.playbackError)`.
    var error: PlaybackError? {
        if case .finished(.playbackError(let error)) = self { return error }
        return nil
    }
}

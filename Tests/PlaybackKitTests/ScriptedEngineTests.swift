import Foundation
import PlaybackKit
import Testing

/// The first event of `events` that `matches`, or nil when none comes within `timeout`.
private func firstEvent(_ events: AsyncStream<PlaybackEvent>, within timeout: TimeInterval,
                        where matches: @escaping @Sendable (PlaybackEvent) -> Bool) async -> PlaybackEvent? {
    await withTaskGroup(of: PlaybackEvent?.self) { group in
        group.addTask {
            for await event in events where matches(event) { return event }
            return nil
        }
        group.addTask {
            try? await Task.sleep(nanoseconds: UInt64(timeout * 1e9))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// The scripted engine of the adapter guide, driven by `EnginePlayer` through the public API.
@Suite(.serialized) struct ScriptedEngineTests {
    /// A file for the player's URL check (the scripted engine reads nothing).
    private static let clip: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("scripted-\(getpid()).clip")
        _ = FileManager.default.createFile(atPath: url.path, contents: Data([0]))
        return url
    }()

    private func player(_ script: ScriptedEngine.Script = ScriptedEngine.Script()) throws -> any MediaPlayback {
        try ScriptedBackend(script: script).makePlayer(url: Self.clip, options: PlaybackOptions(audioOutput: .null))
    }

    private func prepared(_ player: any MediaPlayback) async throws {
        let events = player.events
        player.prepareToPlay()
        let event = await firstEvent(events, within: 5) { $0 == .preparedToPlay || $0.isFinish }
        try #require(event == .preparedToPlay, "prepare ended in \(String(describing: event))")
    }

    @Test func preparesPausedAtTheStartWithItsPicture() async throws {
        let player = try player()
        defer { player.shutdown() }
        try await prepared(player)
        #expect(player.isPreparedToPlay)
        #expect(player.playbackState == .paused)
        #expect(player.duration == 1)
        #expect(player.naturalSize == VideoSize(width: 32, height: 16))
        #expect(player.thumbnailAtCurrentTime()?.pixel(x: 0, y: 0).r == 0)
    }

    @Test func playsToTheEndOnceAndStops() async throws {
        let player = try player()
        defer { player.shutdown() }
        try await prepared(player)
        let events = player.events
        player.play()
        let end = await firstEvent(events, within: 5) { $0.isFinish }
        #expect(end == .finished(.playbackEnded))
        #expect(player.playbackState == .stopped)
        #expect(abs(player.currentPlaybackTime - 1) < 0.05)
    }

    @Test func seeksWhilePausedToTheFrameThere() async throws {
        let player = try player()
        defer { player.shutdown() }
        try await prepared(player)
        let events = player.events
        player.currentPlaybackTime = 0.5
        let completed = await firstEvent(events, within: 5) { if case .seekCompleted = $0 { return true } else { return false } }
        #expect(completed == .seekCompleted(12.0 / 25))
        #expect(player.playbackState == .paused)
        #expect(player.thumbnailAtCurrentTime()?.pixel(x: 0, y: 0).r == 12)
    }

    @Test func aFailureToOpenEndsThePlayWithItsError() async throws {
        let failure = PlaybackError(code: .unsupportedFormat, message: "scripted: not a clip")
        let player = try player(ScriptedEngine.Script(failure: failure))
        defer { player.shutdown() }
        let events = player.events
        player.prepareToPlay()
        let end = await firstEvent(events, within: 5) { $0.isFinish }
        #expect(end == .finished(.playbackError(failure)))
        #expect(!player.isPreparedToPlay)
    }

    @Test func stopsAndPreparesAgain() async throws {
        let player = try player()
        defer { player.shutdown() }
        try await prepared(player)
        let events = player.events
        player.stop()
        #expect(await firstEvent(events, within: 5) { $0.isFinish } == .finished(.userExited))
        try await prepared(player)
        #expect(player.playbackState == .paused)
    }
}

private extension PlaybackEvent {
    var isFinish: Bool { if case .finished = self { return true } else { return false } }
}

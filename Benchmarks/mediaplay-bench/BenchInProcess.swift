import FoundationEssentials
import PlaybackConformance
import CommandLineSupport
import PlaybackKit

// MARK: - Waiting on events

/// The first event of `stream` that `match` accepts; nil when the stream finishes first or
/// `seconds` pass.
func firstEvent(_ stream: AsyncStream<PlaybackEvent>, within seconds: Double,
                matching match: @escaping @Sendable (PlaybackEvent) -> Bool) async -> PlaybackEvent? {
    await withTaskGroup(of: PlaybackEvent?.self) { group in
        group.addTask {
            for await event in stream where match(event) { return event }
            return nil
        }
        group.addTask {
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// Shuts `player` down and waits (up to 10 s) until its events stream finishes, so the next
/// measurement does not overlap its teardown.
func shutDown(_ player: any MediaPlayback) async {
    let stream = player.events
    player.shutdown()
    _ = await firstEvent(stream, within: 10) { _ in false }
}

/// True for `.preparedToPlay` and `.finished`, the two ways opening ends.
@Sendable func endsOpening(_ event: PlaybackEvent) -> Bool {
    switch event {
    case .preparedToPlay, .finished: true
    default: false
    }
}

// MARK: - Measurements inside this process

/// Measurements through `Backends.makePlayer` in this process: time to prepared, accurate
/// seek latency and concurrency.
struct InProcessMeasurements {
    let media: BenchMedia
    let runs: Int
    let log: @Sendable (String) -> Void

    /// The number of seeks and their seed.
    static let seekCount = 20
    static let seekSeed: UInt64 = 20_261_130

    /// Open → `.preparedToPlay` on the 1080p clip, `.none` video, null audio; each run a new
    /// player. The first run includes the engine's one-time set-up (reported apart as `cold`).
    /// Also checks that a picture is there once prepared.
    func timeToPrepared(backend: any PlaybackBackend) async -> (warm: Series, cold: Double?, pictureReady: Bool) {
        var warm = Series()
        var cold: Double?
        var pictureReady = true
        let count = max(runs, 3) + 1
        for run in 0..<count {
            let player: any MediaPlayback
            do {
                player = try backend.makePlayer(url: URL(fileURLWithPath: media.playbackFile),
                                                options: PlaybackOptions(videoOutput: .none, audioOutput: .null))
            } catch {
                warm.failure = "\(error)"
                break
            }
            let stream = player.events
            let started = monotonicSeconds()
            player.prepareToPlay()
            let event = await firstEvent(stream, within: 30, matching: endsOpening)
            let elapsed = monotonicSeconds() - started
            if event == .preparedToPlay {
                if player.thumbnailAtCurrentTime() == nil { pictureReady = false }
                if run == 0 { cold = elapsed } else { warm.values.append(elapsed) }
            } else {
                warm.failure = Self.describe(event, waiting: "prepared", seconds: 30)
            }
            await shutDown(player)
            if warm.failure != nil { break }
        }
        return (warm, cold, pictureReady)
    }

    /// 20 accurate seeks to fixed-seed random targets in the 60 s clip, paused; seconds from
    /// setting `currentPlaybackTime` to `.seekCompleted`. Also returns the largest distance
    /// between a target and the position reached.
    func seekLatency(backend: any PlaybackBackend) async -> (latency: Series, worstMiss: Double?) {
        var latency = Series()
        let player: any MediaPlayback
        do {
            player = try backend.makePlayer(url: URL(fileURLWithPath: media.seekingFile),
                                            options: PlaybackOptions(videoOutput: .none, audioOutput: .null))
        } catch {
            latency.failure = "\(error)"
            return (latency, nil)
        }
        let opening = player.events
        player.prepareToPlay()
        let opened = await firstEvent(opening, within: 30, matching: endsOpening)
        guard opened == .preparedToPlay else {
            latency.failure = Self.describe(opened, waiting: "prepared", seconds: 30)
            await shutDown(player)
            return (latency, nil)
        }
        var generator = SplitMix64(seed: Self.seekSeed)
        let length = Double(BenchMedia.seeking.seconds)
        var worstMiss = 0.0
        for _ in 0..<Self.seekCount {
            let target = (0.5 + Double.random(in: 0..<(length - 2), using: &generator) * 1000).rounded() / 1000
            let stream = player.events
            let started = monotonicSeconds()
            player.currentPlaybackTime = target
            let event = await firstEvent(stream, within: 15) { event in
                if case .seekCompleted = event { return true }
                if case .finished = event { return true }
                return false
            }
            let elapsed = monotonicSeconds() - started
            guard case .seekCompleted(let reached) = event else {
                latency.failure = Self.describe(event, waiting: String(cFormat: "seekCompleted(%.3f)", target), seconds: 15)
                break
            }
            latency.values.append(elapsed)
            worstMiss = max(worstMiss, abs(reached - target))
        }
        await shutDown(player)
        return (latency, latency.values.isEmpty ? nil : worstMiss)
    }

    /// Why waiting for `what` ended without it.
    static func describe(_ event: PlaybackEvent?, waiting what: String, seconds: Double) -> String {
        switch event {
        case .finished(.playbackError(let error))?: return error.description
        case let event?: return "got \(event) while waiting for \(what)"
        case nil: return "no \(what) within \(String(cFormat: "%.0f", seconds)) s"
        }
    }
}

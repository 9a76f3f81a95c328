import FoundationEssentials
import PlaybackKit

/// Every public call returns within 50 ms, also while the engine is busy or the source stalls.
enum DisciplineChecks {
    static let all: [Check] = [duringPrepare, duringSeekStorm, whileOpenStalls, whilePlaybackStalls]

    /// How long any public call may take.
    static let callLimit: TimeInterval = 0.05

    /// Calls every public member once (getters, setters with their current values, then
    /// play/pause so that the player ends as `playing` says) and returns the slow ones.
    static func callEveryMember(_ player: any MediaPlayback, playing: Bool) -> [String] {
        var slow: [String] = []
        func time(_ name: String, read: Bool = false, _ call: () -> Void) {
            if let late = timed(name, repeatable: read, call) { slow.append(late) }
        }
        time("isPreparedToPlay", read: true) { _ = player.isPreparedToPlay }
        time("isPlaying", read: true) { _ = player.isPlaying }
        time("playbackState", read: true) { _ = player.playbackState }
        time("loadState", read: true) { _ = player.loadState }
        var position: TimeInterval = 0
        time("currentPlaybackTime (get)", read: true) { position = player.currentPlaybackTime }
        time("duration", read: true) { _ = player.duration }
        time("playableDuration", read: true) { _ = player.playableDuration }
        time("bufferingProgress", read: true) { _ = player.bufferingProgress }
        time("numberOfBytesTransferred", read: true) { _ = player.numberOfBytesTransferred }
        time("naturalSize", read: true) { _ = player.naturalSize }
        var mode = ScalingMode.aspectFit
        time("scalingMode (get)", read: true) { mode = player.scalingMode }
        time("scalingMode (set)") { player.scalingMode = mode }
        var autoplay = false
        time("shouldAutoplay (get)", read: true) { autoplay = player.shouldAutoplay }
        time("shouldAutoplay (set)") { player.shouldAutoplay = autoplay }
        var rate: Float = 1
        time("playbackRate (get)", read: true) { rate = player.playbackRate }
        time("playbackRate (set)") { player.playbackRate = rate }
        var volume: Float = 1
        time("playbackVolume (get)", read: true) { volume = player.playbackVolume }
        time("playbackVolume (set)") { player.playbackVolume = volume }
        time("thumbnailAtCurrentTime()", read: true) { _ = player.thumbnailAtCurrentTime() }
        time("events") { _ = player.events }
        time("prepareToPlay()") { player.prepareToPlay() }
        time("currentPlaybackTime (set)") { player.currentPlaybackTime = position }
        if playing {
            time("pause()") { player.pause() }
            time("play()") { player.play() }
        } else {
            time("play()") { player.play() }
            time("pause()") { player.pause() }
        }
        return slow
    }

    /// Seeks to each target in turn, 10-20 ms apart, calling every member between seeks when
    /// `everyMember`; returns the slow calls.
    static func seekStorm(_ player: any MediaPlayback, targets: [TimeInterval], everyMember: Bool = false) async throws -> [String] {
        var slow: [String] = []
        for (index, target) in targets.enumerated() {
            if let late = timed("currentPlaybackTime = \(format(target)) in a seek storm", { player.currentPlaybackTime = target }) {
                slow.append(late)
            }
            if everyMember, index < targets.count - 1 {
                for late in callEveryMember(player, playing: true) { slow.append(late + " in a seek storm") }
            }
            if index < targets.count - 1 {
                try await observe(for: 0.010 + Double((index * 7) % 11) / 1000)
            }
        }
        return slow
    }

    static let duringPrepare = Check("api.prompt-during-prepare", "every public call returns within 50 ms while the player prepares") { context in
        let p = try context.player("frames.mp4")
        let mark = p.mark
        var slow: [String] = []
        if let late = timed("prepareToPlay()", { p.player.prepareToPlay() }) { slow.append(late) }
        var rounds = 0
        while !p.recorder.events(since: mark).contains(.preparedToPlay) || rounds < 3 {
            slow += callEveryMember(p.player, playing: false)
            rounds += 1
            if rounds > 2000 { break }
            try await observe(for: 0.005)
        }
        try expect(slow.isEmpty, "slow calls while preparing: \(slow.prefix(6).joined(separator: ", "))")
        try await p.recorder.waitFor(".preparedToPlay", since: mark, timeout: 10) { $0 == .preparedToPlay }
    }

    static let duringSeekStorm = Check("api.prompt-during-seek-storm", "every public call returns within 50 ms during a storm of seeks while playing") { context in
        let p = try context.player("frames.mp4")
        try await p.prepare()
        try await p.play()
        try await p.waitForPosition(atLeast: 0.3, timeout: 5)
        let mark = p.mark
        let slow = try await seekStorm(p.player, targets: SeekChecks.stormTargets, everyMember: true)
        try expect(slow.isEmpty, "slow calls: \(slow.prefix(6).joined(separator: ", "))")
        let last = SeekChecks.stormTargets.last!
        try await p.recorder.waitFor(".seekCompleted near \(format(last)) after the storm", since: mark, timeout: 10) {
            guard let position = $0.seekPosition else { return false }
            return abs(position - last) <= 0.1
        }
    }

    static let whileOpenStalls = Check("api.prompt-while-open-stalls", "every public call, stop() and shutdown() return within 50 ms while the source stalls during opening (local HTTP)", timeout: 40) { context in
        let server = try context.httpServer()
        try await NetworkMedia.requireHTTP(context, server)
        let p = try context.player(url: server.url(NetworkMedia.stallOpen))
        let mark = p.mark
        var slow: [String] = []
        if let late = timed("prepareToPlay()", { p.player.prepareToPlay() }) { slow.append(late) }
        let reached = await server.waitForStall(timeout: 10)
        try expect(reached, "the player did not read up to the point where the source stalls within 10 s")
        let early = p.recorder.events(since: mark)
        try expect(!early.contains(.preparedToPlay), "prepared from a source that stalls before its index: \(summary(early))")
        for _ in 0..<3 {
            slow += callEveryMember(p.player, playing: false)
            try await observe(for: 0.1)
        }
        if let late = timed("stop()", { p.player.stop() }) { slow.append(late) }
        if let late = timed("shutdown()", { p.player.shutdown() }) { slow.append(late) }
        try expect(slow.isEmpty, "slow calls while the source stalls: \(slow.prefix(6).joined(separator: ", "))")
        let ended = await p.recorder.waitForStreamEnd(timeout: 5)
        try expect(ended, "the event stream did not end within 5 s of shutdown() while the source stalls")
    }

    static let whilePlaybackStalls = Check("api.prompt-while-playback-stalls", "every public call, stop() and shutdown() return within 50 ms while playback waits for a stalled source (local HTTP)", timeout: 45) { context in
        let server = try context.httpServer()
        try await NetworkMedia.requireHTTP(context, server)
        let p = try context.player(url: server.url(NetworkMedia.stallPlay))
        try await p.prepare()
        try await p.play()
        try await NetworkMedia.waitForStall(p)
        var slow: [String] = []
        for _ in 0..<3 {
            slow += callEveryMember(p.player, playing: true)
            try await observe(for: 0.1)
        }
        if let late = timed("currentPlaybackTime = 8 (into the missing data)", { p.player.currentPlaybackTime = 8 }) { slow.append(late) }
        try await observe(for: 0.3)
        slow += callEveryMember(p.player, playing: true)
        if let late = timed("stop()", { p.player.stop() }) { slow.append(late) }
        if let late = timed("shutdown()", { p.player.shutdown() }) { slow.append(late) }
        try expect(slow.isEmpty, "slow calls while the source stalls: \(slow.prefix(6).joined(separator: ", "))")
        let ended = await p.recorder.waitForStreamEnd(timeout: 5)
        try expect(ended, "the event stream did not end within 5 s of shutdown() while the source stalls")
    }
}

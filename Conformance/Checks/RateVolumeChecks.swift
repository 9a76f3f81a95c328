import FoundationEssentials
import PlaybackKit

/// Playback rate and volume.
enum RateVolumeChecks {
    static let all: [Check] = [double, half, volume]

    static let double = Check("rate.double", "playbackRate 2.0 advances the position and the picture twice as fast (±15%)") { context in
        try await TimeChecks.realTime(context, fixture: "frames.mp4", rate: 2.0, tolerance: 0.15)
    }

    static let half = Check("rate.half", "playbackRate 0.5 advances the position and the picture half as fast (±15%)") { context in
        try await TimeChecks.realTime(context, fixture: "frames.mp4", rate: 0.5, tolerance: 0.15)
    }

    static let volume = Check("volume.round-trip", "playbackVolume set/get round-trips before and after prepare and while playing, stays within 0...1, and the engine itself reports each value (EngineReportingPlayback)") { context in
        let p = try context.player("frames.mp4")
        guard let reporting = p.player as? any EngineReportingPlayback else {
            throw CheckFailure("the player does not say what volume its engine applies (EngineReportingPlayback), so a volume the engine ignores cannot be told from one it applies")
        }
        try expect(p.player.playbackVolume == 1, "playbackVolume starts at \(p.player.playbackVolume), expected 1")
        p.player.playbackVolume = 0.25
        try expect(p.player.playbackVolume == 0.25, "before prepare: set 0.25, read \(p.player.playbackVolume)")
        try await p.prepare()
        try expect(p.player.playbackVolume == 0.25, "after prepare the volume reads \(p.player.playbackVolume), set 0.25 before")
        try await p.play()
        // Read once playing: an engine may open its audio output only when sound starts.
        try await engineApplies(0.25, reporting, when: "playing (set before prepare)")
        for value: Float in [0.5, 0, 0.75, 1] {
            p.player.playbackVolume = value
            try expect(p.player.playbackVolume == value, "while playing: set \(value), read \(p.player.playbackVolume)")
            try await engineApplies(value, reporting, when: "while playing")
        }
        p.player.playbackVolume = 1.7
        try expect((0...1).contains(p.player.playbackVolume), "set 1.7, read \(p.player.playbackVolume): outside 0...1")
        p.player.playbackVolume = -0.3
        try expect((0...1).contains(p.player.playbackVolume), "set -0.3, read \(p.player.playbackVolume): outside 0...1")
        p.player.playbackVolume = 0.6
        try await p.waitForPosition(atLeast: 0.5, timeout: 5)
        try expect(p.player.playbackVolume == 0.6, "while playing: set 0.6, read \(p.player.playbackVolume)")
        try await engineApplies(0.6, reporting, when: "while playing")
        try expect(p.player.isPlaying, "changing the volume stopped playback (state \(p.player.playbackState))")
    }

    /// Waits up to a second for the engine to report `value` (within 1 %): settings reach an
    /// engine asynchronously, and no event says when.
    static func engineApplies(_ value: Float, _ player: any EngineReportingPlayback, when: String) async throws {
        let deadline = monotonicSeconds() + 1
        var reported = player.engineReportedVolume
        while reported.map({ abs($0 - value) > 0.01 }) ?? true, monotonicSeconds() < deadline {
            try await observe(for: 0.02)
            reported = player.engineReportedVolume
        }
        guard let reported else {
            throw CheckFailure("\(when): set \(value), but the engine reports no volume of its own")
        }
        try expect(abs(reported - value) <= 0.01, "\(when): set \(value), but the engine reports \(reported) a second later")
    }
}

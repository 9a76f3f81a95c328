#if FFmpeg
import FFmpegPlayback
import Foundation
import PlaybackConformance
import PlaybackKit
import Testing

// MARK: - Helpers

private func filmPlayer(configure: (inout PlaybackOptions) -> Void = { _ in }) throws -> EnginePlayer {
    var options = PlaybackOptions(videoOutput: .none, audioOutput: .null)
    configure(&options)
    let player = try FFmpegBackend().makePlayer(url: try TestFixtures.file("tracks/film.mkv"), options: options)
    return try #require(player as? EnginePlayer)
}

/// Waits until `condition` holds, looking every 20 ms, for at most `timeout` seconds; whether it did.
private func eventually(timeout: TimeInterval, _ condition: () -> Bool) async throws -> Bool {
    let deadline = ProcessInfo.processInfo.systemUptime + timeout
    while !condition() {
        if ProcessInfo.processInfo.systemUptime > deadline { return false }
        try await Task.sleep(for: .milliseconds(20))
    }
    return true
}

private func selectedIDs(_ tracks: [MediaTrack]) -> Set<String> { Set(tracks.filter(\.isSelected).map(\.id)) }

// MARK: - Tests

@Suite("FFmpeg engine: tracks and subtitles", .serialized)
struct FFmpegTrackTests {
    @Test("deselecting audio keeps the clock running (the engine reports no audio); selecting it again plays it")
    func deselectAudio() async throws {
        let player = try filmPlayer()
        defer { player.shutdown() }
        let events = try await EventRecorder.prepared(player)
        player.play()
        #expect(try await eventually(timeout: 3) { player.currentPlaybackTime >= 0.5 })
        let mark = events.mark
        player.deselectTrack(kind: .audio)
        try await events.waitFor(".tracksChanged without audio", since: mark, timeout: 2) { event in
            if case .tracksChanged(let tracks) = event { return !tracks.contains { $0.kind == .audio && $0.isSelected } }
            return false
        }
        #expect(try await eventually(timeout: 2) { !player.engineReportedTracks.contains { $0.kind == .audio && $0.isSelected } })
        let silent = player.currentPlaybackTime
        #expect(try await eventually(timeout: 1.5) { player.currentPlaybackTime >= silent + 0.5 },
                "the clock stopped with audio deselected at \(silent) s")
        player.selectTrack(id: "audio:1")
        #expect(try await eventually(timeout: 2) { selectedIDs(player.engineReportedTracks) == ["video:0", "audio:1"] })
        let heard = player.currentPlaybackTime
        #expect(try await eventually(timeout: 1.5) { player.currentPlaybackTime >= heard + 0.5 })
        #expect(player.playbackState == .playing)
    }

    @Test("a subtitle file that cannot be read is left out; the others are listed and playback goes on")
    func unreadableSubtitleFiles() async throws {
        let missing = URL(fileURLWithPath: "/nonexistent/missing.srt")
        let srt = try TestFixtures.file("tracks/cues.srt")
        let player = try filmPlayer { $0.subtitleURLs = [missing, srt] }
        defer { player.shutdown() }
        let events = try await EventRecorder.prepared(player)
        let external = player.tracks.filter(\.isExternal)
        #expect(external.map(\.id) == ["subtitle:2"])
        #expect(external.first?.title == "cues.srt" && external.first?.codec == "subrip" && external.first?.isSelected == true)
        // Media that is not a subtitle: no track, no failure.
        let mark = events.mark
        player.addSubtitle(url: try TestFixtures.file("text.mp4"))
        let listed = await events.first(since: mark, timeout: 2) { event in
            if case .tracksChanged(let tracks) = event { return tracks.count > 6 }
            if case .finished = event { return true }
            return false
        }
        #expect(listed == nil, "text.mp4 as a subtitle: \(listed.map { "\($0.event)" } ?? "")")
        player.addSubtitle(url: try TestFixtures.file("tracks/cues.ass"))
        try await events.waitFor(".tracksChanged with subtitle:3", since: mark, timeout: 5) { event in
            if case .tracksChanged(let tracks) = event { return tracks.contains { $0.id == "subtitle:3" && $0.codec == "ass" } }
            return false
        }
        player.play()
        #expect(try await eventually(timeout: 3) { player.currentPlaybackTime >= 0.3 })
    }

    @Test("after a seek the selected subtitle's cue there shows again; deselecting clears it")
    func cuesAfterSeek() async throws {
        let player = try filmPlayer()
        defer { player.shutdown() }
        player.selectTrack(id: "subtitle:1")
        let events = try await EventRecorder.prepared(player)
        player.play()
        try await events.waitFor("the first French cue", timeout: 3) { $0 == .subtitleChanged(SubtitleCue(text: "Première ligne", start: 0.5, end: 1.5)) }
        var mark = events.mark
        player.currentPlaybackTime = 3.7
        try await events.waitFor("the third cue after a seek forward", since: mark, timeout: 3) { event in
            if case .subtitleChanged(let cue?) = event { return cue.text == "Troisième" }
            return false
        }
        mark = events.mark
        player.currentPlaybackTime = 0.8
        try await events.waitFor("the first cue after a seek back", since: mark, timeout: 3) { event in
            if case .subtitleChanged(let cue?) = event { return cue.text == "Première ligne" }
            return false
        }
        mark = events.mark
        player.deselectTrack(kind: .subtitle)
        try await events.waitFor("the cue cleared", since: mark, timeout: 2) { $0 == .subtitleChanged(nil) }
        #expect(player.currentSubtitle == nil)
    }
}
#endif

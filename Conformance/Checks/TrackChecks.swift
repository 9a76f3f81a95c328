import FoundationEssentials
import PlaybackKit

// MARK: - What the fixtures hold (the recipe makes them from these: Fixtures/FixtureTracks.swift)

/// The facts of the track fixtures, as the recipe makes them.
enum TrackFixtures {
    /// film.mkv's tracks at prepare with no selection and no preference.
    static let film: [MediaTrack] = [
        MediaTrack(id: "video:0", kind: .video, codec: "h264", isDefault: true, isSelected: true),
        MediaTrack(id: "audio:0", kind: .audio, title: "English", language: "eng", codec: "flac", isDefault: true, isSelected: true),
        MediaTrack(id: "audio:1", kind: .audio, title: "Français", language: "fre", codec: "flac"),
        MediaTrack(id: "subtitle:0", kind: .subtitle, title: "English", language: "eng", codec: "subrip"),
        MediaTrack(id: "subtitle:1", kind: .subtitle, title: "Français", language: "fre", codec: "ass"),
    ]

    /// song.mp3's tracks: its sound alone (its cover picture is not a track).
    static let song: [MediaTrack] = [
        MediaTrack(id: "audio:0", kind: .audio, codec: "mp3", isSelected: true),
    ]

    /// The cues of every subtitle of the fixtures, English text.
    static let cues: [SubtitleCue] = [
        SubtitleCue(text: "First line", start: 0.5, end: 1.5),
        SubtitleCue(text: "Second\nline", start: 2.0, end: 3.0),
        SubtitleCue(text: "Third", start: 3.5, end: 4.5),
    ]

    /// The French texts of film.mkv's subtitle:1.
    static let frenchTexts = ["Première ligne", "Deuxième\nligne", "Troisième"]

    /// The Cyrillic texts of cues-cp1251.srt.
    static let cyrillicTexts = ["Первая строка", "Вторая\nстрока", "Третья"]

    /// film.mkv's tags, as `MediaMetadata` reads them.
    static let filmTags = (title: "A Film of Tracks", artist: "PlaybackKit", date: "2026", genre: "Test",
                           comment: "Two audio tracks, two subtitles, three chapters")

    /// song.mp3's ID3 tags.
    static let songTags = (title: "A Song", artist: "The Fixtures", album: "Generated", genre: "Test", date: "2026",
                           comment: "ID3 tags")

    /// film.mkv's chapters.
    static let chapters = [Chapter(title: "Opening", start: 0, end: 2), Chapter(title: "Middle", start: 2, end: 4),
                           Chapter(title: "End", start: 4, end: 6)]
}

// MARK: - The checks

/// Tracks, subtitles, metadata and chapters: the same media gives the same tracks, cues, tags
/// and chapters on every engine.
enum TrackChecks {
    static let all: [Check] = [
        table, movText, selectBeforePrepare, selectWhilePlaying, selectWhilePaused, switchesThenPausedSeeks, preferredLanguages,
        embeddedCues, externalFiles, externalOverHTTP, legacyEncoding, utf16, styledWebVTT, addWhilePlaying, delay, drawn, toTheEnd, metadata, chapters,
        coverArt,
    ]

    // MARK: Track tables

    static let table = Check("tracks.table", "film.mkv lists its video, two audio and two subtitle tracks with the same ids, titles, languages, codecs and flags, complete with a .tracksChanged before .preparedToPlay") { context in
        let p = try context.player("tracks/film.mkv")
        try await p.prepare()
        try expectTracks(p, TrackFixtures.film, "film.mkv after prepare")
        let events = p.recorder.events()
        guard let listed = events.firstIndex(where: { if case .tracksChanged(let t) = $0 { t.count == TrackFixtures.film.count } else { false } }),
              let prepared = events.firstIndex(of: .preparedToPlay), listed < prepared else {
            throw CheckFailure("no complete .tracksChanged before .preparedToPlay: \(summary(events))")
        }
    }

    static let movText = Check("tracks.mov-text", "mov-text.mp4's mov_text subtitle is listed (subtitle:0, eng) and its cues come at their times") { context in
        let p = try context.player("tracks/mov-text.mp4")
        p.player.selectTrack(id: "subtitle:0")
        try await p.prepare()
        guard let subtitle = p.player.tracks.first(where: { $0.id == "subtitle:0" }) else {
            throw CheckFailure("mov-text.mp4 lists no subtitle:0: \(describe(p.player.tracks))")
        }
        try expect(subtitle.language == "eng" && subtitle.codec == "mov_text", "mov-text.mp4's subtitle:0 is \(describe([subtitle]))")
        try await expectCues(p, TrackFixtures.cues.map(\.text), delay: 0, what: "mov_text")
    }

    static let selectBeforePrepare = Check("tracks.select-before-prepare", "audio:1 and subtitle:1 selected before prepare are playing and shown once prepared, as the engine itself reports") { context in
        let p = try context.player("tracks/film.mkv")
        p.player.selectTrack(id: "audio:1")
        p.player.selectTrack(id: "subtitle:1")
        p.player.selectTrack(id: "audio:7")  // unknown: ignored
        try await p.prepare()
        try await expectSelected(p, ["video:0", "audio:1", "subtitle:1"], "after selecting before prepare")
    }

    static let selectWhilePlaying = Check("tracks.select-while-playing", "switching audio and subtitle tracks while playing keeps the position and playback goes on within 0.5 s") { context in
        let p = try context.player("tracks/film.mkv")
        try await p.prepare()
        try await p.play()
        try await p.waitForPosition(atLeast: 1.0, timeout: 5)
        let before = p.position
        p.player.selectTrack(id: "audio:1")
        p.player.selectTrack(id: "subtitle:0")
        try await expectSelected(p, ["video:0", "audio:1", "subtitle:0"], "after switching while playing")
        let after = p.position
        try expect(after >= before - 0.05, "the position went back from \(format(before)) to \(format(after)) s on a track switch")
        try await p.waitForPosition(atLeast: after + 0.3, timeout: 0.5 + 0.3 + 0.2)
        p.player.deselectTrack(kind: .subtitle)
        try await expectSelected(p, ["video:0", "audio:1"], "after deselecting the subtitle")
        try expect(p.player.isPlaying, "deselecting the subtitle stopped playback (\(p.player.playbackState))")
    }

    static let selectWhilePaused = Check("tracks.select-while-paused", "a track switch while paused is carried out and playback resumes from the same position") { context in
        let p = try context.player("tracks/film.mkv")
        try await p.prepare()
        try await p.seek(to: 2.5)
        p.player.selectTrack(id: "audio:1")
        try await expectSelected(p, ["video:0", "audio:1"], "after switching while paused")
        try expect(abs(p.position - 2.5) <= 0.05, "the position moved to \(format(p.position)) s on a paused track switch")
        try await p.play()
        try await p.waitForPosition(atLeast: 2.8, timeout: 2)
    }

    static let switchesThenPausedSeeks = Check("tracks.switches-then-paused-seeks", "while paused, each of: the ASS subtitle shown then hidden, shown again, audio and subtitle switched together, every subtitle hidden; after each, a paused seek completes within 5 s on the right frame with the selection kept, and playback resumes there") { context in
        let p = try context.player("tracks/film.mkv")
        try await p.prepare()
        p.player.selectTrack(id: "subtitle:1")
        try await expectSelected(p, ["video:0", "audio:0", "subtitle:1"], "the ASS subtitle selected")
        try await p.play()
        try await p.waitForPosition(atLeast: 1.2, timeout: 4)
        try await p.pause()
        let steps: [(what: String, change: () -> Void, selected: Set<String>, target: TimeInterval)] = [
            ("the ASS subtitle hidden", { p.player.deselectTrack(kind: .subtitle) }, ["video:0", "audio:0"], 2.2),
            ("the ASS subtitle shown again", { p.player.selectTrack(id: "subtitle:1") }, ["video:0", "audio:0", "subtitle:1"], 3.6),
            ("audio:1 and subtitle:0 together", {
                p.player.selectTrack(id: "audio:1")
                p.player.selectTrack(id: "subtitle:0")
            }, ["video:0", "audio:1", "subtitle:0"], 1.0),
            ("every subtitle hidden", { p.player.deselectTrack(kind: .subtitle) }, ["video:0", "audio:1"], 4.4),
        ]
        for step in steps {
            step.change()
            try await expectSelected(p, step.selected, step.what)
            _ = try await p.seek(to: step.target, timeout: 5)
            let shown = try p.thumbnailFrameNumber("a paused seek to \(format(step.target)) s after \(step.what)")
            try expect(shown == FramePattern.frame(at: step.target), "a paused seek to \(format(step.target)) s after \(step.what) shows frame \(shown), expected \(FramePattern.frame(at: step.target))")
            try await expectSelected(p, step.selected, "after the paused seek that followed \(step.what)")
        }
        try await p.play()
        try await p.waitForPosition(atLeast: 4.7, timeout: 3)
    }

    static let preferredLanguages = Check("tracks.preferred-languages", "preferredAudioLanguages [\"fr\"] plays audio:1; preferredSubtitleLanguages [\"eng\"] shows subtitle:0; a language no track has keeps the default") { context in
        let french = try context.player(url: try context.fixture("tracks/film.mkv")) {
            $0.preferredAudioLanguages = ["de", "fr"]
            $0.preferredSubtitleLanguages = ["eng"]
        }
        try await french.prepare()
        try await expectSelected(french, ["video:0", "audio:1", "subtitle:0"], "preferring fr audio and eng subtitles")
        french.player.shutdown()
        let nothing = try context.player(url: try context.fixture("tracks/film.mkv")) {
            $0.preferredAudioLanguages = ["jpn"]
            $0.preferredSubtitleLanguages = ["kor"]
        }
        try await nothing.prepare()
        try await expectSelected(nothing, ["video:0", "audio:0"], "preferring languages no track has")
    }

    // MARK: Subtitles

    static let embeddedCues = Check("subtitles.embedded", "film.mkv's SubRip and ASS tracks: .subtitleChanged and currentSubtitle at each cue's time (±1 frame) with its plain text") { context in
        let p = try context.player("tracks/film.mkv")
        p.player.selectTrack(id: "subtitle:0")
        try await p.prepare()
        try await expectCues(p, TrackFixtures.cues.map(\.text), delay: 0, what: "SubRip")
        p.player.shutdown()
        let ass = try context.player("tracks/film.mkv")
        ass.player.selectTrack(id: "subtitle:1")
        try await ass.prepare()
        try await expectCues(ass, TrackFixtures.frenchTexts, delay: 0, what: "ASS")
    }

    static let externalFiles = Check("subtitles.external", "cues.srt, cues.ass, cues.vtt and cues-bom.srt as subtitleURLs: a selected external track after the embedded ones, cues at their times") { context in
        for name in ["cues.srt", "cues.ass", "cues.vtt", "cues-bom.srt"] {
            try await expectOpeningSubtitle(context, try context.fixture("tracks/\(name)"), what: name)
        }
    }

    static let externalOverHTTP = Check("subtitles.external-http", "cues.srt and cues.ass served over http (the local server) as subtitleURLs beside a local film.mkv, and cues.vtt added over http while prepared: subtitle:2, selected, its cues at their times") { context in
        let server = try context.httpServer()
        for name in ["cues.srt", "cues.ass", "cues.vtt"] {
            server.route("/subtitles/\(name)", .content(try .file(try context.fixture("tracks/\(name)"))))
        }
        for name in ["cues.srt", "cues.ass"] {
            try await expectOpeningSubtitle(context, server.url("/subtitles/\(name)"), what: "\(name) over http")
        }
        try await expectSubtitleAddedWhilePrepared(context, server.url("/subtitles/cues.vtt"), what: "cues.vtt added over http while prepared")
    }

    static let legacyEncoding = Check("subtitles.legacy-encoding", "cues-cp1251.srt (Windows-1251, not UTF-8) shows its Cyrillic text (the README's rule for files that are not UTF-8)") { context in
        let file = try context.fixture("tracks/cues-cp1251.srt")
        let p = try context.player(url: try context.fixture("tracks/film.mkv")) { $0.subtitleURLs = [file] }
        try await p.prepare()
        try await expectCues(p, TrackFixtures.cyrillicTexts, delay: 0, what: "cues-cp1251.srt")
    }

    static let utf16 = Check("subtitles.utf16", "cues-utf16le.srt and cues-utf16be.srt (UTF-16 with its byte order mark and CR LF line ends, as Windows tools save text) show their Cyrillic text") { context in
        for name in ["cues-utf16le.srt", "cues-utf16be.srt"] {
            let file = try context.fixture("tracks/\(name)")
            let p = try context.player(url: try context.fixture("tracks/film.mkv")) { $0.subtitleURLs = [file] }
            try await p.prepare()
            try await expectCues(p, TrackFixtures.cyrillicTexts, delay: 0, what: name)
            p.player.shutdown()
        }
    }

    static let styledWebVTT = Check("subtitles.webvtt-style", "cues-styled.vtt (WebVTT with STYLE and REGION blocks, a NOTE, cue ids, settings and class spans, CR LF) as a subtitleURL and added while prepared: subtitle:2, selected, its cues' text at their times") { context in
        let file = try context.fixture("tracks/cues-styled.vtt")
        try await expectOpeningSubtitle(context, file, what: "cues-styled.vtt")
        try await expectSubtitleAddedWhilePrepared(context, file, what: "cues-styled.vtt added while prepared")
    }

    static let addWhilePlaying = Check("subtitles.add-while-playing", "addSubtitle(url:) while playing adds subtitle:2, selects it and its cues follow") { context in
        try await expectSubtitleAddedWhilePrepared(context, try context.fixture("tracks/cues.vtt"), what: "cues.vtt added while prepared")
    }

    /// film.mkv opened with `file` in `subtitleURLs`: the file is subtitle:2 after the embedded
    /// ones, selected, and its cues come at their times.
    static func expectOpeningSubtitle(_ context: CheckContext, _ file: URL, what: String) async throws {
        let p = try context.player(url: try context.fixture("tracks/film.mkv"), retained: false) { $0.subtitleURLs = [file] }
        defer { p.player.shutdown() }
        try await p.prepare()
        guard let external = p.player.tracks.last, external.id == "subtitle:2", external.isExternal else {
            throw CheckFailure("\(what): the external track is not subtitle:2 after the embedded ones: \(describe(p.player.tracks))")
        }
        try await expectSelected(p, ["video:0", "audio:0", "subtitle:2"], "with \(what) added")
        try await expectCues(p, TrackFixtures.cues.map(\.text), delay: 0, what: what)
        p.player.shutdown()
    }

    /// `file` added with addSubtitle(url:) to film.mkv once prepared: subtitle:2 is listed,
    /// selected, and its cues follow.
    static func expectSubtitleAddedWhilePrepared(_ context: CheckContext, _ file: URL, what: String) async throws {
        let p = try context.player("tracks/film.mkv")
        try await p.prepare()
        let mark = p.mark
        p.player.addSubtitle(url: file)
        try await p.recorder.waitFor(".tracksChanged with subtitle:2", since: mark, timeout: 5) { event in
            if case .tracksChanged(let tracks) = event { return tracks.contains { $0.id == "subtitle:2" && $0.isExternal } }
            return false
        }
        try await expectSelected(p, ["video:0", "audio:0", "subtitle:2"], "after addSubtitle (\(what))")
        try await expectCues(p, TrackFixtures.cues.map(\.text), delay: 0, what: what)
    }

    static let delay = Check("subtitles.delay", "subtitleDelay 0.4 s moves every cue event 0.4 s later (and the cue's times with it)") { context in
        let p = try context.player("tracks/film.mkv")
        p.player.selectTrack(id: "subtitle:0")
        p.player.subtitleDelay = 0.4
        try await p.prepare()
        try await expectCues(p, TrackFixtures.cues.map(\.text), delay: 0.4, what: "SubRip delayed 0.4 s")
    }

    static let drawn = Check("subtitles.drawn", "the selected subtitle is drawn on .frames pictures while its cue shows, not after, and never on thumbnails") { context in
        let p = try context.player("tracks/film.mkv", frames: true)
        p.player.selectTrack(id: "subtitle:0")
        try await p.prepare()
        try await p.seek(to: 0.9)
        try await p.play()
        _ = try await p.frames!.waitFor("a picture at 1.0-1.4 s", since: 0, timeout: 5) { (1.0...1.4).contains($0.presentationTime) }
        guard let during = p.frames!.latest else { throw CheckFailure("no .frames picture while the first cue shows") }
        let textPixels = subtitlePixels(in: during)
        try expect(textPixels >= 40, "at \(format(during.presentationTime)) s (cue \"First line\" showing) the picture has \(textPixels) text-coloured pixels in its lower half, expected some drawn text")
        if let thumbnail = p.player.thumbnailAtCurrentTime() {
            let inThumbnail = subtitlePixels(in: thumbnail)
            try expect(inThumbnail < 10, "the thumbnail at \(format(thumbnail.presentationTime)) s has \(inThumbnail) text-coloured pixels: the subtitle is drawn on it")
        }
        try await p.waitForPosition(atLeast: 1.75, timeout: 3)
        _ = try await p.frames!.waitFor("a picture at 1.7-1.95 s", since: 0, timeout: 3) { (1.7...1.95).contains($0.presentationTime) }
        guard let after = p.frames!.latest else { throw CheckFailure("no .frames picture after the first cue") }
        let left = subtitlePixels(in: after)
        try expect(left < 10, "at \(format(after.presentationTime)) s (no cue) the picture still has \(left) text-coloured pixels")
    }

    static let toTheEnd = Check("subtitles.to-the-end", "film.mkv played from the start to the end with each subtitle shown (SubRip, ASS, an external cues.srt and cues.ass) sends exactly one .finished(.playbackEnded)") { context in
        let cases: [(what: String, track: String, file: String?)] = [
            ("SubRip subtitle:0", "subtitle:0", nil), ("ASS subtitle:1", "subtitle:1", nil),
            ("external cues.srt", "subtitle:2", "cues.srt"), ("external cues.ass", "subtitle:2", "cues.ass"),
        ]
        for item in cases {
            let file = try item.file.map { try context.fixture("tracks/\($0)") }
            let p = try context.player(url: try context.fixture("tracks/film.mkv"), retained: false) { options in
                if let file { options.subtitleURLs = [file] }
            }
            defer { p.player.shutdown() }
            p.player.selectTrack(id: item.track)
            try await p.prepare()
            try await expectSelected(p, ["video:0", "audio:0", item.track], "\(item.what) before playing to the end")
            let mark = p.mark
            try await p.play()
            try await p.waitForEnd(since: mark, timeout: p.player.duration + 4)
            try await observe(for: 0.5)
            let finishes = p.recorder.events(since: mark).filter(\.isFinished)
            try expect(finishes == [.finished(.playbackEnded)], "\(item.what): at the end \(summary(finishes)), expected exactly one .finished(.playbackEnded)")
            p.player.shutdown()
        }
    }

    // MARK: Metadata and chapters

    static let metadata = Check("metadata.tags", "film.mkv's and song.mp3's tags: title, artist, album, genre, date, comment, and every tag in tags (keys lower-cased)") { context in
        let film = try context.player("tracks/film.mkv")
        try await film.prepare()
        let f = film.player.metadata, want = TrackFixtures.filmTags
        try expect(f.title == want.title && f.artist == want.artist && f.genre == want.genre && f.comment == want.comment
                   && (f.date ?? "").hasPrefix(want.date),
                   "film.mkv's metadata is \(describe(f))")
        try expect(film.recorder.events().contains { if case .metadataChanged = $0 { true } else { false } },
                   "no .metadataChanged at prepare")
        film.player.shutdown()
        let song = try context.player("tracks/song.mp3")
        try await song.prepare()
        let s = song.player.metadata, tags = TrackFixtures.songTags
        try expect(s.title == tags.title && s.artist == tags.artist && s.album == tags.album && s.genre == tags.genre
                   && (s.date ?? "").hasPrefix(tags.date) && s.comment == tags.comment,
                   "song.mp3's metadata is \(describe(s))")
        try expect(s.tags.keys.allSatisfy { $0 == $0.lowercased() }, "song.mp3's tag keys are not lower-cased: \(s.tags.keys.sorted())")
    }

    static let coverArt = Check("tracks.cover-art", "song.mp3, with a cover picture in the file and cover.jpg beside it, lists its one audio track and no video, has no natural size, and plays to the end with no .frames picture: a cover is not video") { context in
        let p = try context.player("tracks/song.mp3", frames: true)
        try await p.prepare()
        try expectTracks(p, TrackFixtures.song, "song.mp3 after prepare")
        try expect(p.player.naturalSize == .zero, "song.mp3 reports natural size \(p.player.naturalSize)")
        try await p.seek(to: 3)
        let mark = p.mark
        try await p.play()
        try await p.waitForEnd(since: mark, timeout: 5)
        let pictures = p.frames?.count ?? 0
        try expect(pictures == 0, "song.mp3 delivered \(pictures) .frames pictures")
        try expectTracks(p, TrackFixtures.song, "song.mp3 at its end")
    }

    static let chapters = Check("chapters.list", "film.mkv's three chapters with titles and times (±10 ms); a seek to a chapter's start lands there") { context in
        let p = try context.player("tracks/film.mkv")
        try await p.prepare()
        let listed = p.player.chapters
        try expect(listed.count == 3, "film.mkv has \(listed.count) chapters, expected 3: \(listed)")
        for (chapter, want) in zip(listed, TrackFixtures.chapters) {
            try expect(chapter.title == want.title && abs(chapter.start - want.start) <= 0.01
                       && abs((chapter.end ?? .infinity) - want.end!) <= 0.01,
                       "chapter \(chapter) differs from \(want)")
        }
        let reached = try await p.seek(to: listed[1].start, near: 0.05)
        let shown = try p.thumbnailFrameNumber("after a seek to chapter 2")
        try expect(abs(reached - 2) <= 0.05 && abs(shown - 50) <= 1, "a seek to chapter 2 (2 s) reached \(format(reached)) s, frame \(shown)")
    }

    // MARK: - Helpers

    /// Fails unless the player's tracks equal `expected` field by field.
    static func expectTracks(_ p: CheckPlayer, _ expected: [MediaTrack], _ when: String) throws {
        let listed = p.player.tracks
        guard listed.count == expected.count else {
            throw CheckFailure("\(when): \(listed.count) tracks, expected \(expected.count): \(describe(listed))")
        }
        for (track, want) in zip(listed, expected) where track != want {
            throw CheckFailure("\(when): track \(describe([track])), expected \(describe([want]))")
        }
    }

    /// Waits up to 2 s until exactly `ids` are selected, both in `tracks` and, when the player
    /// can tell, as the engine itself reports.
    static func expectSelected(_ p: CheckPlayer, _ ids: Set<String>, _ when: String) async throws {
        let deadline = monotonicSeconds() + 2
        while true {
            let listed = Set(p.player.tracks.filter(\.isSelected).map(\.id))
            let reported: Set<String>? = (p.player as? any EngineReportingPlayback).map { player in
                Set(player.engineReportedTracks.filter(\.isSelected).map(\.id))
            }
            if listed == ids, reported == nil || reported == ids { return }
            if monotonicSeconds() > deadline {
                throw CheckFailure("\(when): selected \(listed.sorted()) (the engine reports \(reported.map { "\($0.sorted())" } ?? "nothing")), expected \(ids.sorted())")
            }
            try await observe(for: 0.02)
        }
    }

    /// Plays from the start and checks the three cues arrive as `.subtitleChanged` with
    /// `texts`, each at its time plus `delay` (±1 frame and the event's way to the app), and
    /// clear at their ends; `currentSubtitle` agrees.
    static func expectCues(_ p: CheckPlayer, _ texts: [String], delay: TimeInterval, what: String) async throws {
        if p.position > 0.05 { try await p.seek(to: 0) }
        let mark = p.mark
        try await p.play()
        // Where media time stands against the wall clock, sampled every 10 ms while playing,
        // so an engine whose clock drifts from the wall clock (a loaded machine) is judged by
        // its own media time at each event, not by one origin seconds earlier.
        try await p.waitForPosition(atLeast: 0.1, timeout: 3)
        let last = TrackFixtures.cues.last!.end! + delay
        let deadline = monotonicSeconds() + last + 3
        var samples: [(wall: TimeInterval, media: TimeInterval)] = []
        while true {
            let wall = monotonicSeconds(), media = p.position
            samples.append((wall, media))
            if media >= last + 0.2 { break }
            if wall > deadline {
                throw CheckFailure("\(what): the position did not reach \(format(last + 0.2)) s (it is \(format(media)) s, state \(p.player.playbackState))")
            }
            try await observe(for: 0.01)
        }
        let changes = p.recorder.entries(since: mark).compactMap { entry -> (cue: SubtitleCue?, media: TimeInterval)? in
            guard case .subtitleChanged(let cue) = entry.event else { return nil }
            let before = samples.last(where: { $0.wall <= entry.time }) ?? samples[0]
            return (cue, before.media + entry.time - before.wall)
        }
        var expected: [(text: String?, at: TimeInterval)] = []
        for (cue, text) in zip(TrackFixtures.cues, texts) {
            expected.append((text, cue.start + delay))
            expected.append((nil, cue.end! + delay))
        }
        let seen = changes.map { $0.cue?.text }
        try expect(seen == expected.map(\.text), "\(what): .subtitleChanged texts \(seen.map { $0.map { "\"\($0)\"" } ?? "nil" }), expected \(expected.map { $0.text.map { "\"\($0)\"" } ?? "nil" })")
        let tolerance = 0.04 + 0.03
        for (change, want) in zip(changes, expected) {
            try expect(abs(change.media - want.at) <= tolerance,
                       "\(what): \(change.cue.map { "\"\($0.text)\"" } ?? "the clear") came at \(format(change.media)) s, expected \(format(want.at)) s (±\(format(tolerance)))")
            if let cue = change.cue {
                try expect(abs(cue.start - want.at) <= 0.01, "\(what): the cue \"\(cue.text)\" says it starts at \(format(cue.start)) s, expected \(format(want.at))")
            }
        }
        try expect(p.player.currentSubtitle == nil, "\(what): after the last cue currentSubtitle is \(String(describing: p.player.currentSubtitle))")
    }

    /// Pixels in the lower half of `frame` that are near white or near black but the fixture
    /// has neither there (its lower half is mid grey, red and blue): drawn subtitle text and
    /// its outline.
    static func subtitlePixels(in frame: VideoFrame) -> Int {
        var count = 0
        for y in stride(from: frame.height / 2, to: frame.height, by: 1) {
            for x in stride(from: 0, to: frame.width, by: 1) {
                let p = frame.pixel(x: x, y: y)
                let high = max(p.r, p.g, p.b), low = min(p.r, p.g, p.b)
                if (low > 220) || (high < 30) { count += 1 }
            }
        }
        return count
    }

    /// Tracks as one line, for failure reasons.
    static func describe(_ tracks: [MediaTrack]) -> String {
        tracks.map { t in
            "\(t.id)[\(t.title ?? "-")|\(t.language ?? "-")|\(t.codec ?? "-")\(t.isDefault ? "|default" : "")\(t.isExternal ? "|external" : "")\(t.isSelected ? "|selected" : "")]"
        }.joined(separator: " ")
    }

    /// Metadata as one line, for failure reasons.
    static func describe(_ metadata: MediaMetadata) -> String {
        "title \(metadata.title ?? "nil"), artist \(metadata.artist ?? "nil"), album \(metadata.album ?? "nil"), genre \(metadata.genre ?? "nil"), date \(metadata.date ?? "nil"), comment \(metadata.comment ?? "nil"), \(metadata.tags.count) tags"
    }
}

import Foundation
import Testing
@testable import PlaybackKit

/// The track, subtitle, metadata and cue rules `EnginePlayer` owns, on the scripted engine.
@Suite struct TrackRuleTests {
    /// A film as an engine lists it: one video, two audio (English default, French), two
    /// embedded subtitles (English, French forced), in stream order with the engine's own ids.
    static let film: [EngineTrack] = [
        EngineTrack(kind: .video, engineID: "v0", codec: "h264", isDefault: true, isSelected: true),
        EngineTrack(kind: .audio, engineID: "a1", title: "English", language: "eng", codec: "aac", isDefault: true, isSelected: true),
        EngineTrack(kind: .audio, engineID: "a2", title: "Français", language: "fre", codec: "aac"),
        EngineTrack(kind: .subtitle, engineID: "s3", title: "English", language: "eng", codec: "subrip"),
        EngineTrack(kind: .subtitle, engineID: "s4", title: "Forced", language: "fre", codec: "ass", isForced: true),
    ]

    /// The film with one external subtitle file listed after the rest.
    static func film(withExternal name: String, selected: Bool = false) -> [EngineTrack] {
        film + [EngineTrack(kind: .subtitle, engineID: "x-\(name)", title: name, codec: "subrip", isExternal: true, isSelected: selected)]
    }

    // MARK: - Ids and the list

    @Test func idsCountEachKindInStreamOrderWithExternalsLast() {
        let rig = ScriptedRig { $0.subtitleURLs = [URL(fileURLWithPath: "/tmp/extra.srt")] }
        var tracks = Self.film(withExternal: "extra.srt")
        tracks.insert(tracks.removeLast(), at: 1)  // the engine lists the file first: still last
        tracks[2].language = "und"
        rig.prepare(tracks: tracks)
        let listed = rig.player.tracks
        #expect(listed.map(\.id) == ["video:0", "audio:0", "audio:1", "subtitle:0", "subtitle:1", "subtitle:2"])
        #expect(listed[1].language == nil, "und is no language")
        #expect(listed[2].title == "Français" && listed[2].language == "fre")
        #expect(listed[5].isExternal && listed[5].codec == "subrip")
        #expect(rig.engine.openedSubtitles == ["extra.srt"])
        // One .tracksChanged with the complete list, before .preparedToPlay.
        let tracksEvent = rig.events.firstIndex { if case .tracksChanged(let t) = $0 { t == listed } else { false } }
        let preparedEvent = rig.events.firstIndex(of: .preparedToPlay)
        #expect(tracksEvent != nil && preparedEvent != nil && tracksEvent! < preparedEvent!)
    }

    @Test func theListIsEmptyBeforePrepareAndAfterStop() {
        let rig = ScriptedRig()
        #expect(rig.player.tracks.isEmpty)
        rig.prepare(tracks: Self.film, tags: ["TITLE": "A film"])
        #expect(rig.player.tracks.count == 5)
        #expect(rig.player.metadata.title == "A film")
        rig.player.stop()
        rig.settle()
        #expect(rig.player.tracks.isEmpty)
        #expect(rig.player.metadata == .empty)
    }

    // MARK: - Selection

    @Test func aSelectionBeforePrepareIsCarriedOutAtPrepare() {
        let rig = ScriptedRig()
        rig.player.selectTrack(id: "audio:1")
        rig.player.selectTrack(id: "subtitle:0")
        rig.player.selectTrack(id: "audio:9")  // unknown: ignored at prepare
        rig.prepare(tracks: Self.film)
        #expect(rig.selections.contains(.select(.audio, "a2")))
        #expect(rig.selections.contains(.select(.subtitle, "s3")))
        let selected = rig.player.tracks.filter(\.isSelected).map(\.id)
        #expect(selected == ["video:0", "audio:1", "subtitle:0"])
        // Selected before .preparedToPlay: the engine got it while opening.
        let selectIndex = rig.engine.calls.firstIndex(of: .select(.audio, "a2"))
        #expect(selectIndex != nil)
    }

    @Test func selectionsWhilePreparedReachTheEngineAndTheList() {
        let rig = ScriptedRig()
        rig.prepare(tracks: Self.film)
        _ = rig.takeEvents()
        rig.player.selectTrack(id: "audio:1")
        rig.settle()
        #expect(rig.selections.last == .select(.audio, "a2"))
        #expect(rig.player.tracks.first { $0.id == "audio:1" }?.isSelected == true)
        #expect(rig.player.tracks.first { $0.id == "audio:0" }?.isSelected == false)
        #expect(rig.events.contains { if case .tracksChanged = $0 { true } else { false } })
        rig.player.deselectTrack(kind: .audio)
        rig.settle()
        #expect(rig.selections.last == .select(.audio, nil))
        #expect(!rig.player.tracks.contains { $0.kind == .audio && $0.isSelected })
        // The engine confirming a selection keeps the list as it is.
        var confirmed = Self.film
        confirmed[1].isSelected = false
        rig.engine.sink.tracksChanged(confirmed)
        rig.settle()
        #expect(!rig.player.tracks.contains { $0.kind == .audio && $0.isSelected })
        let before = rig.selections.count
        rig.player.selectTrack(id: "subtitle:7")
        rig.player.selectTrack(id: "nonsense")
        rig.settle()
        #expect(rig.selections.count == before, "an unknown id reached the engine")
    }

    // MARK: - Preferred languages

    @Test func thePreferredAudioLanguageWinsOverTheDefault() {
        let rig = ScriptedRig { $0.preferredAudioLanguages = ["de", "fr"] }
        rig.prepare(tracks: Self.film)
        #expect(rig.selections.contains(.select(.audio, "a2")))
        #expect(rig.player.tracks.first { $0.isSelected && $0.kind == .audio }?.id == "audio:1")
    }

    @Test func withoutAPreferredLanguageTheDefaultAudioPlays() {
        let rig = ScriptedRig { $0.preferredAudioLanguages = ["jpn"] }
        var tracks = Self.film
        tracks[1].isSelected = false
        tracks[2].isSelected = true  // the engine chose another one
        rig.prepare(tracks: tracks)
        #expect(rig.player.tracks.first { $0.isSelected && $0.kind == .audio }?.id == "audio:0")
    }

    @Test func aPreferredSubtitleLanguageIsShownAndOtherwiseOnlyAForcedOne() {
        let english = ScriptedRig { $0.preferredSubtitleLanguages = ["en"] }
        english.prepare(tracks: Self.film)
        #expect(english.player.tracks.first { $0.isSelected && $0.kind == .subtitle }?.id == "subtitle:0")
        let none = ScriptedRig()
        none.prepare(tracks: Self.film)
        #expect(none.player.tracks.first { $0.isSelected && $0.kind == .subtitle }?.id == "subtitle:1", "the forced track")
        var unforced = Self.film
        unforced[4].isForced = false
        unforced[3].isSelected = true  // the engine showed one by itself
        let quiet = ScriptedRig()
        quiet.prepare(tracks: unforced)
        #expect(!quiet.player.tracks.contains { $0.isSelected && $0.kind == .subtitle })
        #expect(quiet.selections.contains(.select(.subtitle, nil)))
    }

    @Test func anExternalFileIsSelectedUnlessAPreferredLanguagePicksAnother() {
        let url = URL(fileURLWithPath: "/tmp/extra.srt")
        let added = ScriptedRig { $0.subtitleURLs = [url] }
        added.prepare(tracks: Self.film(withExternal: "extra.srt"))
        #expect(added.player.tracks.first { $0.isSelected && $0.kind == .subtitle }?.id == "subtitle:2")
        let french = ScriptedRig {
            $0.subtitleURLs = [url]
            $0.preferredSubtitleLanguages = ["fra"]
        }
        french.prepare(tracks: Self.film(withExternal: "extra.srt"))
        #expect(french.player.tracks.first { $0.isSelected && $0.kind == .subtitle }?.id == "subtitle:1")
    }

    @Test func aSubtitleAddedBeforePrepareOpensWithTheMediaAndIsSelected() {
        let rig = ScriptedRig()
        rig.player.addSubtitle(url: URL(fileURLWithPath: "/tmp/late.vtt"))
        rig.prepare(tracks: Self.film(withExternal: "late.vtt"))
        #expect(rig.engine.openedSubtitles == ["late.vtt"])
        #expect(rig.player.tracks.first { $0.isSelected && $0.kind == .subtitle }?.id == "subtitle:2")
    }

    @Test func aSubtitleAddedWhilePlayingIsSelectedOnceTheEngineListsIt() {
        let rig = ScriptedRig()
        rig.prepare(tracks: Self.film)
        rig.player.addSubtitle(url: URL(fileURLWithPath: "/tmp/late.ass"))
        rig.settle()
        #expect(rig.engine.calls.contains(.addSubtitle("late.ass")))
        rig.engine.sink.tracksChanged(Self.film(withExternal: "late.ass"))
        rig.settle()
        #expect(rig.selections.last == .select(.subtitle, "x-late.ass"))
        #expect(rig.player.tracks.last?.isSelected == true)
        #expect(rig.player.tracks.last?.id == "subtitle:2")
    }

    @Test func languageTagsMatchAcrossTheirForms() {
        #expect(TrackTable.matches("eng", "en"))
        #expect(TrackTable.matches("fre", "fra"))
        #expect(TrackTable.matches("ger", "de"))
        #expect(TrackTable.matches("ENG", "eng"))
        #expect(!TrackTable.matches("eng", "fre"))
        #expect(TrackTable.matches("es", "spa"))
        #expect(!TrackTable.matches("es", "est"))  // Spanish is not Estonian
    }

    // MARK: - Metadata

    @Test func tagsBecomeMetadataAndAChangeIsAnnounced() {
        let rig = ScriptedRig()
        rig.prepare(tags: ["TITLE": "Song", "Artist": "Band", "album": "Record", "YEAR": "2020", "encoder": "x"])
        let metadata = rig.player.metadata
        #expect(metadata.title == "Song" && metadata.artist == "Band" && metadata.album == "Record" && metadata.date == "2020")
        #expect(metadata.tags["encoder"] == "x" && metadata.tags["title"] == "Song")
        #expect(rig.events.contains(.metadataChanged(metadata)))
        _ = rig.takeEvents()
        rig.engine.sink.metadataChanged(["title": "Next song"])
        rig.engine.sink.metadataChanged(["title": "Next song"])
        rig.settle()
        #expect(rig.events.filter { if case .metadataChanged = $0 { true } else { false } }.count == 1)
        #expect(rig.player.metadata.title == "Next song")
    }

    @Test func chaptersArePublished() {
        let rig = ScriptedRig()
        rig.player.prepareToPlay()
        rig.settle()
        let chapters = [Chapter(title: "One", start: 0, end: 3), Chapter(title: "Two", start: 3, end: 10)]
        rig.engine.sink.chaptersChanged(chapters)
        rig.engine.sink.prepared(ScriptedRig.info)
        rig.settle()
        #expect(rig.player.chapters == chapters)
    }

    @Test func aChapterWithoutAnEndEndsAtTheNextOrAtTheEndOfTheMedia() {
        let rig = ScriptedRig()
        rig.player.prepareToPlay()
        rig.settle()
        rig.engine.sink.chaptersChanged([Chapter(title: "One", start: 0, end: nil), Chapter(title: "Two", start: 3, end: nil)])
        rig.engine.sink.prepared(ScriptedRig.info)
        rig.settle()
        #expect(rig.player.chapters == [Chapter(title: "One", start: 0, end: 3),
                                        Chapter(title: "Two", start: 3, end: ScriptedRig.info.duration)])
    }

    // MARK: - The cue clock

    @Test func cuesAreAnnouncedAtTheirMediaTime() {
        let rig = ScriptedRig()
        rig.prepare(tracks: Self.film)
        rig.player.play()
        rig.settle()
        rig.engine.sink.subtitleCue(SubtitleCue(text: "Hello", start: 0.5, end: 1.0))
        rig.engine.sink.subtitleCue(SubtitleCue(text: "World", start: 1.2, end: nil))
        rig.engine.sink.subtitleCue(SubtitleCue(text: "Again", start: 1.6, end: 1.9))
        rig.settle()
        #expect(rig.cueEvents.isEmpty)
        var shown: [(String?, Double)] = []
        for step in 1...100 {
            rig.time.advance(by: 0.02)
            rig.engine.sink.position(Double(step) * 0.02)  // the engine keeps real time
            rig.settle()
            if let last = rig.cueEvents.last, shown.count < rig.cueEvents.count {
                shown.append((last?.text, rig.player.currentPlaybackTime))
            }
        }
        #expect(shown.map(\.0) == ["Hello", nil, "World", "Again", nil])
        let expectedTimes = [0.5, 1.0, 1.2, 1.6, 1.9]
        for (event, expected) in zip(shown, expectedTimes) {
            #expect(abs(event.1 - expected) <= 0.04, "\(event.0 ?? "clear") at \(event.1), expected \(expected)")
        }
        #expect(rig.player.currentSubtitle == nil)
    }

    @Test func theSubtitleDelayShiftsCuesAndReachesTheEngine() {
        let rig = ScriptedRig()
        rig.player.subtitleDelay = 0.3
        rig.prepare(tracks: Self.film)
        #expect(rig.engine.calls.contains(.subtitleDelay(0.3)))
        rig.player.play()
        rig.settle()
        rig.engine.sink.subtitleCue(SubtitleCue(text: "Late", start: 0.2, end: 0.6))
        rig.settle()
        rig.advance(by: 0.4)
        #expect(rig.player.currentSubtitle == nil)
        rig.advance(by: 0.12)
        let late = rig.player.currentSubtitle
        #expect(late?.text == "Late" && abs((late?.start ?? 0) - 0.5) < 1e-9 && abs((late?.end ?? 0) - 0.9) < 1e-9)
        rig.player.subtitleDelay = -0.2
        rig.settle()
        #expect(rig.player.currentSubtitle == nil, "at 0.52 s a cue moved to 0...0.4 s is over")
    }

    @Test func aTrackChangeForgetsTheCuesOfTheOldTrack() {
        let rig = ScriptedRig()
        rig.prepare(tracks: Self.film)
        rig.player.play()
        rig.settle()
        rig.engine.sink.subtitleCue(SubtitleCue(text: "Old", start: 0.0, end: 5))
        rig.advance(by: 0.1)
        #expect(rig.player.currentSubtitle?.text == "Old")
        rig.player.selectTrack(id: "subtitle:0")
        rig.settle()
        #expect(rig.player.currentSubtitle == nil)
        #expect(rig.cueEvents.last == .some(nil))
    }
}

import FoundationEssentials

// MARK: - Tracks, cues, metadata, chapters (the public model)

/// What a track carries.
public enum TrackKind: String, Sendable, Equatable, CaseIterable {
    /// Sound.
    case audio
    /// Pictures.
    case video
    /// Text (or picture) subtitles.
    case subtitle
}

/// One audio, video or subtitle track of the media, as every engine lists it.
public struct MediaTrack: Sendable, Equatable, Identifiable {
    /// "<kind>:<n>", e.g. "audio:1": n counts that kind's tracks from 0 in the container's
    /// stream order; external subtitles follow the embedded ones, in the order they were
    /// added. The same media gives the same ids on every engine.
    public var id: String
    /// What it carries.
    public var kind: TrackKind
    /// The stream's title tag.
    public var title: String?
    /// The language tag as the file has it ("eng", "fre"); nil for none or "und".
    public var language: String?
    /// FFmpeg's codec name where the engine can tell ("h264", "aac", "subrip").
    public var codec: String?
    /// The container marks it default.
    public var isDefault: Bool
    /// Added with `addSubtitle(url:)` or `PlaybackOptions.subtitleURLs`.
    public var isExternal: Bool
    /// Playing (audio, video) or shown (subtitle) now.
    public var isSelected: Bool

    /// Makes a track description.
    public init(id: String, kind: TrackKind, title: String? = nil, language: String? = nil, codec: String? = nil,
                isDefault: Bool = false, isExternal: Bool = false, isSelected: Bool = false) {
        self.id = id
        self.kind = kind
        self.title = title
        self.language = language
        self.codec = codec
        self.isDefault = isDefault
        self.isExternal = isExternal
        self.isSelected = isSelected
    }
}

/// One subtitle cue of the selected subtitle track.
public struct SubtitleCue: Sendable, Equatable {
    /// Plain text: markup removed, lines joined with "\n".
    public var text: String
    /// Media time it appears, `subtitleDelay` applied.
    public var start: TimeInterval
    /// Media time it goes, `subtitleDelay` applied; nil when the cue says not.
    public var end: TimeInterval?

    /// Makes a cue.
    public init(text: String, start: TimeInterval, end: TimeInterval?) {
        self.text = text
        self.start = start
        self.end = end
    }
}

/// The media's tags.
public struct MediaMetadata: Sendable, Equatable {
    /// The "title" tag.
    public var title: String?
    /// The "artist" tag (else "album_artist", "author" or "performer").
    public var artist: String?
    /// The "album" tag.
    public var album: String?
    /// The "genre" tag.
    public var genre: String?
    /// The "date" tag (else "year", "creation_time").
    public var date: String?
    /// The "comment" tag (else "description").
    public var comment: String?
    /// Every tag of the file, keys lower-cased.
    public var tags: [String: String]

    /// No tags at all.
    public static let empty = MediaMetadata(tags: [:])

    /// The metadata of a set of tags (keys in any case; the first of equal keys wins).
    public init(tags: [String: String]) {
        var lowered: [String: String] = [:]
        for key in tags.keys.sorted() {
            let lower = key.lowercased()
            let value = tags[key]!.trimmingWhitespace()
            if lowered[lower] == nil, !value.isEmpty { lowered[lower] = value }
        }
        self.tags = lowered
        func first(_ names: String...) -> String? { names.lazy.compactMap { lowered[$0] }.first }
        title = first("title")
        artist = first("artist", "album_artist", "author", "performer")
        album = first("album")
        genre = first("genre")
        date = first("date", "year", "creation_time")
        comment = first("comment", "description")
    }
}

/// A chapter mark.
public struct Chapter: Sendable, Equatable {
    /// Its title, if it has one.
    public var title: String?
    /// Media time it starts.
    public var start: TimeInterval
    /// Media time it ends; nil when the media does not say.
    public var end: TimeInterval?

    /// Makes a chapter.
    public init(title: String?, start: TimeInterval, end: TimeInterval?) {
        self.title = title
        self.start = start
        self.end = end
    }

    /// `chapters` with every end known: the chapter's own, else the next one's start, else
    /// `duration` for the last (when known): engines differ in which of these they report.
    package static func completingEnds(_ chapters: [Chapter], duration: TimeInterval) -> [Chapter] {
        chapters.indices.map { index in
            var chapter = chapters[index]
            if chapter.end == nil {
                chapter.end = index + 1 < chapters.count ? chapters[index + 1].start : (duration > 0 ? duration : nil)
            }
            return chapter
        }
    }
}

// MARK: - Tracks as an engine lists them

/// A track as an engine lists it, in the container's stream order (external subtitles after
/// the embedded ones, in the order they were added). `EnginePlayer` numbers them into
/// `MediaTrack` ids, so an engine never makes ids of its own.
public struct EngineTrack: Sendable, Equatable {
    /// What it carries.
    public var kind: TrackKind
    /// The engine's own handle for it (mpv's track id, a stream index, ...), handed back to
    /// `PlaybackEngine.selectTrack`.
    public var engineID: String
    /// The stream's title tag.
    public var title: String?
    /// The language tag as the file has it; nil, "" and "und" all mean none.
    public var language: String?
    /// FFmpeg's codec name where the engine can tell.
    public var codec: String?
    /// The container marks it default.
    public var isDefault: Bool
    /// The container marks it forced (subtitles shown even when none was asked for).
    public var isForced: Bool
    /// Added from a file of its own.
    public var isExternal: Bool
    /// Selected in the engine now.
    public var isSelected: Bool

    /// Makes an engine's track description.
    public init(kind: TrackKind, engineID: String, title: String? = nil, language: String? = nil, codec: String? = nil,
                isDefault: Bool = false, isForced: Bool = false, isExternal: Bool = false, isSelected: Bool = false) {
        self.kind = kind
        self.engineID = engineID
        self.title = title
        self.language = language
        self.codec = codec
        self.isDefault = isDefault
        self.isForced = isForced
        self.isExternal = isExternal
        self.isSelected = isSelected
    }
}

// MARK: - The shared rules: ids, selection, preferred languages

/// The track list of one opened source: the engine's tracks numbered into the contract's ids,
/// and the rules that pick the tracks to play at prepare. Pure values, tested on their own.
struct TrackTable: Equatable {
    /// The engine's tracks, in its order.
    private(set) var engineTracks: [EngineTrack] = []
    /// Selections the player made that the engine has not confirmed yet, by kind: the
    /// engine id, or nil for none.
    private var chosen: [TrackKind: String?] = [:]

    /// Replaces the engine's list (at prepare, and whenever the engine's model changes).
    mutating func update(_ tracks: [EngineTrack]) {
        let embedded = tracks.filter { !$0.isExternal }
        let external = tracks.filter(\.isExternal)
        engineTracks = embedded + external
        // A selection the engine reports now supersedes what was asked for.
        for kind in TrackKind.allCases where chosen[kind] != nil {
            let selected = engineTracks.first { $0.kind == kind && $0.isSelected }?.engineID
            if selected == chosen[kind]! { chosen[kind] = nil }
        }
    }

    /// The contract's tracks with the selection as the engine last reported it.
    var engineReportedTracks: [MediaTrack] {
        zip(tracks, engineTracks).map { track, engine in
            var reported = track
            reported.isSelected = engine.isSelected
            return reported
        }
    }

    /// The contract's tracks: ids "<kind>:<n>" in order; the selection as asked for, else as
    /// the engine reports it.
    var tracks: [MediaTrack] {
        var counters: [TrackKind: Int] = [:]
        return engineTracks.map { track in
            let n = counters[track.kind, default: 0]
            counters[track.kind] = n + 1
            let selected: Bool
            if let choice = chosen[track.kind] {
                selected = choice == track.engineID
            } else {
                selected = track.isSelected
            }
            return MediaTrack(id: "\(track.kind.rawValue):\(n)", kind: track.kind, title: track.title.flatMap(Self.nonEmpty),
                              language: Self.language(track.language), codec: track.codec.flatMap(Self.nonEmpty),
                              isDefault: track.isDefault, isExternal: track.isExternal, isSelected: selected)
        }
    }

    /// The engine track with the contract's id `id`, if any.
    func engineTrack(id: String) -> EngineTrack? {
        guard let index = tracks.firstIndex(where: { $0.id == id }) else { return nil }
        return engineTracks[index]
    }

    /// Notes a selection made (the engine id, or nil for none) before the engine confirms it.
    mutating func noteChoice(_ kind: TrackKind, engineID: String?) { chosen[kind] = .some(engineID) }

    /// What to select at prepare, by kind, given what the app asked for (`requested`: a track
    /// id, or nil to deselect, per kind) and its preferred languages. A kind missing from the
    /// result keeps the engine's own choice.
    func initialChoices(requested: [TrackKind: String?], audioLanguages: [String], subtitleLanguages: [String],
                        firstAddedSubtitle: String?) -> [TrackKind: String?] {
        var result: [TrackKind: String?] = [:]
        let listed = tracks
        func engineID(ofTrack id: String) -> String? { engineTrack(id: id)?.engineID }
        // Audio: an explicit choice, else the first preferred language a track has, else the
        // default track (the engine's choice).
        if let asked = requested[.audio] {
            if let asked {
                if let id = engineID(ofTrack: asked) { result[.audio] = .some(id) }
            } else {
                result[.audio] = .some(nil)
            }
        } else if let match = Self.firstMatch(audioLanguages, in: listed.filter { $0.kind == .audio }) {
            result[.audio] = .some(engineID(ofTrack: match.id))
        } else if let preferred = Self.defaultTrack(in: listed.filter { $0.kind == .audio }) {
            result[.audio] = .some(engineID(ofTrack: preferred.id))
        }
        // Video: an explicit choice only.
        if let asked = requested[.video] {
            if let asked {
                if let id = engineID(ofTrack: asked) { result[.video] = .some(id) }
            } else {
                result[.video] = .some(nil)
            }
        }
        // Subtitles: an explicit choice; else a preferred language; else the first added
        // file; else a forced track; else none.
        let subtitles = listed.filter { $0.kind == .subtitle }
        if let asked = requested[.subtitle] {
            if let asked {
                if let id = engineID(ofTrack: asked) { result[.subtitle] = .some(id) }
            } else {
                result[.subtitle] = .some(nil)
            }
        } else if let match = Self.firstMatch(subtitleLanguages, in: subtitles) {
            result[.subtitle] = .some(engineID(ofTrack: match.id))
        } else if let added = firstAddedSubtitle {
            result[.subtitle] = .some(added)
        } else if let forced = engineTracks.first(where: { $0.kind == .subtitle && $0.isForced }) {
            result[.subtitle] = .some(forced.engineID)
        } else {
            result[.subtitle] = .some(nil)
        }
        return result
    }

    /// The first of `languages` (in the app's order) that one of `tracks` has: that track.
    static func firstMatch(_ languages: [String], in tracks: [MediaTrack]) -> MediaTrack? {
        for language in languages.map({ $0.lowercased() }) {
            if let track = tracks.first(where: { $0.language.map { matches($0, language) } ?? false }) { return track }
        }
        return nil
    }

    /// The track marked default, else the first.
    static func defaultTrack(in tracks: [MediaTrack]) -> MediaTrack? {
        tracks.first(where: \.isDefault) ?? tracks.first
    }

    /// Whether a track's language tag names the same language as the app's `wanted` tag:
    /// equal ignoring case, or two forms of one language (ISO 639-1 "en", 639-2/T "eng",
    /// 639-2/B "fre" beside "fra"), as `languageForms` lists them.
    static func matches(_ tag: String, _ wanted: String) -> Bool {
        let a = tag.lowercased(), b = wanted.lowercased()
        if a == b { return true }
        return languageForms.contains { $0.contains(a) && $0.contains(b) }
    }

    /// The forms of the languages films and songs are most often tagged in: the two-letter
    /// code, the three-letter one, and the bibliographic three-letter one where it differs.
    static let languageForms: [Set<String>] = [
        ["en", "eng"], ["fr", "fra", "fre"], ["de", "deu", "ger"], ["es", "spa"], ["it", "ita"],
        ["pt", "por"], ["nl", "nld", "dut"], ["sv", "swe"], ["no", "nor"], ["nb", "nob"], ["nn", "nno"],
        ["da", "dan"], ["fi", "fin"], ["is", "isl", "ice"], ["et", "est"], ["lv", "lav"], ["lt", "lit"],
        ["pl", "pol"], ["cs", "ces", "cze"], ["sk", "slk", "slo"], ["sl", "slv"], ["hu", "hun"],
        ["ro", "ron", "rum"], ["bg", "bul"], ["sr", "srp"], ["hr", "hrv"], ["bs", "bos"], ["mk", "mkd", "mac"],
        ["sq", "sqi", "alb"], ["el", "ell", "gre"], ["tr", "tur"], ["ru", "rus"], ["uk", "ukr"], ["be", "bel"],
        ["ka", "kat", "geo"], ["hy", "hye", "arm"], ["az", "aze"], ["kk", "kaz"], ["he", "heb"], ["ar", "ara"],
        ["fa", "fas", "per"], ["ur", "urd"], ["hi", "hin"], ["bn", "ben"], ["pa", "pan"], ["ta", "tam"],
        ["te", "tel"], ["ml", "mal"], ["kn", "kan"], ["mr", "mar"], ["th", "tha"], ["vi", "vie"],
        ["id", "ind"], ["ms", "msa", "may"], ["tl", "tgl"], ["zh", "zho", "chi"], ["ja", "jpn"], ["ko", "kor"],
        ["my", "mya", "bur"], ["km", "khm"], ["lo", "lao"], ["mn", "mon"], ["bo", "bod", "tib"],
        ["sw", "swa"], ["am", "amh"], ["yo", "yor"], ["zu", "zul"], ["af", "afr"], ["ca", "cat"],
        ["eu", "eus", "baq"], ["gl", "glg"], ["cy", "cym", "wel"], ["ga", "gle"], ["gd", "gla"],
        ["mt", "mlt"], ["lb", "ltz"], ["eo", "epo"], ["la", "lat"], ["mi", "mri", "mao"],
    ]

    /// A language tag as the contract gives it: nil for none, "" or "und".
    static func language(_ tag: String?) -> String? {
        guard let tag = tag?.trimmingWhitespace(), !tag.isEmpty, tag.lowercased() != "und" else { return nil }
        return tag
    }

    private static func nonEmpty(_ text: String) -> String? {
        let trimmed = text.trimmingWhitespace()
        return trimmed.isEmpty ? nil : trimmed
    }
}

// MARK: - The cue clock

/// The cues of the selected subtitle as the engine reported them, and which one shows at a
/// media time. `EnginePlayer` asks it as its position moves and sends `.subtitleChanged` when
/// the answer changes, so cue events keep one clock on every engine.
struct CueClock: Equatable {
    /// Known cues, by start time, without the subtitle delay.
    private(set) var cues: [SubtitleCue] = []
    /// Cues that ended this long before the position are forgotten.
    static let memory: TimeInterval = 30

    /// Adds a cue (a second report of the same cue changes nothing).
    mutating func add(_ cue: SubtitleCue) {
        guard !cues.contains(cue) else { return }
        let index = cues.firstIndex { $0.start > cue.start } ?? cues.endIndex
        cues.insert(cue, at: index)
    }

    /// Forgets every cue.
    mutating func reset() { cues = [] }

    /// The cue showing at `position` with `delay` applied (its times shifted by it): the
    /// latest that started and has not ended; a cue without an end lasts until the next one.
    func cue(at position: TimeInterval, delay: TimeInterval) -> SubtitleCue? {
        var showing: SubtitleCue?
        for (index, cue) in cues.enumerated() {
            let start = cue.start + delay
            guard start <= position else { break }
            let end = cue.end.map { $0 + delay } ?? (index + 1 < cues.count ? cues[index + 1].start + delay : .infinity)
            if position < end { showing = SubtitleCue(text: cue.text, start: start, end: cue.end.map { $0 + delay }) }
        }
        return showing
    }

    /// Forgets cues that ended long before `position`.
    mutating func prune(before position: TimeInterval, delay: TimeInterval) {
        cues.removeAll { cue in
            guard let end = cue.end else { return false }
            return end + delay < position - Self.memory
        }
    }
}

// MARK: - Players without tracks

/// A player whose media never has tracks, tags, chapters or cues (stand-in players in the
/// suite and the tests): the track members of `MediaPlayback`, empty and ignoring calls.
package protocol PlaybackWithoutTracks: MediaPlayback {}

extension PlaybackWithoutTracks {
    package var tracks: [MediaTrack] { [] }
    package func selectTrack(id: String) {}
    package func deselectTrack(kind: TrackKind) {}
    package func addSubtitle(url: URL) {}
    package var subtitleDelay: TimeInterval {
        get { 0 }
        set {}
    }
    package var currentSubtitle: SubtitleCue? { nil }
    package var metadata: MediaMetadata { .empty }
    package var chapters: [Chapter] { [] }
}

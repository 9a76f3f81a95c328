#if FFmpeg
import CFFmpeg
import FoundationEssentials
import PlaybackKit
import SubtitleOverlay

// MARK: - Subtitle sources

/// Which subtitle source: an embedded stream (by index) or an external file (by the order it
/// was added in).
enum SubtitleSourceID: Hashable {
    case stream(Int32)
    case external(Int)
}

/// The cues of one subtitle source: decoded so far (an embedded stream, as the demuxer
/// reaches them) or all of them (a file). Guarded by the subtitle book's lock.
final class SubtitleSource {
    let id: SubtitleSourceID
    /// The ASS script header libass reads before the events.
    let header: String
    /// Every distinct cue, in the order decoded.
    private(set) var cues: [DecodedCue] = []
    private var known: Set<Key> = []
    /// The source as libass draws it, once it was drawn.
    var rendering: SubtitleRendering?
    /// The file's track facts (external sources).
    let title: String?
    let codec: String?

    private struct Key: Hashable {
        var start: Int64
        var end: Int64?
        var event: String
    }

    init(id: SubtitleSourceID, header: String, title: String? = nil, codec: String? = nil) {
        self.id = id
        self.header = header
        self.title = title
        self.codec = codec
    }

    /// Adds the cues not known yet (decoding the same packet again after a seek gives the
    /// same cues); returns those.
    func add(_ decoded: [DecodedCue]) -> [DecodedCue] {
        decoded.filter { cue in
            let key = Key(start: Int64((cue.cue.start * 1000).rounded()), end: cue.cue.end.map { Int64(($0 * 1000).rounded()) },
                          event: cue.event)
            guard known.insert(key).inserted else { return false }
            cues.append(cue)
            return true
        }
    }
}

// MARK: - The subtitle book

/// Every subtitle source of a session, which one is selected, the subtitle delay and the
/// libass renderer that draws the selected one. Reports the selected source's cues to the
/// sink: each new one as it is decoded, and all of them again after a selection or a seek
/// (after `subtitleCuesReset`, in one stream of reports with the new ones, so no cue of an
/// older selection comes after the reset).
///
/// Lock order: this lock may be taken first and the session lock inside it, never the other
/// way round.
final class SubtitleBook: @unchecked Sendable {
    // @unchecked: every member below `lock` is guarded by it.
    let lock = MutexLock()
    private let sink: EngineSink
    /// The session's pictures go to an output that wants them drawn (`.frames`, `.window`).
    let drawsOnPictures: Bool
    private var sources: [SubtitleSourceID: SubtitleSource] = [:]
    /// The external files, in the order they were added.
    private(set) var externals: [SubtitleSource] = []
    /// The source shown now, if any.
    private(set) var selected: SubtitleSourceID?
    private var delay: Double = 0
    /// Fonts the media carries, given to libass.
    private var fonts: [EmbeddedFont] = []
    private var renderer: SubtitleRenderer?
    private var rendererState = RendererState.none

    private enum RendererState { case none, starting, ready, failed }

    /// Cues that ended this long before the position are not reported again.
    static let pastMargin = 1.0

    init(sink: EngineSink, drawsOnPictures: Bool) {
        self.sink = sink
        self.drawsOnPictures = drawsOnPictures
    }

    // MARK: Sources

    /// Adds an embedded text stream (while opening).
    func addStream(_ index: Int32, header: String) {
        lock.withLock { sources[.stream(index)] = SubtitleSource(id: .stream(index), header: header) }
    }

    /// Adds the fonts of the media, for libass (while opening).
    func addFonts(_ added: [EmbeddedFont]) {
        lock.withLock { fonts += added }
    }

    /// Adds an external file as a new source (not selected); returns its id.
    @discardableResult
    func addFile(_ file: SubtitleFile) -> SubtitleSourceID {
        lock.withLock {
            let id = SubtitleSourceID.external(externals.count)
            let source = SubtitleSource(id: id, header: file.header, title: file.title, codec: file.codec)
            _ = source.add(file.cues)
            sources[id] = source
            externals.append(source)
            return id
        }
    }

    /// Adds cues decoded from the source `id`; the new ones of the selected source are reported.
    func add(_ cues: [DecodedCue], to id: SubtitleSourceID) {
        guard !cues.isEmpty else { return }
        lock.withLock {
            guard let source = sources[id] else { return }
            let fresh = source.add(cues)
            if selected == id { for cue in fresh { sink.subtitleCue(cue.cue) } }
        }
    }

    /// True when `id` names a source of the book.
    func contains(_ id: SubtitleSourceID) -> Bool { lock.withLock { sources[id] != nil } }

    // MARK: Selection, seeks, delay

    /// Shows `id` (nil: none) from media time `position` on: reports a reset and the source's
    /// cues that have not ended by then. Returns true when libass must be started for it
    /// (`install(_:)` follows).
    func select(_ id: SubtitleSourceID?, at position: Double) -> Bool {
        lock.withLock {
            selected = id.flatMap { sources[$0] != nil ? $0 : nil }
            reportSelectedCues(from: position)
            guard selected != nil, drawsOnPictures, rendererState == .none else { return false }
            rendererState = .starting
            return true
        }
    }

    /// After a seek to `position`: reports a reset and the selected source's cues again.
    func restart(at position: Double) {
        lock.withLock { reportSelectedCues(from: position) }
    }

    /// Shifts the drawn subtitles by `seconds` (positive: later).
    func setDelay(_ seconds: Double) {
        lock.withLock { delay = seconds }
    }

    /// Reports a reset and the selected source's cues that end after `position` (lock held).
    private func reportSelectedCues(from position: Double) {
        sink.subtitleCuesReset()
        guard let id = selected, let source = sources[id] else { return }
        for cue in source.cues where (cue.cue.end ?? .infinity) >= position - Self.pastMargin {
            sink.subtitleCue(cue.cue)
        }
    }

    // MARK: Drawing

    /// The fonts libass is started with.
    var fontsForRenderer: [EmbeddedFont] { lock.withLock { fonts } }

    /// Takes the libass renderer made for this book (nil: libass failed; nothing is drawn).
    func install(_ made: SubtitleRenderer?) {
        lock.withLock {
            renderer = made
            rendererState = made == nil ? .failed : .ready
        }
    }

    /// Draws the selected subtitle as it shows at media time `time` (the delay applied) onto
    /// a packed 4-byte picture.
    func draw(at time: Double, onto pixels: UnsafeMutableRawPointer, width: Int, height: Int, bytesPerRow: Int,
              order: SubtitleRenderer.PixelOrder) {
        lock.withLock {
            guard let renderer, let id = selected, let source = sources[id] else { return }
            if source.rendering == nil { source.rendering = SubtitleRendering(renderer: renderer, header: source.header) }
            guard let rendering = source.rendering else { return }
            for cue in source.cues.dropFirst(rendering.fed) { rendering.add(cue.event, start: cue.cue.start, end: cue.cue.end) }
            rendering.fed = source.cues.count
            let milliseconds = Int64(((time - delay) * 1000).rounded())
            renderer.draw(rendering, atMilliseconds: milliseconds, onto: pixels, width: width, height: height,
                          bytesPerRow: bytesPerRow, order: order)
        }
    }
}
#endif

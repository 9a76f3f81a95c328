#if Libass
internal import CLibass
import FoundationEssentials
import Glibc
import PlaybackKit

/// One text subtitle script, as libass reads it: the script header (styles, play resolution)
/// and every event with its times, plus the fonts the media carries.
package struct SubtitleScript: Sendable {
    /// One event: the ASS event fields after ReadOrder ("Layer,Style,Name,MarginL,MarginR,
    /// MarginV,Effect,Text"), shown from `start` to `end` (media seconds; nil: open-ended).
    package struct Event: Sendable {
        package var fields: String
        package var start: Double
        package var end: Double?

        /// An event of `fields` shown from `start` to `end`.
        package init(fields: String, start: Double, end: Double?) {
            self.fields = fields
            self.start = start
            self.end = end
        }
    }

    /// The ASS script header libass reads before the events.
    package var header: String
    /// The events, in the order read.
    package var events: [Event]
    /// Font files the media carries (Matroska attachments).
    package var fonts: [EmbeddedFont]

    /// A script with `header`, `events` and `fonts`.
    package init(header: String, events: [Event], fonts: [EmbeddedFont] = []) {
        self.header = header
        self.events = events
        self.fonts = fonts
    }
}

/// Draws the selected subtitle with libass onto the RGBA frames an engine's pictures are
/// converted into for a `.frames` output, for engines whose own drawing cannot be kept off
/// their thumbnails (libVLC blends into the one picture it hands out): the engine's picture
/// stays clean, the text is drawn on the frame the handler gets.
///
/// Scripts are installed and cleared from the engine's queue while pictures are drawn on its
/// video thread: the lock guards both.
package final class SubtitleOverlay: @unchecked Sendable {
    // @unchecked: every stored property is read and written with `lock` held.
    private let lock = MutexLock()
    private var renderer: SubtitleRenderer?
    private var rendering: SubtitleRendering?
    private var delay: TimeInterval = 0

    /// An overlay with nothing to draw.
    package init() {}

    /// Draws `script` from now on (replacing the one before). Without libass nothing is drawn.
    package func install(_ script: SubtitleScript) {
        lock.withLock {
            // A script that brings fonts gets a renderer that knows them.
            if renderer == nil || !script.fonts.isEmpty {
                rendering = nil
                renderer = SubtitleRenderer(fonts: script.fonts)
                if renderer == nil { PlaybackLog.log(.warning, "libass", "libass did not start: subtitles are not drawn") }
            }
            guard let renderer, let made = SubtitleRendering(renderer: renderer, header: script.header) else {
                rendering = nil
                return
            }
            for event in script.events { made.add(event.fields, start: event.start, end: event.end) }
            rendering = made
        }
    }

    /// Draws nothing from now on (the subtitle was deselected).
    package func clear() {
        lock.withLock { rendering = nil }
    }

    /// Shows the text `seconds` later (negative: earlier), as `subtitleDelay` says.
    package func setDelay(_ seconds: TimeInterval) {
        lock.withLock { delay = seconds }
    }

    /// True while a script is installed.
    package var isDrawing: Bool { lock.withLock { rendering != nil } }

    /// Draws the text that shows at media time `time` onto the RGBA picture at `pixels`
    /// (`width` x `height`, rows `bytesPerRow` apart); nothing when no text shows.
    package func draw(at time: TimeInterval, onto pixels: UnsafeMutableRawPointer, width: Int, height: Int, bytesPerRow: Int) {
        lock.lock()
        defer { lock.unlock() }
        guard let renderer, let rendering, width > 0, height > 0 else { return }
        let milliseconds = Int64(((time - delay) * 1000).rounded())
        renderer.draw(rendering, atMilliseconds: milliseconds, onto: pixels, width: width, height: height,
                      bytesPerRow: bytesPerRow, order: .rgba)
    }
}
#endif

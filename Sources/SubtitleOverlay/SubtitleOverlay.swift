#if FFmpeg || VLC
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

/// Draws the selected subtitle with libass onto the RGBA pictures an engine hands to a
/// `.frames` output, for engines whose own drawing cannot be kept off their thumbnails (libVLC
/// blends into the one picture it hands out). A picture with no text showing is handed on
/// as it is; one with text is copied once into the overlay's own buffer and drawn on there,
/// so the engine's picture (the thumbnail's source) stays clean.
///
/// Scripts are installed and cleared from the engine's queue while pictures are drawn on its
/// video thread: the lock guards both.
package final class SubtitleOverlay: @unchecked Sendable {
    // @unchecked: every stored property is read and written with `lock` held.
    private let lock = MutexLock()
    private var renderer: SubtitleRenderer?
    private var rendering: SubtitleRendering?
    private var delay: TimeInterval = 0
    private var scratch: UnsafeMutableRawPointer?
    private var scratchCapacity = 0

    /// An overlay with nothing to draw.
    package init() {}

    deinit { free(scratch) }

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

    /// The picture at media time `time` (RGBA rows `bytesPerRow` apart) with the text that
    /// shows then drawn on a copy, handed to `body`; the picture itself when no text shows.
    package func withDrawn<R>(_ pixels: UnsafeRawBufferPointer, size: VideoSize, bytesPerRow: Int, at time: TimeInterval,
                              _ body: (UnsafeRawBufferPointer) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        guard let renderer, let rendering, !size.isEmpty, pixels.count >= bytesPerRow * size.height else { return body(pixels) }
        let milliseconds = Int64(((time - delay) * 1000).rounded())
        guard let images = renderer.rendered(rendering, atMilliseconds: milliseconds, width: size.width, height: size.height) else {
            return body(pixels)
        }
        let byteCount = bytesPerRow * size.height
        if byteCount > scratchCapacity {
            free(scratch)
            scratch = malloc(byteCount)
            scratchCapacity = scratch == nil ? 0 : byteCount
        }
        guard let scratch, let source = pixels.baseAddress else { return body(pixels) }
        scratch.copyMemory(from: source, byteCount: byteCount)
        renderer.draw(images, onto: scratch, width: size.width, height: size.height, bytesPerRow: bytesPerRow, order: .rgba)
        return body(UnsafeRawBufferPointer(start: scratch, count: byteCount))
    }
}
#endif

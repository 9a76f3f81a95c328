#if X11
import CX11
import FoundationEssentials
import Glibc
import PictureConversion
import PlaybackKit

/// The `.window` output of engines that hand their decoded pictures to the adapter (playbin
/// through an appsink, libVLC through its memory output): each picture is drawn into the
/// app's X11 window by `X11PictureWindow`, laid out by the scaling mode exactly as `.frames`
/// lays it out, and the last one is drawn again, from the engine's own copy of it, when the
/// window is exposed or resized or the mode changes, paused or not.
///
/// Pictures come on the engine's video thread; the window's events are read on a thread of
/// the presenter's own, which ends after `stop()`.
package final class X11WindowPresenter: @unchecked Sendable {
    // @unchecked: `window`, `source`, `mode` and `stopped` are used only with `lock` held.

    /// Hands the picture to draw, with the size it is shown at, to `draw` while the picture
    /// stays valid; does nothing when there is none any more.
    package typealias PictureSource = @Sendable (_ draw: (SourcePicture, VideoSize) -> Void) -> Void

    private let lock = MutexLock()
    private let window: X11PictureWindow
    private var source: PictureSource?
    private var mode: ScalingMode
    private var stopped = false
    /// How long the event thread waits for the window's events before it looks at `stopped`.
    private static let pollMilliseconds: Int32 = 50

    /// A presenter drawing into window `handle` by `mode`, the window painted black until the
    /// first picture; nil when the display or the window cannot be used.
    package init?(handle: UInt, mode: ScalingMode, name: String) {
        guard let window = X11PictureWindow(handle: handle) else { return nil }
        self.window = window
        self.mode = mode
        window.clear(mode: mode)
        let descriptor = window.connectionNumber
        DetachedThread.start(name: name) { [self] in followWindow(descriptor) }
    }

    /// The presenter for `output` when it is a `.window` (its thread named after `engine`),
    /// laying out by aspectFit until told otherwise; nil for other outputs, and nil with a
    /// warning when the window cannot be drawn into.
    package static func forOutput(_ output: VideoOutput, engine: String) -> X11WindowPresenter? {
        guard case .window(let handle) = output else { return nil }
        guard let presenter = X11WindowPresenter(handle: handle, mode: .aspectFit, name: "\(engine).window") else {
            PlaybackLog.log(.warning, engine, "window output: cannot open X11 window 0x\(String(handle, radix: 16)); not drawing")
            return nil
        }
        return presenter
    }

    /// Draws the picture `source` gives now and keeps `source` to draw it again.
    package func show(_ source: @escaping PictureSource) {
        lock.withLock {
            guard !stopped else { return }
            self.source = source
            draw()
        }
    }

    /// Lays pictures out by `mode` from now on, the one shown drawn again at once.
    package func setScalingMode(_ mode: ScalingMode) {
        lock.withLock {
            guard !stopped, mode != self.mode else { return }
            self.mode = mode
            draw()
        }
    }

    /// Forgets the picture and draws nothing more; the event thread ends within 50 ms.
    package func stop() {
        lock.withLock {
            stopped = true
            source = nil
        }
    }

    /// The shown picture drawn again (lock held).
    private func draw() {
        guard let source else { return }
        let mode = mode
        source { picture, naturalSize in
            window.draw(picture, naturalSize: naturalSize, mode: mode)
        }
    }

    /// The event thread: waits for the window's events and draws the picture again when the
    /// window was exposed or resized.
    private func followWindow(_ descriptor: Int32) {
        while true {
            var wait = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&wait, 1, Self.pollMilliseconds)
            let done = lock.withLock { () -> Bool in
                guard !stopped else { return true }
                if window.needsRedraw(mode: mode) { draw() }
                return false
            }
            if done { return }
        }
    }
}
#endif

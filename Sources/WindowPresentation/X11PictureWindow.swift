#if X11
import CX11
import FoundationEssentials
import PictureConversion
import PlaybackKit

/// Draws pictures into an existing X11 window with XPutImage: the shared converter converts
/// (and scales) the picture to the content rectangle `ScalingLayout` lays out for the
/// window's size and the scaling mode, into a window-sized BGRX image, black around it. Owns
/// its display connection, graphics context, image and the image's pixels. Not thread-safe:
/// one thread uses it, or its owner's lock guards it (`X11WindowPresenter`).
package final class X11PictureWindow {
    private let display: OpaquePointer
    private let window: Window
    private let context: GC
    private var image: UnsafeMutablePointer<XImage>?
    private var imageSize = VideoSize.zero
    private let converter = PictureConverter()
    /// The image's pixels (`imageSize`, 4 bytes a pixel, rows packed).
    private var pixels: UnsafeMutableRawPointer?
    /// The scaling mode of the last draw.
    private var drawnMode: ScalingMode?

    /// Connects to the X server and prepares drawing into window `handle`; nil when the
    /// display or the window cannot be used.
    package init?(handle: UInt) {
        // A window that goes away while drawn into is then a failed request, not an exit.
        pk_x11_install_error_handler()
        guard let display = XOpenDisplay(nil) else { return nil }
        var attributes = XWindowAttributes()
        guard XGetWindowAttributes(display, Window(handle), &attributes) != 0,
              let context = XCreateGC(display, Window(handle), 0, nil) else {
            XCloseDisplay(display)
            return nil
        }
        self.display = display
        self.window = Window(handle)
        self.context = context
        // Expose and size changes, to draw the paused picture again (any number of clients
        // may select these on one window).
        XSelectInput(display, Window(handle), ExposureMask | StructureNotifyMask)
        XFlush(display)
    }

    deinit {
        if let image { pk_x11_destroy_image_keep_data(image) }
        pixels?.deallocate()
        XFreeGC(display, context)
        XCloseDisplay(display)
    }

    /// The file descriptor of the connection, to wait on for the window's events.
    package var connectionNumber: Int32 { pk_x11_connection_number(display) }

    /// Whether the window must be drawn again: it was exposed or resized since the last
    /// draw, or `mode` is not the mode it was drawn with. Reads the pending events.
    package func needsRedraw(mode: ScalingMode) -> Bool {
        var wanted = drawnMode != mode
        while XPending(display) > 0 {
            var event = XEvent()
            XNextEvent(display, &event)
            switch event.type {
            case Expose: wanted = true
            case ConfigureNotify:
                if Int(event.xconfigure.width) != imageSize.width || Int(event.xconfigure.height) != imageSize.height {
                    wanted = true
                }
            default: break
            }
        }
        return wanted
    }

    /// Paints the window black (no picture to draw yet).
    package func clear(mode: ScalingMode) {
        drawnMode = mode
        XClearWindow(display, window)
        XFlush(display)
    }

    /// Draws `picture` (shown at `naturalSize`: its stored size with the pixel aspect
    /// applied) into the window by `mode`; `overlay` then draws on the picture's rectangle
    /// (BGRA pixels, its width, height and row stride).
    package func draw(_ picture: SourcePicture, naturalSize: VideoSize, mode: ScalingMode,
                      overlay: (UnsafeMutableRawPointer, Int, Int, Int) -> Void = { _, _, _, _ in }) {
        var attributes = XWindowAttributes()
        guard XGetWindowAttributes(display, window, &attributes) != 0,
              attributes.width > 0, attributes.height > 0, attributes.depth >= 24 else { return }
        let viewport = VideoSize(width: Int(attributes.width), height: Int(attributes.height))
        let rowBytes = viewport.width * 4
        if image == nil || imageSize != viewport {
            if let image { pk_x11_destroy_image_keep_data(image) }
            image = nil
            pixels?.deallocate()
            pixels = UnsafeMutableRawPointer.allocate(byteCount: rowBytes * viewport.height, alignment: 64)
        }
        guard let buffer = pixels else { return }
        if image == nil {
            image = XCreateImage(display, attributes.visual, UInt32(attributes.depth), pk_x11_zpixmap(), 0,
                                 buffer.assumingMemoryBound(to: CChar.self), UInt32(viewport.width),
                                 UInt32(viewport.height), 32, Int32(rowBytes))
            imageSize = viewport
        }
        guard let image else { return }
        drawnMode = mode
        let layout = ScalingLayout(source: naturalSize, viewport: viewport, mode: mode)
        if layout.content != PixelRect(x: 0, y: 0, width: viewport.width, height: viewport.height) {
            buffer.initializeMemory(as: UInt8.self, repeating: 0, count: rowBytes * viewport.height)
        }
        let content = VideoSize(width: layout.content.width, height: layout.content.height)
        let target = FrameTarget(base: buffer + layout.content.y * rowBytes + layout.content.x * 4, bytesPerRow: rowBytes,
                                 size: content, crop: layout.crop, naturalSize: naturalSize)
        if converter.draw(picture, into: target, format: .bgra) {
            overlay(target.base, content.width, content.height, rowBytes)
        }
        image.pointee.data = buffer.assumingMemoryBound(to: CChar.self)
        XPutImage(display, window, context, image, 0, 0, 0, 0, UInt32(viewport.width), UInt32(viewport.height))
        XFlush(display)
    }
}
#endif

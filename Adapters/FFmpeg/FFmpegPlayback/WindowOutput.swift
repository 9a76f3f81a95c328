#if FFmpeg
import CFFmpeg
import FoundationEssentials
import PlaybackKit

/// Draws pictures into an existing X11 window with XPutImage: swscale converts (and scales)
/// the picture straight into the content rectangle of a window-sized BGRX image, laid out by
/// `ScalingLayout`. Owns its display connection, graphics context and image; used by the
/// presenter thread only.
final class WindowOutput {
    private let display: OpaquePointer
    private let window: Window
    private let context: GC
    private var image: UnsafeMutablePointer<XImage>?
    private var imageSize = VideoSize.zero
    private let converter = PictureConverter()

    /// Connects to the X server and prepares drawing into window `handle`; nil when the
    /// display or the window cannot be used.
    init?(handle: UInt) {
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
    }

    deinit {
        if let image { pk_x_destroy_image_keep_data(image) }
        XFreeGC(display, context)
        XCloseDisplay(display)
    }

    /// Draws `frame` (of display size `naturalSize`) into the window by `mode`.
    func draw(_ frame: UnsafeMutablePointer<AVFrame>, naturalSize: VideoSize, mode: ScalingMode) {
        var attributes = XWindowAttributes()
        guard XGetWindowAttributes(display, window, &attributes) != 0,
              attributes.width > 0, attributes.height > 0, attributes.depth >= 24 else { return }
        let viewport = VideoSize(width: Int(attributes.width), height: Int(attributes.height))
        let rowBytes = viewport.width * 4
        let buffer = converter.reserve(rowBytes * viewport.height)
        if image == nil || imageSize != viewport {
            if let image { pk_x_destroy_image_keep_data(image) }
            image = XCreateImage(display, attributes.visual, UInt32(attributes.depth), pk_x_zpixmap(), 0,
                                 buffer.assumingMemoryBound(to: CChar.self), UInt32(viewport.width),
                                 UInt32(viewport.height), 32, Int32(rowBytes))
            imageSize = viewport
        }
        guard let image else { return }
        let layout = ScalingLayout(source: naturalSize, viewport: viewport, mode: mode)
        if layout.content != PixelRect(x: 0, y: 0, width: viewport.width, height: viewport.height) {
            buffer.initializeMemory(as: UInt8.self, repeating: 0, count: rowBytes * viewport.height)
        }
        // The crop is in display pixels; the frame is in storage pixels.
        let scaleX = Double(frame.pointee.width) / Double(max(1, naturalSize.width))
        let scaleY = Double(frame.pointee.height) / Double(max(1, naturalSize.height))
        let crop = PixelRect(x: Int(Double(layout.crop.x) * scaleX), y: Int(Double(layout.crop.y) * scaleY),
                             width: max(1, Int(Double(layout.crop.width) * scaleX)),
                             height: max(1, Int(Double(layout.crop.height) * scaleY)))
        let origin = buffer + layout.content.y * rowBytes + layout.content.x * 4
        converter.convert(frame, crop: crop, width: layout.content.width, height: layout.content.height,
                          format: AV_PIX_FMT_BGRA, into: origin, bytesPerRow: rowBytes)
        image.pointee.data = buffer.assumingMemoryBound(to: CChar.self)
        XPutImage(display, window, context, image, 0, 0, 0, 0, UInt32(viewport.width), UInt32(viewport.height))
        XFlush(display)
    }
}
#endif

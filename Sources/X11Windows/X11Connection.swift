import CX11
import FoundationEssentials
import Glibc
import PlaybackKit

/// One connection to an X server and the windows made on it: opens, resizes, clears and
/// grabs windows (for the window checks) and reads their input (for the desktop player).
/// Not shared between threads: one owner at a time uses it (Xlib's connections are not
/// meant to be used from two threads at once).
public final class X11Connection {
    private let display: OpaquePointer
    private let deleteMessage: Atom
    private let protocolsAtom: Atom
    /// The windows this connection made, destroyed when it closes.
    private var owned: Set<Window> = []

    /// Connects to `name` (nil: $DISPLAY); nil when no X server answers there.
    public init?(display name: String? = nil) {
        pk_x11_install_error_handler()
        guard let display = name.map({ XOpenDisplay($0) }) ?? XOpenDisplay(nil) else { return nil }
        self.display = display
        deleteMessage = XInternAtom(display, "WM_DELETE_WINDOW", 0)
        protocolsAtom = XInternAtom(display, "WM_PROTOCOLS", 0)
    }

    deinit {
        for window in owned { XDestroyWindow(display, window) }
        XCloseDisplay(display)
    }

    /// The size of the default screen.
    public var screenSize: VideoSize {
        let screen = XDefaultScreen(display)
        return VideoSize(width: Int(XDisplayWidth(display, screen)), height: Int(XDisplayHeight(display, screen)))
    }

    // MARK: - Windows

    /// Makes a black top-level window of `size` at `origin`, titled `title`, shows it and waits
    /// (at most `timeout` seconds) until it is on screen; returns its id, or nil when the
    /// server refused or did not map it in time.
    public func makeWindow(size: VideoSize, origin: (x: Int, y: Int) = (0, 0), title: String,
                           timeout: TimeInterval = 5) -> UInt? {
        let screen = XDefaultScreen(display)
        let root = XRootWindow(display, screen)
        let black = XBlackPixel(display, screen)
        let window = XCreateSimpleWindow(display, root, Int32(origin.x), Int32(origin.y),
                                         UInt32(max(1, size.width)), UInt32(max(1, size.height)), 0, black, black)
        guard window != 0 else { return nil }
        owned.insert(window)
        XSelectInput(display, window, ExposureMask | StructureNotifyMask | KeyPressMask | ButtonPressMask)
        var protocols = [deleteMessage]
        XSetWMProtocols(display, window, &protocols, 1)
        setTitle(UInt(window), title)
        // A window manager may place the window elsewhere; ask it not to.
        var hints = XSizeHints()
        hints.flags = PPosition | PSize
        hints.x = Int32(origin.x)
        hints.y = Int32(origin.y)
        hints.width = Int32(size.width)
        hints.height = Int32(size.height)
        XSetWMNormalHints(display, window, &hints)
        XMapWindow(display, window)
        let mapped = waitForEvent(on: window, timeout: timeout) { $0.type == MapNotify }
        guard mapped else {
            destroyWindow(UInt(window))
            return nil
        }
        return UInt(window)
    }

    /// Makes a black window inside `parent` covering `rect` (shown at once, its events
    /// selected like a top-level one's); nil when the server refused.
    public func makeChildWindow(of parent: UInt, _ rect: PixelRect) -> UInt? {
        let screen = XDefaultScreen(display)
        let black = XBlackPixel(display, screen)
        let window = XCreateSimpleWindow(display, Window(parent), Int32(rect.x), Int32(rect.y),
                                         UInt32(max(1, rect.width)), UInt32(max(1, rect.height)), 0, black, black)
        guard window != 0 else { return nil }
        owned.insert(window)
        XSelectInput(display, window, ExposureMask | StructureNotifyMask | ButtonPressMask)
        XMapWindow(display, window)
        XSync(display, 0)
        return UInt(window)
    }

    /// Moves and resizes a window to `rect` (inside its parent).
    public func place(_ window: UInt, _ rect: PixelRect) {
        XMoveResizeWindow(display, Window(window), Int32(rect.x), Int32(rect.y),
                          UInt32(max(1, rect.width)), UInt32(max(1, rect.height)))
        XFlush(display)
    }

    /// Gives the window the keyboard focus (for a server without a window manager).
    public func focus(_ window: UInt) {
        XSetInputFocus(display, Window(window), RevertToParent, UInt(CurrentTime))
        XFlush(display)
    }

    /// Destroys a window this connection made.
    public func destroyWindow(_ window: UInt) {
        guard owned.remove(Window(window)) != nil else { return }
        XDestroyWindow(display, Window(window))
        XSync(display, 0)
    }

    /// Sets the window's title (its WM_NAME and _NET_WM_NAME, UTF-8).
    public func setTitle(_ window: UInt, _ title: String) {
        XStoreName(display, Window(window), title)
        let utf8 = XInternAtom(display, "UTF8_STRING", 0)
        let netName = XInternAtom(display, "_NET_WM_NAME", 0)
        let bytes = Array(title.utf8)
        bytes.withUnsafeBufferPointer { buffer in
            _ = XChangeProperty(display, Window(window), netName, utf8, 8, PropModeReplace,
                                buffer.baseAddress, Int32(buffer.count))
        }
        XFlush(display)
    }

    /// Resizes the window to `size` and waits until the server has done it.
    public func resize(_ window: UInt, to size: VideoSize) {
        XResizeWindow(display, Window(window), UInt32(max(1, size.width)), UInt32(max(1, size.height)))
        XSync(display, 0)
    }

    /// Moves and resizes the window to fill the screen (`on`), or back to `size` at `origin`.
    /// Asks a window manager through _NET_WM_STATE as well, and sets the geometry itself for
    /// a server without one.
    public func setFullscreen(_ window: UInt, _ on: Bool, restoring size: VideoSize, at origin: (x: Int, y: Int) = (0, 0)) {
        let screen = XDefaultScreen(display)
        var event = XEvent()
        event.xclient.type = ClientMessage
        event.xclient.window = Window(window)
        event.xclient.message_type = XInternAtom(display, "_NET_WM_STATE", 0)
        event.xclient.format = 32
        event.xclient.data.l.0 = on ? 1 : 0
        event.xclient.data.l.1 = Int(XInternAtom(display, "_NET_WM_STATE_FULLSCREEN", 0))
        XSendEvent(display, XRootWindow(display, screen), 0, SubstructureRedirectMask | SubstructureNotifyMask, &event)
        let target = on ? screenSize : size
        let place = on ? (x: 0, y: 0) : origin
        XMoveResizeWindow(display, Window(window), Int32(place.x), Int32(place.y),
                          UInt32(max(1, target.width)), UInt32(max(1, target.height)))
        XSync(display, 0)
    }

    /// The window's size, or nil when there is no such window.
    public func size(of window: UInt) -> VideoSize? {
        var attributes = XWindowAttributes()
        let errors = pk_x11_errors_seen()
        guard XGetWindowAttributes(display, Window(window), &attributes) != 0, pk_x11_errors_seen() == errors else { return nil }
        return VideoSize(width: Int(attributes.width), height: Int(attributes.height))
    }

    /// Paints the window and every window inside it with its background (black) and has the
    /// server send them Expose, as uncovering them would: whoever draws there must draw again.
    public func clearAndExpose(_ window: UInt) {
        // Windows without a background keep their pixels on a clear: paint over them too.
        var values = XGCValues()
        values.subwindow_mode = IncludeInferiors
        values.foreground = XBlackPixel(display, XDefaultScreen(display))
        if let context = XCreateGC(display, Window(window), UInt(GCSubwindowMode | GCForeground), &values) {
            if let size = size(of: window) {
                XFillRectangle(display, Window(window), context, 0, 0, UInt32(size.width), UInt32(size.height))
            }
            XFreeGC(display, context)
        }
        for each in [Window(window)] + descendants(of: Window(window)) {
            XClearArea(display, each, 0, 0, 0, 0, 1)
        }
        XSync(display, 0)
    }

    /// The windows on the screen's root (every client's top-level windows) with their titles.
    public func topLevelWindows() -> [(window: UInt, title: String)] {
        var root: Window = 0
        var parent: Window = 0
        var children: UnsafeMutablePointer<Window>?
        var count: UInt32 = 0
        guard XQueryTree(display, XDefaultRootWindow(display), &root, &parent, &children, &count) != 0,
              let children else { return [] }
        defer { XFree(children) }
        return UnsafeBufferPointer(start: children, count: Int(count)).map { window in
            var name: UnsafeMutablePointer<CChar>?
            guard XFetchName(display, window, &name) != 0, let name else { return (UInt(window), "") }
            defer { XFree(name) }
            return (UInt(window), String(cString: name))
        }
    }

    private func descendants(of window: Window) -> [Window] {
        var root: Window = 0
        var parent: Window = 0
        var children: UnsafeMutablePointer<Window>?
        var count: UInt32 = 0
        guard XQueryTree(display, window, &root, &parent, &children, &count) != 0, let children else { return [] }
        defer { XFree(children) }
        let direct = Array(UnsafeBufferPointer(start: children, count: Int(count)))
        return direct + direct.flatMap { descendants(of: $0) }
    }

    // MARK: - Grabbing

    /// What is on screen in the window now, as RGBA at the window's size (what windows inside
    /// it show included); nil when the window is not on screen or not of a true-colour visual.
    public func grab(_ window: UInt) -> VideoFrame? {
        guard let size = size(of: window), size.width > 0, size.height > 0 else { return nil }
        var attributes = XWindowAttributes()
        guard XGetWindowAttributes(display, Window(window), &attributes) != 0, attributes.map_state == IsViewable else { return nil }
        let errors = pk_x11_errors_seen()
        guard let image = XGetImage(display, Window(window), 0, 0, UInt32(size.width), UInt32(size.height),
                                    pk_x11_all_planes(), pk_x11_zpixmap()) else { return nil }
        defer { pk_x11_destroy_image(image) }
        guard pk_x11_errors_seen() == errors, image.pointee.bits_per_pixel == 32, let data = image.pointee.data else { return nil }
        let masks = (image.pointee.red_mask, image.pointee.green_mask, image.pointee.blue_mask)
        let shifts = (masks.0.trailingZeroBitCount, masks.1.trailingZeroBitCount, masks.2.trailingZeroBitCount)
        let bigEndian = image.pointee.byte_order == MSBFirst
        let stride = Int(image.pointee.bytes_per_line)
        var pixels = [UInt8](repeating: 255, count: size.width * size.height * 4)
        data.withMemoryRebound(to: UInt8.self, capacity: stride * size.height) { bytes in
            for y in 0..<size.height {
                let row = bytes + y * stride
                for x in 0..<size.width {
                    let p = row + x * 4
                    let value = bigEndian
                        ? UInt(p[0]) << 24 | UInt(p[1]) << 16 | UInt(p[2]) << 8 | UInt(p[3])
                        : UInt(p[3]) << 24 | UInt(p[2]) << 16 | UInt(p[1]) << 8 | UInt(p[0])
                    let out = (y * size.width + x) * 4
                    pixels[out] = UInt8(truncatingIfNeeded: (value & masks.0) >> shifts.0)
                    pixels[out + 1] = UInt8(truncatingIfNeeded: (value & masks.1) >> shifts.1)
                    pixels[out + 2] = UInt8(truncatingIfNeeded: (value & masks.2) >> shifts.2)
                }
            }
        }
        return VideoFrame(width: size.width, height: size.height, bytesPerRow: size.width * 4, pixels: pixels, presentationTime: 0)
    }

    // MARK: - Drawing

    /// Fills `rect` of the window with the colour `rgb` (0xRRGGBB, for a true-colour visual).
    public func fill(_ window: UInt, _ rect: PixelRect, rgb: UInt) {
        guard let context = XCreateGC(display, Window(window), 0, nil) else { return }
        defer { XFreeGC(display, context) }
        XSetForeground(display, context, rgb)
        XFillRectangle(display, Window(window), context, Int32(rect.x), Int32(rect.y), UInt32(max(0, rect.width)), UInt32(max(0, rect.height)))
        XFlush(display)
    }

    // MARK: - Input

    /// Waits at most `timeout` seconds for the next event on this connection's windows and
    /// returns the window it came to and what it means; nil when none came in time.
    public func nextEvent(timeout: TimeInterval) -> (window: UInt, event: X11Event)? {
        let deadline = monotonicSeconds() + timeout
        while true {
            while XPending(display) > 0 {
                var event = XEvent()
                XNextEvent(display, &event)
                if let meaning = interpret(&event) { return (UInt(event.xany.window), meaning) }
            }
            let left = deadline - monotonicSeconds()
            guard left > 0, waitForInput(seconds: left) else { return nil }
        }
    }

    private func interpret(_ event: inout XEvent) -> X11Event? {
        switch event.type {
        case KeyPress:
            var symbol: KeySym = 0
            var text = [CChar](repeating: 0, count: 16)
            let count = XLookupString(&event.xkey, &text, Int32(text.count - 1), &symbol, nil)
            let typed = text.prefix(Int(max(0, count))).map { UInt8(bitPattern: $0) }
            return .key(X11Key(symbol: UInt(symbol), text: String(decoding: typed, as: UTF8.self)))
        case ButtonPress:
            return .click(x: Int(event.xbutton.x), y: Int(event.xbutton.y), button: Int(event.xbutton.button))
        case ConfigureNotify:
            return .resized(VideoSize(width: Int(event.xconfigure.width), height: Int(event.xconfigure.height)))
        case Expose:
            return event.xexpose.count == 0 ? .exposed : nil
        case ClientMessage:
            return Atom(event.xclient.data.l.0) == deleteMessage && event.xclient.message_type == protocolsAtom ? .closeRequested : nil
        default:
            return nil
        }
    }

    /// Waits until an event of `window` that `matches` arrives, at most `timeout` seconds;
    /// other events are dropped.
    private func waitForEvent(on window: Window, timeout: TimeInterval, _ matches: (XEvent) -> Bool) -> Bool {
        let deadline = monotonicSeconds() + timeout
        while true {
            while XPending(display) > 0 {
                var event = XEvent()
                XNextEvent(display, &event)
                if event.xany.window == window, matches(event) { return true }
            }
            let left = deadline - monotonicSeconds()
            guard left > 0, waitForInput(seconds: left) else { return false }
        }
    }

    /// Waits until the connection has something to read, at most `seconds`.
    private func waitForInput(seconds: TimeInterval) -> Bool {
        var descriptor = pollfd(fd: XConnectionNumber(display), events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, Int32(max(1, min(seconds * 1000, 60_000)))) > 0
    }
}

/// What an event on a window means to its owner.
public enum X11Event: Sendable, Equatable {
    /// A key was pressed.
    case key(X11Key)
    /// A mouse button was pressed at (x, y) in the window.
    case click(x: Int, y: Int, button: Int)
    /// The window's size changed (or it moved).
    case resized(VideoSize)
    /// Part of the window must be drawn again.
    case exposed
    /// The window manager asks the window to close.
    case closeRequested
}

/// A pressed key: its keysym and the text it types.
public struct X11Key: Sendable, Equatable {
    /// The X keysym (XK_Left, XK_space, ...).
    public let symbol: UInt
    /// What the key types ("f", "F", " "), or "" for keys that type nothing.
    public let text: String

    /// The left arrow key.
    public static let left = UInt(XK_Left)
    /// The right arrow key.
    public static let right = UInt(XK_Right)
    /// The up arrow key.
    public static let up = UInt(XK_Up)
    /// The down arrow key.
    public static let down = UInt(XK_Down)
    /// The escape key.
    public static let escape = UInt(XK_Escape)
}

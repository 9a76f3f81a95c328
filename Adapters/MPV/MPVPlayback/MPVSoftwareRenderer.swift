#if MPV
import CMPV
import FoundationEssentials
import PlaybackKit

/// One picture the renderer drew: RGBA rows (`bytesPerRow` apart) at `size`, valid only
/// during the call it is handed to. `isNewFrame` is false for redraws of the same frame.
struct MPVRenderedPicture {
    let pixels: UnsafeRawBufferPointer
    let size: VideoSize
    let bytesPerRow: Int
    let isNewFrame: Bool
    /// The picture's media time, as the renderer's `stamp` gave it.
    let time: TimeInterval
}

/// A frame the renderer is about to draw, as the stamp that gives it its media time sees it.
struct MPVDrawRequest {
    /// When mpv asked for it to be drawn (system uptime).
    var requestedAt: TimeInterval
    /// False for a redraw of the frame before.
    var isNewFrame: Bool
    /// When mpv means it to be shown (system uptime), for a new frame whose time mpv gives.
    var targetTime: TimeInterval?
}

/// The flag libmpv's update callback raises; the callback's context object.
final class MPVRenderUpdates: @unchecked Sendable {
    // @unchecked: every field is read and written with `condition` held.
    let condition = ConditionVariable()
    var pending = false
    /// The render thread is drawing (and handing over) a picture.
    var drawing = false
    /// When the last request came (system uptime).
    var raisedAt: TimeInterval = 0
    var stopping = false
    var finished = false
    var targetSize = VideoSize.zero
    /// A frame mpv handed over before the size was known, drawn only to let mpv go on; it is
    /// drawn again (and handed on) once `setTargetSize` gives the size.
    var owedFrame: (isNewFrame: Bool, requestedAt: TimeInterval)?

    /// Called by libmpv (any thread, no libmpv calls allowed): a frame is ready or a redraw is due.
    func raise() {
        condition.lock()
        pending = true
        raisedAt = ProcessInfo.processInfo.systemUptime
        condition.broadcast()
        condition.unlock()
    }
}

/// Owns one `mpv_render_context` of the software (`sw`) render API and the thread that
/// renders into memory: every frame mpv presents is drawn at natural size into an RGBA buffer
/// and handed to `onPicture`, with the time `stamp` gives it before it is drawn. Created
/// before the file is loaded (so mpv's `libmpv` video output has somewhere to draw); `stop()`
/// ends the thread, unregisters the callback and frees the context, and must run before the
/// core is destroyed.
///
/// The first frame can come before the session knows the natural size, and the session cannot
/// learn it then: mpv's core waits (up to 200 ms) for that frame to be drawn before it answers
/// property reads. Such a frame is drawn into a scratch pixel at once and drawn again at the
/// natural size when `setTargetSize` gives it.
///
/// The render thread calls only `mpv_render_*` functions, `stamp` and `onPicture`, never other
/// libmpv functions, as render.h requires.
///
/// One buffer serves both drawing and the kept picture (thumbnails, a window's redraws): the
/// picture is stamped before it is drawn, so a reader waits only for the draw itself.
final class MPVSoftwareRenderer: @unchecked Sendable {
    // @unchecked: `context` is used by the render thread until it finishes, then freed by
    // `stop()` once; `buffer` is written by the render thread only, and read by others with
    // `picture` held while no draw is under way; `kept` and `isDrawing` are guarded by
    // `picture`; `scratch` is render-thread only; `updates` guards its own fields.
    private let context: OpaquePointer
    private let updates = MPVRenderUpdates()
    private let stamp: @Sendable (MPVDrawRequest) -> TimeInterval
    /// `ProcessInfo.systemUptime` less mpv's clock (frame target times), when known.
    private let uptimeAheadOfCoreClock: TimeInterval?
    private let onPicture: @Sendable (MPVRenderedPicture) -> Void
    private let onIdle: @Sendable () -> Void
    /// Whether the fourth byte of each pixel is made opaque alpha (RGBA pictures); pictures
    /// that are converted on (to YUV) leave it as mpv wrote it.
    private let makesAlphaOpaque: Bool
    /// mpv's converter left a fourth byte other than 255 in a picture: from then on every
    /// pixel of every picture is made opaque (render thread only).
    private var forcesAlpha = false
    /// The one buffer mpv draws into; it also holds the kept picture (thumbnails, a window's
    /// redraws), which readers wait for while a draw is under way and until the new picture is
    /// kept, instead of a second buffer (8 MiB at 1080p) to draw into meanwhile.
    private var buffer: (pointer: UnsafeMutableRawPointer?, capacity: Int) = (nil, 0)
    /// Where a frame owed before the size is known is drawn (one pixel, 64 bytes aligned).
    private let scratch = pk_mpv_aligned_alloc(64)
    /// Guards `kept` and `isDrawing`, and wakes readers when a draw is over.
    private let picture = ConditionVariable()
    /// The picture in `buffer` and its time, once kept.
    private var kept: (size: VideoSize, bytesPerRow: Int, time: TimeInterval)?
    /// `buffer` is being drawn into.
    private var isDrawing = false
    private var isStopped = false

    /// Takes ownership of `context` and starts the render thread, which asks `stamp` for the
    /// media time of each picture before it is drawn, calls `onPicture` once it is drawn and
    /// kept, and `onIdle` whenever it has handled a request. `uptimeAheadOfCoreClock` turns
    /// mpv's target times into system uptime.
    init(context: OpaquePointer, makesAlphaOpaque: Bool = true, uptimeAheadOfCoreClock: TimeInterval?,
         stamp: @escaping @Sendable (MPVDrawRequest) -> TimeInterval,
         onPicture: @escaping @Sendable (MPVRenderedPicture) -> Void, onIdle: @escaping @Sendable () -> Void) {
        self.context = context
        self.makesAlphaOpaque = makesAlphaOpaque
        self.uptimeAheadOfCoreClock = uptimeAheadOfCoreClock
        self.stamp = stamp
        self.onPicture = onPicture
        self.onIdle = onIdle
        pk_mpv_render_context_set_update_callback(context, { opaque in
            guard let opaque else { return }
            Unmanaged<MPVRenderUpdates>.fromOpaque(opaque).takeUnretainedValue().raise()
        }, Unmanaged.passUnretained(updates).toOpaque())
        DetachedThread.start(name: "mpv-render") { [self] in run() }
    }

    deinit {
        free(buffer.pointer)
        free(scratch)
    }

    // MARK: - The kept picture (any thread)

    /// The kept picture as tightly packed RGBA, or nil.
    func keptFrame() -> VideoFrame? {
        withKeptPicture { pixels, size, bytesPerRow, time in
            VideoFrame(copying: pixels, width: size.width, height: size.height, bytesPerRow: bytesPerRow, presentationTime: time)
        }
    }

    /// Calls `body` with the kept picture (RGBA rows, borrowed for the call), its size, row
    /// stride and time; nil when none is kept. While a picture is being drawn, waits (at most
    /// `Self.drawWait`) for it: the buffer holds no whole picture meanwhile.
    func withKeptPicture<T>(_ body: (UnsafeRawPointer, VideoSize, _ bytesPerRow: Int, TimeInterval) -> T) -> T? {
        picture.lock()
        defer { picture.unlock() }
        let deadline = monotonicSeconds() + Self.drawWait
        while isDrawing, picture.wait(until: deadline) {}
        guard !isDrawing, let kept, let pointer = buffer.pointer else { return nil }
        return body(UnsafeRawPointer(pointer), kept.size, kept.bytesPerRow, kept.time)
    }

    /// The longest a reader of the kept picture waits for a draw under way (a 1080p draw takes
    /// a few milliseconds).
    private static let drawWait: TimeInterval = 0.5

    /// Stamps the kept picture with `time` (a paused seek drew it before its time was known);
    /// false when none is kept.
    func restampKept(_ time: TimeInterval) -> Bool {
        picture.withLock {
            kept?.time = time
            return kept != nil
        }
    }

    /// Forgets the kept picture.
    func forgetKept() {
        picture.withLock { kept = nil }
    }

    /// The draw is over: `buffer` holds `newKept` (nil: no whole picture), and waiting
    /// readers go on.
    private func finishDraw(keeping newKept: (size: VideoSize, bytesPerRow: Int, time: TimeInterval)?) {
        picture.withLock {
            kept = newKept
            isDrawing = false
            picture.broadcast()
        }
    }

    /// True while mpv has asked for a picture that is not drawn and handed over yet.
    var isBusy: Bool {
        updates.condition.lock()
        defer { updates.condition.unlock() }
        return updates.pending || updates.drawing
    }

    /// The size pictures are drawn at (the natural size); a frame that came before it was
    /// known is drawn now.
    func setTargetSize(_ size: VideoSize) {
        updates.condition.lock()
        updates.targetSize = size
        if updates.owedFrame != nil, !size.isEmpty { updates.pending = true }
        updates.condition.broadcast()
        updates.condition.unlock()
    }

    /// Ends the render thread, unregisters the update callback and frees the context.
    /// Called once, by the event thread, before the core is destroyed.
    func stop() {
        guard !isStopped else { return }
        isStopped = true
        updates.condition.lock()
        updates.stopping = true
        updates.condition.broadcast()
        while !updates.finished { updates.condition.wait() }
        updates.condition.unlock()
        pk_mpv_render_context_set_update_callback(context, nil, nil)
        pk_mpv_render_context_free(context)
    }

    // MARK: - Render thread

    private func run() {
        while true {
            updates.condition.lock()
            while !updates.pending && !updates.stopping { updates.condition.wait() }
            let stopping = updates.stopping
            var requestedAt = updates.raisedAt
            let size = updates.targetSize
            let owed = size.isEmpty ? nil : updates.owedFrame
            if owed != nil { updates.owedFrame = nil }
            updates.pending = false
            updates.drawing = !stopping
            updates.condition.unlock()
            if stopping { break }
            let flags = pk_mpv_render_context_update(context)
            if flags & UInt64(MPV_RENDER_UPDATE_FRAME.rawValue) != 0 || owed != nil {
                // An owed frame keeps its request time, unless a newer frame replaced it.
                if let owed, flags & UInt64(MPV_RENDER_UPDATE_FRAME.rawValue) == 0 { requestedAt = owed.requestedAt }
                renderFrame(size: size, requestedAt: requestedAt, owedNewFrame: owed?.isNewFrame == true)
            }
            updates.condition.lock()
            updates.drawing = false
            updates.condition.unlock()
            onIdle()
        }
        updates.condition.lock()
        updates.finished = true
        updates.condition.broadcast()
        updates.condition.unlock()
    }

    /// Draws the frame mpv has at `size` and hands it on; with no size yet, draws it into a
    /// scratch pixel and owes it. `owedNewFrame`: this draws an owed frame that was new.
    private func renderFrame(size knownSize: VideoSize, requestedAt: TimeInterval, owedNewFrame: Bool) {
        var info = mpv_render_frame_info()
        let infoStatus = withUnsafeMutablePointer(to: &info) { pointer in
            pk_mpv_render_context_get_info(context, mpv_render_param(type: MPV_RENDER_PARAM_NEXT_FRAME_INFO, data: pointer))
        }
        let present = UInt64(MPV_RENDER_FRAME_INFO_PRESENT.rawValue)
        let redraw = UInt64(MPV_RENDER_FRAME_INFO_REDRAW.rawValue)
        let isNewFrame = owedNewFrame || (infoStatus >= 0 && info.flags & present != 0 && info.flags & redraw == 0)
        let owesFrame = knownSize.isEmpty
        if owesFrame {
            updates.condition.lock()
            // A redraw while a new frame is still owed (mpv redraws the first frame while
            // its core waits for it) leaves the frame owed as new, with its first request time.
            if !isNewFrame, let earlier = updates.owedFrame, earlier.isNewFrame {
                updates.owedFrame = earlier
            } else {
                updates.owedFrame = (isNewFrame, requestedAt)
            }
            // The size may have come since this draw began: then draw the frame again at once.
            if !updates.targetSize.isEmpty { updates.pending = true }
            updates.condition.unlock()
        }
        if owesFrame {
            // Drawn only to let mpv go on; the kept picture stays as it is.
            if let scratch { _ = draw(into: scratch, size: VideoSize(width: 1, height: 1), bytesPerRow: 64) }
            return
        }
        // mpv's target time for a new frame it gives one (not for an owed frame drawn again).
        var targetTime: TimeInterval?
        if isNewFrame, !owedNewFrame, infoStatus >= 0, info.target_time > 0, let uptimeAheadOfCoreClock {
            targetTime = Double(info.target_time) / 1e6 + uptimeAheadOfCoreClock
        }
        let time = stamp(MPVDrawRequest(requestedAt: requestedAt, isNewFrame: isNewFrame, targetTime: targetTime))
        let bytesPerRow = (knownSize.width * 4 + 63) & ~63
        let byteCount = bytesPerRow * knownSize.height
        picture.withLock { isDrawing = true }
        if byteCount > buffer.capacity {
            free(buffer.pointer)
            let fresh = pk_mpv_aligned_alloc(byteCount)
            // Opaque black once: a converter that leaves rgb0's fourth byte alone leaves it
            // opaque, and a picture converted on (to YUV) reads no uninitialised memory.
            fresh?.initializeMemory(as: UInt32.self, repeating: UInt32(0xFF00_0000).littleEndian, count: byteCount / 4)
            buffer = (fresh, fresh == nil ? 0 : byteCount)
        }
        guard let pixels = buffer.pointer, draw(into: pixels, size: knownSize, bytesPerRow: bytesPerRow) else {
            finishDraw(keeping: nil)
            return
        }
        if makesAlphaOpaque, forcesAlpha || !Self.isOpaque(pixels, size: knownSize, bytesPerRow: bytesPerRow) {
            forcesAlpha = true
            Self.makeOpaque(pixels, size: knownSize, bytesPerRow: bytesPerRow)
        }
        finishDraw(keeping: (knownSize, bytesPerRow, time))
        onPicture(MPVRenderedPicture(
            pixels: UnsafeRawBufferPointer(start: pixels, count: byteCount),
            size: knownSize, bytesPerRow: bytesPerRow, isNewFrame: isNewFrame, time: time))
    }

    /// Has mpv draw its frame as "rgb0" at `size` into `pixels` (rows `bytesPerRow` apart,
    /// a multiple of 4); false (logged) when mpv could not.
    private func draw(into pixels: UnsafeMutableRawPointer, size: VideoSize, bytesPerRow: Int) -> Bool {
        var dimensions: [Int32] = [Int32(size.width), Int32(size.height)]
        var stride = bytesPerRow
        let status = dimensions.withUnsafeMutableBufferPointer { dimensionsPointer in
            withUnsafeMutablePointer(to: &stride) { stridePointer in
                "rgb0".withCString { format in
                    var params = [
                        mpv_render_param(type: MPV_RENDER_PARAM_SW_SIZE, data: dimensionsPointer.baseAddress),
                        mpv_render_param(type: MPV_RENDER_PARAM_SW_FORMAT, data: UnsafeMutableRawPointer(mutating: format)),
                        mpv_render_param(type: MPV_RENDER_PARAM_SW_STRIDE, data: stridePointer),
                        mpv_render_param(type: MPV_RENDER_PARAM_SW_POINTER, data: pixels),
                        mpv_render_param(type: MPV_RENDER_PARAM_INVALID, data: nil),
                    ]
                    return pk_mpv_render_context_render(context, &params)
                }
            }
        }
        guard status >= 0 else {
            PlaybackLog.log(.warning, "mpv", "mpv_render_context_render: \(MPVHandle.describe(status))")
            return false
        }
        return true
    }

    /// Whether the fourth byte of the first, middle and last rows' pixels is 255. "rgb0"
    /// leaves that byte undefined; libswscale's converters, which mpv draws with, write 255
    /// there (or leave the opaque byte the buffer was filled with), every row alike: three
    /// whole rows tell, and a pass over the whole picture (8 MiB at 1080p) is saved.
    private static func isOpaque(_ pixels: UnsafeMutableRawPointer, size: VideoSize, bytesPerRow: Int) -> Bool {
        let alpha = UInt32(0xFF00_0000).littleEndian
        for row in Set([0, size.height / 2, size.height - 1]) {
            let words = (pixels + row * bytesPerRow).assumingMemoryBound(to: UInt32.self)
            var all = alpha
            for column in 0..<size.width { all &= words[column] }
            if all & alpha != alpha { return false }
        }
        return true
    }

    /// Sets the fourth byte of every pixel to 255: "rgb0" leaves it undefined. One 32-bit
    /// OR per pixel, which the compiler turns into vector instructions.
    private static func makeOpaque(_ pixels: UnsafeMutableRawPointer, size: VideoSize, bytesPerRow: Int) {
        let alpha = UInt32(0xFF00_0000).littleEndian
        for row in 0..<size.height {
            let words = (pixels + row * bytesPerRow).assumingMemoryBound(to: UInt32.self)
            for column in 0..<size.width { words[column] |= alpha }
        }
    }
}
#endif

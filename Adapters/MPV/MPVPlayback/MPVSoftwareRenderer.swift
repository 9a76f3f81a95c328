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
    /// When mpv asked for the draw (system uptime).
    let requestedAt: TimeInterval
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
/// and handed to `onPicture`. Created before the file is loaded (so mpv's `libmpv` video
/// output has somewhere to draw); `stop()` ends the thread, unregisters the callback and frees
/// the context, and must run before the core is destroyed.
///
/// The first frame can come before the session knows the natural size, and the session cannot
/// learn it then: mpv's core waits (up to 200 ms) for that frame to be drawn before it answers
/// property reads. Such a frame is drawn into a scratch pixel at once and drawn again at the
/// natural size when `setTargetSize` gives it.
///
/// The render thread calls only `mpv_render_*` functions and `onPicture`, never other libmpv
/// functions, as render.h requires.
final class MPVSoftwareRenderer: @unchecked Sendable {
    // @unchecked: `context` is used by the render thread until it finishes, then freed by
    // `stop()` once; the buffer fields are render-thread only; `updates` guards its own fields.
    private let context: OpaquePointer
    private let updates = MPVRenderUpdates()
    private let onPicture: @Sendable (MPVRenderedPicture) -> Void
    private let onIdle: @Sendable () -> Void
    /// Whether the fourth byte of each pixel is made opaque alpha (RGBA pictures); pictures
    /// that are converted on (to YUV) leave it as mpv wrote it.
    private let makesAlphaOpaque: Bool
    private var buffer: UnsafeMutableRawPointer?
    private var bufferCapacity = 0
    private var isStopped = false

    /// Takes ownership of `context` and starts the render thread, which calls `onPicture` for
    /// each picture and `onIdle` whenever it has handled a request.
    init(context: OpaquePointer, makesAlphaOpaque: Bool = true, onPicture: @escaping @Sendable (MPVRenderedPicture) -> Void,
         onIdle: @escaping @Sendable () -> Void) {
        self.context = context
        self.makesAlphaOpaque = makesAlphaOpaque
        self.onPicture = onPicture
        self.onIdle = onIdle
        pk_mpv_render_context_set_update_callback(context, { opaque in
            guard let opaque else { return }
            Unmanaged<MPVRenderUpdates>.fromOpaque(opaque).takeUnretainedValue().raise()
        }, Unmanaged.passUnretained(updates).toOpaque())
        DetachedThread.start(name: "mpv-render") { [self] in run() }
    }

    deinit {
        free(buffer)
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
        let size = owesFrame ? VideoSize(width: 1, height: 1) : knownSize
        let bytesPerRow = (size.width * 4 + 63) & ~63
        let byteCount = bytesPerRow * size.height
        if byteCount > bufferCapacity {
            free(buffer)
            buffer = pk_mpv_aligned_alloc(byteCount)
            bufferCapacity = buffer == nil ? 0 : byteCount
            // mpv leaves rgb0's fourth byte alone: zeroed once, a picture converted on (to
            // YUV, alpha left as it is) reads no uninitialised memory.
            buffer?.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        }
        guard let buffer else { return }

        var dimensions: [Int32] = [Int32(size.width), Int32(size.height)]
        var stride = bytesPerRow
        let status = dimensions.withUnsafeMutableBufferPointer { dimensionsPointer in
            withUnsafeMutablePointer(to: &stride) { stridePointer in
                "rgb0".withCString { format in
                    var params = [
                        mpv_render_param(type: MPV_RENDER_PARAM_SW_SIZE, data: dimensionsPointer.baseAddress),
                        mpv_render_param(type: MPV_RENDER_PARAM_SW_FORMAT, data: UnsafeMutableRawPointer(mutating: format)),
                        mpv_render_param(type: MPV_RENDER_PARAM_SW_STRIDE, data: stridePointer),
                        mpv_render_param(type: MPV_RENDER_PARAM_SW_POINTER, data: buffer),
                        mpv_render_param(type: MPV_RENDER_PARAM_INVALID, data: nil),
                    ]
                    return pk_mpv_render_context_render(context, &params)
                }
            }
        }
        guard status >= 0 else {
            PlaybackLog.log(.warning, "mpv", "mpv_render_context_render: \(MPVHandle.describe(status))")
            return
        }
        guard !owesFrame else { return }
        if makesAlphaOpaque {
            // "rgb0" leaves the fourth byte undefined: make it opaque alpha.
            let bytes = buffer.assumingMemoryBound(to: UInt8.self)
            for row in 0..<size.height {
                let start = row * bytesPerRow
                for column in 0..<size.width { bytes[start + column * 4 + 3] = 255 }
            }
        }
        onPicture(MPVRenderedPicture(
            pixels: UnsafeRawBufferPointer(start: buffer, count: byteCount),
            size: size, bytesPerRow: bytesPerRow, isNewFrame: isNewFrame, requestedAt: requestedAt))
    }
}
#endif

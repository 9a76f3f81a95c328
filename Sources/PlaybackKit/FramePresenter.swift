import FoundationEssentials

/// Hands presented pictures to a `.frames` handler: at natural size, or composed into the
/// viewport by the current scaling mode. Each picture is drawn once, straight into the frame
/// the handler gets (a converter scales it there, or `present(_:size:bytesPerRow:...)` copies
/// or samples it); frame buffers are reused while the handler does not keep the frames it
/// was given.
public final class FramePresenter: @unchecked Sendable {
    // @unchecked: `buffer` and `paintedBars` are touched only with `lock` held; the rest is
    // immutable or Locked.
    private let handler: @Sendable (VideoFrame) -> Void
    /// The viewport frames are composed into; nil: natural size.
    public let viewport: VideoSize?
    private let mode: Locked<ScalingMode>
    private let lock = MutexLock()
    /// The frame buffer, handed to the handler in each frame.
    private var buffer: [UInt8] = []
    /// The frame size and content rectangle the buffer's black bars were painted for.
    private var paintedBars: (frame: VideoSize, content: PixelRect)?

    /// A presenter for `output`, or nil when it is not `.frames`.
    public convenience init?(output: VideoOutput, mode: ScalingMode) {
        guard case .frames(let viewport, let handler) = output else { return nil }
        self.init(viewport: viewport, mode: mode, handler: handler)
    }

    /// A presenter calling `handler` for each frame.
    public init(viewport: VideoSize?, mode: ScalingMode, handler: @escaping @Sendable (VideoFrame) -> Void) {
        self.viewport = viewport.flatMap { $0.isEmpty ? nil : $0 }
        self.mode = Locked(mode)
        self.handler = handler
    }

    /// The scaling mode used from the next frame on.
    public var scalingMode: ScalingMode {
        get { mode.get() }
        set { mode.set(newValue) }
    }

    /// Composes (or copies) the RGBA picture (rows `bytesPerRow` apart) into the frame and
    /// calls the handler on this thread.
    public func present(_ pixels: UnsafeRawBufferPointer, size: VideoSize, bytesPerRow: Int, presentationTime: TimeInterval) {
        guard !size.isEmpty, let source = pixels.baseAddress,
              pixels.count >= bytesPerRow * (size.height - 1) + size.width * 4 else { return }
        present(naturalSize: size, presentationTime: presentationTime) { target in
            Self.sample(source, bytesPerRow: bytesPerRow, crop: target.crop, into: target.base,
                        bytesPerRow: target.bytesPerRow, size: target.size)
            return true
        }
    }

    /// Copies `crop` of the RGBA picture at `source` into the `size` rectangle at `target`,
    /// nearest-neighbour (row by row when the sizes match).
    static func sample(_ source: UnsafeRawPointer, bytesPerRow sourceBytesPerRow: Int, crop: PixelRect,
                       into target: UnsafeMutableRawPointer, bytesPerRow targetBytesPerRow: Int, size: VideoSize) {
        guard crop.width > 0, crop.height > 0 else { return }
        if crop.width == size.width, crop.height == size.height {
            for row in 0..<size.height {
                (target + row * targetBytesPerRow).copyMemory(from: source + (crop.y + row) * sourceBytesPerRow + crop.x * 4,
                                                              byteCount: size.width * 4)
            }
            return
        }
        let columns = (0..<size.width).map { dx in (crop.x + min(crop.width - 1, dx * crop.width / size.width)) * 4 }
        for dy in 0..<size.height {
            let sourceRow = source + (crop.y + min(crop.height - 1, dy * crop.height / size.height)) * sourceBytesPerRow
            let targetRow = target + dy * targetBytesPerRow
            for dx in 0..<size.width {
                targetRow.storeBytes(of: sourceRow.loadUnaligned(fromByteOffset: columns[dx], as: UInt32.self),
                                     toByteOffset: dx * 4, as: UInt32.self)
            }
        }
    }
}

// MARK: - Drawing straight into the frame

/// Where a picture converter draws one presented picture for the handler: a rectangle of
/// the frame's own pixels (RGBA rows `bytesPerRow` apart), and the part of the picture that
/// is to fill it. Valid only during the call it is handed to.
package struct FrameTarget {
    /// The first pixel of the rectangle to fill.
    package let base: UnsafeMutableRawPointer
    /// Bytes from one row of the frame to the next.
    package let bytesPerRow: Int
    /// The size to scale the picture's `crop` to: the rectangle's size.
    package let size: VideoSize
    /// The part of the picture shown, in display pixels (the natural size's).
    package let crop: PixelRect
    /// The picture's display size.
    package let naturalSize: VideoSize

    /// A target of `size` at `base` (rows `bytesPerRow` apart) for `crop` of a picture of
    /// display size `naturalSize`.
    package init(base: UnsafeMutableRawPointer, bytesPerRow: Int, size: VideoSize, crop: PixelRect, naturalSize: VideoSize) {
        self.base = base
        self.bytesPerRow = bytesPerRow
        self.size = size
        self.crop = crop
        self.naturalSize = naturalSize
    }
}

extension FramePresenter {
    /// Presents a picture of display size `naturalSize` that `draw` converts straight into
    /// the frame handed to the handler: the scaling mode's layout is worked out here, the
    /// bars around it are painted black, and `draw` fills the rest in one pass (the scaling
    /// included). `draw` returns false when it could not, and then nothing is presented.
    /// Calls the handler on this thread; `draw` runs with the presenter's lock held.
    package func present(naturalSize: VideoSize, presentationTime: TimeInterval, draw: (FrameTarget) -> Bool) {
        guard !naturalSize.isEmpty else { return }
        lock.lock()
        let frameSize = viewport ?? naturalSize
        let layout = viewport.map { ScalingLayout(source: naturalSize, viewport: $0, mode: mode.get()) }
            ?? ScalingLayout(source: naturalSize, viewport: naturalSize, mode: .fill)
        let rowBytes = frameSize.width * 4
        let count = rowBytes * frameSize.height
        if buffer.count != count {
            // Uninitialised past `count`: a spare row a converter's last vector store may reach.
            buffer = [UInt8](unsafeUninitializedCapacity: count + rowBytes + 64) { bytes, initialized in
                bytes.baseAddress!.initialize(repeating: 0, count: count)
                initialized = count
            }
            paintedBars = nil
        } else {
            // Ours alone again, with the spare row (a copy when the handler kept the last frame).
            buffer.reserveCapacity(count + rowBytes + 64)
        }
        let content = layout.content
        let bars = paintedBars
        let drawn = buffer.withUnsafeMutableBytes { out -> Bool in
            let full = PixelRect(x: 0, y: 0, width: frameSize.width, height: frameSize.height)
            if content != full, bars.map({ $0.frame != frameSize || $0.content != content }) ?? true {
                // Black, opaque; the content rectangle is drawn over it.
                out.initializeMemory(as: UInt32.self, repeating: UInt32(0xFF00_0000).littleEndian)
            }
            let target = FrameTarget(base: out.baseAddress! + content.y * rowBytes + content.x * 4, bytesPerRow: rowBytes,
                                     size: VideoSize(width: content.width, height: content.height),
                                     crop: layout.crop, naturalSize: naturalSize)
            return draw(target)
        }
        paintedBars = (frameSize, content)
        let frame = VideoFrame(width: frameSize.width, height: frameSize.height, bytesPerRow: rowBytes,
                               pixels: buffer, presentationTime: presentationTime)
        lock.unlock()
        if drawn { handler(frame) }
    }
}

/// The last decoded picture, kept for `thumbnailAtCurrentTime()` by engines that receive
/// pictures themselves. Thread-safe.
public final class LastFrameStore: Sendable {
    private let frame = Locked<VideoFrame?>(nil)

    /// Makes an empty store.
    public init() {}

    /// Copies the RGBA picture in, reusing the stored buffer when no thumbnail holds it.
    public func store(_ pixels: UnsafeRawBufferPointer, size: VideoSize, bytesPerRow: Int, presentationTime: TimeInterval) {
        let rowBytes = size.width * 4
        guard !size.isEmpty, pixels.count >= bytesPerRow * (size.height - 1) + rowBytes else { return }
        frame.withLock { stored in
            var current = stored ?? VideoFrame(width: 0, height: 0, bytesPerRow: 0, pixels: [], presentationTime: 0)
            stored = nil  // drop our reference so the buffer is unique when nothing else holds it
            if current.pixels.count != rowBytes * size.height {
                current.pixels = [UInt8](repeating: 0, count: rowBytes * size.height)
            }
            current.pixels.withUnsafeMutableBytes { out in
                for row in 0..<size.height {
                    let from = UnsafeRawBufferPointer(rebasing: pixels[(row * bytesPerRow)..<(row * bytesPerRow + rowBytes)])
                    UnsafeMutableRawBufferPointer(rebasing: out[(row * rowBytes)..<((row + 1) * rowBytes)]).copyMemory(from: from)
                }
            }
            current.width = size.width
            current.height = size.height
            current.bytesPerRow = rowBytes
            current.presentationTime = presentationTime
            stored = current
        }
    }

    /// Stores a finished frame as it is.
    public func store(_ newFrame: VideoFrame) { frame.set(newFrame) }

    /// The last picture stored, or nil.
    public func latest() -> VideoFrame? { frame.get() }

    /// Forgets the picture (after close).
    public func clear() { frame.set(nil) }
}

import FoundationEssentials

/// Hands presented pictures to a `.frames` handler: at natural size, or composed into the
/// viewport by the current scaling mode. Buffers are reused while the handler does not keep
/// the frames it was given.
public final class FramePresenter: @unchecked Sendable {
    // @unchecked: `composer` and `buffer` are touched only inside `present`, which holds `lock`;
    // the rest is immutable or Locked.
    private let handler: @Sendable (VideoFrame) -> Void
    /// The viewport frames are composed into; nil: natural size.
    public let viewport: VideoSize?
    private let mode: Locked<ScalingMode>
    private let lock = MutexLock()
    private let composer = FrameComposer()
    private var buffer: [UInt8] = []

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

    /// Composes (or copies) the RGBA picture and calls the handler on this thread.
    public func present(_ pixels: UnsafeRawBufferPointer, size: VideoSize, bytesPerRow: Int, presentationTime: TimeInterval) {
        guard !size.isEmpty, pixels.count >= bytesPerRow * size.height else { return }
        let frame: VideoFrame
        lock.lock()
        if let viewport {
            frame = composer.compose(source: pixels, size: size, bytesPerRow: bytesPerRow,
                                     into: viewport, mode: mode.get(), presentationTime: presentationTime)
        } else {
            let rowBytes = size.width * 4
            let count = rowBytes * size.height
            if buffer.count != count { buffer = [UInt8](repeating: 0, count: count) }
            buffer.withUnsafeMutableBytes { out in
                if bytesPerRow == rowBytes {
                    out.copyMemory(from: UnsafeRawBufferPointer(rebasing: pixels[0..<count]))
                } else {
                    for row in 0..<size.height {
                        let from = UnsafeRawBufferPointer(rebasing: pixels[(row * bytesPerRow)..<(row * bytesPerRow + rowBytes)])
                        UnsafeMutableRawBufferPointer(rebasing: out[(row * rowBytes)..<((row + 1) * rowBytes)]).copyMemory(from: from)
                    }
                }
            }
            frame = VideoFrame(width: size.width, height: size.height, bytesPerRow: rowBytes, pixels: buffer, presentationTime: presentationTime)
        }
        lock.unlock()
        handler(frame)
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

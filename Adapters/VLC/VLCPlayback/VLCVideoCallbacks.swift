#if VLC
import CVLC
import Foundation
import PlaybackKit

/// Receives libVLC's decoded pictures in memory (`libvlc_video_set_callbacks` and
/// `libvlc_video_set_format_callbacks`) as RGBA at the display size, keeps the last one for
/// thumbnails and hands them to the `.frames` handler when there is one.
final class VLCVideoCallbacks: @unchecked Sendable {
    // @unchecked: `buffer`, `bufferSize` and `pitch` are touched only by libVLC's video output
    // thread (format, lock, display and cleanup calls come one after another), under `lock`;
    // the rest is immutable or Locked.
    private let lock = NSLock()
    private var buffer: UnsafeMutableRawPointer?
    private var bufferSize = VideoSize.zero
    private var pitch = 0

    /// Storage size and display size expected for the next video output, learned from the
    /// media's tracks; libVLC 3 offers the decoder's padded buffer size instead (e.g. 320x258
    /// for 320x240), which would stretch the picture.
    private let sizeHint = Locked<(storage: VideoSize, display: VideoSize)?>(nil)
    private let store: LastFrameStore
    private let clock: VLCMediaClock
    private let sink: EngineSink
    private let notifyPicture = Locked(false)
    private let shownPicture = Locked(false)
    private let onPicture: @Sendable () -> Void

    /// Pictures go to `store` and, when the sink wants frames, to the sink; `onPicture` is told
    /// about the next picture after `notifyOnNextPicture()`.
    init(store: LastFrameStore, clock: VLCMediaClock, sink: EngineSink, onPicture: @escaping @Sendable () -> Void) {
        self.store = store
        self.clock = clock
        self.sink = sink
        self.onPicture = onPicture
    }

    deinit { buffer?.deallocate() }

    /// Sets the sizes expected for the next video output.
    func setSizeHint(storage: VideoSize, display: VideoSize) {
        guard !storage.isEmpty, !display.isEmpty else { return }
        sizeHint.set((storage, display))
    }

    /// Calls `onPicture` (once) when the next picture is displayed.
    func notifyOnNextPicture() { notifyPicture.set(true) }

    /// True once a picture was displayed.
    var hasShownPicture: Bool { shownPicture.get() }

    /// The size pictures are delivered at now.
    var pictureSize: VideoSize {
        lock.lock()
        defer { lock.unlock() }
        return bufferSize
    }

    /// Registers the callbacks on `player`; `self` must outlive the player.
    func install(on player: OpaquePointer) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        libvlc_video_set_callbacks(player, videoLockCallback, nil, videoDisplayCallback, context)
        libvlc_video_set_format_callbacks(player, videoFormatCallback, videoCleanupCallback)
    }

    // MARK: - Called by libVLC's video output thread

    fileprivate func configure(chroma: UnsafeMutablePointer<CChar>, width: inout UInt32, height: inout UInt32,
                               pitches: UnsafeMutablePointer<UInt32>, lines: UnsafeMutablePointer<UInt32>) -> UInt32 {
        let offered = VideoSize(width: Int(width), height: Int(height))
        var size = offered
        if let hint = sizeHint.get(),
           (hint.storage.width...(hint.storage.width + 64)).contains(offered.width),
           (hint.storage.height...(hint.storage.height + 64)).contains(offered.height) {
            size = hint.display
        }
        guard !size.isEmpty else { return 0 }
        // "RGBA": bytes R, G, B, A in memory, what VideoFrame holds.
        for (index, byte) in "RGBA".utf8.enumerated() { chroma[index] = CChar(bitPattern: byte) }
        width = UInt32(size.width)
        height = UInt32(size.height)
        let rowBytes = (size.width * 4 + 31) & ~31
        pitches[0] = UInt32(rowBytes)
        lines[0] = UInt32(size.height)
        lock.lock()
        buffer?.deallocate()
        // One spare row: some converters write a little past the last line.
        buffer = UnsafeMutableRawPointer.allocate(byteCount: rowBytes * (size.height + 1), alignment: 64)
        bufferSize = size
        pitch = rowBytes
        lock.unlock()
        PlaybackLog.log(.debug, "vlc", "video format: offered \(offered), delivering RGBA \(size)")
        return 1
    }

    fileprivate func cleanup() {
        lock.lock()
        buffer?.deallocate()
        buffer = nil
        bufferSize = .zero
        lock.unlock()
    }

    fileprivate func planeForNextPicture() -> UnsafeMutableRawPointer? {
        lock.lock()
        defer { lock.unlock() }
        return buffer
    }

    fileprivate func pictureDisplayed() {
        let stamp = clock.stampPicture()
        lock.lock()
        if let buffer, !bufferSize.isEmpty {
            let bytes = UnsafeRawBufferPointer(start: buffer, count: pitch * bufferSize.height)
            store.store(bytes, size: bufferSize, bytesPerRow: pitch, presentationTime: stamp.time)
            if stamp.present, sink.frames != nil {
                sink.presentFrame(bytes, size: bufferSize, bytesPerRow: pitch, presentationTime: stamp.time)
            }
        }
        lock.unlock()
        shownPicture.set(true)
        let notify = notifyPicture.withLock { wanted -> Bool in
            defer { wanted = false }
            return wanted
        }
        if notify { onPicture() }
    }
}

// MARK: - C callbacks (libVLC's video output thread; they never call into libVLC)

private func callbacks(_ opaque: UnsafeMutableRawPointer?) -> VLCVideoCallbacks? {
    guard let opaque else { return nil }
    return Unmanaged<VLCVideoCallbacks>.fromOpaque(opaque).takeUnretainedValue()
}

private let videoFormatCallback: libvlc_video_format_cb = { opaque, chroma, width, height, pitches, lines in
    guard let opaque, let target = callbacks(opaque.pointee), let chroma, let width, let height,
          let pitches, let lines else { return 0 }
    return target.configure(chroma: chroma, width: &width.pointee, height: &height.pointee, pitches: pitches, lines: lines)
}

private let videoCleanupCallback: libvlc_video_cleanup_cb = { opaque in
    callbacks(opaque)?.cleanup()
}

private let videoLockCallback: libvlc_video_lock_cb = { opaque, planes in
    planes?[0] = callbacks(opaque)?.planeForNextPicture()
    return nil
}

private let videoDisplayCallback: libvlc_video_display_cb = { opaque, _ in
    callbacks(opaque)?.pictureDisplayed()
}
#endif

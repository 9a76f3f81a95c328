#if VLC
import Foundation
import PlaybackKit

/// The memory one libVLC video output draws into, made by the format callback and freed by
/// the cleanup callback; it is the output's opaque pointer for the lock and display callbacks.
final class VLCPictureBuffer {
    let owner: VLCVideoCallbacks
    let size: VideoSize
    let pitch: Int
    let pixels: UnsafeMutableRawPointer
    /// True once the output displayed a picture (video output thread only).
    var shown = false
    private var corrected: UnsafeMutableRawPointer?
    private var correctedSize = VideoSize.zero

    init(owner: VLCVideoCallbacks, size: VideoSize) {
        self.owner = owner
        self.size = size
        pitch = (size.width * 4 + 31) & ~31
        // One spare row: some converters write a little past the last line.
        pixels = UnsafeMutableRawPointer.allocate(byteCount: pitch * (size.height + 1), alignment: 64)
    }

    deinit {
        pixels.deallocate()
        corrected?.deallocate()
    }

    /// `frame` resampled to `display` (nearest neighbour).
    static func resample(_ frame: VideoFrame, to display: VideoSize) -> VideoFrame {
        var pixels = [UInt8](repeating: 0, count: display.width * 4 * display.height)
        for row in 0..<display.height {
            let sourceRow = min(frame.height - 1, (2 * row + 1) * frame.height / (2 * display.height))
            for column in 0..<display.width {
                let sourceColumn = min(frame.width - 1, (2 * column + 1) * frame.width / (2 * display.width))
                let from = sourceRow * frame.bytesPerRow + sourceColumn * 4
                let to = (row * display.width + column) * 4
                pixels[to..<(to + 4)] = frame.pixels[from..<(from + 4)]
            }
        }
        return VideoFrame(width: display.width, height: display.height, bytesPerRow: display.width * 4,
                          pixels: pixels, presentationTime: frame.presentationTime)
    }

    /// The picture to deliver: as drawn, or resampled to `display` when given (nearest
    /// neighbour, undoing libVLC's stretch over a padded buffer). Video output thread only.
    func output(correctedTo display: VideoSize?) -> (bytes: UnsafeRawBufferPointer, size: VideoSize, pitch: Int) {
        guard let display, display != size, !display.isEmpty else {
            return (UnsafeRawBufferPointer(start: pixels, count: pitch * size.height), size, pitch)
        }
        let rowBytes = display.width * 4
        if corrected == nil || correctedSize != display {
            corrected?.deallocate()
            corrected = UnsafeMutableRawPointer.allocate(byteCount: rowBytes * display.height, alignment: 64)
            correctedSize = display
        }
        let target = corrected!.assumingMemoryBound(to: UInt32.self)
        for row in 0..<display.height {
            let sourceRow = min(size.height - 1, (2 * row + 1) * size.height / (2 * display.height))
            let source = pixels.advanced(by: sourceRow * pitch).assumingMemoryBound(to: UInt32.self)
            let out = target.advanced(by: row * display.width)
            for column in 0..<display.width {
                out[column] = source[min(size.width - 1, (2 * column + 1) * size.width / (2 * display.width))]
            }
        }
        return (UnsafeRawBufferPointer(start: corrected, count: rowBytes * display.height), display, rowBytes)
    }

    /// A hash of the picture's bytes, to tell a redisplay of the same picture from a new one.
    func fingerprint() -> UInt64 {
        let words = pitch * size.height / 8
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let base = pixels.assumingMemoryBound(to: UInt64.self)
        for index in 0..<words {
            hash = (hash ^ base[index]) &* 0x100_0000_01b3
        }
        return hash
    }
}

#endif

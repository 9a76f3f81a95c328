#if MPV
import CMPV
import FoundationEssentials
import PlaybackKit

/// Thumbnails where no picture passes through memory while playing (`.none`, `.window`): mpv's
/// `screenshot-raw` of the frame the video output holds, converted to RGBA on demand.
///
/// The screenshot carries no time, so it is paired with `time-pos`, which mpv sets to a frame's
/// time when it hands that frame to the video output (on the core thread, together with the
/// hand-over). `time-pos` read before and after the screenshot alike means no frame was handed
/// over in between: the picture is the frame at that time.
enum MPVScreenshot {
    /// How often a screenshot is taken again when a new frame came while it was taken.
    private static let attempts = 4

    /// The video picture on screen now, or nil when there is none (no video, nothing shown
    /// yet). `fallbackTime` is its time when mpv reports no position.
    static func take(from handle: MPVHandle, fallbackTime: @autoclosure () -> TimeInterval) -> VideoFrame? {
        for attempt in 1...attempts {
            let before = handle.getDouble("time-pos")
            guard let result = handle.commandReturningNode(["screenshot-raw", "video"]) else { return nil }
            let after = handle.getDouble("time-pos")
            guard before == after || attempt == attempts else { continue }
            return frame(from: result, presentationTime: after ?? before ?? fallbackTime())
        }
        return nil
    }

    /// Converts a `screenshot-raw` result (`bgr0`, or `rgb0`/`rgba`/`bgra`) to an RGBA frame.
    private static func frame(from result: MPVValue, presentationTime: TimeInterval) -> VideoFrame? {
        guard let width = result["w"]?.int, let height = result["h"]?.int,
              let stride = result["stride"]?.int, width > 0, height > 0, stride >= width * 4,
              case .bytes(let data)? = result["data"], data.count >= stride * (height - 1) + width * 4
        else { return nil }
        let format = result["format"]?.string ?? "bgr0"
        let swapsRedAndBlue = !format.hasPrefix("rgb")
        let bytesPerRow = width * 4
        let pixels = [UInt8](unsafeUninitializedCapacity: bytesPerRow * height) { output, count in
            data.withUnsafeBufferPointer { input in
                for row in 0..<height {
                    var from = row * stride
                    var to = row * bytesPerRow
                    for _ in 0..<width {
                        output[to] = input[swapsRedAndBlue ? from + 2 : from]
                        output[to + 1] = input[from + 1]
                        output[to + 2] = input[swapsRedAndBlue ? from : from + 2]
                        output[to + 3] = 255
                        from += 4
                        to += 4
                    }
                }
            }
            count = bytesPerRow * height
        }
        return VideoFrame(width: width, height: height, bytesPerRow: bytesPerRow, pixels: pixels,
                          presentationTime: presentationTime)
    }
}
#endif

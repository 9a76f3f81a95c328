#if MPV
import CMPV
import Foundation
import PlaybackKit

/// Thumbnails for a window output, where no picture passes through memory: mpv's
/// `screenshot-raw` of the video alone, converted to RGBA.
enum MPVScreenshot {
    /// The video picture on screen now, or nil when there is none.
    static func take(from handle: MPVHandle, presentationTime: TimeInterval) -> VideoFrame? {
        guard let result = handle.commandReturningNode(["screenshot-raw", "video"]),
              let width = result["w"]?.int, let height = result["h"]?.int,
              let stride = result["stride"]?.int, width > 0, height > 0,
              case .bytes(let data)? = result["data"], data.count >= stride * height
        else { return nil }
        let format = result["format"]?.string ?? "bgr0"
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for row in 0..<height {
            for column in 0..<width {
                let from = row * stride + column * 4
                let to = (row * width + column) * 4
                switch format {
                case "rgb0", "rgba":
                    pixels[to] = data[from]
                    pixels[to + 1] = data[from + 1]
                    pixels[to + 2] = data[from + 2]
                default:  // "bgr0", "bgra"
                    pixels[to] = data[from + 2]
                    pixels[to + 1] = data[from + 1]
                    pixels[to + 2] = data[from]
                }
            }
        }
        return VideoFrame(width: width, height: height, bytesPerRow: width * 4, pixels: pixels,
                          presentationTime: presentationTime)
    }
}
#endif

import FoundationEssentials
import PlaybackKit

/// Reads the frame number that the fixture recipe (`FixtureRecipe`) paints into its numbered clips:
/// 16 bits in the top quarter, bit i (least significant first) in column i of 16 equal
/// columns, light for 1 and dark for 0. The clips run at 25 frames a second, so frame N
/// is presented at N / 25 s.
public enum FramePattern {
    /// Frames per second of the numbered fixtures.
    public static let frameRate = 25.0

    /// The frame number painted into `frame` (at natural size), or nil when the top band is
    /// not a clean pattern (not a numbered clip, or a picture composed with bars).
    public static func frameNumber(in frame: VideoFrame) -> Int? {
        frameNumber(in: frame, region: PixelRect(x: 0, y: 0, width: frame.width, height: frame.height))
    }

    /// The frame number painted into the part of `frame` where the picture was drawn.
    public static func frameNumber(in frame: VideoFrame, region: PixelRect) -> Int? {
        guard region.x + region.width <= frame.width, region.y + region.height <= frame.height else { return nil }
        return frameNumber(region: region) { x, y in luma(frame, x: x, y: y) }
    }

    /// The frame number painted into a YUV picture, read from its Y plane (`region`: the part
    /// where the picture was drawn; nil: all of it).
    public static func frameNumber(inLuma plane: YUVPlane, region: PixelRect? = nil) -> Int? {
        let region = region ?? PixelRect(x: 0, y: 0, width: plane.rowBytes, height: plane.rows)
        guard region.x + region.width <= plane.rowBytes, region.y + region.height <= plane.rows else { return nil }
        return frameNumber(region: region) { x, y in Int(plane[x, y]) }
    }

    /// The number read with `luma` (0...255 at a column and row) from the band of `region`.
    private static func frameNumber(region: PixelRect, luma: (Int, Int) -> Int) -> Int? {
        guard region.width >= 32, region.height >= 16, region.x >= 0, region.y >= 0 else { return nil }
        var number = 0
        let y = region.y + region.height / 8
        for bit in 0..<16 {
            let x = region.x + (2 * bit + 1) * region.width / 32
            let value = luma(x, y)
            if value > 170 {
                number |= 1 << bit
            } else if value > 70 {
                return nil  // neither light nor dark: not the pattern
            }
        }
        return number
    }

    /// The presentation time of frame `number`.
    public static func time(ofFrame number: Int) -> TimeInterval { Double(number) / frameRate }

    /// The frame presented at `time`: the last one that starts at or before it.
    public static func frame(at time: TimeInterval) -> Int { Int((time * frameRate + 1e-6).rounded(.down)) }

    /// Approximate luma (0...255) of one pixel.
    public static func luma(_ frame: VideoFrame, x: Int, y: Int) -> Int {
        let p = frame.pixel(x: x, y: y)
        return (Int(p.r) * 299 + Int(p.g) * 587 + Int(p.b) * 114) / 1000
    }
}

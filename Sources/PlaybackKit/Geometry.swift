import FoundationEssentials

/// Quarter turns of a picture, as containers ask for them (a display matrix).
package enum PictureTurn {
    /// The clockwise quarter turn (0, 90, 180 or 270 degrees) that shows a picture upright,
    /// from its display matrix's counterclockwise rotation in degrees (what libavutil's
    /// `av_display_rotation_get` reads); 0 for NaN or an angle more than a degree off a
    /// quarter turn.
    package static func clockwise(fromCounterclockwise degrees: Double) -> Int {
        guard degrees.isFinite else { return 0 }
        let quarters = (-degrees / 90).rounded()
        guard abs(-degrees - 90 * quarters) <= 1 else { return 0 }
        return ((Int(quarters) % 4 + 4) % 4) * 90
    }
}

/// A rectangle of whole pixels.
public struct PixelRect: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Left edge.
    public var x: Int
    /// Top edge.
    public var y: Int
    /// Width.
    public var width: Int
    /// Height.
    public var height: Int
    /// Makes a rectangle.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
    /// `WxH+X+Y`.
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// Where a picture falls in a viewport for each `ScalingMode`: the one implementation every
/// adapter that composes frames uses, and that window outputs map onto their engine's knobs.
public struct ScalingLayout: Sendable, Equatable {
    /// The part of the source picture that is shown.
    public var crop: PixelRect
    /// Where that part lands in the viewport; outside it the viewport is black.
    public var content: PixelRect

    /// Lays out a `source` picture in a `viewport` by `mode`.
    public init(source: VideoSize, viewport: VideoSize, mode: ScalingMode) {
        let sw = max(source.width, 1), sh = max(source.height, 1)
        let vw = max(viewport.width, 1), vh = max(viewport.height, 1)
        let full = PixelRect(x: 0, y: 0, width: sw, height: sh)
        switch mode {
        case .fill:
            crop = full
            content = PixelRect(x: 0, y: 0, width: vw, height: vh)
        case .aspectFit:
            // Compare sw/sh with vw/vh without rounding: the longer side fits exactly.
            if sw * vh >= vw * sh {
                let h = max(1, Int((Double(vw) * Double(sh) / Double(sw)).rounded()))
                content = PixelRect(x: 0, y: (vh - h) / 2, width: vw, height: h)
            } else {
                let w = max(1, Int((Double(vh) * Double(sw) / Double(sh)).rounded()))
                content = PixelRect(x: (vw - w) / 2, y: 0, width: w, height: vh)
            }
            crop = full
        case .aspectFill:
            content = PixelRect(x: 0, y: 0, width: vw, height: vh)
            if sw * vh >= vw * sh {
                // Source is wider: keep its height, crop the sides.
                let w = max(1, Int((Double(sh) * Double(vw) / Double(vh)).rounded()))
                crop = PixelRect(x: (sw - w) / 2, y: 0, width: w, height: sh)
            } else {
                let h = max(1, Int((Double(sw) * Double(vh) / Double(vw)).rounded()))
                crop = PixelRect(x: 0, y: (sh - h) / 2, width: sw, height: h)
            }
        case .none:
            let w = min(sw, vw), h = min(sh, vh)
            crop = PixelRect(x: (sw - w) / 2, y: (sh - h) / 2, width: w, height: h)
            content = PixelRect(x: (vw - w) / 2, y: (vh - h) / 2, width: w, height: h)
        }
    }
}

// MARK: - Composition

/// Composes natural-size frames into a viewport by a scaling mode, reusing its buffers.
/// Not thread-safe: one composer per frame producer.
public final class FrameComposer {
    private var buffer: [UInt8] = []
    private var cachedKey: (VideoSize, VideoSize, ScalingMode)?
    private var layout: ScalingLayout?

    /// Makes an empty composer.
    public init() {}

    /// `source` (RGBA rows of `sourceBytesPerRow`) fitted into `viewport` by `mode`, black
    /// where no picture falls; nearest-neighbour sampling.
    public func compose(
        source: UnsafeRawBufferPointer, size: VideoSize, bytesPerRow sourceBytesPerRow: Int,
        into viewport: VideoSize, mode: ScalingMode, presentationTime: TimeInterval
    ) -> VideoFrame {
        let vw = max(viewport.width, 1), vh = max(viewport.height, 1)
        if cachedKey == nil || cachedKey!.0 != size || cachedKey!.1 != viewport || cachedKey!.2 != mode {
            layout = ScalingLayout(source: size, viewport: viewport, mode: mode)
            cachedKey = (size, viewport, mode)
        }
        let layout = self.layout!
        let count = vw * vh * 4
        if buffer.count != count { buffer = [UInt8](repeating: 0, count: count) }
        let content = layout.content
        buffer.withUnsafeMutableBytes { out in
            // Black, opaque background.
            out.initializeMemory(as: UInt32.self, repeating: UInt32(0xFF00_0000).littleEndian)
            guard let from = source.baseAddress else { return }
            FramePresenter.sample(from, bytesPerRow: sourceBytesPerRow, crop: layout.crop,
                                  into: out.baseAddress! + (content.y * vw + content.x) * 4, bytesPerRow: vw * 4,
                                  size: VideoSize(width: content.width, height: content.height))
        }
        return VideoFrame(width: vw, height: vh, bytesPerRow: vw * 4, pixels: buffer, presentationTime: presentationTime)
    }
}

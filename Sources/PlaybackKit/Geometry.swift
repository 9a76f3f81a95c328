import FoundationEssentials

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
    private var columnOffsets: [Int] = []
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
            let newLayout = ScalingLayout(source: size, viewport: viewport, mode: mode)
            layout = newLayout
            cachedKey = (size, viewport, mode)
            let content = newLayout.content, crop = newLayout.crop
            columnOffsets = (0..<content.width).map { dx in
                let sx = crop.x + min(crop.width - 1, dx * crop.width / max(content.width, 1))
                return sx * 4
            }
        }
        let layout = self.layout!
        let count = vw * vh * 4
        if buffer.count != count { buffer = [UInt8](repeating: 0, count: count) }
        let content = layout.content, crop = layout.crop
        let offsets = columnOffsets
        buffer.withUnsafeMutableBytes { out in
            // Black, opaque background.
            out.initializeMemory(as: UInt32.self, repeating: UInt32(0xFF00_0000).littleEndian)
            let dst = out.baseAddress!
            for dy in 0..<content.height {
                let sy = crop.y + min(crop.height - 1, dy * crop.height / max(content.height, 1))
                let srcRow = source.baseAddress! + sy * sourceBytesPerRow
                let dstRow = dst + ((content.y + dy) * vw + content.x) * 4
                for dx in 0..<content.width {
                    dstRow.storeBytes(of: srcRow.loadUnaligned(fromByteOffset: offsets[dx], as: UInt32.self),
                                      toByteOffset: dx * 4, as: UInt32.self)
                }
            }
        }
        return VideoFrame(width: vw, height: vh, bytesPerRow: vw * 4, pixels: buffer, presentationTime: presentationTime)
    }
}

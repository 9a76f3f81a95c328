#if Swscale
internal import CSwscale
import FoundationEssentials
import PlaybackKit

// MARK: - Drawing a picture into a frame or a window

extension SourcePicture {
    /// `crop`, a part of the picture in display pixels (a picture of display size
    /// `naturalSize`), in the picture's storage pixels.
    package func storageCrop(_ crop: PixelRect, naturalSize: VideoSize) -> PixelRect {
        let scaleX = Double(width) / Double(max(1, naturalSize.width))
        let scaleY = Double(height) / Double(max(1, naturalSize.height))
        return PixelRect(x: Int(Double(crop.x) * scaleX), y: Int(Double(crop.y) * scaleY),
                         width: max(1, Int(Double(crop.width) * scaleX)),
                         height: max(1, Int(Double(crop.height) * scaleY)))
    }
}

extension PictureConverter {
    /// Converts (and scales) the target's crop of `picture` to `format` into the target (a
    /// frame's or a window image's rows): straight into those rows when they can take
    /// libswscale's whole-vector stores (every row of the rectangle a whole number of vectors,
    /// its start 16-byte aligned), else into the converter's own buffer and then copied row
    /// by row. False when it cannot be converted.
    package func draw(_ picture: SourcePicture, into target: FrameTarget, format: PackedFormat = .rgba) -> Bool {
        guard !target.size.isEmpty else { return false }
        let crop = picture.storageCrop(target.crop, naturalSize: target.naturalSize)
        let rowBytes = target.size.width * 4
        if Int(bitPattern: target.base) % 16 == 0, target.bytesPerRow % 16 == 0, rowBytes % PackedLayout.alignment == 0 {
            return scale(picture, crop: crop, to: target.size, format: format == .rgba ? AV_PIX_FMT_RGBA : AV_PIX_FMT_BGRA,
                         planes: [target.base.assumingMemoryBound(to: UInt8.self), nil, nil, nil],
                         strides: [Int32(target.bytesPerRow), 0, 0, 0])
        }
        guard let converted = convert(picture, crop: crop, to: target.size, format: format) else { return false }
        for row in 0..<target.size.height {
            (target.base + row * target.bytesPerRow).copyMemory(from: converted.base + row * converted.layout.bytesPerRow,
                                                                byteCount: rowBytes)
        }
        return true
    }
}

extension EngineSink {
    /// Presents `picture` (of display size `naturalSize`) to the `.frames` handler, if any:
    /// `converter` converts it once, at the size and crop the scaling mode gives, into the
    /// frame the handler gets; `overlay` then draws on it (the first pixel, width, height,
    /// bytes per row of the picture's rectangle, RGBA). `converter` is used with the
    /// presenter's lock held.
    package func presentFrame(_ picture: SourcePicture, naturalSize: VideoSize, presentationTime: TimeInterval,
                              converter: PictureConverter,
                              overlay: ((UnsafeMutableRawPointer, _ width: Int, _ height: Int, _ bytesPerRow: Int) -> Void)? = nil) {
        guard let frames, isCurrent else { return }
        frames.present(naturalSize: naturalSize, presentationTime: presentationTime) { target in
            guard converter.draw(picture, into: target) else { return false }
            overlay?(target.base, target.size.width, target.size.height, target.bytesPerRow)
            return true
        }
    }
}
#endif

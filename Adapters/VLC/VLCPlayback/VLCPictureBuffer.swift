#if VLC
import Dispatch
import FoundationEssentials
import Glibc
import PictureConversion
import PlaybackKit

/// The picture formats a libVLC video output may deliver into a `VLCPictureBuffer`.
enum VLCPictureFormat: Equatable, Sendable {
    /// 8-bit RGBA, what `VideoFrame` holds (libVLC converts every picture).
    case rgba
    /// 4:2:0 planes Y, U, V (libVLC's "I420"), limited range.
    case i420
    /// The same in full range ("J420").
    case j420
    /// Planes Y, V, U ("YV12").
    case yv12
    /// A Y plane and one plane of interleaved U, V ("NV12").
    case nv12

    /// The format for libVLC's four-character chroma `name`, if it is one the adapter takes
    /// as it comes (8-bit 4:2:0 YUV, converted only when a thumbnail is wanted).
    init?(yuvChroma name: String) {
        switch name {
        case "I420": self = .i420
        case "J420": self = .j420
        case "YV12": self = .yv12
        case "NV12": self = .nv12
        default: return nil
        }
    }

    /// libVLC's four-character name.
    var chroma: String {
        switch self {
        case .rgba: "RGBA"
        case .i420: "I420"
        case .j420: "J420"
        case .yv12: "YV12"
        case .nv12: "NV12"
        }
    }

    /// Bytes per row of each plane for pictures `width` pixels wide: rows aligned to the vector
    /// size libswscale (libVLC's converter and ours) stores in, so a store that runs past a
    /// row's pixels stays in the row's padding.
    func pitches(width: Int) -> [Int] {
        let chromaWidth = (width + 1) / 2
        switch self {
        case .rgba: return [align(width * 4)]
        case .i420, .j420, .yv12: return [align(width), align(chromaWidth), align(chromaWidth)]
        case .nv12: return [align(width), align(chromaWidth * 2)]
        }
    }

    /// Bytes of picture in a row of each plane for pictures `width` pixels wide.
    func rowBytes(width: Int) -> [Int] {
        let chromaWidth = (width + 1) / 2
        switch self {
        case .rgba: return [width * 4]
        case .i420, .j420, .yv12: return [width, chromaWidth, chromaWidth]
        case .nv12: return [width, chromaWidth * 2]
        }
    }

    /// Rows of each plane for pictures `height` pixels high.
    func lines(height: Int) -> [Int] {
        let chromaHeight = (height + 1) / 2
        switch self {
        case .rgba: return [height]
        case .i420, .j420, .yv12: return [height, chromaHeight, chromaHeight]
        case .nv12: return [height, chromaHeight]
        }
    }

    private func align(_ bytes: Int) -> Int {
        (bytes + PackedLayout.alignment - 1) / PackedLayout.alignment * PackedLayout.alignment
    }
}

/// The memory one libVLC video output draws into, made by the format callback and freed by
/// the cleanup callback (or later, while a thumbnail still refers to it); it is the output's
/// opaque pointer for the lock, unlock and display callbacks.
///
/// It has several picture slots. libVLC copies each picture it shows (a new one or a
/// redisplay) into a free slot; comparing it with the slot shown before tells a redisplay
/// from a new picture (the comparison stops at the first different row, so a new picture
/// costs next to nothing and only a redisplay is read whole). In YUV formats the slot of the
/// picture kept for thumbnails is left alone until another is kept, and converted to RGBA
/// only when a thumbnail is asked for.
final class VLCPictureBuffer: @unchecked Sendable {
    // @unchecked: the slots are written by libVLC between the lock and unlock callbacks, which
    // hold `access`, and read only with `access` held; `shown` is used on libVLC's video
    // output thread only; the rest is immutable.
    let owner: VLCVideoCallbacks
    /// The size pictures are drawn at.
    let size: VideoSize
    /// The size they are shown at (pixel aspect applied), unless corrected later.
    let display: VideoSize
    let format: VLCPictureFormat
    /// Bytes per row and rows of each plane.
    let pitches: [Int]
    let lines: [Int]
    /// True once the output displayed a picture (video output thread only).
    var shown = false
    /// Which output this is, counting from 1 in the order they were made (set once, when made).
    var serial = 0

    /// Bytes of picture in each row of each plane (the rest of a row is padding).
    private let rowBytes: [Int]
    private let slots: [UnsafeMutableRawPointer]
    private let access = MutexLock()
    /// Slot states, with `access` held.
    private var writing: Int?
    private var lastShown: Int?
    private var kept: Int?
    /// When libVLC finished copying a picture into each slot (monotonic seconds).
    private var writtenAt: [Double]
    private var converter: PictureConverter?
    /// Serves `YUVFrame.rgbaFrame(size:)` for the pictures handed to a `.yuvFrames` handler.
    private let yuvConverter = YUVFrameConverter()

    /// A buffer for pictures of `size` in `format`, shown at `display`.
    init(owner: VLCVideoCallbacks, size: VideoSize, display: VideoSize, format: VLCPictureFormat) {
        self.owner = owner
        self.size = size
        self.display = display
        self.format = format
        pitches = format.pitches(width: size.width)
        lines = format.lines(height: size.height)
        // One spare row: vector code reads and writes a little past the last line.
        let bytes = zip(pitches, lines).reduce(0) { $0 + $1.0 * $1.1 } + pitches[0]
        // The last shown, the one being written, and the one kept for thumbnails (the kept
        // one lags the last shown after a redisplay).
        let count = 3
        // Not touched here: an output libVLC gives up on (it tries hardware formats first)
        // then costs no memory.
        slots = (0..<count).map { _ in UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64) }
        writtenAt = Array(repeating: 0, count: count)
        rowBytes = format.rowBytes(width: size.width)
    }

    deinit {
        slots.forEach { $0.deallocate() }
    }

    // MARK: - libVLC's video output thread

    /// Starts writing a picture: returns the slot and fills `planes` with its plane pointers.
    /// `access` stays held until `endWriting()`.
    func beginWriting(planes: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Int {
        access.lock()
        let slot = (0..<slots.count).first { $0 != lastShown && $0 != kept } ?? 0
        writing = slot
        var plane = slots[slot]
        for index in pitches.indices {
            planes[index] = plane
            plane += pitches[index] * lines[index]
        }
        return slot
    }

    /// The picture is written.
    func endWriting() {
        if let writing { writtenAt[writing] = monotonicSeconds() }
        writing = nil
        access.unlock()
    }

    /// `slot` is displayed: returns whether it is a redisplay of the picture before, whether
    /// it holds the same picture as the one before at all, and when libVLC finished writing it
    /// (monotonic seconds; nil for a slot it never wrote).
    ///
    /// libVLC redisplays a picture (while paused, or when the next one is late) by copying it
    /// again and showing it at once; it shows a new picture at its date, which it copies a
    /// few milliseconds ahead of (measured: 3 ms and more; a redisplay under 1 ms). So while
    /// playing, a picture shown `scheduledLead` or more after its copy is new, even when it
    /// looks the same as the one before (a still scene); one shown at once is a redisplay
    /// when it holds the same picture. Where no new picture of a still scene can come (paused,
    /// stepping), `identical` alone tells: on a loaded machine a redisplay, too, is now and
    /// then shown a few milliseconds after its copy.
    func displayed(slot: Int) -> (repeated: Bool, identical: Bool, writtenAt: Double?) {
        let now = monotonicSeconds()
        return access.withLock {
            guard slots.indices.contains(slot) else { return (false, false, nil) }
            defer { lastShown = slot }
            let written = writtenAt[slot] > 0 ? writtenAt[slot] : nil
            guard let previous = lastShown, previous != slot else { return (false, false, written) }
            let identical = samePicture(slots[previous], slots[slot])
            if let written, now - written >= Self.scheduledLead { return (false, identical, written) }
            return (identical, identical, written)
        }
    }

    /// How long before showing a picture libVLC at least finished copying it when it showed
    /// it at its date rather than at once (see `displayed(slot:)`).
    static let scheduledLead = 0.002

    /// Whether two slots hold the same picture: every row of every plane compared, up to the
    /// first difference.
    private func samePicture(_ first: UnsafeMutableRawPointer, _ second: UnsafeMutableRawPointer) -> Bool {
        var offset = 0
        for plane in pitches.indices {
            for row in 0..<lines[plane] {
                let start = offset + row * pitches[plane]
                if memcmp(first + start, second + start, rowBytes[plane]) != 0 { return false }
            }
            offset += pitches[plane] * lines[plane]
        }
        return true
    }

    /// Keeps the last displayed slot for thumbnails (converted or copied only when one is asked for).
    func keepLastShown() {
        access.withLock { kept = lastShown }
    }

    // MARK: - Any thread

    /// The kept picture as RGBA at `display` (a YUV one converted, an RGBA one copied and,
    /// drawn at another size, resampled), stamped `presentationTime`; nil when none is kept or
    /// the conversion fails.
    func keptFrame(display: VideoSize, presentationTime: TimeInterval) -> VideoFrame? {
        access.withLock {
            guard let kept, !display.isEmpty else { return nil }
            if format == .rgba {
                let frame = VideoFrame(copying: slots[kept], width: size.width, height: size.height, bytesPerRow: pitches[0],
                                       presentationTime: presentationTime)
                return display == size ? frame : Self.resample(frame, to: display)
            }
            if converter == nil { converter = PictureConverter() }
            return converter?.rgbaFrame(sourcePicture(slot: kept), size: display, presentationTime: presentationTime)
        }
    }

    /// Hands the kept YUV picture to `sink`'s `.yuvFrames` handler, stamped `presentationTime`
    /// and to be shown at `display`: the slot's own planes, borrowed for the call (`access`
    /// stays held, so libVLC writes no picture into it meanwhile).
    func presentKept(display: VideoSize, presentationTime: TimeInterval, to sink: EngineSink) {
        access.lock()
        defer { access.unlock() }
        guard let kept, format != .rgba else { return }
        let picture = sourcePicture(slot: kept)
        let layout: YUVPixelLayout = format == .nv12 ? .nv12 : .i420
        let geometry = YUVFrame.planeGeometry(layout, width: size.width, height: size.height)
        let planes = geometry.indices.map { index in
            YUVPlane(baseAddress: picture.planes[index]!, bytesPerRow: picture.strides[index],
                     rowBytes: geometry[index].rowBytes, rows: geometry[index].rows)
        }
        sink.presentYUVFrame(YUVFrame(layout: layout, width: size.width, height: size.height, displaySize: display,
                                      planes: planes, presentationTime: presentationTime,
                                      matrix: picture.matrix == .bt709 ? .bt709 : .bt601,
                                      fullRange: picture.fullRange, converter: yuvConverter))
    }

    /// Calls `body` with the kept picture as the converter reads it, YUV or RGBA (drawn at
    /// `size`): the slot's own planes, borrowed for the call (`access` stays held, so libVLC
    /// writes no picture into it meanwhile).
    func withKept(_ body: (SourcePicture) -> Void) {
        access.lock()
        defer { access.unlock() }
        guard let kept else { return }
        guard format == .rgba else { return body(sourcePicture(slot: kept)) }
        body(.rgba(UnsafePointer(slots[kept].assumingMemoryBound(to: UInt8.self)), width: size.width, height: size.height,
                   bytesPerRow: pitches[0]))
    }

    /// The YUV picture in `slot`, as the converter reads it.
    ///
    /// libVLC's format callback does not say which YUV matrix the stream uses: BT.709 is
    /// assumed from 720 rows up, BT.601 below (what players assume for unmarked video); the
    /// range is full for J420, limited otherwise.
    private func sourcePicture(slot: Int) -> SourcePicture {
        var planes: [UnsafePointer<UInt8>?] = []
        var plane = UnsafeRawPointer(slots[slot])
        for index in pitches.indices {
            planes.append(plane.assumingMemoryBound(to: UInt8.self))
            plane += pitches[index] * lines[index]
        }
        var strides = pitches
        if format == .yv12 {
            planes.swapAt(1, 2)
            strides.swapAt(1, 2)
        }
        return SourcePicture(format: format == .nv12 ? .nv12 : .i420, width: size.width, height: size.height,
                             planes: planes, strides: strides, matrix: size.height >= 720 ? .bt709 : .bt601,
                             fullRange: format == .j420)
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
}
#endif

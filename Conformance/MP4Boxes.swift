import FoundationEssentials

/// The top-level boxes of an MP4 file.
struct MP4Boxes {
    /// `data` with its `moov` box moved before `mdat` (chunk offsets shifted to match), or nil
    /// when it already comes first or the file is not laid out as expected.
    static func indexFirst(_ data: Data) -> Data? {
        let boxes = MP4Boxes(data)
        guard let moov = boxes.range(of: "moov"), let mdat = boxes.range(of: "mdat"),
              moov.lowerBound > mdat.lowerBound else { return nil }
        var index = [UInt8](data[moov])
        guard shiftChunkOffsets(&index, in: 0..<index.count, by: index.count) else { return nil }
        var result = Data(data[..<mdat.lowerBound])
        result.append(contentsOf: index)
        result.append(data[mdat.lowerBound..<moov.lowerBound])
        result.append(data[moov.upperBound...])
        return result
    }

    /// Adds `shift` to every chunk offset (`stco`, `co64`) in the boxes within `range`.
    private static func shiftChunkOffsets(_ bytes: inout [UInt8], in range: Range<Int>, by shift: Int) -> Bool {
        func read(_ at: Int, _ count: Int) -> Int { bytes[at..<at + count].reduce(0) { $0 << 8 | Int($1) } }
        func write(_ value: Int, _ at: Int, _ count: Int) {
            for i in 0..<count { bytes[at + i] = UInt8(truncatingIfNeeded: value >> (8 * (count - 1 - i))) }
        }
        var offset = range.lowerBound
        while offset + 8 <= range.upperBound {
            var size = read(offset, 4)
            var header = 8
            if size == 1 {
                guard offset + 16 <= range.upperBound else { return false }
                size = read(offset + 8, 8)
                header = 16
            } else if size == 0 {
                size = range.upperBound - offset
            }
            guard size >= header, offset + size <= range.upperBound else { return false }
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            let body = offset + header
            switch type {
            case "moov", "trak", "mdia", "minf", "stbl", "edts", "udta":
                guard shiftChunkOffsets(&bytes, in: body..<offset + size, by: shift) else { return false }
            case "stco", "co64":
                let width = type == "stco" ? 4 : 8
                let count = read(body + 4, 4)
                guard body + 8 + count * width <= offset + size else { return false }
                for entry in 0..<count {
                    let at = body + 8 + entry * width
                    write(read(at, width) + shift, at, width)
                }
            default:
                break
            }
            offset += size
        }
        return true
    }

    private var boxes: [(type: String, range: Range<Int>)] = []

    init(_ data: Data) {
        let bytes = [UInt8](data)
        var offset = 0
        while offset + 8 <= bytes.count {
            var size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            if size == 1, offset + 16 <= bytes.count {
                size = bytes[offset + 8..<offset + 16].reduce(0) { $0 << 8 | Int($1) }
            } else if size == 0 {
                size = bytes.count - offset
            }
            guard size >= 8 else { break }
            boxes.append((type, offset..<min(bytes.count, offset + size)))
            offset += size
        }
    }

    /// Where the first box of `type` lies.
    func range(of type: String) -> Range<Int>? { boxes.first { $0.type == type }?.range }
}

import FoundationEssentials

/// The text encoding of a subtitle file, by one rule for every engine: UTF-16 when it starts
/// with UTF-16's byte order mark; UTF-8 (with or without a byte order mark) when the bytes are
/// valid UTF-8; otherwise a legacy 8-bit file, read as Windows-1251 (Cyrillic) when most of its
/// bytes above 0x7F stand next to another such byte (words written wholly outside ASCII), else
/// as Windows-1252 (Western European, where such bytes are single accented letters inside
/// ASCII words).
public enum SubtitleEncoding: String, Sendable, Equatable, CaseIterable {
    /// UTF-8, with or without a byte order mark.
    case utf8 = "UTF-8"
    /// UTF-16, little-endian, with its byte order mark.
    case utf16LittleEndian = "UTF-16LE"
    /// UTF-16, big-endian, with its byte order mark.
    case utf16BigEndian = "UTF-16BE"
    /// Windows-1251 (Cyrillic).
    case windows1251 = "CP1251"
    /// Windows-1252 (Western European).
    case windows1252 = "CP1252"

    /// The encoding of `data` by the rule above. `rawValue` is the name iconv, libavcodec's
    /// `sub_charenc`, mpv's `sub-codepage` and GStreamer's `subtitle-encoding` take.
    public static func detect(_ data: Data) -> SubtitleEncoding {
        let bytes = [UInt8](data)
        if bytes.starts(with: [0xFF, 0xFE]) { return .utf16LittleEndian }
        if bytes.starts(with: [0xFE, 0xFF]) { return .utf16BigEndian }
        if String(validating: bytes, as: UTF8.self) != nil { return .utf8 }
        var high = 0, paired = 0
        for index in bytes.indices where bytes[index] >= 0x80 {
            high += 1
            let before = index > 0 && bytes[index - 1] >= 0x80
            let after = index + 1 < bytes.count && bytes[index + 1] >= 0x80
            if before || after { paired += 1 }
        }
        return high > 0 && paired * 2 > high ? .windows1251 : .windows1252
    }

    /// The encoding to tell an engine's subtitle decoder (libavcodec's `sub_charenc`, mpv's
    /// `sub-codepage`, subparse's `subtitle-encoding`, libVLC's `subsdec-encoding`): the
    /// demuxers read a UTF-16 file by its byte order mark and hand its text on as UTF-8, so
    /// only a legacy code page is told as it is.
    public var textAfterDemuxing: SubtitleEncoding {
        switch self {
        case .utf16LittleEndian, .utf16BigEndian: .utf8
        default: self
        }
    }
}

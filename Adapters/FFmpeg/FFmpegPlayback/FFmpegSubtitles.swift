#if FFmpeg
import CFFmpeg
import FoundationEssentials
import PlaybackKit

// MARK: - Decoded cues

/// One cue as a subtitle decoder gave it: the contract's cue (plain text, media time without
/// the subtitle delay) and the ASS event libass draws.
struct DecodedCue: Equatable {
    /// Plain text and times.
    var cue: SubtitleCue
    /// The event's fields after ReadOrder ("Layer,Style,Name,MarginL,MarginR,MarginV,Effect,Text").
    var event: String
}

// MARK: - Subtitle decoder

/// A text subtitle decoder (`avcodec_decode_subtitle2`) for one stream, embedded or in a file
/// of its own; its cues come out as `DecodedCue`s. Used by one thread at a time.
final class SubtitleDecoder {
    private let decoder: CodecDecoder
    /// Seconds subtracted from the stream's timestamps to make them zero-based media time.
    private let timeOffset: Double
    /// The ASS script header the decoder made (styles, play resolution): libass reads it
    /// before the events.
    let header: String

    /// Opens the decoder of `stream`; text from `characterEncoding` (iconv's name) is turned
    /// into UTF-8 by libavcodec.
    init(stream: UnsafeMutablePointer<AVStream>, timeOffset: Double, characterEncoding: String? = nil) throws(PlaybackError) {
        decoder = try CodecDecoder(stream: stream, characterEncoding: characterEncoding)
        self.timeOffset = timeOffset
        let context = decoder.context.pointee
        if let bytes = context.subtitle_header, context.subtitle_header_size > 0 {
            header = String(decoding: UnsafeBufferPointer(start: bytes, count: Int(context.subtitle_header_size)), as: UTF8.self)
        } else {
            header = SubtitleText.defaultHeader
        }
    }

    /// The cues of one packet (none when it holds no text or fails to decode).
    func decode(_ packet: UnsafeMutablePointer<AVPacket>) -> [DecodedCue] {
        var subtitle = AVSubtitle()
        var got: Int32 = 0
        let status = avcodec_decode_subtitle2(decoder.context, &subtitle, &got, packet)
        guard status >= 0, got != 0 else { return [] }
        defer { avsubtitle_free(&subtitle) }
        guard packet.pointee.pts != pk_av_nopts_value() else { return [] }
        let base = Double(packet.pointee.pts) * pk_av_q2d(decoder.timeBase) - timeOffset
        let start = base + Double(subtitle.start_display_time) / 1000
        var end: Double?
        if subtitle.end_display_time > subtitle.start_display_time, subtitle.end_display_time != UInt32.max {
            end = base + Double(subtitle.end_display_time) / 1000
        } else if packet.pointee.duration > 0 {
            end = start + Double(packet.pointee.duration) * pk_av_q2d(decoder.timeBase)
        }
        var cues: [DecodedCue] = []
        for index in 0..<Int(subtitle.num_rects) {
            guard let rect = subtitle.rects[index]?.pointee else { continue }
            var event: String?
            var text = ""
            if rect.type == SUBTITLE_ASS, let ass = rect.ass {
                guard let fields = SubtitleText.eventFields(String(cString: ass)) else { continue }
                event = fields.event
                text = SubtitleText.plainText(ass: fields.text)
            } else if rect.type == SUBTITLE_TEXT, let plain = rect.text {
                text = SubtitleText.plainText(markup: String(cString: plain))
                event = SubtitleText.event(plainText: text)
            }
            guard let event, !text.isEmpty else { continue }
            cues.append(DecodedCue(cue: SubtitleCue(text: text, start: start, end: end), event: event))
        }
        return cues
    }

    /// Forgets what the decoder buffered (after a seek).
    func flush() { avcodec_flush_buffers(decoder.context) }

    /// True when libavcodec can decode `stream` as text subtitles.
    static func decodesText(_ stream: UnsafeMutablePointer<AVStream>) -> Bool {
        let id = stream.pointee.codecpar.pointee.codec_id
        guard avcodec_find_decoder(id) != nil, let descriptor = avcodec_descriptor_get(id) else { return false }
        return descriptor.pointee.props & AV_CODEC_PROP_TEXT_SUB != 0
    }
}

// MARK: - Subtitle files

/// An external subtitle file (SRT, ASS/SSA, WebVTT; a file or http(s)) read at once through
/// an `AVFormatContext` of its own, every cue decoded.
struct SubtitleFile {
    /// The file's name, its track's title.
    var title: String
    /// FFmpeg's codec name ("subrip", "ass", "webvtt").
    var codec: String
    /// The ASS script header for libass.
    var header: String
    /// Every cue, in file order.
    var cues: [DecodedCue]
    /// The encoding its text was read in (nil: UTF-8).
    var encoding: String?

    /// Reads and decodes `url`; throws the mapped error when it cannot be opened or holds no
    /// subtitle stream. `interrupt` stops blocking I/O when the session closes.
    static func load(_ url: URL, options: PlaybackOptions, interrupt: InterruptFlag) throws(PlaybackError) -> SubtitleFile {
        // A WebVTT file with STYLE or REGION blocks is read from a copy without them.
        try WebVTTHeaderBlocks.withReadableFile(url) { (file) throws(PlaybackError) in
            try read(file, title: url.lastPathComponent, options: options, interrupt: interrupt)
        }
    }

    /// `load` of a file libavformat reads as it is; the file is `title`.
    private static func read(_ url: URL, title: String, options: PlaybackOptions, interrupt: InterruptFlag) throws(PlaybackError) -> SubtitleFile {
        let location = url.isFileURL ? url.path : url.absoluteString
        // Over http(s) the file is opened as any network source (headers, certificates, policy).
        let network = url.isFileURL ? nil : try NetworkAccess(source: MediaSource(url), options: options)
        let input = try FormatInput(location: location, network: network, interrupt: interrupt)
        try input.findStreamInfo(location: location)
        let context = input.context
        guard let index = (0..<Int32(context.pointee.nb_streams)).first(where: {
            input.stream($0).pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE
        }) else {
            throw PlaybackError(code: .unsupportedFormat, message: "open subtitle: \(location): no subtitle stream")
        }
        let stream = input.stream(index)
        guard SubtitleDecoder.decodesText(stream) else {
            let name = String(cString: avcodec_get_name(stream.pointee.codecpar.pointee.codec_id))
            throw PlaybackError(code: .unsupportedFormat, message: "open subtitle: \(location): \(name) is not a text subtitle")
        }
        // Every packet first (the pool frees them when done): the encoding is told from all
        // of the text.
        let pool = PacketPool()
        var packets: [UnsafeMutablePointer<AVPacket>] = []
        var text: [UInt8] = []
        while true {
            let packet = pool.take()
            let status = av_read_frame(context, packet)
            if status < 0 {
                if interrupt.isRaised { throw PlaybackError(code: .engine, message: "open subtitle: \(location): closed") }
                break
            }
            guard packet.pointee.stream_index == index else {
                pool.give(packet)
                continue
            }
            if let data = packet.pointee.data {
                text.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(packet.pointee.size)))
            }
            packets.append(packet)
        }
        // The package's rule (UTF-8, else Windows-1251 or -1252); libavcodec converts with iconv.
        let detected = SubtitleEncoding.detect(Data(text))
        let encoding = detected == .utf8 ? nil : detected.rawValue
        let decoder = try SubtitleDecoder(stream: stream, timeOffset: 0, characterEncoding: encoding)
        let cues = packets.flatMap { decoder.decode($0) }
        return SubtitleFile(title: title, codec: String(cString: avcodec_get_name(stream.pointee.codecpar.pointee.codec_id)),
                            header: decoder.header, cues: cues, encoding: encoding)
    }
}

// MARK: - ASS events and plain text

/// Reading the ASS events libavcodec's subtitle decoders make, and their text as the
/// contract's cues carry it.
enum SubtitleText {
    /// The header of text subtitles whose decoder gives none: white text with a black outline
    /// at the bottom centre.
    static let defaultHeader = """
        [Script Info]
        ScriptType: v4.00+
        PlayResX: 384
        PlayResY: 288
        ScaledBorderAndShadow: yes

        [V4+ Styles]
        Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
        Style: Default,sans-serif,16,&H00FFFFFF,&H00FFFFFF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,1,0,2,10,10,10,0

        [Events]
        Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text

        """

    /// Splits a decoder's ASS line "ReadOrder,Layer,Style,Name,MarginL,MarginR,MarginV,Effect,Text"
    /// into the event after ReadOrder and its Text; nil when it has fewer fields.
    static func eventFields(_ line: String) -> (event: String, text: String)? {
        var commas: [String.Index] = []
        var index = line.startIndex
        while index < line.endIndex, commas.count < 8 {
            if line[index] == "," { commas.append(index) }
            index = line.index(after: index)
        }
        guard commas.count == 8 else { return nil }
        let event = String(line[line.index(after: commas[0])...])
        let text = String(line[line.index(after: commas[7])...])
        return (event, text)
    }

    /// An ASS event in the default style showing `plainText`.
    static func event(plainText: String) -> String {
        "0,Default,,0,0,0,," + plainText.split(separator: "\n").joined(separator: "\\N")
    }

    /// The plain text of an ASS event's Text: override blocks `{...}` and drawings removed,
    /// `\N` and `\n` as line breaks, `\h` as a space, HTML-like tags removed, each line
    /// trimmed, empty lines dropped, lines joined with "\n".
    static func plainText(ass text: String) -> String {
        var out = ""
        var drawing = false
        let characters = Array(text)
        var i = 0
        while i < characters.count {
            let c = characters[i]
            if c == "{", let close = characters[i...].firstIndex(of: "}") {
                let block = String(characters[(i + 1)..<close])
                if let mode = drawingMode(in: block) { drawing = mode }
                i = close + 1
                continue
            }
            if c == "\\", i + 1 < characters.count {
                switch characters[i + 1] {
                case "N", "n":
                    if !drawing { out.append("\n") }
                    i += 2
                    continue
                case "h":
                    if !drawing { out.append(" ") }
                    i += 2
                    continue
                default: break
                }
            }
            if !drawing { out.append(c) }
            i += 1
        }
        return plainText(markup: out)
    }

    /// Plain text with HTML-like tags (`<i>`, `</font>`, `<c.yellow>`) removed, each line
    /// trimmed, empty lines dropped, lines joined with "\n".
    static func plainText(markup text: String) -> String {
        var out = ""
        var inTag = false
        let characters = Array(text)
        for (index, c) in characters.enumerated() {
            if inTag {
                if c == ">" { inTag = false }
                continue
            }
            if c == "<", index + 1 < characters.count,
               characters[index + 1].isLetter || characters[index + 1] == "/",
               characters[(index + 1)...].contains(">") {
                inTag = true
                continue
            }
            out.append(c)
        }
        return out.split(whereSeparator: \.isNewline)
            .map { String($0).trimmingWhitespace() }
            .filter { !$0.isEmpty }
            .joined(separator: "\n")
    }

    /// The drawing mode an override block sets (`\p1`: on, `\p0`: off), if it sets one.
    private static func drawingMode(in block: String) -> Bool? {
        var mode: Bool?
        let characters = Array(block)
        for index in characters.indices where characters[index] == "\\" {
            guard index + 1 < characters.count, characters[index + 1] == "p" else { continue }
            let digits = characters[(index + 2)...].prefix { $0.isNumber }
            guard let value = Int(String(digits)) else { continue }
            mode = value > 0
        }
        return mode
    }
}
#endif

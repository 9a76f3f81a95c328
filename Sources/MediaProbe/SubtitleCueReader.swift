#if StreamProbe
internal import CMediaProbe
import FoundationEssentials
import PlaybackKit

/// Reads every cue of a text subtitle stream with libavformat and libavcodec: for engines that
/// draw subtitles but do not hand out their text (libVLC 3), so that cue events are the same
/// on every engine. Times are the stream's own, as `EngineSink.subtitleCue` wants them.
package enum SubtitleCueReader {
    /// A subtitle stream read whole: its cues as plain text, and as libass draws it (the
    /// decoder's ASS script header and events, and the fonts the file carries).
    package struct Reading: Sendable {
        /// One ASS event: the fields after ReadOrder, shown from `start` to `end` (seconds).
        package struct Event: Sendable {
            package var fields: String
            package var start: Double
            package var end: Double?
        }

        /// A font file attached to the media.
        package struct Font: Sendable {
            package var name: String
            package var data: [UInt8]
        }

        /// The cues, sorted by start.
        package var cues: [SubtitleCue] = []
        /// The ASS script header libavcodec's decoder made (empty when it made none).
        package var header = ""
        /// The events in the order decoded.
        package var events: [Event] = []
        /// The fonts the media carries (Matroska attachments).
        package var fonts: [Font] = []
    }

    /// Every cue of the subtitle stream that is the `subtitleIndex`-th (from 0, in stream
    /// order) of `url`, a media or subtitle file; text files are decoded by `SubtitleEncoding`.
    /// Throws a `PlaybackError` when the file cannot be read or has no such stream.
    package static func cues(in url: URL, subtitleIndex: Int = 0) throws(PlaybackError) -> [SubtitleCue] {
        try read(url, subtitleIndex: subtitleIndex).cues
    }

    /// The subtitle stream that is the `subtitleIndex`-th of `url`, read whole: cues, script
    /// header, events and fonts. Throws as `cues(in:subtitleIndex:)`.
    ///
    /// A subtitle file over http(s) is fetched first (with `options`' headers and certificate
    /// authorities, at most `remoteLimit` bytes) and read as a local file, so that its text
    /// encoding is told by the same rule.
    package static func read(_ url: URL, subtitleIndex: Int = 0, options: PlaybackOptions = PlaybackOptions()) throws(PlaybackError) -> Reading {
        guard !url.isFileURL else { return try readLocal(url, subtitleIndex: subtitleIndex) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("playbackkit-subtitle-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        return try readLocal(try localCopy(of: url, in: folder, options: options), subtitleIndex: subtitleIndex)
    }

    /// Fetches the subtitle file at the http(s) `url` (as `read` does) into `folder` (made
    /// when missing), under the URL's file name; returns the copy's file URL.
    package static func localCopy(of url: URL, in folder: URL, options: PlaybackOptions = PlaybackOptions()) throws(PlaybackError) -> URL {
        let name = url.lastPathComponent.isEmpty || url.lastPathComponent == "/" ? "subtitles" : url.lastPathComponent
        let local = folder.appendingPathComponent(name)
        let data = try fetch(url, options: options)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try data.write(to: local)
        } catch {
            throw PlaybackError(code: .engine, message: "subtitles: cannot keep \(url.absoluteString) in \(folder.path): \(error)")
        }
        return local
    }

    /// The most bytes a remote subtitle file may have.
    package static let remoteLimit = 16 << 20

    /// The bytes at the http(s) `url`, through libavformat's protocols (only http, https and
    /// what they are made of), verified against the system's and the app's authorities.
    private static func fetch(_ url: URL, options: PlaybackOptions) throws(PlaybackError) -> Data {
        _ = MediaProbeLog.quiet
        var settings: OpaquePointer?
        defer { av_dict_free(&settings) }
        let authorities = try options.tlsCertificateAuthorities.map { extra throws(PlaybackError) in try TLSTrust.bundle(adding: extra).path }
        var pairs: [(String, String)] = [
            ("protocol_whitelist", "http,https,tls,tcp"), ("rw_timeout", "15000000"), ("tls_verify", "1"),
            ("ca_file", authorities ?? TLSTrust.systemBundle),
        ]
        if !options.httpHeaders.isEmpty {
            pairs.append(("headers", options.httpHeaders.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)\r\n" }.joined()))
        }
        for (key, value) in pairs { av_dict_set(&settings, key, value, 0) }
        var io: UnsafeMutablePointer<AVIOContext>?
        let opened = avio_open2(&io, url.absoluteString, AVIO_FLAG_READ, nil, &settings)
        guard opened >= 0, io != nil else {
            throw PlaybackError(code: .network, message: "subtitles: \(url.absoluteString): \(errorText(opened))")
        }
        defer { avio_closep(&io) }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBufferPointer { avio_read(io, $0.baseAddress, Int32($0.count)) }
            if count == pk_sub_error_eof() { break }
            guard count >= 0 else { throw PlaybackError(code: .network, message: "subtitles: \(url.absoluteString): \(errorText(count))") }
            data.append(contentsOf: chunk[0..<Int(count)])
            guard data.count <= remoteLimit else {
                throw PlaybackError(code: .unsupportedFormat, message: "subtitles: \(url.absoluteString) is larger than \(remoteLimit >> 20) MiB")
            }
        }
        return data
    }

    /// `read` of a local file (a WebVTT file with STYLE or REGION blocks from a copy without
    /// them, `WebVTTHeaderBlocks`).
    private static func readLocal(_ url: URL, subtitleIndex: Int) throws(PlaybackError) -> Reading {
        try WebVTTHeaderBlocks.withReadableFile(url) { (file) throws(PlaybackError) in try readFile(file, subtitleIndex: subtitleIndex) }
    }

    /// `readLocal` of a file libavformat reads as it is.
    private static func readFile(_ url: URL, subtitleIndex: Int) throws(PlaybackError) -> Reading {
        let path = url.path
        _ = MediaProbeLog.quiet
        var format: UnsafeMutablePointer<AVFormatContext>?
        let opened = avformat_open_input(&format, path, nil, nil)
        guard opened >= 0, let context = format else {
            throw PlaybackError(code: .unsupportedFormat, message: "subtitles: \(url.lastPathComponent): \(errorText(opened))")
        }
        defer { avformat_close_input(&format) }
        guard avformat_find_stream_info(context, nil) >= 0 else {
            throw PlaybackError(code: .unsupportedFormat, message: "subtitles: \(url.lastPathComponent) has no readable streams")
        }
        let subtitleStreams = (0..<Int(context.pointee.nb_streams)).filter {
            context.pointee.streams[$0]!.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE
        }
        guard subtitleIndex < subtitleStreams.count else {
            throw PlaybackError(code: .unsupportedFormat, message: "subtitles: \(url.lastPathComponent) has no subtitle stream \(subtitleIndex)")
        }
        let streamIndex = subtitleStreams[subtitleIndex]
        let stream = context.pointee.streams[streamIndex]!
        var context3: UnsafeMutablePointer<AVCodecContext>?
        guard let codec = avcodec_find_decoder(stream.pointee.codecpar.pointee.codec_id) else {
            throw PlaybackError(code: .decode, message: "subtitles: \(url.lastPathComponent): no decoder for its subtitles")
        }
        context3 = avcodec_alloc_context3(codec)
        defer { avcodec_free_context(&context3) }
        guard let decoder = context3 else {
            throw PlaybackError(code: .engine, message: "subtitles: \(url.lastPathComponent): out of memory")
        }
        avcodec_parameters_to_context(decoder, stream.pointee.codecpar)
        decoder.pointee.pkt_timebase = stream.pointee.time_base
        var settings: OpaquePointer?
        defer { av_dict_free(&settings) }
        if url.isFileURL, isTextFile(url), let data = FileManager.default.contents(atPath: url.path) {
            let encoding = SubtitleEncoding.detect(data).textAfterDemuxing
            if encoding != .utf8 { av_dict_set(&settings, "sub_charenc", encoding.rawValue, 0) }
        }
        guard avcodec_open2(decoder, codec, &settings) >= 0 else {
            throw PlaybackError(code: .decode, message: "subtitles: \(url.lastPathComponent): the subtitle decoder did not open")
        }
        let timeBase = stream.pointee.time_base
        let seconds = { (value: Int64) -> Double in Double(value) * Double(timeBase.num) / Double(timeBase.den) }
        var reading = Reading()
        if let header = decoder.pointee.subtitle_header, decoder.pointee.subtitle_header_size > 0 {
            reading.header = String(decoding: UnsafeBufferPointer(start: header, count: Int(decoder.pointee.subtitle_header_size)), as: UTF8.self)
        }
        reading.fonts = fonts(in: context)
        var cues: [SubtitleCue] = []
        var packet = av_packet_alloc()
        defer { av_packet_free(&packet) }
        guard let packet else { return reading }
        while av_read_frame(context, packet) >= 0 {
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == Int32(streamIndex), packet.pointee.pts != pk_sub_nopts() else { continue }
            var subtitle = AVSubtitle()
            var got: Int32 = 0
            guard avcodec_decode_subtitle2(decoder, &subtitle, &got, packet) >= 0, got != 0 else { continue }
            defer { avsubtitle_free(&subtitle) }
            let start = seconds(packet.pointee.pts) + Double(subtitle.start_display_time) / 1000
            var end: Double?
            if subtitle.end_display_time > subtitle.start_display_time, subtitle.end_display_time != UInt32.max {
                end = seconds(packet.pointee.pts) + Double(subtitle.end_display_time) / 1000
            } else if packet.pointee.duration > 0 {
                end = seconds(packet.pointee.pts + packet.pointee.duration)
            }
            let text = (0..<subtitle.num_rects).compactMap { index -> String? in
                guard let rect = pk_sub_rect(&subtitle, index) else { return nil }
                if let ass = rect.pointee.ass {
                    let line = String(cString: ass)
                    // "ReadOrder,Layer,...": libass numbers the events itself.
                    if let comma = line.firstIndex(of: ",") {
                        reading.events.append(Reading.Event(fields: String(line[line.index(after: comma)...]), start: start, end: end))
                    }
                    return plainText(assDialogue: line)
                }
                if let text = rect.pointee.text { return plainText(markup: String(cString: text)) }
                return nil
            }.filter { !$0.isEmpty }.joined(separator: "\n")
            if !text.isEmpty { cues.append(SubtitleCue(text: text, start: start, end: end)) }
        }
        reading.cues = cues.sorted { $0.start < $1.start }
        return reading
    }

    /// The font files attached to the media (attachment streams with a font's name or type).
    private static func fonts(in context: UnsafeMutablePointer<AVFormatContext>) -> [Reading.Font] {
        (0..<Int(context.pointee.nb_streams)).compactMap { index -> Reading.Font? in
            guard let stream = context.pointee.streams[index], let parameters = stream.pointee.codecpar,
                  parameters.pointee.codec_type == AVMEDIA_TYPE_ATTACHMENT,
                  let data = parameters.pointee.extradata, parameters.pointee.extradata_size > 0 else { return nil }
            let tag = { (key: String) -> String? in av_dict_get(stream.pointee.metadata, key, nil, 0).map { String(cString: $0.pointee.value) } }
            let name = tag("filename") ?? "font\(index)"
            let type = tag("mimetype")?.lowercased() ?? ""
            let fontExtensions = ["ttf", "otf", "ttc", "woff", "woff2"]
            guard type.contains("font") || fontExtensions.contains(where: { name.lowercased().hasSuffix("." + $0) }) else { return nil }
            return Reading.Font(name: name, data: Array(UnsafeBufferPointer(start: data, count: Int(parameters.pointee.extradata_size))))
        }
    }

    // MARK: - Plain text

    /// The text of one of libavcodec's ASS event lines ("ReadOrder,Layer,Style,Name,MarginL,
    /// MarginR,MarginV,Effect,Text"): override blocks removed, `\N` and `\n` as line breaks.
    static func plainText(assDialogue line: String) -> String {
        var fields = line.split(separator: ",", maxSplits: 8, omittingEmptySubsequences: false)
        let text = fields.count == 9 ? String(fields.removeLast()) : line
        return plainText(ass: text)
    }

    /// ASS text without override blocks ({...}); `\N`, `\n` break lines, `\h` is a space.
    static func plainText(ass text: String) -> String {
        var out = "", depth = 0
        var characters = Array(text)[...]
        while let character = characters.popFirst() {
            if character == "{" { depth += 1; continue }
            if character == "}" { depth = max(0, depth - 1); continue }
            guard depth == 0 else { continue }
            if character == "\\", let next = characters.first, "Nnh".contains(next) {
                characters.removeFirst()
                out.append(next == "h" ? " " : "\n")
                continue
            }
            out.append(character)
        }
        return lines(out)
    }

    /// Text with HTML-like tags (<i>, <font ...>) removed.
    static func plainText(markup text: String) -> String {
        var out = "", inTag = false
        for character in text {
            if character == "<" { inTag = true; continue }
            if character == ">", inTag { inTag = false; continue }
            if !inTag { out.append(character) }
        }
        return lines(out)
    }

    /// Lines trimmed, empty ones dropped, joined with "\n".
    private static func lines(_ text: String) -> String {
        text.replacing("\r\n", with: "\n").split(separator: "\n").map { String($0).trimmingWhitespace() }
            .filter { !$0.isEmpty }.joined(separator: "\n")
    }

    /// Whether the file is a text subtitle format (its encoding matters).
    private static func isTextFile(_ url: URL) -> Bool {
        ["srt", "ass", "ssa", "vtt", "sub", "txt"].contains(url.pathExtension.lowercased())
    }

    private static func errorText(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        av_strerror(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
#endif

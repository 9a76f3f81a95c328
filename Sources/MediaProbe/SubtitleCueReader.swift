#if VLC || GStreamer || MPV
internal import CMediaProbe
import FoundationEssentials
import PlaybackKit

/// Reads every cue of a text subtitle stream with libavformat and libavcodec: for engines that
/// draw subtitles but do not hand out their text (libVLC 3), so that cue events are the same
/// on every engine. Times are the stream's own, as `EngineSink.subtitleCue` wants them.
package enum SubtitleCueReader {
    /// Every cue of the subtitle stream that is the `subtitleIndex`-th (from 0, in stream
    /// order) of `url`, a media or subtitle file; text files are decoded by `SubtitleEncoding`.
    /// Throws a `PlaybackError` when the file cannot be read or has no such stream.
    package static func cues(in url: URL, subtitleIndex: Int = 0) throws(PlaybackError) -> [SubtitleCue] {
        let path = url.isFileURL ? url.path : url.absoluteString
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
            let encoding = SubtitleEncoding.detect(data)
            if encoding != .utf8 { av_dict_set(&settings, "sub_charenc", encoding.rawValue, 0) }
        }
        guard avcodec_open2(decoder, codec, &settings) >= 0 else {
            throw PlaybackError(code: .decode, message: "subtitles: \(url.lastPathComponent): the subtitle decoder did not open")
        }
        let timeBase = stream.pointee.time_base
        let seconds = { (value: Int64) -> Double in Double(value) * Double(timeBase.num) / Double(timeBase.den) }
        var cues: [SubtitleCue] = []
        var packet = av_packet_alloc()
        defer { av_packet_free(&packet) }
        guard let packet else { return [] }
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
                if let ass = rect.pointee.ass { return plainText(assDialogue: String(cString: ass)) }
                if let text = rect.pointee.text { return plainText(markup: String(cString: text)) }
                return nil
            }.filter { !$0.isEmpty }.joined(separator: "\n")
            if !text.isEmpty { cues.append(SubtitleCue(text: text, start: start, end: end)) }
        }
        return cues.sorted { $0.start < $1.start }
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

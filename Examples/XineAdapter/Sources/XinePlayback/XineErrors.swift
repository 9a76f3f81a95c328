import CXine
import FoundationEssentials
import PlaybackKit

/// xine's failures as `PlaybackError`s: the code by the contract's rules, the message in
/// xine's own words (its message log, its messages to the user, its error's name).
enum XineErrors {
    /// The name of one of xine_get_error()'s codes.
    static func name(_ code: Int32) -> String {
        switch code {
        case XINE_ERROR_NONE: "XINE_ERROR_NONE"
        case XINE_ERROR_NO_INPUT_PLUGIN: "XINE_ERROR_NO_INPUT_PLUGIN"
        case XINE_ERROR_NO_DEMUX_PLUGIN: "XINE_ERROR_NO_DEMUX_PLUGIN"
        case XINE_ERROR_DEMUX_FAILED: "XINE_ERROR_DEMUX_FAILED"
        case XINE_ERROR_MALFORMED_MRL: "XINE_ERROR_MALFORMED_MRL"
        case XINE_ERROR_INPUT_FAILED: "XINE_ERROR_INPUT_FAILED"
        default: "xine error \(code)"
        }
    }

    /// xine_open failed: no input could read the source (nothing there, the server refused
    /// or answered with an error), or no demuxer recognised what it read.
    static func openFailed(_ session: XineSession, source: MediaSource, loggedBefore: Int) -> PlaybackError {
        let code = xine_get_error(session.stream)
        let remote = !source.isFile
        let kind: PlaybackError.Code = switch code {
        case XINE_ERROR_NO_DEMUX_PLUGIN, XINE_ERROR_DEMUX_FAILED: .unsupportedFormat
        case XINE_ERROR_MALFORMED_MRL: remote ? .network : .sourceNotFound
        default: remote ? .network : .sourceNotFound
        }
        return PlaybackError(code: kind, message: "xine_open: \(explanation(session, loggedBefore: loggedBefore)) (\(name(code)))")
    }

    /// The input plugins this adapter does not play through, by their identifier: xine-lib
    /// 1.2.13's HLS input ("hls") crashes its stream's demux thread (a read at address 0x10 in
    /// xineplug_inp_network.so) when the stream is closed soon after it starts, in 3 of 9 runs
    /// of the http family; an app would lose its process. Checked after xine_open, before
    /// xine_play starts that thread.
    static let refusedInputPlugins = ["hls": "xine's HLS input crashes its demux thread when the stream is closed soon after it starts, so this adapter does not play HLS"]

    /// An `unsupportedFormat` error when xine_open chose an input plugin of
    /// `refusedInputPlugins`; nil otherwise.
    static func refusedInput(_ session: XineSession) -> PlaybackError? {
        guard let name = xine_get_meta_info(session.stream, XINE_META_INFO_INPUT_PLUGIN).map({ String(cString: $0) }),
              let reason = refusedInputPlugins[name.lowercased()] else { return nil }
        return PlaybackError(code: .unsupportedFormat, message: "xine_open: input plugin \"\(name)\": \(reason)")
    }

    /// xine_play failed after the source opened: the demuxer could not start.
    static func playFailed(_ session: XineSession, source: MediaSource?) -> PlaybackError {
        let code = xine_get_error(session.stream)
        return PlaybackError(code: .decode, message: "xine_play: \(explanation(session, loggedBefore: 0)) (\(name(code)))")
    }

    /// The source opened, but xine has a decoder for none of its streams.
    static func noDecoder(_ session: XineSession, source: MediaSource) -> PlaybackError {
        let video = fourCC(session.info(XINE_STREAM_INFO_VIDEO_FOURCC)), audio = fourCC(session.info(XINE_STREAM_INFO_AUDIO_FOURCC))
        return PlaybackError(code: .decode, message: "xine: no decoder for \(source.url.lastPathComponent) (video \(video), audio \(audio); XINE_STREAM_INFO_VIDEO_HANDLED and _AUDIO_HANDLED are 0)")
    }

    /// What xine said about the failure: its messages to the user, else the lines it logged
    /// since `loggedBefore`, else nothing known.
    private static func explanation(_ session: XineSession, loggedBefore: Int) -> String {
        let messages = session.events.messages.get()
        if !messages.isEmpty { return messages.joined(separator: "; ") }
        let lines = session.log
        let new = lines.count > loggedBefore ? Array(lines[loggedBefore...]) : lines.suffix(2)
        let text = new.filter { !$0.isEmpty }.joined(separator: "; ")
        return text.isEmpty ? "xine gave no reason" : text
    }

    private static func fourCC(_ value: Int) -> String {
        guard value != 0 else { return "none" }
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        return bytes.allSatisfy({ $0 >= 32 && $0 < 127 }) ? String(decoding: bytes, as: UTF8.self) : String(value, radix: 16)
    }
}

#if FFmpeg
import CFFmpeg
import PlaybackKit

/// Maps FFmpeg's AVERROR codes to `PlaybackError`, with the step and av_strerror's text.
enum FFmpegErrors {
    /// av_strerror's text for `status`.
    static func text(_ status: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        av_strerror(status, &buffer, buffer.count)
        return string(from: buffer)
    }

    /// The text of a NUL-terminated C character buffer.
    static func string(from buffer: [CChar]) -> String {
        buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// The error for `status` returned at `step` while working on `location`.
    static func map(_ status: Int32, step: String, location: String, isNetwork: Bool) -> PlaybackError {
        PlaybackError(code: code(for: status, isNetwork: isNetwork), message: "\(step): \(location): \(text(status))")
    }

    /// The contract's code for an AVERROR.
    static func code(for status: Int32, isNetwork: Bool) -> PlaybackError.Code {
        if pk_av_error_is_http(status) != 0 { return .network }
        switch status {
        case pk_av_error(ENOENT), pk_av_error(ENOTDIR), pk_av_error(EISDIR):
            return isNetwork ? .network : .sourceNotFound
        case pk_av_error(EACCES), pk_av_error(EPERM):
            return isNetwork ? .network : .sourceNotFound
        case pk_av_error(ECONNREFUSED), pk_av_error(ETIMEDOUT), pk_av_error(EHOSTUNREACH),
             pk_av_error(ENETUNREACH), pk_av_error(ECONNRESET), pk_av_error(ECONNABORTED),
             pk_av_error(EPIPE), pk_av_error(ENETDOWN), pk_av_error(EHOSTDOWN):
            return .network
        case pk_av_error(EIO):
            return isNetwork ? .network : .unsupportedFormat
        case pk_av_error_invaliddata(), pk_av_error_eof(), pk_av_error_demuxer_not_found(),
             pk_av_error_decoder_not_found(), pk_av_error_stream_not_found(), pk_av_error_patchwelcome(),
             pk_av_error(ENOSYS):
            return .unsupportedFormat
        case pk_av_error_protocol_not_found():
            return .invalidArgument
        default:
            return isNetwork ? .network : .engine
        }
    }
}
#endif

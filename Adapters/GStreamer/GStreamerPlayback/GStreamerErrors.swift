#if GStreamer
import CGStreamer
import FoundationEssentials
import PlaybackKit

/// Turns GStreamer's error messages into `PlaybackError`s with the contract's codes: the
/// pipeline's helper for its bus messages (`PipelineMessage`).
enum GStreamerErrors {
    /// The error carried by an ERROR bus message: the element that posted it, GStreamer's own
    /// message, and the code its GError domain and code map to.
    static func playbackError(from message: UnsafeMutablePointer<GstMessage>, sourceIsRemote: Bool) -> PlaybackError {
        var error: UnsafeMutablePointer<GError>?
        var debug: UnsafeMutablePointer<gchar>?
        gst_message_parse_error(message, &error, &debug)
        defer {
            if let error { g_error_free(error) }
            if let debug { g_free(debug) }
        }
        let element = objectName(pk_gst_message_src(message))
        let factory = factoryName(of: pk_gst_message_src(message))
        let text = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "unknown error"
        let fromSource = pk_gst_is_source_element(pk_gst_message_src(message)) != 0
        let code = error.map {
            map(domain: $0.pointee.domain, code: $0.pointee.code, factory: factory, fromSource: fromSource, sourceIsRemote: sourceIsRemote)
        } ?? .engine
        if let debug, PlaybackLog.enabled(.debug) {
            PlaybackLog.log(.debug, "gstreamer", "error detail: \(String(cString: debug))")
        }
        return PlaybackError(code: code, message: "playback: \(element): \(text)")
    }

    /// The contract's code for a GError from GStreamer, posted by an element made by
    /// `factory`; `fromSource` when that element is a source (it reads the media itself).
    static func map(domain: GQuark, code: gint, factory: String?, fromSource: Bool, sourceIsRemote: Bool) -> PlaybackError.Code {
        let code = UInt32(bitPattern: code)
        // Anything the HTTP source reports (refused, unreachable, timed out, 4xx/5xx); a refused
        // connection arrives as a flow error of the source, not as a resource error.
        if factory == "souphttpsrc" { return .network }
        if domain == gst_resource_error_quark() {
            if sourceIsRemote { return .network }
            switch code {
            case GST_RESOURCE_ERROR_NOT_FOUND.rawValue, GST_RESOURCE_ERROR_OPEN_READ.rawValue,
                 GST_RESOURCE_ERROR_OPEN_READ_WRITE.rawValue:
                // A decoder that opens the data it was given (sfdec) and cannot read it
                // found no format it knows; the source itself not opening is a missing file.
                return fromSource ? .sourceNotFound : .unsupportedFormat
            case GST_RESOURCE_ERROR_READ.rawValue, GST_RESOURCE_ERROR_SEEK.rawValue:
                return .unsupportedFormat
            default:
                return .engine
            }
        }
        if domain == gst_stream_error_quark() {
            switch code {
            case GST_STREAM_ERROR_TYPE_NOT_FOUND.rawValue, GST_STREAM_ERROR_WRONG_TYPE.rawValue,
                 GST_STREAM_ERROR_DEMUX.rawValue, GST_STREAM_ERROR_FORMAT.rawValue,
                 GST_STREAM_ERROR_CODEC_NOT_FOUND.rawValue, GST_STREAM_ERROR_NOT_IMPLEMENTED.rawValue:
                return .unsupportedFormat
            case GST_STREAM_ERROR_DECODE.rawValue, GST_STREAM_ERROR_DECRYPT.rawValue,
                 GST_STREAM_ERROR_DECRYPT_NOKEY.rawValue:
                return .decode
            default:
                return .engine
            }
        }
        if domain == gst_core_error_quark(), code == GST_CORE_ERROR_MISSING_PLUGIN.rawValue {
            return .unsupportedFormat
        }
        return .engine
    }

    /// GST_OBJECT_NAME of `object`, or "pipeline".
    static func objectName(_ object: UnsafeMutablePointer<GstObject>?) -> String {
        guard let object, let name = gst_object_get_name(object) else { return "pipeline" }
        defer { g_free(name) }
        return String(cString: name)
    }

    /// The factory name of `object` when it is an element.
    static func factoryName(of object: UnsafeMutablePointer<GstObject>?) -> String? {
        guard let object, pk_gst_is_element(object) != 0,
              let name = pk_gst_element_factory_name(pk_gst_element(object)) else { return nil }
        return String(cString: name)
    }
}
#endif

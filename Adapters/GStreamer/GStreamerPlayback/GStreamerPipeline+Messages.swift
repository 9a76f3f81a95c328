#if GStreamer
import CGStreamer
import FoundationEssentials
import PlaybackKit

/// A bus message the session acts on, read out of its GstMessage by the pipeline.
enum PipelineMessage: Sendable {
    /// An element failed: GStreamer's message mapped to the contract's code.
    case error(PlaybackError)
    /// An element warned ("element: text").
    case warning(String)
    /// The end of the media.
    case endOfStream
    /// An asynchronous state change finished (prerolled, or a flushing seek landed).
    case asyncDone
    /// An element changed state; `fromPipeline` when it is the playbin itself.
    case stateChanged(old: PipelineState, new: PipelineState, pending: PipelineState, fromPipeline: Bool)
    /// The duration may have changed: query it again.
    case durationChanged
    /// Buffering progress, 0...100.
    case buffering(Int)
    /// The clock went away (an audio device closed).
    case clockLost

    /// Reads `message` (on the loop thread); nil for the kinds the session does not act on.
    /// `context` tells the playbin from its children and how resource errors map.
    init?(_ message: UnsafeMutablePointer<GstMessage>, context: PipelineContext) {
        let type = pk_gst_message_type(message)
        let origin = pk_gst_message_src(message)
        if PlaybackLog.enabled(.debug) {
            PlaybackLog.log(.debug, "gstreamer", "bus: \(String(cString: gst_message_type_get_name(type))) from \(GStreamerErrors.objectName(origin))")
        }
        switch type {
        case GST_MESSAGE_ERROR:
            // A reference the policy refused fails the play with that, whatever element noticed.
            self = .error(context.refusal.get() ?? GStreamerErrors.playbackError(from: message, sourceIsRemote: context.sourceIsRemote))
        case GST_MESSAGE_WARNING:
            var error: UnsafeMutablePointer<GError>?
            var debug: UnsafeMutablePointer<gchar>?
            gst_message_parse_warning(message, &error, &debug)
            let text = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "warning"
            if let error { g_error_free(error) }
            if let debug { g_free(debug) }
            self = .warning("\(GStreamerErrors.objectName(origin)): \(text)")
        case GST_MESSAGE_EOS:
            self = .endOfStream
        case GST_MESSAGE_ASYNC_DONE:
            self = .asyncDone
        case GST_MESSAGE_STATE_CHANGED:
            var old = GST_STATE_VOID_PENDING, new = GST_STATE_VOID_PENDING, pending = GST_STATE_VOID_PENDING
            gst_message_parse_state_changed(message, &old, &new, &pending)
            let fromPipeline = origin.map { UInt(bitPattern: $0) } == context.playbinAddress
            self = .stateChanged(old: PipelineState(old), new: PipelineState(new), pending: PipelineState(pending),
                                 fromPipeline: fromPipeline)
        case GST_MESSAGE_DURATION_CHANGED:
            self = .durationChanged
        case GST_MESSAGE_BUFFERING:
            var percent: gint = 0
            gst_message_parse_buffering(message, &percent)
            self = .buffering(Int(percent))
        case GST_MESSAGE_CLOCK_LOST:
            self = .clockLost
        default:
            return nil
        }
    }
}
#endif

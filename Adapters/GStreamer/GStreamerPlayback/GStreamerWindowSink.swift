#if GStreamer
import CGStreamer
import FoundationEssentials
import PlaybackKit
import X11Windows

/// The `.window` output: videoconvert ! videoscale ! capsfilter ! videocrop ! ximagesink.
/// Each scaling mode is laid out as the `.frames` output lays it out (`ScalingLayout` for the
/// window's size): the picture is scaled to the size the mode gives it, videocrop cuts what
/// falls outside the window, and ximagesink (force-aspect-ratio) centres the rest with black
/// around it. The window's size is read on an X connection of its own. Loop thread only.
final class GStreamerWindowSink {
    /// The bin playbin gets as its video sink (a reference of this object's own).
    let bin: UnsafeMutablePointer<GstElement>
    private let filter: UnsafeMutablePointer<GstElement>
    private let crop: UnsafeMutablePointer<GstElement>
    private let connection: X11Connection?
    private let window: UInt
    /// What the elements are set for: the picture's size, the window's and the mode.
    private var applied: (source: VideoSize, window: VideoSize, mode: ScalingMode)?

    /// Builds the bin drawing into X11 window `handle`; throws when an element is missing.
    init(window handle: UInt, make: (String, String) throws -> UnsafeMutablePointer<GstElement>) throws {
        let bin = gst_bin_new("video-window")!
        let convert = try make("videoconvert", "gstreamer1.0-plugins-base")
        let scale = try make("videoscale", "gstreamer1.0-plugins-base")
        let filter = try make("capsfilter", "gstreamer1.0 (core)")
        let crop = try make("videocrop", "gstreamer1.0-plugins-good")
        let sink = try make("ximagesink", "gstreamer1.0-x")
        pk_gst_set_bool(scale, "add-borders", 0)
        pk_gst_set_bool(sink, "force-aspect-ratio", 1)
        // Square screen pixels, as the layout assumes (ximagesink otherwise guesses the
        // screen's pixel aspect from its size in millimetres, which Xvfb makes up).
        pk_gst_set_string(sink, "pixel-aspect-ratio", "1/1")
        for element in [convert, scale, filter, crop, sink] { gst_bin_add(pk_gst_bin(bin), element) }
        guard gst_element_link(convert, scale) != 0, gst_element_link(scale, filter) != 0,
              gst_element_link(filter, crop) != 0, gst_element_link(crop, sink) != 0,
              let target = gst_element_get_static_pad(convert, "sink") else {
            gst_object_unref(bin)
            throw PlaybackError(code: .engine, message: "open: could not link the window output")
        }
        gst_element_add_pad(bin, gst_ghost_pad_new("sink", target))
        gst_object_unref(target)
        pk_gst_set_window_handle(sink, guintptr(handle))
        self.bin = pk_gst_element(gst_object_ref_sink(bin))!
        self.filter = filter
        self.crop = crop
        connection = X11Connection()
        window = handle
    }

    deinit { gst_object_unref(bin) }

    /// The window's size now (nil without a display or window).
    var windowSize: VideoSize? { connection?.size(of: window) }

    /// Sets the scale and crop for a `source` picture (display size) in the window by `mode`,
    /// when any of them changed since the last time.
    func layOut(source: VideoSize, mode: ScalingMode) {
        guard !source.isEmpty, let viewport = windowSize, !viewport.isEmpty else { return }
        if let applied, applied.source == source, applied.window == viewport, applied.mode == mode { return }
        applied = (source, viewport, mode)
        let layout = ScalingLayout(source: source, viewport: viewport, mode: mode)
        // The whole picture at the scale the mode gives it, then the part outside the window cut.
        let scaleX = Double(layout.content.width) / Double(max(1, layout.crop.width))
        let scaleY = Double(layout.content.height) / Double(max(1, layout.crop.height))
        let scaled = VideoSize(width: max(1, Int((Double(source.width) * scaleX).rounded())),
                               height: max(1, Int((Double(source.height) * scaleY).rounded())))
        let left = Int((Double(layout.crop.x) * scaleX).rounded())
        let top = Int((Double(layout.crop.y) * scaleY).rounded())
        let caps = pk_gst_caps_scaled(gint(scaled.width), gint(scaled.height))
        pk_gst_set_caps(filter, "caps", caps)
        gst_caps_unref(caps)
        pk_gst_set_int(crop, "left", gint(left))
        pk_gst_set_int(crop, "right", gint(max(0, scaled.width - layout.content.width - left)))
        pk_gst_set_int(crop, "top", gint(top))
        pk_gst_set_int(crop, "bottom", gint(max(0, scaled.height - layout.content.height - top)))
        pk_gst_reconfigure_upstream(filter)
        pk_gst_reconfigure_upstream(crop)
    }
}
#endif

#if GStreamer
import CGStreamer
import FoundationEssentials
import PlaybackKit

// What every element that reads the source, or what it leads to, is set up with: the app's
// HTTP headers, the certificate authorities, and the reference policy. playbin's own source
// comes through "source-setup"; the readers an adaptive demuxer makes for HLS segments come
// through "element-setup", alone or inside the bin the demuxer adds. decodebin is made to
// plug the HLS demuxer that reads its segments through such elements (hlsdemux) rather than
// the one with a downloader of its own (hlsdemux2, which sends no headers but User-Agent,
// Referer and cookies, and trusts only the system's authorities).
extension PipelineContext {
    /// Sets up `element` when it is a reader of a URI (souphttpsrc, filesrc, ...): headers
    /// and authorities for http(s); a reference the policy forbids is refused (the element never
    /// starts, so nothing is opened) and the play fails with `.forbiddenURL`.
    func configureReader(_ element: UnsafeMutablePointer<GstElement>) {
        guard let uri = pk_gst_source_uri(element) else { return }
        let location = String(cString: uri)
        g_free(uri)
        if let refusal = policy.refusal(of: location) {
            refuse(element, location: location, error: refusal)
            return
        }
        guard pk_gst_has_property(element, "extra-headers") != 0 else { return }
        if let tlsDatabase, pk_gst_has_property(element, "tls-database") != 0 {
            pk_gst_set_object(element, "tls-database", tlsDatabase)
        }
        if pk_gst_has_property(element, "ssl-strict") != 0 { pk_gst_set_bool(element, "ssl-strict", 1) }
        guard !options.httpHeaders.isEmpty else { return }
        // Keep what the demuxer set (Referer, Cache-Control) and add the app's headers.
        let headers = pk_gst_get_structure(element, "extra-headers") ?? gst_structure_new_empty("extra-headers")!
        for (name, value) in options.httpHeaders {
            // souphttpsrc sends its own User-Agent: replace it rather than send two.
            if name.lowercased() == "user-agent", pk_gst_has_property(element, "user-agent") != 0 {
                pk_gst_set_string(element, "user-agent", value)
            } else {
                pk_gst_structure_set_string(headers, name, value)
            }
        }
        pk_gst_set_structure(element, "extra-headers", headers)
        gst_structure_free(headers)
    }

    /// Sets up an element playbin plugged: decodebin passes over hlsdemux2 (and over
    /// gst-libav's demuxers where they may never end a file, see
    /// `GStreamerPipeline.libavDemuxersMayNotEnd`); a reader, or the readers inside a bin, are
    /// set up by `configureReader`.
    func configureNetworkElement(_ element: UnsafeMutablePointer<GstElement>) {
        if let factory = pk_gst_element_factory_name(element), strcmp(factory, "decodebin") == 0 {
            _ = pk_gst_decodebin_skip_factory(element, "hlsdemux2")
            if GStreamerPipeline.libavDemuxersMayNotEnd {
                _ = pk_gst_decodebin_skip_factory(element, "avdemux_*")
            }
            return
        }
        configureReader(element)
        pk_gst_bin_visit(element, { child, data in
            guard let child, let data else { return }
            Unmanaged<PipelineContext>.fromOpaque(data).takeUnretainedValue().configureReader(child)
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Stops `element` from opening `location` (its state is locked where it is, before it
    /// starts) and posts the refusal as an error of the playbin (an adaptive demuxer would
    /// take its own reader's error for a failed download and try the next).
    private func refuse(_ element: UnsafeMutablePointer<GstElement>, location: String, error: PlaybackError) {
        PlaybackLog.log(.info, "gstreamer", "refused to open \(location): \(error.message)")
        let first = refusal.withLock { held -> Bool in
            defer { if held == nil { held = error } }
            return held == nil
        }
        gst_element_set_locked_state(element, 1)
        if first, let playbin = UnsafeMutablePointer<GstElement>(bitPattern: playbinAddress) {
            pk_gst_post_resource_error(playbin, error.message)
        }
    }
}
#endif

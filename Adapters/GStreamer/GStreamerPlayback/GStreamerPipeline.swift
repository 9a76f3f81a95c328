#if GStreamer
import CGStreamer
import FoundationEssentials
import PlaybackKit

/// What the pipeline's C callbacks call. The pipeline keeps it alive and disconnects every
/// callback before the playbin is destroyed, so it outlives them all.
final class PipelineCallbacks: @unchecked Sendable {
    // @unchecked: the closures are set once in `init` and never change; each says on which
    // thread it runs. `bytesRead` is Locked.

    /// Bytes the source element has handed downstream so far (a pad probe counts them).
    let bytesRead = Locked<Int64>(0)

    /// A bus message, on the loop thread.
    let message: (UnsafeMutablePointer<GstMessage>) -> Void
    /// The video caps changed (on a streaming thread).
    let videoCapsChanged: @Sendable () -> Void
    /// A picture reached the appsink (on a streaming thread); `preroll` for a paused one.
    let sample: @Sendable (OpaquePointer, _ preroll: Bool) -> Void
    /// The source element was made (on the thread that links it).
    let sourceSetup: @Sendable (UnsafeMutablePointer<GstElement>) -> Void
    /// An element was added somewhere in the playbin.
    let elementSetup: @Sendable (UnsafeMutablePointer<GstElement>) -> Void

    /// Probes on the source's pad, removed by the pipeline before it is destroyed.
    let probes = Locked<[PadProbe]>([])

    init(message: @escaping (UnsafeMutablePointer<GstMessage>) -> Void,
         videoCapsChanged: @escaping @Sendable () -> Void,
         sample: @escaping @Sendable (OpaquePointer, Bool) -> Void,
         sourceSetup: @escaping @Sendable (UnsafeMutablePointer<GstElement>) -> Void,
         elementSetup: @escaping @Sendable (UnsafeMutablePointer<GstElement>) -> Void) {
        self.message = message
        self.videoCapsChanged = videoCapsChanged
        self.sample = sample
        self.sourceSetup = sourceSetup
        self.elementSetup = elementSetup
    }
}

/// A probe on a pad, with a reference to the pad.
struct PadProbe: @unchecked Sendable {
    // @unchecked: kept only inside a Locked list; the pad reference is released in `remove`.
    let pad: UnsafeMutablePointer<GstPad>
    let id: gulong

    func remove() {
        gst_pad_remove_probe(pad, id)
        gst_object_unref(pad)
    }
}

/// Owns one `playbin` and everything hanging off it: the sinks chosen by the options, the bus
/// watch on the player's loop context, the signal handlers and the appsink callbacks. Every
/// reference is dropped in `destroy()`, after the callbacks are disconnected and the pipeline
/// is in NULL.
final class GStreamerPipeline: @unchecked Sendable {
    // @unchecked: `playbin` is read by other threads only through `withPlaybin`, which holds
    // `lock`; everything else is touched on the loop thread (build and destroy).

    private let lock = MutexLock()
    private var playbin: UnsafeMutablePointer<GstElement>?
    private var bus: UnsafeMutablePointer<GstBus>?
    private var busWatch: UnsafeMutablePointer<GSource>?
    private var appSink: UnsafeMutablePointer<GstElement>?
    /// The decoded video stream's pad and its notify::caps handler (see `watchVideoStream`).
    private var videoStreamPad: (pad: UnsafeMutablePointer<GstPad>, handler: gulong)?
    private var signalHandlers: [(instance: gpointer, id: gulong)] = []
    private var callbacks: PipelineCallbacks?

    /// The pipeline as a GstElement, for the loop thread (nil once destroyed).
    private(set) var element: UnsafeMutablePointer<GstElement>?

    /// Builds a playbin for `uri` with sinks for `options`, and attaches its bus to `context`.
    /// Throws `PlaybackError(.backendUnavailable)` when a needed element is not installed.
    init(uri: String, options: PlaybackOptions, context: OpaquePointer, callbacks: PipelineCallbacks) throws {
        self.callbacks = callbacks
        guard let made = gst_element_factory_make("playbin", "player") else {
            throw PlaybackError(code: .backendUnavailable, message: "open: the GStreamer element 'playbin' is not installed (gstreamer1.0-plugins-base)")
        }
        let playbin = pk_gst_element(gst_object_ref_sink(made))!
        self.playbin = playbin
        self.element = playbin
        let userData = Unmanaged.passUnretained(callbacks).toOpaque()

        do {
            pk_gst_set_string(playbin, "uri", uri)
            try configureVideo(options.videoOutput, playbin: playbin, userData: userData)
            try configureAudio(options.audioOutput, playbin: playbin)
            if let cap = options.maxBufferBytes, cap > 0 {
                pk_gst_set_int(playbin, "buffer-size", gint(clamping: cap))
            }
        } catch {
            destroy()
            throw error
        }

        signalHandlers.append((UnsafeMutableRawPointer(playbin), pk_gst_connect_source_setup(playbin, { _, source, data in
            guard let data, let source else { return }
            Unmanaged<PipelineCallbacks>.fromOpaque(data).takeUnretainedValue().sourceSetup(source)
        }, userData)))
        // The bytes the source delivers, pushed or pulled, counted where they leave it.
        signalHandlers.append((UnsafeMutableRawPointer(playbin), pk_gst_connect_source_setup(playbin, { _, source, data in
            guard let data, let source, let pad = gst_element_get_static_pad(source, "src") else { return }
            let mask = GstPadProbeType(rawValue: GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_BUFFER_LIST.rawValue)
            let id = gst_pad_add_probe(pad, mask, { _, info, data in
                guard let info, let data else { return GST_PAD_PROBE_OK }
                let count = Int64(pk_gst_probe_info_byte_count(info))
                Unmanaged<PipelineCallbacks>.fromOpaque(data).takeUnretainedValue().bytesRead.withLock { $0 += count }
                return GST_PAD_PROBE_OK
            }, data, nil)
            Unmanaged<PipelineCallbacks>.fromOpaque(data).takeUnretainedValue().probes.withLock { $0.append(PadProbe(pad: pad, id: id)) }
        }, userData)))
        signalHandlers.append((UnsafeMutableRawPointer(playbin), pk_gst_connect_element_setup(playbin, { _, element, data in
            guard let data, let element else { return }
            Unmanaged<PipelineCallbacks>.fromOpaque(data).takeUnretainedValue().elementSetup(element)
        }, userData)))

        let bus = gst_element_get_bus(playbin)!
        self.bus = bus
        busWatch = pk_gst_bus_attach_watch(bus, context, { _, message, data in
            guard let data, let message else { return 1 }
            Unmanaged<PipelineCallbacks>.fromOpaque(data).takeUnretainedValue().message(message)
            return 1  // keep watching
        }, userData)
    }

    deinit { destroy() }

    // MARK: - Sinks

    private func configureVideo(_ output: VideoOutput, playbin: UnsafeMutablePointer<GstElement>, userData: UnsafeMutableRawPointer) throws {
        let sink: UnsafeMutablePointer<GstElement>
        switch output {
        case .frames:
            sink = try makeFrameSinkBin(userData: userData)
        case .none:
            // Decoded pictures are kept (last-sample) but never converted unless a thumbnail
            // asks for one.
            sink = try Self.make("fakesink", "video-discard", package: "gstreamer1.0-plugins-base")
            pk_gst_set_bool(sink, "sync", 1)
            pk_gst_set_bool(sink, "enable-last-sample", 1)
        case .window(let handle):
            sink = try Self.make("autovideosink", "video-window", package: "gstreamer1.0-plugins-good")
            pk_gst_set_window_handle(playbin, guintptr(handle))
        }
        pk_gst_set_object(playbin, "video-sink", sink)
        signalHandlers.append((UnsafeMutableRawPointer(playbin), pk_gst_connect_plain(playbin, "video-changed", { _, data in
            guard let data else { return }
            Unmanaged<PipelineCallbacks>.fromOpaque(data).takeUnretainedValue().videoCapsChanged()
        }, userData)))
    }

    /// videoconvert ! videoscale ! capsfilter(RGBA, square pixels) ! appsink: natural-size
    /// RGBA pictures (videoscale stretches the width to undo a non-square pixel aspect).
    private func makeFrameSinkBin(userData: UnsafeMutableRawPointer) throws -> UnsafeMutablePointer<GstElement> {
        let bin = gst_bin_new("video-frames")!
        let convert = try Self.make("videoconvert", nil, package: "gstreamer1.0-plugins-base")
        let scale = try Self.make("videoscale", nil, package: "gstreamer1.0-plugins-base")
        let filter = try Self.make("capsfilter", nil, package: "gstreamer1.0 (core)")
        let sink = try Self.make("appsink", "frames", package: "gstreamer1.0-plugins-base")
        let caps = pk_gst_caps_rgba(0, 0)
        pk_gst_set_caps(filter, "caps", caps)
        pk_gst_set_caps(sink, "caps", caps)
        gst_caps_unref(caps)
        pk_gst_set_bool(sink, "sync", 1)
        pk_gst_set_bool(sink, "enable-last-sample", 1)
        pk_gst_set_bool(sink, "emit-signals", 0)
        for element in [convert, scale, filter, sink] { gst_bin_add(pk_gst_bin(bin), element) }
        guard gst_element_link(convert, scale) != 0, gst_element_link(scale, filter) != 0,
              gst_element_link(filter, sink) != 0,
              let target = gst_element_get_static_pad(convert, "sink") else {
            gst_object_unref(bin)
            throw PlaybackError(code: .engine, message: "open: could not link the frame output")
        }
        gst_element_add_pad(bin, gst_ghost_pad_new("sink", target))
        gst_object_unref(target)
        appSink = pk_gst_element(gst_object_ref(sink))
        pk_gst_app_sink_set_callbacks(pk_gst_app_sink(sink), { appSink, data in
            GStreamerPipeline.pull(appSink, data, preroll: true)
        }, { appSink, data in
            GStreamerPipeline.pull(appSink, data, preroll: false)
        }, userData)
        return bin
    }

    private static func pull(_ appSink: UnsafeMutablePointer<GstAppSink>?, _ data: gpointer?, preroll: Bool) -> GstFlowReturn {
        guard let appSink, let data else { return GST_FLOW_OK }
        let sample = preroll ? gst_app_sink_pull_preroll(appSink) : gst_app_sink_pull_sample(appSink)
        guard let sample else { return GST_FLOW_OK }
        Unmanaged<PipelineCallbacks>.fromOpaque(data).takeUnretainedValue().sample(sample, preroll)
        gst_sample_unref(sample)
        return GST_FLOW_OK
    }

    private func configureAudio(_ output: AudioOutput, playbin: UnsafeMutablePointer<GstElement>) throws {
        let sink: UnsafeMutablePointer<GstElement>
        switch output {
        case .system:
            sink = try Self.make("autoaudiosink", "audio-out", package: "gstreamer1.0-plugins-good")
        case .null:
            // Discarded, but synchronised to the clock so playback runs at real time.
            sink = try Self.make("fakesink", "audio-discard", package: "gstreamer1.0-plugins-base")
            pk_gst_set_bool(sink, "sync", 1)
        }
        pk_gst_set_object(playbin, "audio-sink", sink)
        // Keeps the pitch at other rates (passes through at rate 1).
        if let tempo = gst_element_factory_make("scaletempo", nil) {
            pk_gst_set_object(playbin, "audio-filter", tempo)
        }
    }

    private static func make(_ factory: String, _ name: String?, package: String) throws -> UnsafeMutablePointer<GstElement> {
        guard let element = gst_element_factory_make(factory, name) else {
            throw PlaybackError(code: .backendUnavailable, message: "open: the GStreamer element '\(factory)' is not installed (\(package))")
        }
        return element
    }

    // MARK: - Access

    /// Runs `body` with a reference to the playbin that stays valid while it runs, from any
    /// thread; nil once destroyed.
    func withPlaybin<T>(_ body: (UnsafeMutablePointer<GstElement>) -> T) -> T? {
        let held: UnsafeMutablePointer<GstElement>? = lock.withLock {
            guard let playbin else { return nil }
            return pk_gst_element(gst_object_ref(playbin))
        }
        guard let held else { return nil }
        defer { gst_object_unref(held) }
        return body(held)
    }

    /// Follows the caps of the playing video stream as decoded, before playbin's sink chain
    /// (a window sink's input is already scaled to the window): notify::caps on that pad calls
    /// `videoCapsChanged`. Call on the loop thread once prerolled and when streams change.
    func watchVideoStream() {
        guard let playbin, let callbacks else { return }
        let current = max(0, pk_gst_get_int(playbin, "current-video"))
        let pad = pk_gst_playbin_video_pad(playbin, current)
        if let pad, pad == videoStreamPad?.pad {
            gst_object_unref(pad)
            return
        }
        unwatchVideoStream()
        guard let pad else { return }
        let userData = Unmanaged.passUnretained(callbacks).toOpaque()
        let handler = pk_gst_connect_notify(pad, "notify::caps", { _, _, data in
            guard let data else { return }
            Unmanaged<PipelineCallbacks>.fromOpaque(data).takeUnretainedValue().videoCapsChanged()
        }, userData)
        videoStreamPad = (pad, handler)
    }

    private func unwatchVideoStream() {
        guard let watched = videoStreamPad else { return }
        g_signal_handler_disconnect(watched.pad, watched.handler)
        gst_object_unref(watched.pad)
        videoStreamPad = nil
    }

    /// Bytes read from the source so far.
    var bytesRead: Int64 { callbacks?.bytesRead.get() ?? 0 }

    /// The caps of the playing video stream now (decoded size and pixel aspect), owned by the
    /// caller; nil without video.
    func currentVideoCaps() -> UnsafeMutablePointer<GstCaps>? {
        guard let pad = videoStreamPad?.pad else { return nil }
        return gst_pad_get_current_caps(pad)
    }

    // MARK: - Teardown

    /// Disconnects every callback, sets the pipeline to NULL and drops every reference. Runs
    /// on the loop thread (or in deinit); safe to call twice.
    func destroy() {
        guard let playbin else { return }
        // Other threads get no new reference from here on (`withPlaybin`).
        lock.withLock {
            self.playbin = nil
            self.element = nil
        }
        if let busWatch {
            g_source_destroy(busWatch)
            g_source_unref(busWatch)
            self.busWatch = nil
        }
        for handler in signalHandlers { g_signal_handler_disconnect(handler.instance, handler.id) }
        signalHandlers = []
        unwatchVideoStream()
        callbacks?.probes.withLock { probes in
            probes.forEach { $0.remove() }
            probes = []
        }
        if let appSink { pk_gst_app_sink_set_callbacks(pk_gst_app_sink(appSink), nil, nil, nil) }
        // Joins the streaming threads: no callback runs after this.
        gst_element_set_state(playbin, GST_STATE_NULL)
        if let bus {
            gst_bus_set_flushing(bus, 1)
            gst_object_unref(bus)
            self.bus = nil
        }
        if let appSink {
            gst_object_unref(appSink)
            self.appSink = nil
        }
        gst_object_unref(playbin)
        callbacks = nil
    }
}
#endif

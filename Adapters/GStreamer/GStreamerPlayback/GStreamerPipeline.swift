#if GStreamer
import CGStreamer
import FoundationEssentials
import PlaybackKit

/// Owns one `playbin` and everything hanging off it: the sinks chosen by the options, the bus
/// watch on the player's loop context, the signal handlers, the appsink callbacks, the source
/// element and the demuxers playbin plugs. It is the only place GStreamer is called from:
/// the session drives it through typed methods (GStreamerPipeline+Control.swift) and hears
/// from it in Swift values (`PipelineMessage`, `PipelineSample`), and no GStreamer pointer
/// leaves it. Every reference is dropped in `destroy()`, after the callbacks are disconnected
/// and the pipeline is in NULL.
final class GStreamerPipeline: @unchecked Sendable {
    // @unchecked: `playbin` is read by other threads only through `withPlaybin`, which holds
    // `lock`; everything else is touched on the loop thread (build, video stream watch,
    // destroy); what streaming threads reach is in `context` (immutable or Locked).

    private let lock = MutexLock()
    private var playbin: UnsafeMutablePointer<GstElement>?
    private var bus: UnsafeMutablePointer<GstBus>?
    private var busWatch: UnsafeMutablePointer<GSource>?
    private var appSink: UnsafeMutablePointer<GstElement>?
    /// The decoded video stream's pad, its notify::caps handler and the probe keeping its
    /// pictures before subtitles are drawn (see `watchVideoStream`).
    private var videoStreamPad: (pad: UnsafeMutablePointer<GstPad>, handler: gulong, probe: gulong)?
    private var signalHandlers: [(instance: gpointer, id: gulong)] = []
    let context: PipelineContext

    /// Builds a playbin for `uri` with sinks for `options`, and attaches its bus to
    /// `loopContext` (a GMainContext). `onMessage` hears the bus on the loop thread,
    /// `onVideoCapsChanged` the decoded video caps changing (any thread), `onSample` each
    /// picture the `.frames` sink receives (on a streaming thread; `preroll` for a paused one).
    /// `turnsUpright`: pictures are turned by the stream's orientation tag (false when the
    /// media is known to have none: the turning element costs memory even when it turns nothing).
    /// Throws `PlaybackError(.backendUnavailable)` when a needed element is not installed.
    init(uri: String, options: PlaybackOptions, sourceIsRemote: Bool, turnsUpright: Bool, policy: ReferencePolicy,
         loopContext: OpaquePointer,
         onMessage: @escaping (PipelineMessage) -> Void,
         onVideoCapsChanged: @escaping @Sendable () -> Void,
         onSample: @escaping @Sendable (PipelineSample, _ preroll: Bool) -> Void) throws {
        guard let made = gst_element_factory_make("playbin", "player") else {
            throw PlaybackError(code: .backendUnavailable, message: "open: the GStreamer element 'playbin' is not installed (gstreamer1.0-plugins-base)")
        }
        // https: the system's authorities and the app's, in one file (ssl-ca-file replaces the system's).
        let authorities = try options.tlsCertificateAuthorities.map { url throws(PlaybackError) in try TLSTrust.bundle(adding: url).path }
        let playbin = pk_gst_element(gst_object_ref_sink(made))!
        self.playbin = playbin
        context = PipelineContext(options: options, sourceIsRemote: sourceIsRemote, turnsUpright: turnsUpright, policy: policy,
                                  certificateAuthorities: authorities,
                                  playbinAddress: UInt(bitPattern: playbin), message: onMessage,
                                  videoCapsChanged: onVideoCapsChanged, sample: onSample)
        let userData = Unmanaged.passUnretained(context).toOpaque()

        do {
            pk_gst_set_string(playbin, "uri", uri)
            try configureVideo(options.videoOutput, playbin: playbin, userData: userData)
            try configureAudio(options.audioOutput, playbin: playbin)
            if let cap = options.maxBufferBytes, cap > 0 {
                // The download queue's share of the cap (see PipelineContext.elementMade).
                pk_gst_set_int(playbin, "buffer-size", gint(clamping: cap / 4))
            }
        } catch {
            destroy()
            throw error
        }

        signalHandlers.append((UnsafeMutableRawPointer(playbin), pk_gst_connect_source_setup(playbin, { _, source, data in
            guard let data, let source else { return }
            Unmanaged<PipelineContext>.fromOpaque(data).takeUnretainedValue().sourceMade(source)
        }, userData)))
        signalHandlers.append((UnsafeMutableRawPointer(playbin), pk_gst_connect_element_setup(playbin, { _, element, data in
            guard let data, let element else { return }
            Unmanaged<PipelineContext>.fromOpaque(data).takeUnretainedValue().elementMade(element)
        }, userData)))

        let bus = gst_element_get_bus(playbin)!
        self.bus = bus
        busWatch = pk_gst_bus_attach_watch(bus, loopContext, { _, message, data in
            guard let data, let message else { return 1 }
            let context = Unmanaged<PipelineContext>.fromOpaque(data).takeUnretainedValue()
            if let translated = PipelineMessage(message, context: context) {
                context.message(translated)
            }
            return 1  // keep watching
        }, userData)
    }

    deinit { destroy() }

    // MARK: - Sinks

    private func configureVideo(_ output: VideoOutput, playbin: UnsafeMutablePointer<GstElement>, userData: UnsafeMutableRawPointer) throws {
        let sink: UnsafeMutablePointer<GstElement>
        switch output {
        case .frames:
            sink = try makeFrameSinkBin(yuv: false, userData: userData)
        case .yuvFrames:
            sink = try makeFrameSinkBin(yuv: true, userData: userData)
        case .none:
            // Decoded pictures are kept (last-sample) but never converted unless a thumbnail
            // asks for one.
            sink = try Self.make("fakesink", "video-discard", package: "gstreamer1.0-plugins-base")
            pk_gst_set_bool(sink, "sync", 1)
            pk_gst_set_bool(sink, "enable-last-sample", 1)
        case .window:
            // The decoder's pictures, drawn into the window by the session's presenter.
            sink = try makeFrameSinkBin(yuv: true, userData: userData)
        }
        pk_gst_set_object(playbin, "video-sink", sink)
        // Interlaced pictures are handed on as decoded (both fields woven into one picture, one
        // per coded frame), as the other engines hand them on: playsink's deinterlacer (on by
        // default) doubles the rate (50 pictures a second for 25i) and blends the fields.
        pk_gst_set_uint(playbin, "flags", pk_gst_get_uint(playbin, "flags") & ~Self.deinterlaceFlag)
        // Turns pictures upright by the stream's orientation tag (a display matrix: phone
        // recordings), as the other engines do. Only where a turn may come: even passing
        // pictures through untouched, the element has the decoder keep more of them (13 to 19
        // MiB more at 1080p, in gst-launch-1.0 alone too).
        if context.turnsUpright, let flip = gst_element_factory_make("videoflip", "video-upright") {
            pk_gst_set_enum_nick(flip, "video-direction", "auto")
            pk_gst_set_object(playbin, "video-filter", flip)
        }
        signalHandlers.append((UnsafeMutableRawPointer(playbin), pk_gst_connect_plain(playbin, "video-changed", { _, data in
            guard let data else { return }
            Unmanaged<PipelineContext>.fromOpaque(data).takeUnretainedValue().videoCapsChanged()
        }, userData)))
    }

    /// videoconvert ! capsfilter ! appsink, the decoder's pictures at their stored size: for
    /// `.frames`, in any format the picture converter reads (which converts and scales them
    /// to RGBA at the display size in one pass); for `yuv`, I420 or NV12. videoconvert passes
    /// a decoder's buffer in one of those formats through untouched and converts only others.
    private func makeFrameSinkBin(yuv: Bool, userData: UnsafeMutableRawPointer) throws -> UnsafeMutablePointer<GstElement> {
        let bin = gst_bin_new("video-frames")!
        let convert = try Self.make("videoconvert", nil, package: "gstreamer1.0-plugins-base")
        let filter = try Self.make("capsfilter", nil, package: "gstreamer1.0 (core)")
        let sink = try Self.make("appsink", "frames", package: "gstreamer1.0-plugins-base")
        let caps = yuv ? gst_caps_from_string("video/x-raw,format=(string){I420,NV12}")! : GStreamerFrames.converterCaps()
        pk_gst_set_caps(filter, "caps", caps)
        pk_gst_set_caps(sink, "caps", caps)
        gst_caps_unref(caps)
        pk_gst_set_bool(sink, "sync", 1)
        // As a video sink: a picture more than 20 ms late is left out, and the decoder is told
        // (QoS) so it can skip work. An appsink renders every picture however late by default,
        // so a handler slower than the frame rate made the pictures fall ever further behind
        // the clock (0.6x).
        pk_gst_set_int64(sink, "max-lateness", Self.maxLateness)
        pk_gst_set_bool(sink, "qos", 1)
        pk_gst_set_bool(sink, "enable-last-sample", 1)
        pk_gst_set_bool(sink, "emit-signals", 0)
        let chain = [convert, filter, sink]
        for element in chain { gst_bin_add(pk_gst_bin(bin), element) }
        guard zip(chain, chain.dropFirst()).allSatisfy({ gst_element_link($0, $1) != 0 }),
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
        let context = Unmanaged<PipelineContext>.fromOpaque(data).takeUnretainedValue()
        if !(preroll && context.holdsFirstPreroll(sample)) {
            context.sample(PipelineSample(sample, origin: context.timelineOrigin.get()), preroll)
        }
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

    /// How late (nanoseconds) a picture may reach the frame output and still be handed on:
    /// what GStreamer's video sinks allow.
    private static let maxLateness: gint64 = 20_000_000

    /// playbin's GST_PLAY_FLAG_DEINTERLACE.
    private static let deinterlaceFlag: guint = 0x200

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

    // MARK: - The decoded video stream

    /// Follows the caps of the playing video stream as decoded, before playbin's sink chain
    /// (a window sink's input is already scaled to the window): notify::caps on that pad calls
    /// `onVideoCapsChanged`; a buffer probe there keeps the last pictures before subtitles are
    /// drawn on them, for thumbnails (`UndrawnPictures`). Call on the loop thread once
    /// prerolled and when streams change.
    func watchVideoStream() {
        guard let playbin else { return }
        let current = max(0, pk_gst_get_int(playbin, "current-video"))
        let pad = pk_gst_playbin_video_pad(playbin, current)
        if let pad, pad == videoStreamPad?.pad {
            gst_object_unref(pad)
            return
        }
        unwatchVideoStream()
        guard let pad else { return }
        let userData = Unmanaged.passUnretained(context).toOpaque()
        let handler = pk_gst_connect_notify(pad, "notify::caps", { _, _, data in
            guard let data else { return }
            Unmanaged<PipelineContext>.fromOpaque(data).takeUnretainedValue().videoCapsChanged()
        }, userData)
        let probe = gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, { pad, info, data in
            guard let pad, let info, let data, let buffer = pk_gst_probe_info_buffer(info) else { return GST_PAD_PROBE_OK }
            let context = Unmanaged<PipelineContext>.fromOpaque(data).takeUnretainedValue()
            context.undrawnPictures.withLock { pictures in
                guard pictures.isKeeping, let caps = gst_pad_get_current_caps(pad) else { return }
                pictures.append(buffer, caps: caps)
            }
            return GST_PAD_PROBE_OK
        }, userData, nil)
        videoStreamPad = (pad, handler, probe)
    }

    private func unwatchVideoStream() {
        guard let watched = videoStreamPad else { return }
        g_signal_handler_disconnect(watched.pad, watched.handler)
        gst_pad_remove_probe(watched.pad, watched.probe)
        gst_object_unref(watched.pad)
        videoStreamPad = nil
    }

    /// The display size of the watched video stream as decoded now (its size with the pixel
    /// aspect applied, turned as its orientation tag asks, as `videoflip` turns the pictures);
    /// nil without video. Loop thread.
    func currentNaturalSize() -> VideoSize? {
        guard let pad = videoStreamPad?.pad, let caps = gst_pad_get_current_caps(pad) else { return nil }
        defer { gst_caps_unref(caps) }
        // Without videoflip the pictures come as stored, and so does the size.
        let turn = context.turnsUpright ? Int(pk_gst_pad_orientation_turn(pad)) : 0
        context.uprightTurn.set(turn)
        return GStreamerFrames.naturalSize(of: caps, turnedBy: turn)
    }

    /// The decoded video stream's frames per second, from its caps; nil when unknown.
    func currentFrameRate() -> Double? {
        guard let pad = videoStreamPad?.pad, let caps = gst_pad_get_current_caps(pad) else { return nil }
        defer { gst_caps_unref(caps) }
        return GStreamerFrames.frameRate(of: caps)
    }

    /// Drops the messages waiting on the bus (those of streams just shut down by a change to
    /// READY, such as a "stream stopped" error). Loop thread.
    func dropPendingMessages() {
        guard let bus else { return }
        gst_bus_set_flushing(bus, 1)
        gst_bus_set_flushing(bus, 0)
    }

    // MARK: - Teardown

    /// Disconnects every callback, sets the pipeline to NULL and drops every reference. Runs
    /// on the loop thread (or in deinit); safe to call twice.
    func destroy() {
        guard let playbin else { return }
        // Other threads get no new reference from here on (`withPlaybin`).
        lock.withLock { self.playbin = nil }
        if let busWatch {
            g_source_destroy(busWatch)
            g_source_unref(busWatch)
            self.busWatch = nil
        }
        for handler in signalHandlers { g_signal_handler_disconnect(handler.instance, handler.id) }
        signalHandlers = []
        unwatchVideoStream()
        context.probes.withLock { probes in
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
        context.releaseElements()
        context.undrawnPictures.withLock { $0.keep(false) }
        gst_object_unref(playbin)
    }
}

// MARK: - What the C callbacks reach

/// What the pipeline's C callbacks reach through their user data: the session's closures,
/// the options the source and the queues are set up by, and what the callbacks collect (the
/// source element, the demuxers, the probes counting bytes). The pipeline keeps it alive and
/// disconnects every callback before the playbin is destroyed, so it outlives them all.
final class PipelineContext: @unchecked Sendable {
    // @unchecked: the closures and options are set once in `init` and never change (each
    // closure says on which thread it runs); everything else is Locked.

    let options: PlaybackOptions
    /// Resource errors are network errors.
    let sourceIsRemote: Bool
    /// What the source may lead the pipeline to open.
    let policy: ReferencePolicy
    /// The authorities https readers trust when the app added its own (a GTlsDatabase of the
    /// system's and the app's), released with the context.
    let tlsDatabase: gpointer?
    /// The first reference refused (see `configureReader`): the play fails with it.
    let refusal = Locked<PlaybackError?>(nil)
    /// The playbin's address, telling its own messages from its children's.
    let playbinAddress: UInt
    /// A bus message, on the loop thread.
    let message: (PipelineMessage) -> Void
    /// The video caps changed (on a streaming thread or the loop thread).
    let videoCapsChanged: @Sendable () -> Void
    /// A picture reached the appsink (on a streaming thread); `preroll` for a paused one.
    let sample: @Sendable (PipelineSample, _ preroll: Bool) -> Void

    /// The last decoded pictures before subtitles are drawn on them (filled by a probe on
    /// the video stream's pad while subtitles show).
    let undrawnPictures = Locked(UndrawnPictures())
    /// Where the media starts on the stream's timeline, seconds: 0 for most containers; the
    /// first timestamp for MPEG program and transport streams, whose demuxers keep the
    /// timestamps as muxed (0.5 s and more in). Positions, seeks and picture times are
    /// moved by it, so that the media's timeline starts at 0 on every engine. Set once
    /// prerolled (`measureTimelineOrigin`), read by streaming threads.
    let timelineOrigin = Locked<TimeInterval>(0)
    /// Whether `timelineOrigin` is measured yet, and the first prerolled picture, held until
    /// it is: stamped before, it would carry the stream's own time (0.78 s for an MPEG-TS
    /// whose first picture is at 0).
    private let firstPreroll = Locked<(measured: Bool, held: RetainedSample?)>((false, nil))
    /// Whether playbin turns pictures upright (`videoflip` by the orientation tag).
    let turnsUpright: Bool
    /// The clockwise turn `videoflip` gives the playing video stream's pictures (its
    /// orientation tag), as last read on the loop thread; 0 without `turnsUpright`.
    let uprightTurn = Locked(0)
    /// Bytes the source element has handed downstream so far (a pad probe counts them).
    let bytesRead = Locked<Int64>(0)
    /// Probes on the source's pad, removed by the pipeline before it is destroyed.
    let probes = Locked<[PadProbe]>([])
    /// The source element, for its byte position and size.
    let source = Locked(ElementRef())
    /// Demuxers playbin plugged, watched while opening (`stoppedDemuxer()`).
    let demuxers = Locked<[ElementRef]>([])
    /// The text encoding of the local subtitle file playbin plays (the package's rule, since
    /// subparse's own guess may differ); nil without one. Set by `setSubtitleFile`.
    let subtitleEncoding = Locked<SubtitleEncoding?>(nil)

    init(options: PlaybackOptions, sourceIsRemote: Bool, turnsUpright: Bool, policy: ReferencePolicy,
         certificateAuthorities: String?, playbinAddress: UInt,
         message: @escaping (PipelineMessage) -> Void,
         videoCapsChanged: @escaping @Sendable () -> Void,
         sample: @escaping @Sendable (PipelineSample, Bool) -> Void) {
        self.options = options
        self.sourceIsRemote = sourceIsRemote
        self.turnsUpright = turnsUpright
        self.policy = policy
        tlsDatabase = certificateAuthorities.flatMap { pk_g_tls_file_database($0) }
        self.playbinAddress = playbinAddress
        self.message = message
        self.videoCapsChanged = videoCapsChanged
        self.sample = sample
    }

    deinit {
        if let tlsDatabase { g_object_unref(tlsDatabase) }
    }

    /// playbin made its source element (on the thread that links it): keeps it, counts the
    /// bytes it delivers, pushed or pulled, where they leave it, and sets it up as a reader
    /// (`configureReader`: headers, authorities).
    func sourceMade(_ element: UnsafeMutablePointer<GstElement>) {
        source.withLock { held in
            held.release()
            held.element = pk_gst_element(gst_object_ref(element))
        }
        if let pad = gst_element_get_static_pad(element, "src") {
            let mask = GstPadProbeType(rawValue: GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_BUFFER_LIST.rawValue)
            let id = gst_pad_add_probe(pad, mask, { _, info, data in
                guard let info, let data else { return GST_PAD_PROBE_OK }
                let count = Int64(pk_gst_probe_info_byte_count(info))
                Unmanaged<PipelineContext>.fromOpaque(data).takeUnretainedValue().bytesRead.withLock { $0 += count }
                return GST_PAD_PROBE_OK
            }, Unmanaged.passUnretained(self).toOpaque(), nil)
            probes.withLock { $0.append(PadProbe(pad: pad, id: id)) }
        }
        configureReader(element)
    }

    /// playbin added an element somewhere (on the thread that plugs it): remembers demuxers,
    /// sets up readers (`configureNetworkElement`) and caps the queues it makes on the
    /// read-ahead bound.
    func elementMade(_ element: UnsafeMutablePointer<GstElement>) {
        if let klass = pk_gst_element_klass(element), strstr(klass, "Demux") != nil {
            demuxers.withLock { $0.append(ElementRef(element: pk_gst_element(gst_object_ref(element)))) }
        }
        configureNetworkElement(element)
        let factory = pk_gst_element_factory_name(element).map { String(cString: $0) }
        if factory == "subparse", let encoding = subtitleEncoding.get() {
            pk_gst_set_string(element, "subtitle-encoding", encoding.rawValue)
        }
        guard let cap = options.maxBufferBytes, cap > 0, let factory else { return }
        // The cap is shared: a quarter for the download queue before the demuxer (playbin's
        // buffer-size, which it gives queue2), an eighth for each (audio, video) queue after it.
        let share: Int
        switch factory {
        case "queue2": share = cap / 4
        case "decodebin", "multiqueue": share = cap / 8
        default: return
        }
        if pk_gst_has_property(element, "max-size-bytes") != 0 {
            pk_gst_set_uint(element, "max-size-bytes", guint(clamping: share))
            PlaybackLog.log(.debug, "gstreamer", "\(factory): max-size-bytes \(share)")
        }
    }

    /// Drops the references to the source and the demuxers.
    func releaseElements() {
        source.withLock { $0.release() }
        demuxers.withLock { list in
            for index in list.indices { list[index].release() }
            list = []
        }
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

/// A GstElement reference owned by whoever holds this value.
struct ElementRef: @unchecked Sendable {
    // @unchecked: only ever used inside a Locked, which serialises every access.
    var element: UnsafeMutablePointer<GstElement>?
    mutating func release() {
        if let element { gst_object_unref(element) }
        element = nil
    }
}

// MARK: - The library

extension GStreamerPipeline {
    /// nil once `gst_init_check` succeeded (it runs once, on first access); else GStreamer's
    /// reason.
    static let initialisationError: String? = {
        var error: UnsafeMutablePointer<GError>?
        guard gst_init_check(nil, nil, &error) != 0 else {
            let text = error.map { String(cString: $0.pointee.message) } ?? "gst_init failed"
            if let error { g_error_free(error) }
            return text
        }
        return nil
    }()

    /// Whether gst-libav's demuxers (`avdemux_*`: GIF, NUT, APE, VOC and the other formats
    /// GStreamer has no demuxer of its own for) may never end a file: before 1.24 their read
    /// function answers 0 bytes at the end where libavformat 59 and later wait for
    /// `AVERROR_EOF`, so a demuxer that reads to the end asks again forever (a GIF plays on
    /// and never ends, a NUT file never opens, and one with raw pictures crashed in the
    /// demuxer's thread). decodebin passes over them then, and such a file fails at once with
    /// a missing-plugin error (`.unsupportedFormat`) that a fallback player moves on from.
    static let libavDemuxersMayNotEnd: Bool = {
        guard initialisationError == nil, let plugin = gst_registry_find_plugin(gst_registry_get(), "libav") else { return false }
        defer { gst_object_unref(UnsafeMutableRawPointer(plugin)) }
        guard let version = gst_plugin_get_version(plugin) else { return false }
        let parts = String(cString: version).split(separator: ".").map { Int($0) ?? 0 }
        let major = parts.first ?? 0, minor = parts.count > 1 ? parts[1] : 0
        return (major, minor) < (1, 24)
    }()

    /// GStreamer's version string, e.g. "GStreamer 1.22.0".
    static var libraryVersion: String {
        _ = initialisationError
        guard let text = gst_version_string() else { return "GStreamer" }
        defer { g_free(text) }
        return String(cString: text)
    }
}
extension PipelineContext {
    /// Holds the prerolled `sample` (a reference of its own) while the timeline's origin is
    /// not measured yet; false once it is (the sample is then handed on at once).
    func holdsFirstPreroll(_ sample: OpaquePointer) -> Bool {
        firstPreroll.withLock { state in
            guard !state.measured else { return false }
            state.held = RetainedSample(sample, origin: 0)
            return true
        }
    }

    /// Sets where the media starts on the stream's timeline, and hands on the prerolled
    /// picture held until then, stamped from it (on the calling thread).
    func setTimelineOrigin(_ origin: TimeInterval) {
        timelineOrigin.set(origin)
        let held = firstPreroll.withLock { state -> RetainedSample? in
            state.measured = true
            defer { state.held = nil }
            return state.held
        }
        held?.withSample { self.sample(PipelineSample($0, origin: origin), true) }
    }
}
#endif

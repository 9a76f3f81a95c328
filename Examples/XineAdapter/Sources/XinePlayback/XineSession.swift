import CXine
import FoundationEssentials
import PlaybackKit

// MARK: - The handles of one source

/// Every xine handle of one opened source, made together and freed in one place
/// (`close()`, or `deinit` for a session never closed), in the order xine needs: its own
/// engine instance (`xine_t`: xine's clock and speed belong to the instance, so players
/// sharing one would pause each other), the raw video output, the timestamp post plugin in
/// front of it, the "none" audio output, the stream and its event queue.
///
/// Every call into xine happens on the engine's queue, except the two callback contexts'
/// reads (`XineVideoOutput`, `XineEventListener`), which stop before the handles go.
final class XineSession {
    let xine: UnsafeMutablePointer<xine_t>
    let stream: UnsafeMutablePointer<xine_stream_t>
    private let videoPort: UnsafeMutablePointer<xine_video_port_t>
    private let timestamps: UnsafeMutablePointer<xine_post_t>
    private let audioPort: UnsafeMutablePointer<xine_audio_port_t>
    private let eventQueue: OpaquePointer
    /// The raw output's callback context; alive until the output is closed.
    let video: XineVideoOutput
    /// The event listener's context; alive until the event queue is disposed.
    let events: XineEventListener
    private var closed = false

    /// Makes the handles; `audio` chooses xine's audio output (`.null`: "none", which
    /// discards the sound at real time; `.system`: the one xine finds, else "none");
    /// `onEvent` hears every event on xine's listener thread.
    init(video: XineVideoOutput, audio: AudioOutput, onEvent: @escaping @Sendable (XineEvent) -> Void) throws {
        guard let xine = xine_new() else {
            throw PlaybackError(code: .backendUnavailable, message: "xine: xine_new() failed")
        }
        // No config file: the defaults of this xine-lib. Quiet: failures come back as errors.
        xine_engine_set_param(xine, XINE_ENGINE_PARAM_VERBOSITY, XINE_VERBOSITY_NONE)
        Self.initialize(xine)
        Self.configure(xine)
        let context = Unmanaged.passUnretained(video).toOpaque()
        guard let videoPort = pkx_open_raw_video(xine, context, XineVideoOutput.frameCallback, XineVideoOutput.overlayCallback) else {
            Self.exit(xine)
            throw PlaybackError(code: .backendUnavailable, message: "xine: no raw video output (xineplug_vo_out_raw, libxine2-misc-plugins)")
        }
        pkx_register_timestamps(xine)
        guard let timestamps = pkx_open_timestamps(xine, videoPort) else {
            xine_close_video_driver(xine, videoPort)
            Self.exit(xine)
            throw PlaybackError(code: .engine, message: "xine: cannot open the timestamp post plugin")
        }
        let found = audio == .system ? xine_open_audio_driver(xine, nil, nil) : nil
        guard let audioPort = found ?? xine_open_audio_driver(xine, "none", nil) else {
            xine_post_dispose(xine, timestamps)
            xine_close_video_driver(xine, videoPort)
            Self.exit(xine)
            throw PlaybackError(code: .backendUnavailable, message: "xine: no \"none\" audio output")
        }
        guard let stream = xine_stream_new(xine, audioPort, pkx_timestamps_input(timestamps)) else {
            xine_close_audio_driver(xine, audioPort)
            xine_post_dispose(xine, timestamps)
            xine_close_video_driver(xine, videoPort)
            Self.exit(xine)
            throw PlaybackError(code: .engine, message: "xine: xine_stream_new() failed")
        }
        let listener = XineEventListener(onEvent)
        guard let eventQueue = xine_event_new_queue(stream),
              xine_event_create_listener_thread(eventQueue, XineEventListener.callback,
                                                Unmanaged.passUnretained(listener).toOpaque()) == 1 else {
            xine_dispose(stream)
            xine_close_audio_driver(xine, audioPort)
            xine_post_dispose(xine, timestamps)
            xine_close_video_driver(xine, videoPort)
            Self.exit(xine)
            throw PlaybackError(code: .engine, message: "xine: cannot listen to the stream's events")
        }
        self.xine = xine
        self.videoPort = videoPort
        self.timestamps = timestamps
        self.audioPort = audioPort
        self.stream = stream
        self.eventQueue = OpaquePointer(eventQueue)
        self.video = video
        self.events = listener
        video.attach(stream, timestamps: timestamps)
        listener.attach(stream)
    }

    deinit { close() }

    /// Whether an engine instance of this process has written xine's plugin cache; its lock
    /// also keeps the making and ending of engine instances one at a time.
    private static let wroteCache = Locked(false)

    /// xine_init, one instance at a time. Every xine_init writes xine's plugin cache
    /// (~/.cache/xine-lib/plugins.cache) through one temporary file of a fixed name, so two at
    /// once in a process leave a cache that lacks plugins (every later xine_open then finds no
    /// demuxer, in every process, until the cache is deleted). The first instance of the
    /// process brings the cache up to date; the others only read it (XINE_FLAG_NO_WRITE_CACHE).
    ///
    /// The input plugins are loaded here too (listing those that can autoplay loads them all):
    /// xine loads each instance's input plugins on its first open otherwise, and the SMB input
    /// sets up libsmbclient's process-wide state as it loads; two instances doing so at once
    /// end the process ("Bad talloc magic value", eight players opening together).
    private static func initialize(_ xine: UnsafeMutablePointer<xine_t>) {
        wroteCache.withLock { wrote in
            if wrote { xine_set_flags(xine, XINE_FLAG_NO_WRITE_CACHE) }
            xine_init(xine)
            _ = xine_get_autoplay_input_plugin_ids(xine)
            wrote = true
        }
    }

    /// xine_exit, one instance at a time (it unloads the plugins: see `initialize`).
    private static func exit(_ xine: UnsafeMutablePointer<xine_t>) {
        wroteCache.withLock { _ in xine_exit(xine) }
    }

    /// Settings of this xine-lib that the adapter changes (a decoder's priority only ever
    /// chooses among plugins that take the codec):
    /// - xine's dav1d decoder plugin ends the process with a segmentation fault in libdav1d's
    ///   worker thread on the suite's AV1 clip, so AV1 goes to its libaom plugin instead;
    /// - its jpeg plugin (over libjpeg) ends the process (libjpeg's default error handler calls `exit`,
    ///   "Not a JPEG file: starts with 0x28 0x00") on Motion JPEG in QuickTime, so Motion
    ///   JPEG goes to its ffmpeg plugin.
    private static func configure(_ xine: UnsafeMutablePointer<xine_t>) {
        for (plugin, priority) in [("libaom", 10), ("jpeg", 1), ("image", 1)] {
            var entry = xine_cfg_entry_t()
            guard xine_config_lookup_entry(xine, "engine.decoder_priorities.\(plugin)", &entry) == 1 else { continue }
            entry.num_value = Int32(priority)
            xine_config_update_entry(xine, &entry)
        }
    }

    /// Stops playback and frees every handle; later calls do nothing. The callbacks are
    /// stopped first: the video output's context lets go of the stream, the event queue's
    /// listener thread is joined, and the outputs (with their threads) are closed before the
    /// engine instance goes.
    func close() {
        guard !closed else { return }
        closed = true
        video.detach()
        events.detach()
        xine_close(stream)
        xine_event_dispose_queue(UnsafeMutablePointer<xine_event_queue_t>(eventQueue))
        xine_dispose(stream)
        xine_close_audio_driver(xine, audioPort)
        xine_post_dispose(xine, timestamps)
        xine_close_video_driver(xine, videoPort)
        Self.exit(xine)
    }

    // MARK: - What the stream says

    /// One of the stream's XINE_STREAM_INFO_* values.
    func info(_ key: Int32) -> Int { Int(xine_get_stream_info(stream, key)) }

    /// The stream's length in seconds, 0 while unknown.
    var length: TimeInterval {
        var position: Int32 = 0, time: Int32 = 0, length: Int32 = 0
        guard xine_get_pos_length(stream, &position, &time, &length) == 1 else { return 0 }
        return TimeInterval(length) / 1000
    }

    /// The media time of the picture (or, without video, the sound) xine presented last, in
    /// seconds: the demuxer's time of the data it came from (xine_get_pos_length's pos_time,
    /// in milliseconds). Nil while xine does not know it yet (just after a seek).
    var position: TimeInterval? {
        var position: Int32 = 0, time: Int32 = 0, length: Int32 = 0
        guard xine_get_pos_length(stream, &position, &time, &length) == 1, time >= 0 else { return nil }
        return TimeInterval(time) / 1000
    }

    /// True while the stream plays (or is paused in play); false once it ended or stopped.
    var isInPlay: Bool { xine_get_status(stream) == XINE_STATUS_PLAY }

    /// The tags xine's demuxer read (`xine_get_meta_info`): the six `XINE_META_INFO_*` fields
    /// that have a common tag's name, under that name.
    var tags: [String: String] {
        let fields: [(name: String, info: Int32)] = [
            ("title", XINE_META_INFO_TITLE), ("artist", XINE_META_INFO_ARTIST), ("album", XINE_META_INFO_ALBUM),
            ("genre", XINE_META_INFO_GENRE), ("date", XINE_META_INFO_YEAR), ("comment", XINE_META_INFO_COMMENT),
        ]
        var tags: [String: String] = [:]
        for field in fields {
            guard let text = xine_get_meta_info(stream, field.info) else { continue }
            let value = String(String(cString: text).trimming(while: \.isWhitespace))
            if !value.isEmpty { tags[field.name] = value }
        }
        return tags
    }

    /// The lines of xine's message log (errors and warnings), oldest first.
    var log: [String] {
        guard let lines = xine_get_log(xine, XINE_LOG_MSG) else { return [] }
        var result: [String] = []
        var index = 0
        while let line = lines[index] {
            result.append(String(String(cString: line).trimming(while: \.isWhitespace)))
            index += 1
        }
        return result
    }
}

// MARK: - Events

/// The events of xine's event queue the adapter acts on, copied out of xine's event.
enum XineEvent: Sendable {
    /// XINE_EVENT_UI_PLAYBACK_FINISHED: the stream played to its end.
    case finished
    /// XINE_EVENT_PROGRESS: network buffering ("Buffering..."), 0-100 %.
    case progress(description: String, percent: Int)
    /// XINE_EVENT_UI_MESSAGE: a message for the user (XINE_MSG_*), with its explanation
    /// and first parameter.
    case message(type: Int32, text: String)
}

/// The context of xine's event listener thread: decodes each event and hands it on.
final class XineEventListener: @unchecked Sendable {
    // @unchecked: `stream` and `pausing` are touched only while `lock` is held; the rest is
    // immutable or Locked.
    private let onEvent: @Sendable (XineEvent) -> Void
    /// The messages xine sent so far (for the error of a failed open).
    let messages = Locked<[String]>([])
    private let lock = ConditionLock()
    private var stream: UnsafeMutablePointer<xine_stream_t>?
    private var pausing = true

    init(_ onEvent: @escaping @Sendable (XineEvent) -> Void) { self.onEvent = onEvent }

    /// The stream to keep paused (the session sets it once made; its listener thread is
    /// joined before the stream goes).
    func attach(_ stream: UnsafeMutablePointer<xine_stream_t>) { lock.withLock { self.stream = stream } }

    /// Forgets the stream (the session calls it before it closes the stream).
    func detach() { lock.withLock { stream = nil } }

    /// The volume xine's software amplifier applies (XINE_PARAM_AUDIO_AMP_LEVEL, 100 is
    /// unity), read from the stream; nil once the stream is closed. Any thread.
    var amplifierVolume: Float? {
        lock.withLock { stream.map { Float(xine_get_param($0, XINE_PARAM_AUDIO_AMP_LEVEL)) / 100 } }
    }

    /// Whether the stream is to stay paused (true until playing, and while paused).
    func holdPaused(_ hold: Bool) { lock.withLock { pausing = hold } }

    /// xine's network buffer control, when its buffers are full again, plays the stream on
    /// at normal speed, whatever the frontend asked: pause it again at once, here, when it
    /// is to stay paused (xine's frontend calls are allowed from the listener thread).
    fileprivate func buffered() {
        lock.withLock {
            guard pausing, let stream else { return }
            xine_set_param(stream, XINE_PARAM_SPEED, XINE_SPEED_PAUSE)
        }
    }

    /// xine's listener callback; `context` is the listener, kept alive by its session until
    /// the queue (and with it this thread) is gone.
    static let callback: xine_event_listener_cb_t = { context, event in
        guard let context, let event else { return }
        let listener = Unmanaged<XineEventListener>.fromOpaque(context).takeUnretainedValue()
        switch event.pointee.type {
        case XINE_EVENT_UI_PLAYBACK_FINISHED:
            listener.onEvent(.finished)
        case XINE_EVENT_PROGRESS:
            guard let data = event.pointee.data?.assumingMemoryBound(to: xine_progress_data_t.self) else { return }
            let description = data.pointee.description.map { String(cString: $0) } ?? ""
            if description.hasPrefix("Buffering"), data.pointee.percent >= 100 { listener.buffered() }
            listener.onEvent(.progress(description: description, percent: Int(data.pointee.percent)))
        case XINE_EVENT_UI_MESSAGE:
            guard let data = event.pointee.data?.assumingMemoryBound(to: xine_ui_message_data_t.self) else { return }
            let explanation = String(cString: pkx_message_explanation(data))
            let parameter = String(cString: pkx_message_parameter(data))
            let text = [explanation, parameter].filter { !$0.isEmpty }.joined(separator: " ")
            listener.messages.withLock { $0.append(text) }
            listener.onEvent(.message(type: data.pointee.type, text: text))
        default:
            break
        }
    }
}

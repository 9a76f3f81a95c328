#if MPV
import CMPV
import FoundationEssentials
import PlaybackKit

/// How PlaybackKit's options become mpv options, and mpv's failures `PlaybackError`s.
enum MPVConfiguration {
    // MARK: - Core options

    /// How far before an exact seek's target mpv's demuxer is asked to land, seconds, so that
    /// formats whose seeks land on any packet (MPEG-TS) still begin decoding at a keyframe
    /// before the target: enough for groups of pictures up to a second or two.
    static let demuxerSeekOffset: TimeInterval = 1

    /// The offset a seek that still began after its target tries next: four times as far back
    /// (1, 4, 16 s), so that a 10 s group of pictures takes two more tries.
    static func widerDemuxerOffset(after offset: TimeInterval) -> TimeInterval { offset * 4 }

    /// The widest offset tried (each try decodes from that far back): groups of pictures as
    /// long as broadcasters make them (up to about 10 s) are covered.
    static let widestDemuxerOffset: TimeInterval = 16

    /// The `vf` that turns pictures upright by `turn` degrees clockwise (libavfilter's
    /// transpose, or a half turn by flipping both ways); nil for no turn.
    static func uprightFilter(turn: Int) -> String? {
        switch turn {
        case 90: "lavfi=[transpose=dir=clock]"
        case 180: "lavfi=[hflip,vflip]"
        case 270: "lavfi=[transpose=dir=cclock]"
        default: nil
        }
    }

    /// The options a core is created with for `source` and `options`, in the order they are
    /// set; `uprightTurn` is the clockwise turn the picture needs (its display matrix) when the
    /// adapter turns it itself (see `MPVSession.uprightTurn`).
    static func coreOptions(for source: MediaSource, options: PlaybackOptions, uprightTurn: Int? = nil) throws(PlaybackError) -> [(String, String)] {
        var list: [(String, String)] = [
            // A quiet, embedded core: no user configuration, scripts, terminal, OSD or input.
            ("config", "no"),
            ("terminal", "no"),
            ("load-scripts", "no"),
            // mpv's built-in scripts (each a Lua state on its own thread; the stats overlay
            // and the console also set up libass fonts before the first file opens).
            ("load-stats-overlay", "no"),
            ("load-osd-console", "no"),
            ("load-auto-profiles", "no"),
            ("ytdl", "no"),
            ("osc", "no"),
            ("osd-level", "0"),
            ("input-default-bindings", "no"),
            ("input-vo-keyboard", "no"),
            ("sub-auto", "no"),
            // A song's cover picture is not video: none shown, none loaded from beside the file.
            ("audio-display", "no"),
            ("cover-art-auto", "no"),
            ("hwdec", "no"),
            // Prepared means paused at the start; the end keeps the file open on its last
            // frame so that a seek and play work after it (without pausing by itself, so the
            // audio output plays out its buffer; the player pauses); the core stays alive
            // without a file.
            ("pause", "yes"),
            ("keep-open", "yes"),
            ("keep-open-pause", "no"),
            ("idle", "yes"),
            ("hr-seek", options.accurateSeek ? "yes" : "no"),
            ("hr-seek-demuxer-offset", String(demuxerSeekOffset)),
            // Hand each frame to the video output when it is due rather than ahead of time, so
            // that time-pos (set when a frame is handed over) is the frame shown now, and the
            // sample mpv sends for it follows the renderer's draw request.
            ("video-timing-offset", "0"),
            ("network-timeout", String(max(1, Int(options.openTimeout)))),
        ]
        switch options.audioOutput {
        case .null:
            // The null output consumes samples at real time, so the clock stays real.
            list.append(("ao", "null"))
            // Its buffer (0.2 s by default) is what time-pos after a paused seek in sound-only
            // media is short of the target by: keep 20 ms.
            list.append(("ao-null-buffer", "0.02"))
            // It sizes that buffer in whole bursts (256 samples by default) and fails to open
            // when the buffer holds none ("Device buffer size not set"): every sample rate
            // below 12.8 kHz (8 kHz telephone audio) would fail. Bursts of one sample fit any
            // rate, at no cost to be measured (mpv alone, 8 s of 48 kHz stereo: 0.19-0.22 CPU s
            // either way).
            list.append(("ao-null-outburst", "1"))
        case .system:
            list.append(("audio-fallback-to-null", "yes"))
        }
        switch options.videoOutput {
        case .none:
            // No picture leaves the core while playing: the null output keeps the frame it
            // shows, which `screenshot-raw` converts on demand for a thumbnail.
            list.append(("vo", "null"))
        case .frames:
            // Every frame is drawn through the software render API and handed on.
            list.append(("vo", "libmpv"))
        case .yuvFrames:
            // The same, at the stored size (the renderer's target), stretched to it.
            list.append(("vo", "libmpv"))
            list.append(("keepaspect", "no"))
        case .window:
            // Drawn like `.frames` (subtitles included) and put into the window by the
            // adapter's presenter: mpv opens no X connection of its own (its x11 output resets
            // the process's X error handler to Xlib's fatal one when it closes, and its
            // failed output probes closed file descriptor 0, which may be an X connection).
            list.append(("vo", "libmpv"))
        }
        if case .none = options.videoOutput {} else {
            // The software renderer converts with libswscale's fast paths (its unscaled
            // YUV-to-RGB converters) instead of zimg or libswscale's exact ones: measured on
            // 1080p30 H.264, 6 CPU s for 20 s of video instead of 9.5.
            list.append(("sws-allow-zimg", "no"))
            list.append(("sws-fast", "yes"))
            // libmpv's video output claims to turn pictures itself, which its software
            // renderer cannot: a picture with a display matrix aborts the process there
            // (mp_image_crop's assertion). mpv is told to leave the matrix alone, and the
            // adapter's own filter turns the picture upright before it reaches the output.
            list.append(("video-rotate", "no"))
            if let filter = uprightTurn.flatMap(uprightFilter(turn:)) { list.append(("vf", filter)) }
        }
        if let cap = options.maxBufferBytes, cap > 0 {
            list.append(("demuxer-max-bytes", String(cap)))
            list.append(("demuxer-max-back-bytes", "0"))
            list.append(("stream-buffer-size", String(max(4096, min(cap, 128 * 1024)))))
            if source.isHTTP {
                // The socket's receive buffer is read-ahead too: without a size the kernel
                // grows it past 2 MiB on a fast link. An eighth of the cap, within 32...256 KiB.
                list.append(("stream-lavf-o", "recv_buffer_size=\(min(256 * 1024, max(32 * 1024, cap / 8)))"))
            }
        }
        if source.isHTTP, let agent = options.httpHeaders.first(where: { $0.key.lowercased() == "user-agent" }) {
            list.append(("user-agent", agent.value))
        }
        if source.isHTTP {
            // https: the certificate must verify against the system's authorities and the app's.
            let authorities = try options.tlsCertificateAuthorities.map { url throws(PlaybackError) in try TLSTrust.bundle(adding: url).path }
            list.append(("tls-verify", "yes"))
            list.append(("tls-ca-file", authorities ?? TLSTrust.systemBundle))
            // A remote playlist may lead to local files only when the app trusts the source
            // (mpv refuses them by default, and says so in its log).
            if !ReferencePolicy(source: source, options: options).confinesToRemote {
                list.append(("load-unsafe-playlists", "yes"))
            }
        }
        return list
    }

    /// String-list options: the extra HTTP request headers (User-Agent goes through its own option).
    static func coreListOptions(for source: MediaSource, options: PlaybackOptions) -> [(String, [String])] {
        guard source.isHTTP else { return [] }
        let fields = options.httpHeaders
            .filter { $0.key.lowercased() != "user-agent" }
            .sorted { $0.key < $1.key }
            .map { "\($0.key): \($0.value)" }
        return fields.isEmpty ? [] : [("http-header-fields", fields)]
    }

    /// Whether `output` takes its pictures from the software render API (`.frames`,
    /// `.yuvFrames`, `.window`).
    static func drawsThroughRenderAPI(_ output: VideoOutput) -> Bool {
        switch output {
        case .frames, .yuvFrames, .window: true
        case .none: false
        }
    }

    /// What `loadfile` is given for `source`.
    static func loadTarget(for source: MediaSource) -> String {
        source.isFile ? source.path : source.url.absoluteString
    }


    // MARK: - Errors

    /// The error for an MPV_EVENT_END_FILE with reason error, status `status`; `loaded` tells
    /// whether the file had opened; `detail` is mpv's last error line.
    static func loadError(status: Int32, source: MediaSource, loaded: Bool, detail: String?) -> PlaybackError {
        let words = MPVHandle.describe(status) + (detail.map { " (\($0))" } ?? "")
        let step = loaded ? "play" : "open"
        let target = source.isFile ? source.path : source.url.absoluteString
        let message = "\(step): \(target): \(words)"
        let code: PlaybackError.Code
        if let detail, detail.contains("unsafe") {
            // mpv's own refusal of a local reference from remote media (load-unsafe-playlists).
            return PlaybackError(code: .forbiddenURL, message: message)
        }
        switch status {
        case MPV_ERROR_UNKNOWN_FORMAT.rawValue, MPV_ERROR_NOTHING_TO_PLAY.rawValue:
            code = source.isHTTP && looksLikeNetwork(detail) ? .network : .unsupportedFormat
        case MPV_ERROR_LOADING_FAILED.rawValue:
            if source.isHTTP {
                code = .network
            } else if !FileManager.default.isReadableFile(atPath: source.path) {
                code = .sourceNotFound
            } else {
                code = loaded ? .decode : .unsupportedFormat
            }
        case MPV_ERROR_AO_INIT_FAILED.rawValue, MPV_ERROR_VO_INIT_FAILED.rawValue:
            code = .engine
        default:
            code = loaded ? .decode : (source.isHTTP ? .network : .engine)
        }
        return PlaybackError(code: code, message: message)
    }

    /// True when mpv's message speaks of a failed connection or an HTTP error.
    private static func looksLikeNetwork(_ detail: String?) -> Bool {
        guard let text = detail?.lowercased() else { return false }
        return ["http error", "connection", "timed out", "resolve", "network", "refused", "server returned"]
            .contains { text.contains($0) }
    }
}
#endif

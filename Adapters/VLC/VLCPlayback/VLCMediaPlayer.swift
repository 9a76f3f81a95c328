#if VLC
import CVLC
import FoundationEssentials
import Glibc
import PlaybackKit

/// What libVLC reports about one player, copied out of `libvlc_event_t` on libVLC's thread.
enum VLCEvent: Sendable {
    case opening
    case buffering(Float)
    case playing
    case paused
    case stopped
    case endReached
    case encounteredError
    case lengthChanged(Int64)
    case timeChanged(Int64)
    case videoOutputs(Int)
    case streamAdded(kind: Int32)
    case parsed(status: Int32)
}

/// Context handed to libVLC's event callbacks: forwards each event to a Swift closure (which
/// posts it to the engine's queue). It never calls into libVLC.
final class VLCEventRelay: Sendable {
    let forward: @Sendable (VLCEvent) -> Void
    init(forward: @escaping @Sendable (VLCEvent) -> Void) { self.forward = forward }
}

/// The player events the engine listens to.
private let playerEventTypes: [libvlc_event_e] = [
    libvlc_MediaPlayerOpening, libvlc_MediaPlayerBuffering, libvlc_MediaPlayerPlaying,
    libvlc_MediaPlayerPaused, libvlc_MediaPlayerStopped, libvlc_MediaPlayerEndReached,
    libvlc_MediaPlayerEncounteredError, libvlc_MediaPlayerLengthChanged,
    libvlc_MediaPlayerTimeChanged, libvlc_MediaPlayerVout, libvlc_MediaPlayerESAdded,
]

/// The memory audio output's sample callback for discarded sound: drops the samples once
/// they are due, as a sound card takes them. The memory output tells libVLC no latency, so
/// libVLC hands it samples as soon as they are decoded, up to a second or two ahead: taken
/// at once, a sound-only media ended that much early and its time ran ahead. Waiting until
/// `pts` (libVLC's clock), at most `longestDiscardWait` per call so that a pause, seek or
/// stop never waits long, holds the decoder to the clock as a device would.
private let discardSamples: libvlc_audio_play_cb = { _, _, _, pts in
    let wait = libvlc_delay(pts)
    if wait > 0 { usleep(UInt32(min(wait, longestDiscardWait))) }
}

/// The longest the discarding audio callback waits for samples' due time, microseconds.
private let longestDiscardWait: Int64 = 50_000

/// The memory audio output's volume callback: notes the volume its output applies. Runs on
/// libVLC's threads; never calls libVLC.
private let noteOutputVolume: libvlc_audio_set_volume_cb = { data, volume, _ in
    guard let data else { return }
    Unmanaged<VLCOutputVolume>.fromOpaque(data).takeUnretainedValue().volume.set(volume)
}

/// The volume libVLC's memory audio output last said it applies (0...1), set on libVLC's
/// threads.
final class VLCOutputVolume: Sendable {
    let volume = Locked<Float?>(nil)
}

/// The media events the engine listens to.
private let mediaEventTypes: [libvlc_event_e] = [libvlc_MediaParsedChanged]

/// Runs on libVLC's threads: copies the event and forwards it; must not call libVLC.
private let vlcEventCallback: libvlc_callback_t = { event, data in
    guard let event, let data else { return }
    let relay = Unmanaged<VLCEventRelay>.fromOpaque(data).takeUnretainedValue()
    let payload = event.pointee.u
    let converted: VLCEvent?
    switch libvlc_event_e(UInt32(bitPattern: event.pointee.type)) {
    case libvlc_MediaPlayerOpening: converted = .opening
    case libvlc_MediaPlayerBuffering: converted = .buffering(payload.media_player_buffering.new_cache)
    case libvlc_MediaPlayerPlaying: converted = .playing
    case libvlc_MediaPlayerPaused: converted = .paused
    case libvlc_MediaPlayerStopped: converted = .stopped
    case libvlc_MediaPlayerEndReached: converted = .endReached
    case libvlc_MediaPlayerEncounteredError: converted = .encounteredError
    case libvlc_MediaPlayerLengthChanged: converted = .lengthChanged(payload.media_player_length_changed.new_length)
    case libvlc_MediaPlayerTimeChanged: converted = .timeChanged(payload.media_player_time_changed.new_time)
    case libvlc_MediaPlayerVout: converted = .videoOutputs(Int(payload.media_player_vout.new_count))
    case libvlc_MediaPlayerESAdded: converted = .streamAdded(kind: payload.media_player_es_changed.i_type.rawValue)
    case libvlc_MediaParsedChanged: converted = .parsed(status: payload.media_parsed_changed.new_status)
    default: converted = nil
    }
    if let converted { relay.forward(converted) }
}

/// Owns one `libvlc_media_t` and its `libvlc_media_player_t`, the event registrations and the
/// callback contexts; everything is detached and released in `release()` (or deinit), once.
/// Used only on the engine's queue.
final class VLCMediaPlayer {
    let media: OpaquePointer
    let player: OpaquePointer
    private let relay: VLCEventRelay
    private var video: VLCVideoCallbacks?
    private var attached: [(OpaquePointer, libvlc_event_e)] = []
    private var released = false
    /// The memory audio output's volume reports (the callbacks' context, kept until release).
    let outputVolume = VLCOutputVolume()
    /// The sound goes to the memory output (`discardAudio()`).
    private(set) var discardsAudio = false

    /// Makes the media for `source` with `options` (":name=value" strings; `trustedOptions`
    /// are those libVLC applies to a media only when marked trusted) and a player for it.
    /// `location`, when given, is where libVLC reads a remote source (its relay).
    init(instance: VLCInstance, source: MediaSource, location: String? = nil, mediaOptions: [String], trustedOptions: [String] = [],
         forward: @escaping @Sendable (VLCEvent) -> Void) throws(PlaybackError) {
        let made: OpaquePointer?
        if source.isFile {
            made = libvlc_media_new_path(instance.handle, source.path)
        } else {
            made = libvlc_media_new_location(instance.handle, location ?? source.url.absoluteString)
        }
        guard let media = made else {
            throw PlaybackError(code: .engine, message: "libvlc_media_new: could not make a media for \(source.url.absoluteString) (\(VLCLog.lastProblem() ?? "no message"))")
        }
        for option in mediaOptions { libvlc_media_add_option(media, option) }
        for option in trustedOptions {
            libvlc_media_add_option_flag(media, option, UInt32(libvlc_media_option_trusted))
        }
        guard let player = libvlc_media_player_new_from_media(media) else {
            libvlc_media_release(media)
            throw PlaybackError(code: .engine, message: "libvlc_media_player_new_from_media: \(VLCLog.lastProblem() ?? "no message")")
        }
        self.media = media
        self.player = player
        self.relay = VLCEventRelay(forward: forward)
        let context = Unmanaged.passUnretained(relay).toOpaque()
        if let manager = libvlc_media_player_event_manager(player) {
            for type in playerEventTypes where libvlc_event_attach(manager, Int32(type.rawValue), vlcEventCallback, context) == 0 {
                attached.append((manager, type))
            }
        }
        if let manager = libvlc_media_event_manager(media) {
            for type in mediaEventTypes where libvlc_event_attach(manager, Int32(type.rawValue), vlcEventCallback, context) == 0 {
                attached.append((manager, type))
            }
        }
    }

    deinit { release() }

    /// Sends pictures to `callbacks` (kept alive until release).
    func attachVideo(_ callbacks: VLCVideoCallbacks) {
        video = callbacks
        callbacks.install(on: player)
    }

    /// Stops playback, detaches every event, releases the player, the media and the contexts.
    func release() {
        guard !released else { return }
        released = true
        libvlc_media_player_stop(player)
        let context = Unmanaged.passUnretained(relay).toOpaque()
        for (manager, type) in attached {
            libvlc_event_detach(manager, Int32(type.rawValue), vlcEventCallback, context)
        }
        attached.removeAll()
        libvlc_media_player_release(player)
        libvlc_media_release(media)
        video = nil
    }

    // MARK: - Control

    /// Starts the media parse (local files only unless `network`).
    func startParse(network: Bool, timeoutMilliseconds: Int32) {
        let flags = network ? libvlc_media_parse_network : libvlc_media_parse_local
        _ = libvlc_media_parse_with_options(media, flags, timeoutMilliseconds)
    }

    /// Starts or resumes playback (restarts the media after it ended).
    func play() { _ = libvlc_media_player_play(player) }
    /// Pauses (true) or resumes (false); no effect without a running input.
    func setPaused(_ paused: Bool) { libvlc_media_player_set_pause(player, paused ? 1 : 0) }
    /// Stops the input (blocks until its thread ended).
    func stop() { libvlc_media_player_stop(player) }
    /// Shows the next picture of a paused input (pauses a playing one).
    func showNextFrame() { libvlc_media_player_next_frame(player) }
    /// Seeks to `milliseconds`.
    func setTime(_ milliseconds: Int64) { libvlc_media_player_set_time(player, milliseconds) }
    /// The input's time in milliseconds, -1 without input.
    var time: Int64 { libvlc_media_player_get_time(player) }
    /// The media length in milliseconds, 0 when unknown.
    var length: Int64 { max(0, libvlc_media_player_get_length(player)) }
    /// Mutes or unmutes the audio output.
    func setMuted(_ muted: Bool) { libvlc_audio_set_mute(player, muted ? 1 : 0) }
    /// Sets the volume, 0...100.
    func setVolume(_ percent: Int) { _ = libvlc_audio_set_volume(player, Int32(percent)) }
    /// Sets the playback rate.
    func setRate(_ rate: Float) { _ = libvlc_media_player_set_rate(player, rate) }
    /// Uses the named audio output module.
    func setAudioOutput(_ module: String) { _ = libvlc_audio_output_set(player, module) }
    /// Discards the sound through libVLC's memory audio output. libVLC 3 reads no volume back
    /// from its dummy output or from the memory output (`libvlc_audio_get_volume` gives 0
    /// whatever was set), so the volume the memory output applies is taken from its volume
    /// callback, which libVLC calls with the output's volume when it starts and on each change.
    func discardAudio() {
        libvlc_audio_set_callbacks(player, discardSamples, nil, nil, nil, nil,
                                   Unmanaged.passUnretained(outputVolume).toOpaque())
        libvlc_audio_set_format(player, "S16N", 48000, 2)
        libvlc_audio_set_volume_callback(player, noteOutputVolume)
        discardsAudio = true
        // Makes the output now (the callbacks alone only forget the old one).
        setAudioOutput("amem")
    }

    /// Bytes read from the source so far.
    var bytesRead: Int64 {
        var stats = libvlc_media_stats_t()
        guard libvlc_media_get_stats(media, &stats) != 0 else { return 0 }
        return Int64(max(0, stats.i_read_bytes))
    }

    /// The visible size of the first video output, if any.
    var videoOutputSize: VideoSize? {
        var width: UInt32 = 0
        var height: UInt32 = 0
        guard libvlc_video_get_size(player, 0, &width, &height) == 0, width > 0, height > 0 else { return nil }
        return VideoSize(width: Int(width), height: Int(height))
    }

    /// What the media's tracks say: storage size and sample aspect of the first video track,
    /// and which kinds of streams exist.
    func trackSummary() -> VLCTrackSummary {
        var summary = VLCTrackSummary()
        var tracks: UnsafeMutablePointer<UnsafeMutablePointer<libvlc_media_track_t>?>?
        let count = libvlc_media_tracks_get(media, &tracks)
        guard let tracks else { return summary }
        defer { libvlc_media_tracks_release(tracks, count) }
        for index in 0..<Int(count) {
            guard let track = tracks[index]?.pointee else { continue }
            switch track.i_type {
            case libvlc_track_video:
                summary.hasVideo = true
                if summary.storageSize == nil, let video = track.video?.pointee, video.i_width > 0, video.i_height > 0 {
                    summary.storageSize = VideoSize(width: Int(video.i_width), height: Int(video.i_height))
                    summary.sampleAspect = (Int(video.i_sar_num), Int(video.i_sar_den))
                    if VLCTrackSummary.swapsAxes(video.i_orientation) {
                        // libVLC turns such pictures upright before they reach the video
                        // output: they are drawn, and shown, with width and height swapped.
                        summary.storageSize = summary.storageSize?.turned(by: 90)
                        summary.sampleAspect = (summary.sampleAspect.1, summary.sampleAspect.0)
                    }
                    if video.i_frame_rate_num > 0, video.i_frame_rate_den > 0 {
                        summary.frameRate = Double(video.i_frame_rate_num) / Double(video.i_frame_rate_den)
                    }
                }
            case libvlc_track_audio:
                summary.hasAudio = true
            default:
                break
            }
        }
        return summary
    }
}

/// The media's streams as libVLC lists them.
struct VLCTrackSummary: Sendable, Equatable {
    var hasVideo = false
    var hasAudio = false
    var storageSize: VideoSize?
    var sampleAspect: (Int, Int) = (1, 1)
    /// Frames per second of the video track, when known.
    var frameRate: Double?

    /// The display size: the storage size with the sample aspect applied.
    var displaySize: VideoSize? {
        guard let storageSize else { return nil }
        return VideoSize.display(storage: storageSize, pixelAspect: sampleAspect.0, sampleAspect.1)
    }

    /// Whether pictures of `orientation` are shown with their axes swapped (turned a quarter
    /// turn, transposed or anti-transposed).
    static func swapsAxes(_ orientation: libvlc_video_orient_t) -> Bool {
        switch orientation {
        case libvlc_video_orient_left_top, libvlc_video_orient_left_bottom,
             libvlc_video_orient_right_top, libvlc_video_orient_right_bottom: true
        default: false
        }
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.hasVideo == rhs.hasVideo && lhs.hasAudio == rhs.hasAudio && lhs.storageSize == rhs.storageSize
            && lhs.sampleAspect == rhs.sampleAspect && lhs.frameRate == rhs.frameRate
    }
}
#endif

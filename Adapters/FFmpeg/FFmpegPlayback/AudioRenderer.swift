#if FFmpeg
import CFFmpeg
import FoundationEssentials
import PlaybackKit

// MARK: - SDL audio device

/// Counts the users of SDL's audio subsystem, which is process-wide.
private let sdlAudioUsers = Locked(0)

/// Why no SDL audio device could be opened, once that happened: later sessions of the process
/// go straight to the null output instead of probing (and logging) again.
private let sdlAudioUnavailable = Locked<String?>(nil)

/// An opened SDL audio device (`SDL_OpenAudioDevice`), pulling interleaved s16 samples
/// through a C callback whose context (the renderer) outlives the device: the device is closed
/// in `deinit`, and `SDL_CloseAudioDevice` returns only after the callback finished.
final class SDLAudioDevice {
    let id: SDL_AudioDeviceID
    let rate: Int32
    let channels: Int32
    /// Samples per device buffer.
    let bufferSamples: Int

    /// Opens the default output device; throws the SDL error text when it cannot.
    init(rate: Int32, channels: Int32, renderer: AudioRenderer) throws(PlaybackError) {
        if let reason = sdlAudioUnavailable.get() {
            throw PlaybackError(code: .engine, message: reason)
        }
        if let failure = pk_sdl_load() {
            let reason = "audio device: \(String(cString: failure))"
            sdlAudioUnavailable.set(reason)
            throw PlaybackError(code: .engine, message: reason)
        }
        let initialised = sdlAudioUsers.withLock { users -> Bool in
            if users == 0, pk_sdl_init_subsystem(UInt32(SDL_INIT_AUDIO)) != 0 { return false }
            users += 1
            return true
        }
        guard initialised else {
            let reason = "audio device: SDL_InitSubSystem: \(String(cString: pk_sdl_get_error()))"
            sdlAudioUnavailable.set(reason)
            throw PlaybackError(code: .engine, message: reason)
        }
        var wanted = SDL_AudioSpec()
        wanted.freq = rate
        wanted.format = pk_sdl_audio_s16sys()
        wanted.channels = UInt8(channels)
        wanted.silence = 0
        // About 20 ms per callback, a power of two as SDL prefers.
        var samples = 512
        while samples * 50 < Int(rate) { samples *= 2 }
        wanted.samples = UInt16(samples)
        wanted.callback = { userdata, stream, length in
            guard let userdata, let stream else { return }
            Unmanaged<AudioRenderer>.fromOpaque(userdata).takeUnretainedValue().fill(stream, Int(length))
        }
        wanted.userdata = Unmanaged.passUnretained(renderer).toOpaque()
        var obtained = SDL_AudioSpec()
        let device = pk_sdl_open_audio_device(nil, 0, &wanted, &obtained, pk_sdl_audio_allow_changes())
        guard device != 0 else {
            let reason = "audio device: SDL_OpenAudioDevice: \(String(cString: pk_sdl_get_error()))"
            Self.releaseSubsystem()
            sdlAudioUnavailable.set(reason)
            throw PlaybackError(code: .engine, message: reason)
        }
        id = device
        self.rate = obtained.freq
        self.channels = Int32(obtained.channels)
        bufferSamples = Int(obtained.samples)
    }

    deinit {
        pk_sdl_close_audio_device(id)
        Self.releaseSubsystem()
    }

    private static func releaseSubsystem() {
        sdlAudioUsers.withLock { users in
            users -= 1
            if users == 0 { pk_sdl_quit_subsystem(UInt32(SDL_INIT_AUDIO)) }
        }
    }

    /// Starts or stops the callbacks.
    func setPaused(_ paused: Bool) { pk_sdl_pause_audio_device(id, paused ? 1 : 0) }
}

// MARK: - Audio output

/// Plays the audio frame queue: converts frames with swresample to interleaved s16 at the
/// output rate and hands them to an SDL device (`AudioOutput.system`) or consumes them at
/// real-time rate on a thread paced by the monotonic clock (`AudioOutput.null`). After each
/// buffer it sets the master clock to the media time being heard.
///
/// When `.system` is asked for and no audio device can be opened (a machine without sound),
/// the output falls back to `.null` consumption and logs a warning: the media still plays at
/// real time and the picture stays in sync, which is what a user of a headless machine expects
/// rather than a failure.
final class AudioRenderer: @unchecked Sendable {
    // @unchecked: the conversion state below is used only by the one thread that pulls audio
    // (the SDL callback thread or the null output thread); `device` is set in start() before
    // anyone else sees the renderer, then read and released under `deviceLock`.
    private unowned let session: FFmpegSession
    private let sourceRate: Int32
    private let sourceChannels: Int32
    private var device: SDLAudioDevice?
    /// Guards `device` against pausing and closing at once.
    private let deviceLock = MutexLock()
    /// Samples go to the SDL device (set in start(), before any callback can run).
    private var playsToDevice = false
    private var resampler: Resampler
    private let current = OwnedFrame()
    private var pendingOffset = 0
    private var pendingBytes = 0
    private var chunkTime = 0.0
    private var chunkRate = 1.0
    private var chunkSerial = -1
    /// Seconds of sound queued in the device ahead of what `fill` writes.
    private var latency = 0.0
    /// The fallback to silent consumption is logged once per process.
    private static let fallbackLogged = Locked(false)

    init(session: FFmpegSession, sourceRate: Int32, sourceChannels: Int32) {
        self.session = session
        self.sourceRate = max(8000, sourceRate)
        self.sourceChannels = min(2, max(1, sourceChannels))
        resampler = Resampler(outputRate: self.sourceRate, outputChannels: self.sourceChannels)
    }

    /// Opens the device (or starts the null output).
    func start() {
        if session.options.audioOutput == .system {
            do throws(PlaybackError) {
                let opened = try SDLAudioDevice(rate: sourceRate, channels: sourceChannels, renderer: self)
                resampler = Resampler(outputRate: opened.rate, outputChannels: opened.channels)
                latency = Double(opened.bufferSamples) / Double(opened.rate)
                device = opened
                playsToDevice = true
                return
            } catch {
                if !Self.fallbackLogged.withLock({ logged in defer { logged = true }; return logged }) {
                    PlaybackLog.log(.warning, "ffmpeg", "\(error); audio is consumed silently at real time instead")
                }
            }
        }
        session.spawn("ff.audio-null") { [self] _ in nullOutputLoop() }
    }

    /// Pauses or resumes the device to match the session's current state (the null output
    /// follows the session by itself). Serialised, and always applying the latest state, so
    /// concurrent calls cannot leave the device in an older one. Never called with the
    /// session lock held.
    func followPauseState() {
        deviceLock.withLock {
            guard let device else { return }
            let paused = session.lock.withLock { session.paused }
            device.setPaused(paused)
        }
    }

    /// Closes the device; called once every other thread has stopped.
    func stop() {
        deviceLock.withLock { device = nil }
    }

    // MARK: - Pulling samples

    /// Fills `length` bytes of `out` with the next samples (silence where there are none)
    /// and sets the master clock to the media time of the first one.
    func fill(_ out: UnsafeMutablePointer<UInt8>, _ length: Int) {
        let wall = monotonicSeconds()
        // Deselected audio plays on as silence, so the clock keeps following it.
        let (currentSerial, volume) = session.lock.withLock {
            (session.audioSerial, session.audioMuted ? 0 : session.volume)
        }
        if chunkSerial != currentSerial { pendingBytes = 0 }
        let bytesPerSecond = Double(resampler.outputRate) * Double(resampler.bytesPerSampleFrame)
        var written = 0
        var firstTime: Double?
        var firstRate = 1.0
        while written < length {
            if pendingBytes > 0, let buffer = resampler.buffer {
                if firstTime == nil {
                    firstTime = chunkTime + Double(pendingOffset) / bytesPerSecond * chunkRate
                    firstRate = chunkRate
                }
                let count = min(pendingBytes, length - written)
                if playsToDevice {
                    if volume >= 0.999 {
                        (out + written).update(from: buffer + pendingOffset, count: count)
                    } else {
                        (out + written).update(repeating: 0, count: count)
                        pk_sdl_mix_audio_format(out + written, buffer + pendingOffset, pk_sdl_audio_s16sys(),
                                           UInt32(count), Int32(volume * Double(pk_sdl_mix_maxvolume())))
                    }
                }
                written += count
                pendingOffset += count
                pendingBytes -= count
                continue
            }
            guard let next = session.takeAudioFrame(into: current.frame) else { break }
            let converted = resampler.convert(current.frame)
            av_frame_unref(current.frame)
            guard let converted else { continue }
            pendingOffset = 0
            pendingBytes = converted
            chunkTime = next.time
            chunkRate = next.rate
            chunkSerial = next.serial
        }
        if written < length, playsToDevice {
            (out + written).update(repeating: 0, count: length - written)
        }
        session.audioPlayed(time: firstTime.map { $0 - latency * firstRate }, rate: firstRate,
                            serial: chunkSerial, at: wall, pending: pendingBytes > 0)
    }

    /// `AudioOutput.null`: pulls one buffer every ~21 ms of wall time while playing.
    private func nullOutputLoop() {
        let samples = 1024
        let bytes = samples * resampler.bytesPerSampleFrame
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes)
        defer { scratch.deallocate() }
        let rate = Double(resampler.outputRate)
        var startWall = 0.0
        var consumed = 0
        while true {
            let resumed = session.lock.withLock { () -> Bool? in
                var waited = false
                while !session.aborted && (session.paused || !session.prepared) {
                    session.lock.wait(session.audioOutputWake)
                    waited = true
                }
                return session.aborted ? nil : waited
            }
            guard let resumed else { return }
            if resumed || consumed == 0 {
                startWall = monotonicSeconds()
                consumed = 0
            }
            fill(scratch, bytes)
            consumed += samples
            var deadline = startWall + Double(consumed) / rate
            let now = monotonicSeconds()
            if deadline < now - 0.2 {  // fell far behind (a stopped machine): re-base
                startWall = now
                consumed = 0
                deadline = now
            }
            session.lock.withLock {
                while !session.aborted && !session.paused && monotonicSeconds() < deadline {
                    session.lock.wait(session.audioOutputWake, until: deadline)
                }
            }
        }
    }
}

// MARK: - The session's side of audio output

extension FFmpegSession {
    /// Moves the next current-audio-serial audio frame into `frame`; nil when there is none or
    /// playback is paused.
    func takeAudioFrame(into frame: UnsafeMutablePointer<AVFrame>) -> (time: Double, rate: Double, serial: Int)? {
        lock.withLock {
            var dropped = false
            while let slot = audioFrames.peek(), slot.serial != audioSerial {
                audioFrames.pop(into: nil)
                dropped = true
            }
            defer { if dropped { audioFrameSpace.broadcast() } }
            guard !paused, prepared, let slot = audioFrames.peek() else { return nil }
            audioFrames.pop(into: frame)
            audioFrameSpace.broadcast()
            return (slot.time, slot.rate, slot.serial)
        }
    }

    /// The audio output played samples starting at media `time` (nil: only silence) at
    /// wall time `wall`: the master clock follows it.
    func audioPlayed(time: Double?, rate frameRate: Double, serial frameSerial: Int, at wall: Double, pending: Bool) {
        lock.withLock {
            audioOutputBusy = pending
            guard let time, frameSerial == audioSerial, !paused, prepared, !stalled, seekInProgress == nil else {
                if !pending, audioFrames.isEmpty, audioDecoderFinished == audioSerial { presenterWake.broadcast() }
                return
            }
            clock.set(time, at: wall, speed: frameRate)
        }
    }
}
#endif

#if FFmpeg
import CFFmpeg
import FoundationEssentials
import PlaybackKit

// MARK: - The read thread

extension FFmpegSession {
    /// Opens the source, starts the other threads, then demuxes into the packet queues until
    /// closed. At the end it waits for the other threads and closes the audio device, so the
    /// handles are freed with the session, after every user of them has stopped.
    func readLoop() {
        defer { shutDownThreads() }
        do throws(PlaybackError) {
            try openSource()
        } catch {
            fail(error)
            return
        }
        guard let format else { return }
        if openingTarget > 0, duration <= 0 || openingTarget < duration {
            // Opened at a position: seek before the first packet is read.
            keyframeHunt = performSeek(SeekRequest(target: openingTarget, accurate: options.accurateSeek), in: format)
        }
        startWorkers()
        var lastStatus = 0.0
        var statusStale = false
        var failingSince: Double?
        while true {
            // Wait until there is something to do: a seek, room in the queues, or the end
            // (publishing the buffer figures before going to sleep).
            let next = lock.withLock { () -> ReaderStep in
                while true {
                    if aborted { return .stop }
                    if let request = seekRequest {
                        seekRequest = nil
                        return .seek(request)
                    }
                    if !trackRequests.isEmpty {
                        defer { trackRequests = [] }
                        return .switchTracks(trackRequests)
                    }
                    if !readerAtEnd && !queuesFull { return .read }
                    if statusStale { return .report }
                    lock.wait(readerWake)
                }
            }
            switch next {
            case .stop: return
            case .seek(let request):
                keyframeHunt = performSeek(request, in: format)
                continue
            case .report:
                statusStale = false
                reportBuffer(format: format)
                continue
            case .switchTracks(let requests):
                carryOutTrackRequests(requests, in: format)
                continue
            case .read: break
            }
            let packet = lock.withLock { packetPool.take() }
            let status = av_read_frame(format.context, packet)
            if let refusal = format.network?.refusal {
                // A playlist led to a reference the policy forbids (the demuxer would skip it).
                lock.withLock { packetPool.give(packet) }
                fail(refusal)
                return
            }
            if status < 0 {
                lock.withLock { packetPool.give(packet) }
                if interrupt.isRaised { return }
                // A file's I/O error is its end; over a network only AVERROR_EOF is.
                let atEnd = status == pk_av_error_eof()
                    || (source.isFile && (format.context.pointee.pb.map { avio_feof($0) != 0 } ?? false))
                if !atEnd && !source.isFile {
                    // A network read failed (timed out, connection lost): playback stalls and
                    // reading is retried for a while before the session gives up.
                    let now = monotonicSeconds()
                    if failingSince == nil { failingSince = now }
                    if now - failingSince! > Self.networkRetrySeconds {
                        fail(FFmpegErrors.map(status, step: "read", location: location, isNetwork: true))
                        return
                    }
                    PlaybackLog.log(.info, "ffmpeg", "read: \(location): \(FFmpegErrors.text(status)); retrying")
                    format.clearReadError()
                    lock.withLock {
                        if !aborted && seekRequest == nil { lock.wait(readerWake, until: monotonicSeconds() + 0.5) }
                    }
                    continue
                }
                if !atEnd {
                    PlaybackLog.log(.warning, "ffmpeg", "read: \(location): \(FFmpegErrors.text(status)); playing what was read")
                }
                if let hunt = keyframeHunt {
                    // The seek landed after the last keyframe: start further back.
                    keyframeHunt = seekFurtherBack(hunt, in: format)
                    if keyframeHunt != nil { continue }
                }
                markEndOfInput()
                reportBuffer(format: format)
                continue
            }
            failingSince = nil
            if format.context.pointee.event_flags & AVFMT_EVENT_FLAG_METADATA_UPDATED != 0 {
                format.context.pointee.event_flags &= ~AVFMT_EVENT_FLAG_METADATA_UPDATED
                sink.metadataChanged(metadataTags(format))
            }
            if takeSubtitlePacket(packet) || skipsUntilKeyframe(packet) {
                lock.withLock { packetPool.give(packet) }
                continue
            }
            if let hunt = keyframeHunt, packet.pointee.stream_index == videoStreamIndex {
                // (A keyframe without a presentation time, as program streams have them, is
                // shown no earlier than it is decoded: its decoding time is a lower bound.)
                let time = mediaTime(packet.pointee.pts, videoTimeBase) ?? mediaTime(packet.pointee.dts, videoTimeBase)
                switch hunt.verdict(on: packet.pointee, time: time) {
                case .skip:
                    keyframeHunt?.skipped += 1
                    lock.withLock { packetPool.give(packet) }
                    continue
                case .landed:
                    keyframeHunt = nil
                case .tooLate:
                    lock.withLock { packetPool.give(packet) }
                    keyframeHunt = seekFurtherBack(hunt, in: format)
                    continue
                }
            }
            queue(packet)
            statusStale = true
            let now = monotonicSeconds()
            if now - lastStatus >= 0.25 {
                lastStatus = now
                statusStale = false
                reportBuffer(format: format)
            }
        }
    }

    /// What the read thread does next.
    private enum ReaderStep {
        case stop, seek(SeekRequest), report, switchTracks([TrackRequest]), read
    }

    /// True for a packet of the video stream just switched to that comes before its first
    /// keyframe (a decoder cannot start there).
    private func skipsUntilKeyframe(_ packet: UnsafeMutablePointer<AVPacket>) -> Bool {
        guard videoAwaitingKeyframe, packet.pointee.stream_index == videoStreamIndex else { return false }
        if packet.pointee.flags & AV_PKT_FLAG_KEY != 0 {
            videoAwaitingKeyframe = false
            return false
        }
        return true
    }

    /// Seconds a network source may keep failing to read before playback fails.
    static let networkRetrySeconds = 30.0

    /// True when the read-ahead bound is reached (lock held): the byte cap, or every stream
    /// holding `readAheadSeconds` of media.
    var queuesFull: Bool { queuesHold(fraction: 1) }

    /// True while the queues hold enough that waking the read thread is not worth it yet
    /// (lock held): it is woken below three quarters of the bound and then reads a batch.
    var queuesAboveLowWater: Bool { queuesHold(fraction: 0.75) }

    private func queuesHold(fraction: Double) -> Bool {
        if Double(videoPackets.bytes + audioPackets.bytes) >= Double(maxBufferBytes) * fraction { return true }
        let videoEnough = !hasVideo || videoPackets.duration >= readAheadSeconds * fraction
        let audioEnough = !hasAudio || audioPackets.duration >= readAheadSeconds * fraction
        return videoEnough && audioEnough
    }

    // MARK: - Opening

    private func openSource() throws(PlaybackError) {
        let network = source.isFile ? nil : try NetworkAccess(source: source, options: options)
        let input = try FormatInput(location: location, network: network, interrupt: interrupt)
        try input.findStreamInfo(location: location)
        let context = input.context
        if context.pointee.start_time != pk_av_nopts_value() {
            startTime = Double(context.pointee.start_time) / Double(pk_av_time_base())
            if startTime > 0, String(cString: context.pointee.iformat.pointee.name).hasPrefix("mov,") {
                // MP4 and QuickTime lay their media out on a timeline from 0 (an edit list can
                // start it later, with nothing shown before): positions are on that timeline,
                // as its duration is, and as the other engines give them.
                startTime = 0
            }
        }
        containerStartTime = startTime
        if context.pointee.duration != pk_av_nopts_value(), context.pointee.duration > 0 {
            duration = Double(context.pointee.duration) / Double(pk_av_time_base())
        }
        format = input

        var videoIndex = av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        if videoIndex >= 0, (input.stream(videoIndex).pointee.disposition & AV_DISPOSITION_ATTACHED_PIC) != 0 {
            videoIndex = -1  // cover art, not a video
        }
        let audioIndex = av_find_best_stream(context, AVMEDIA_TYPE_AUDIO, -1, videoIndex >= 0 ? videoIndex : -1, nil, 0)
        guard videoIndex >= 0 || audioIndex >= 0 else {
            throw PlaybackError(code: .unsupportedFormat, message: "find stream info: \(location): no audio or video stream")
        }
        var firstError: PlaybackError?
        if videoIndex >= 0 {
            let stream = input.stream(videoIndex)
            do throws(PlaybackError) {
                let guessed = av_guess_frame_rate(context, stream, nil)
                if guessed.num > 0, guessed.den > 0 { videoFrameDuration = Double(guessed.den) / Double(guessed.num) }
                videoFrameRate = Self.rate(stream.pointee.avg_frame_rate) ?? Self.rate(stream.pointee.r_frame_rate)
                videoDecoder = try CodecDecoder(stream: stream, frameDuration: videoFrameDuration)
                videoStreamIndex = videoIndex
                videoTimeBase = stream.pointee.time_base
                if stream.pointee.start_time != pk_av_nopts_value() {
                    // Muxers shift every stream by the audio encoder's delay (AAC's priming):
                    // a first picture that close to the container's start is the start.
                    let videoStart = Double(stream.pointee.start_time) * pk_av_q2d(videoTimeBase)
                    if MediaStart.isStart(firstPicture: videoStart, start: startTime, frameDuration: videoFrameDuration) {
                        startTime = videoStart
                    }
                }
                let storedAspect = av_guess_sample_aspect_ratio(context, stream, nil), rotation = videoDecoder?.rotation ?? 0
                videoAspect = Self.containerAspect(of: stream, rotation: rotation)
                naturalSize = VideoSize.display(storage: VideoSize(width: Int(stream.pointee.codecpar.pointee.width),
                                                                   height: Int(stream.pointee.codecpar.pointee.height)),
                                                pixelAspect: Int(storedAspect.num), Int(storedAspect.den), turnedBy: rotation)
            } catch { firstError = error }
        }
        if audioIndex >= 0 {
            let stream = input.stream(audioIndex)
            do throws(PlaybackError) {
                audioDecoder = try CodecDecoder(stream: stream)
                audioStreamIndex = audioIndex
                audioTimeBase = stream.pointee.time_base
            } catch { firstError = firstError ?? error }
        }
        guard hasVideo || hasAudio else {
            throw firstError ?? PlaybackError(code: .unsupportedFormat, message: "open decoder: \(location): no decodable stream")
        }
        if let firstError {
            PlaybackLog.log(.warning, "ffmpeg", "\(firstError); playing the other stream")
        }
        // Packets of streams nobody plays are not demuxed at all.
        for index in 0..<Int32(context.pointee.nb_streams) where index != videoStreamIndex && index != audioStreamIndex {
            input.stream(index).pointee.discard = AVDISCARD_ALL
        }
        // Except the ones a track switch may need, and the subtitles.
        openTracks(input)
    }

    /// Frames per second of a stream's rate, nil when it is unset (0/0, 0/1) or absurd.
    static func rate(_ rational: AVRational) -> Double? {
        guard rational.num > 0, rational.den > 0 else { return nil }
        let rate = Double(rational.num) / Double(rational.den)
        return rate < 1000 ? rate : nil
    }

    /// The display size of `width`x`height` storage pixels with the sample aspect applied.
    static func displaySize(width: Int32, height: Int32, aspect: AVRational) -> VideoSize {
        VideoSize.display(storage: VideoSize(width: Int(width), height: Int(height)),
                          pixelAspect: Int(aspect.num), Int(aspect.den))
    }

    /// The pixel aspect the container gives `stream`, upright (see `uprightAspect`), or 0/1
    /// when it gives none. Where it gives one it wins over the pictures' own, as in
    /// libavformat's `av_guess_sample_aspect_ratio` and the other engines.
    static func containerAspect(of stream: UnsafeMutablePointer<AVStream>, rotation: Int) -> AVRational {
        let aspect = stream.pointee.sample_aspect_ratio
        guard aspect.num > 0, aspect.den > 0 else { return AVRational(num: 0, den: 1) }
        return uprightAspect(aspect, rotation: rotation)
    }

    /// The pixel aspect of a stream's pictures once turned upright by `rotation`: a quarter
    /// turn inverts it.
    static func uprightAspect(_ aspect: AVRational, rotation: Int) -> AVRational {
        guard (rotation / 90) % 2 == 1, aspect.num > 0, aspect.den > 0 else { return aspect }
        return AVRational(num: aspect.den, den: aspect.num)
    }

    private func startWorkers() {
        if hasAudio, let decoder = audioDecoder {
            let renderer = AudioRenderer(session: self, sourceRate: decoder.context.pointee.sample_rate,
                                         sourceChannels: decoder.context.pointee.ch_layout.nb_channels)
            renderer.start()
            lock.withLock { audioOutput = renderer }
            renderer.followPauseState()
            spawn("ff.audio-dec") { $0.audioDecodeLoop() }
        }
        if hasVideo {
            spawn("ff.video-dec") { $0.videoDecodeLoop() }
        }
        spawn("ff.present") { $0.presentLoop() }
    }

    /// After close: waits for the other threads, then closes the audio device before the
    /// handles go away with the session.
    private func shutDownThreads() {
        lock.withLock {
            aborted = true
            wakeAll()
        }
        threads.wait()
        lock.withLock { audioOutput }?.stop()
    }

    // MARK: - Reading

    /// Hands `packet` to its stream's queue (or back to the pool).
    private func queue(_ packet: UnsafeMutablePointer<AVPacket>) {
        let index = packet.pointee.stream_index
        lock.withLock {
            if index == videoStreamIndex {
                var seconds = Double(packet.pointee.duration) * pk_av_q2d(videoTimeBase)
                if seconds <= 0 { seconds = videoFrameDuration }
                if let time = mediaTime(packet.pointee.pts, videoTimeBase) {
                    videoPackets.lastQueuedTime = max(videoPackets.lastQueuedTime, time + seconds)
                }
                videoPackets.put(packet, serial: serial, packetDuration: seconds)
                videoPacketsReady.broadcast()
            } else if index == audioStreamIndex {
                let seconds = Double(packet.pointee.duration) * pk_av_q2d(audioTimeBase)
                let end = mediaTime(packet.pointee.pts, audioTimeBase).map { $0 + max(0, seconds) }
                if let end { audioPackets.lastQueuedTime = max(audioPackets.lastQueuedTime, end) }
                audioPackets.put(packet, serial: audioSerial, packetDuration: max(0, seconds), endTime: end)
                audioPacketsReady.broadcast()
            } else if idleAudioPackets[index] != nil, let format {
                // Kept for a switch to it, from the position on.
                let timeBase = format.stream(index).pointee.time_base
                let seconds = max(0, Double(packet.pointee.duration) * pk_av_q2d(timeBase))
                let end = mediaTime(packet.pointee.pts, timeBase).map { $0 + seconds }
                idleAudioPackets[index]!.put(packet, serial: audioSerial, packetDuration: seconds, endTime: end)
                if seekInProgress == nil { idleAudioPackets[index]!.dropPackets(endingBefore: clock.now(), into: packetPool) }
            } else {
                packetPool.give(packet)
            }
            if stalled { presenterWake.broadcast() }
        }
    }

    /// Queues the end-of-stream markers that make the decoders drain.
    private func markEndOfInput() {
        lock.withLock {
            readerAtEnd = true
            if hasVideo {
                videoPackets.put(nil, serial: serial, packetDuration: 0)
                videoPacketsReady.broadcast()
            }
            if hasAudio {
                audioPackets.put(nil, serial: audioSerial, packetDuration: 0)
                audioPacketsReady.broadcast()
            }
            presenterWake.broadcast()
        }
    }

    /// Seeks the input for `request` (to `lead` seconds before its target) and resets the
    /// queues. Returns the keyframe hunt that follows when the media has video: formats
    /// without an index (MPEG-TS, MPEG-PS) seek to any packet, so decoding must start at the
    /// first keyframe, and when that comes after the target, the seek is done again from
    /// further back. Every queue is flushed under a new serial, and the decoders and the
    /// presenter are told what to wait for. `fromFileStart`: go to the file's first byte
    /// instead (see `seekFurtherBack`).
    @discardableResult
    private func performSeek(_ request: SeekRequest, in format: FormatInput, lead: Double = 0,
                             fromFileStart: Bool = false) -> KeyframeHunt? {
        let start = fromFileStart ? 0 : max(0, request.target - lead)
        let timestamp = Int64(((start + startTime) * Double(pk_av_time_base())).rounded())
        let toFileStart = { avformat_seek_file(format.context, -1, Int64.min, 0, 0, AVSEEK_FLAG_BYTE) }
        var status = fromFileStart ? toFileStart() : avformat_seek_file(format.context, -1, Int64.min, timestamp, timestamp, 0)
        if status < 0, start <= 0, !fromFileStart {
            // Before the first timestamp some demuxers find nothing: the start of the file.
            status = toFileStart()
        }
        if status < 0 {
            PlaybackLog.log(.warning, "ffmpeg", "seek: \(location): \(FFmpegErrors.text(status))")
        }
        lock.withLock {
            videoPackets.flush(into: packetPool)
            audioPackets.flush(into: packetPool)
            for index in idleAudioPackets.keys { idleAudioPackets[index]!.flush(into: packetPool) }
            videoFrames.flush()
            audioFrames.flush()
            serial += 1
            audioSerial += 1
            videoPackets.lastQueuedTime = request.target
            audioPackets.lastQueuedTime = request.target
            seekInProgress = SeekInProgress(serial: serial, target: request.target, accurate: request.accurate)
            discardBefore = request.accurate ? (serial, request.target) : nil
            audioDiscardBefore = request.accurate ? (audioSerial, request.target) : nil
            readerAtEnd = false
            endedReported = false
            wakeAll()
        }
        restartSubtitles(at: request.target)
        guard hasVideo else { return nil }
        let flags = format.context.pointee.iformat.pointee.flags
        let searchesByTime = flags & AVFMT_TS_DISCONT != 0 && flags & (AVFMT_GENERIC_INDEX | AVFMT_NO_BYTE_SEEK) == 0
        return KeyframeHunt(request: request, lead: lead, tolerance: videoFrameDuration / 2,
                            fromFileStart: fromFileStart, canSeekToFileStart: searchesByTime)
    }

    /// Seeks again for `hunt`'s request from twice as far back (from 1 s). Once the seek went
    /// to the first timestamp and still found no keyframe early enough, it goes to the file's
    /// first byte, where a demuxer that searches its packets by time (MPEG-TS, MPEG-PS) can
    /// land past the first keyframe: the time it asks for is the earliest of every stream's,
    /// and the video's first keyframe is decoded before it. nil after that (or when the format
    /// cannot seek by byte), where whatever comes first is taken.
    private func seekFurtherBack(_ hunt: KeyframeHunt, in format: FormatInput) -> KeyframeHunt? {
        guard hunt.request.target - hunt.lead > 0 else {
            guard !hunt.fromFileStart, hunt.canSeekToFileStart else { return nil }
            PlaybackLog.log(.debug, "ffmpeg", "seek to \(hunt.request.target) s: no keyframe from the first timestamp on before it; seeking to the file's start")
            return performSeek(hunt.request, in: format, lead: hunt.lead, fromFileStart: true)
        }
        let lead = hunt.lead == 0 ? 1 : hunt.lead * 2
        PlaybackLog.log(.debug, "ffmpeg", "seek to \(hunt.request.target) s: no keyframe at or before it; seeking \(lead) s earlier")
        return performSeek(hunt.request, in: format, lead: lead)
    }

    /// Publishes the buffer figures: buffered-to time, fill level and bytes read.
    private func reportBuffer(format: FormatInput) {
        let status = lock.withLock { () -> EngineBufferStatus in
            var buffered = max(hasVideo ? videoPackets.lastQueuedTime : 0, hasAudio ? audioPackets.lastQueuedTime : 0)
            if readerAtEnd, duration > 0 { buffered = duration }
            if duration > 0 { buffered = min(buffered, duration) }
            let ahead = max(0, buffered - clock.now())
            let progress = readerAtEnd ? 100 : min(100, Int(ahead / readAheadSeconds * 100))
            return EngineBufferStatus(playableDuration: buffered, bufferingProgress: progress,
                                      bytesTransferred: format.bytesRead)
        }
        sink.bufferChanged(status)
    }
}
/// After a seek, the video packets up to the first keyframe are skipped (a decoder cannot
/// start before one); a first keyframe later than the target means the seek went too far.
/// Read thread only.
struct KeyframeHunt {
    /// The seek being carried out.
    let request: FFmpegSession.SeekRequest
    /// How far before the target the input was sought.
    let lead: Double
    /// How far after the target a keyframe may be and still be the target's frame.
    let tolerance: Double
    /// The input was sought to its first byte: the last resort, whatever comes first is taken.
    let fromFileStart: Bool
    /// The demuxer finds a time by searching its packets (MPEG-TS, MPEG-PS: no index, time
    /// stamps that may jump, byte seeks allowed): when a seek to the first timestamp lands
    /// past the first keyframe, the file's first byte is the last resort. Other demuxers
    /// take whatever a seek to the first timestamp gives.
    let canSeekToFileStart: Bool
    /// Video packets skipped so far: a stream that flags no keyframes (intra refresh) is
    /// decoded from wherever it is after `maximumSkipped` of them.
    var skipped = 0
    static let maximumSkipped = 600

    /// What to do with a video packet read during the hunt.
    enum Verdict { case skip, landed, tooLate }

    /// The verdict for `packet`, shown at media time `time` (or not before it; nil when the
    /// packet carries no time at all, and is then taken).
    func verdict(on packet: AVPacket, time: Double?) -> Verdict {
        guard packet.flags & AV_PKT_FLAG_KEY != 0 || skipped >= Self.maximumSkipped else { return .skip }
        guard let time, !fromFileStart, request.target - lead > 0 || canSeekToFileStart else { return .landed }
        return time <= request.target + tolerance ? .landed : .tooLate
    }
}
#endif

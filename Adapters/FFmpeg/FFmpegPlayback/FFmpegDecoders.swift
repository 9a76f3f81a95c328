#if FFmpeg
import CFFmpeg
import FoundationEssentials
import PlaybackKit

// MARK: - Decoder threads

extension FFmpegSession {
    /// Decodes video packets into the video frame queue, dropping what an accurate seek skips.
    func videoDecodeLoop() {
        guard let first = videoDecoder else { return }
        var lastTime = -first.frameDuration
        var lastSerial = 0
        var upright: UprightFilter?
        // The last picture an accurate seek skipped: shown when nothing comes after the target
        // (a target past the video's end, the sound going on), instead of the picture before.
        let skipped = OwnedFrame()
        var skippedAt: (serial: Int, time: Double, duration: Double)?
        decodeLoop(first, video: true, drained: { decoderSerial in
            guard let held = skippedAt, held.serial == decoderSerial else { return }
            skippedAt = nil
            lock.withLock {
                guard decoderSerial == serial, discardBefore?.serial == decoderSerial, !aborted else { return }
                _ = queueVideoFrame(skipped.frame, serial: decoderSerial, time: held.time, duration: held.duration)
            }
        }) { frame, decoderSerial, decoder in
            let frameDuration = decoder.frameDuration
            // A frame without a time follows the one before, in the same serial; the first
            // after a seek has no "before": its decoding time stands in.
            let previous: Double? = decoderSerial == lastSerial ? lastTime : nil
            let time = mediaTime(frame.pointee.best_effort_timestamp, decoder.timeBase)
                ?? previous.map { $0 + frameDuration }
                ?? mediaTime(frame.pointee.pkt_dts, decoder.timeBase)
                ?? lock.withLock { discardBefore.flatMap { $0.serial == decoderSerial ? $0.time : nil } ?? 0 }
            lastTime = time
            lastSerial = decoderSerial
            if decoder.rotation != 0 {
                if upright.map({ $0.turn != decoder.rotation || !$0.accepts(frame) }) ?? true {
                    upright = UprightFilter(for: frame, turn: decoder.rotation)
                    if upright == nil { PlaybackLog.log(.warning, "ffmpeg", "cannot build the filter turning pictures by \(decoder.rotation)°") }
                }
                if let upright, !upright.turnUpright(frame) {
                    PlaybackLog.log(.warning, "ffmpeg", "a picture could not be turned upright; dropped")
                    return lock.withLock { !aborted }
                }
            }
            return lock.withLock {
                if wouldDiscard(time: time, span: frameDuration, serial: decoderSerial) {
                    av_frame_unref(skipped.frame)
                    if decoderSerial == serial {
                        av_frame_move_ref(skipped.frame, frame)
                        skippedAt = (decoderSerial, time, frameDuration)
                    } else {
                        av_frame_unref(frame)
                    }
                    return !aborted
                }
                if skippedAt != nil {
                    av_frame_unref(skipped.frame)
                    skippedAt = nil
                }
                return queueVideoFrame(frame, serial: decoderSerial, time: time, duration: frameDuration)
            }
        }
    }

    /// Queues a decoded picture for the presenter once the queue has room (lock held). False
    /// when the session is ending; a picture from before the latest seek is let go.
    private func queueVideoFrame(_ frame: UnsafeMutablePointer<AVFrame>, serial decoderSerial: Int, time: Double, duration: Double) -> Bool {
        while videoFrames.isFull && !aborted && decoderSerial == serial { lock.wait(videoFrameSpace) }
        if aborted { return false }
        if decoderSerial != serial {
            av_frame_unref(frame)
            return true
        }
        videoFrames.push(frame, serial: decoderSerial, time: time, duration: duration)
        videoFramesDecoded += 1
        presenterWake.broadcast()
        return true
    }

    /// Decodes audio packets, drops what an accurate seek skips, stretches by the playback
    /// rate with atempo and queues the frames for the audio output.
    func audioDecodeLoop() {
        guard let first = audioDecoder else { return }
        var tempo: TempoFilter?
        var tempoSerial = -1
        var tempoStart = 0.0
        var tempoSamplesOut = 0
        let stretched = OwnedFrame()
        var nextTime = 0.0
        decodeLoop(first, video: false) { frame, decoderSerial, decoder in
            let sampleRate = Double(max(1, frame.pointee.sample_rate))
            var time = mediaTime(frame.pointee.best_effort_timestamp, decoder.timeBase) ?? nextTime
            var span = Double(frame.pointee.nb_samples) / sampleRate
            nextTime = time + span
            let (currentRate, discard, target) = lock.withLock {
                (rate, wouldDiscardAudio(time: time, span: span, serial: decoderSerial),
                 audioDiscardBefore.flatMap { $0.serial == decoderSerial ? $0.time : nil })
            }
            if discard {
                av_frame_unref(frame)
                return lock.withLock { !aborted }
            }
            if let target, target > time {
                // The frame straddles the target of an accurate seek: cut the samples before it.
                let skipped = Self.dropLeadingSamples(frame, count: Int(((target - time) * sampleRate).rounded()))
                time += Double(skipped) / sampleRate
                span = Double(frame.pointee.nb_samples) / sampleRate
            }
            if currentRate == 1 {
                tempo = nil
                return pushAudio(frame, serial: decoderSerial, time: time, duration: span, rate: 1)
            }
            if tempo == nil || tempo!.rate != currentRate || tempoSerial != decoderSerial || !tempo!.accepts(frame) {
                tempo = TempoFilter(for: frame, rate: currentRate)
                tempoSerial = decoderSerial
                tempoStart = time
                tempoSamplesOut = 0
                if tempo == nil { PlaybackLog.log(.warning, "ffmpeg", "atempo: cannot build the filter for rate \(currentRate)") }
            }
            guard let filter = tempo, filter.push(frame) else {
                return pushAudio(frame, serial: decoderSerial, time: time, duration: span, rate: 1)
            }
            while filter.pull(into: stretched.frame) {
                let count = Int(stretched.frame.pointee.nb_samples)
                let start = tempoStart + Double(tempoSamplesOut) * currentRate / sampleRate
                tempoSamplesOut += count
                let covered = Double(count) * currentRate / sampleRate
                if !pushAudio(stretched.frame, serial: decoderSerial, time: start, duration: covered, rate: currentRate) {
                    return false
                }
            }
            return true
        }
    }

    /// Drops the first `count` samples of an audio frame by moving its data pointers (the
    /// buffers stay referenced by the frame); returns how many were dropped.
    static func dropLeadingSamples(_ frame: UnsafeMutablePointer<AVFrame>, count: Int) -> Int {
        let total = Int(frame.pointee.nb_samples)
        guard count > 0, count < total, let planes = frame.pointee.extended_data else { return 0 }
        let format = AVSampleFormat(frame.pointee.format)
        let bytesPerSample = Int(av_get_bytes_per_sample(format))
        let channels = Int(frame.pointee.ch_layout.nb_channels)
        guard bytesPerSample > 0, channels > 0 else { return 0 }
        let planar = av_sample_fmt_is_planar(format) != 0
        let planeCount = planar ? channels : 1
        let step = count * bytesPerSample * (planar ? 1 : channels)
        for plane in 0..<planeCount {
            guard let base = planes[plane] else { return 0 }
            planes[plane] = base + step
        }
        // extended_data is the frame's own `data` array for up to 8 planes; keep both in step.
        if UnsafeMutableRawPointer(planes) != UnsafeMutableRawPointer(frame).advanced(by: MemoryLayout<AVFrame>.offset(of: \AVFrame.data)!) {
            withUnsafeMutableBytes(of: &frame.pointee.data) { raw in
                let data = raw.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)
                for plane in 0..<min(planeCount, data.count) { data[plane] = planes[plane] }
            }
        }
        frame.pointee.linesize.0 -= Int32(step)
        frame.pointee.nb_samples = Int32(total - count)
        return count
    }

    /// True when a frame at `time` lasting `span` ends before the target of an accurate seek,
    /// or belongs to an old serial (lock held).
    private func wouldDiscard(time: Double, span: Double, serial frameSerial: Int) -> Bool {
        frameSerial != serial || endsBeforeSeekTarget(time: time, span: span, serial: frameSerial)
    }

    /// Like `wouldDiscard` for audio: an old audio serial, or samples that end before the
    /// target of an accurate seek or the position of a track switch (lock held).
    private func wouldDiscardAudio(time: Double, span: Double, serial frameSerial: Int) -> Bool {
        guard frameSerial == audioSerial else { return true }
        guard let audioDiscardBefore, audioDiscardBefore.serial == frameSerial else { return false }
        return time + span <= audioDiscardBefore.time + 0.001
    }

    /// True when something at `time` lasting `span` ends before the target of an accurate
    /// seek of `itemSerial` (lock held).
    private func endsBeforeSeekTarget(time: Double, span: Double, serial itemSerial: Int) -> Bool {
        guard let discardBefore, discardBefore.serial == itemSerial else { return false }
        return time + span <= discardBefore.time + 0.001
    }

    /// True when a video packet's picture ends before the target of an accurate seek of its
    /// serial, so it is dropped once decoded (packets without a timestamp: false).
    private func isBeforeSeekTarget(_ packet: UnsafeMutablePointer<AVPacket>, serial packetSerial: Int,
                                    decoder: CodecDecoder) -> Bool {
        guard let time = mediaTime(packet.pointee.pts, decoder.timeBase) else { return false }
        let span = packet.pointee.duration > 0 ? Double(packet.pointee.duration) * pk_av_q2d(decoder.timeBase) : decoder.frameDuration
        return lock.withLock { endsBeforeSeekTarget(time: time, span: span, serial: packetSerial) }
    }

    /// Queues one audio frame for the output, waiting for room; false when aborted.
    private func pushAudio(_ frame: UnsafeMutablePointer<AVFrame>, serial frameSerial: Int, time: Double,
                           duration: Double, rate frameRate: Double) -> Bool {
        lock.withLock {
            while audioFrames.isFull && !aborted && frameSerial == audioSerial { lock.wait(audioFrameSpace) }
            if aborted { return false }
            if frameSerial != audioSerial {
                av_frame_unref(frame)
                return true
            }
            audioFrames.push(frame, serial: frameSerial, time: time, duration: duration, rate: frameRate)
            audioFramesDecoded += 1
            if !prepared || seekInProgress != nil || stalled || !hasVideo { presenterWake.broadcast() }
            return true
        }
    }

    /// Takes the next packet of one stream, waiting for it; nil once aborted.
    private func nextPacket(video: Bool) -> PacketQueue.Entry? {
        lock.withLock {
            while !aborted {
                if let entry = video ? videoPackets.get() : audioPackets.get() {
                    if !queuesAboveLowWater { readerWake.broadcast() }
                    return entry
                }
                lock.wait(video ? videoPacketsReady : audioPacketsReady)
            }
            return nil
        }
    }

    /// The send/receive loop shared by both decoders. A packet from a new serial flushes the
    /// decoder first; the end-of-stream marker drains it and records that it finished; a
    /// switch marker hands the packets after it to another decoder (a track switch).
    /// `deliver` takes each decoded frame (and must leave it empty) with its serial and
    /// decoder; false stops the loop.
    private func decodeLoop(_ first: CodecDecoder, video: Bool, drained: (Int) -> Void = { _ in },
                            deliver: (UnsafeMutablePointer<AVFrame>, Int, CodecDecoder) -> Bool) {
        var decoder = first
        var context = decoder.context
        let frame = OwnedFrame()
        var decoderSerial = 0
        while let entry = nextPacket(video: video) {
            if let next = entry.switchTo {
                decoder = next
                context = next.context
                decoderSerial = entry.serial
                continue
            }
            if entry.serial != decoderSerial {
                avcodec_flush_buffers(context)
                decoderSerial = entry.serial
            }
            if video {
                // On the way to an accurate seek's target no picture is shown: pictures no
                // other picture refers to need not be decoded at all.
                let skip = entry.packet.map { isBeforeSeekTarget($0, serial: entry.serial, decoder: decoder) } ?? false
                let wanted = skip ? AVDISCARD_NONREF : AVDISCARD_DEFAULT
                if context.pointee.skip_frame != wanted { context.pointee.skip_frame = wanted }
            }
            let sent = avcodec_send_packet(context, entry.packet)
            if let packet = entry.packet { lock.withLock { packetPool.give(packet) } }
            if sent < 0, sent != pk_av_error_eagain(), sent != pk_av_error_eof() {
                lock.withLock { lastDecodeError = sent }
                PlaybackLog.log(.debug, "ffmpeg", "decode: \(FFmpegErrors.text(sent))")
            }
            var failures = 0
            while true {
                let status = avcodec_receive_frame(context, frame.frame)
                if status == pk_av_error_eagain() { break }
                if status == pk_av_error_eof() {
                    avcodec_flush_buffers(context)
                    drained(decoderSerial)
                    lock.withLock {
                        if video { videoDecoderFinished = decoderSerial } else { audioDecoderFinished = decoderSerial }
                        presenterWake.broadcast()
                    }
                    break
                }
                if status < 0 {
                    // A frame that fails to decode is skipped; the decoder goes on (and must
                    // still be drained to its end at the end of the stream).
                    lock.withLock { lastDecodeError = status }
                    failures += 1
                    if failures > 64 { break }
                    continue
                }
                if !deliver(frame.frame, decoderSerial, decoder) { return }
            }
        }
    }
}
#endif

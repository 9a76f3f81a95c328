#if FFmpeg
import CFFmpeg
import FoundationEssentials
import PlaybackKit
import SubtitleOverlay

// MARK: - The streams as tracks

/// An audio, video or subtitle stream of the source, as it is listed.
struct StreamTrack {
    var kind: TrackKind
    var index: Int32
    var title: String?
    var language: String?
    var codec: String
    var isDefault: Bool
    var isForced: Bool
    /// The engine can play it (a decoder exists; subtitles: text subtitles).
    var isPlayable: Bool
}

/// An audio or video track switch for the read thread: the stream to play, nil for none.
struct TrackRequest {
    var kind: TrackKind
    var streamIndex: Int32?
}

extension FFmpegSession {
    // MARK: - Opening (read thread)

    /// Lists the streams, prepares the ones that may be switched to (audio streams are read
    /// into idle queues, text subtitle streams decoded as they come), and reports the tags,
    /// the chapters, the external subtitle files of the options and the tracks, before the
    /// other threads start.
    func openTracks(_ input: FormatInput) {
        let context = input.context
        var fonts: [EmbeddedFont] = []
        for index in 0..<Int32(context.pointee.nb_streams) {
            let stream = input.stream(index)
            let parameters = stream.pointee.codecpar.pointee
            let kind: TrackKind
            switch parameters.codec_type {
            case AVMEDIA_TYPE_VIDEO where stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC == 0: kind = .video
            case AVMEDIA_TYPE_AUDIO: kind = .audio
            case AVMEDIA_TYPE_SUBTITLE: kind = .subtitle
            case AVMEDIA_TYPE_ATTACHMENT:
                if let font = Self.font(in: stream) { fonts.append(font) }
                continue
            default: continue
            }
            let playable = kind == .subtitle ? SubtitleDecoder.decodesText(stream) : avcodec_find_decoder(parameters.codec_id) != nil
            streamTracks.append(StreamTrack(
                kind: kind, index: index, title: Self.tag("title", in: stream.pointee.metadata),
                language: Self.tag("language", in: stream.pointee.metadata),
                codec: String(cString: avcodec_get_name(parameters.codec_id)),
                isDefault: stream.pointee.disposition & AV_DISPOSITION_DEFAULT != 0,
                isForced: stream.pointee.disposition & AV_DISPOSITION_FORCED != 0, isPlayable: playable))
            if kind == .audio, playable, index != audioStreamIndex, hasAudio {
                stream.pointee.discard = AVDISCARD_DEFAULT
                idleAudioPackets[index] = PacketQueue()
            } else if kind == .subtitle, playable {
                do throws(PlaybackError) {
                    let decoder = try SubtitleDecoder(stream: stream, timeOffset: startTime)
                    subtitleDecoders[index] = decoder
                    subtitles.addStream(index, header: decoder.header)
                    stream.pointee.discard = AVDISCARD_DEFAULT
                } catch {
                    PlaybackLog.log(.warning, "ffmpeg", "subtitle stream \(index): \(error)")
                }
            }
        }
        subtitles.addFonts(fonts)
        sink.metadataChanged(metadataTags(input))
        sink.chaptersChanged(chapters(input))
        for url in options.subtitleURLs { loadSubtitleFile(url) }
        // Then the files added while opening, in the order they came.
        while let url = lock.withLock({ () -> URL? in
            if subtitleFilesWhileOpening.isEmpty { tracksListed = true }
            return subtitleFilesWhileOpening.isEmpty ? nil : subtitleFilesWhileOpening.removeFirst()
        }) {
            loadSubtitleFile(url)
        }
        reportTracks()
    }

    /// Every tag of the container (or, when it has none, of the audio stream playing).
    func metadataTags(_ input: FormatInput) -> [String: String] {
        var tags = Self.tags(in: input.context.pointee.metadata)
        if tags.isEmpty, audioStreamIndex >= 0 {
            tags = Self.tags(in: input.stream(audioStreamIndex).pointee.metadata)
            tags["language"] = nil
        }
        return tags
    }

    /// The chapters at the times the file gives (from the container's start), in order.
    private func chapters(_ input: FormatInput) -> [Chapter] {
        let context = input.context.pointee
        var list: [Chapter] = []
        for index in 0..<Int(context.nb_chapters) {
            guard let chapter = context.chapters[index]?.pointee else { continue }
            let timeBase = pk_av_q2d(chapter.time_base)
            let start = max(0, Double(chapter.start) * timeBase - containerStartTime)
            let end = chapter.end > chapter.start ? Double(chapter.end) * timeBase - containerStartTime : nil
            list.append(Chapter(title: Self.tag("title", in: chapter.metadata), start: start, end: end))
        }
        return list.sorted { $0.start < $1.start }
    }

    /// The value of `key` in an AVDictionary, nil when absent or empty.
    static func tag(_ key: String, in dictionary: OpaquePointer?) -> String? {
        guard let entry = av_dict_get(dictionary, key, nil, 0), let value = entry.pointee.value else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    /// Every entry of an AVDictionary.
    static func tags(in dictionary: OpaquePointer?) -> [String: String] {
        var tags: [String: String] = [:]
        var entry: UnsafeMutablePointer<AVDictionaryEntry>?
        while let next = av_dict_get(dictionary, "", entry, AV_DICT_IGNORE_SUFFIX) {
            entry = next
            guard let key = next.pointee.key, let value = next.pointee.value else { continue }
            tags[String(cString: key)] = String(cString: value)
        }
        return tags
    }

    /// The font an attachment stream carries (Matroska fonts for ASS subtitles), if any.
    private static func font(in stream: UnsafeMutablePointer<AVStream>) -> EmbeddedFont? {
        let parameters = stream.pointee.codecpar.pointee
        guard let data = parameters.extradata, parameters.extradata_size > 0 else { return nil }
        let mime = tag("mimetype", in: stream.pointee.metadata)?.lowercased() ?? ""
        let name = tag("filename", in: stream.pointee.metadata) ?? "font"
        let isFont = parameters.codec_id == AV_CODEC_ID_TTF || parameters.codec_id == AV_CODEC_ID_OTF
            || mime.contains("font") || mime.contains("truetype") || mime.contains("opentype")
        guard isFont else { return nil }
        return EmbeddedFont(name: name, data: Array(UnsafeBufferPointer(start: data, count: Int(parameters.extradata_size))))
    }

    // MARK: - Reporting

    /// Reports the whole track list with the selection as it is now. The subtitle book's
    /// lock is held while the list is made and sent, so lists go out in the order of the
    /// changes they show.
    func reportTracks() {
        subtitles.lock.withLock {
            let (video, audio, videoOff, audioOff) = lock.withLock {
                (videoStreamIndex, audioStreamIndex, videoHidden, audioMuted)
            }
            var list: [EngineTrack] = streamTracks.map { track in
                let selected: Bool
                switch track.kind {
                case .video: selected = track.index == video && !videoOff
                case .audio: selected = track.index == audio && !audioOff
                case .subtitle: selected = subtitles.selected == .stream(track.index)
                }
                return EngineTrack(kind: track.kind, engineID: "\(track.index)", title: track.title,
                                   language: track.language, codec: track.codec, isDefault: track.isDefault,
                                   isForced: track.isForced, isSelected: selected)
            }
            for (number, file) in subtitles.externals.enumerated() {
                list.append(EngineTrack(kind: .subtitle, engineID: "external:\(number)", title: file.title,
                                        codec: file.codec, isExternal: true,
                                        isSelected: subtitles.selected == .external(number)))
            }
            sink.tracksChanged(list)
        }
    }

    // MARK: - Selecting (engine queue)

    /// Carries out a selection: subtitles at once, audio and video on the read thread.
    func selectTrack(kind: TrackKind, engineID: String?) {
        switch kind {
        case .subtitle:
            let id = engineID.flatMap(Self.subtitleSource)
            if let id, !subtitles.contains(id) { return }
            let position = lock.withLock { seekInProgress?.target ?? clock.now() }
            if subtitles.select(id, at: position) { startSubtitleRenderer() }
            reportTracks()
        case .audio, .video:
            var index: Int32?
            if let engineID {
                guard let number = Int32(engineID),
                      streamTracks.contains(where: { $0.index == number && $0.kind == kind && $0.isPlayable }) else { return }
                index = number
            }
            lock.withLock {
                trackRequests.append(TrackRequest(kind: kind, streamIndex: index))
                readerWake.broadcast()
            }
        }
    }

    /// The subtitle source an engine id names.
    private static func subtitleSource(_ engineID: String) -> SubtitleSourceID? {
        if engineID.hasPrefix("external:") { return Int(engineID.dropFirst("external:".count)).map { .external($0) } }
        return Int32(engineID).map { .stream($0) }
    }

    /// Reads an external subtitle file on a thread of its own, then lists it (while opening:
    /// on the read thread, after the files of the options).
    func addSubtitle(_ url: URL) {
        let later = lock.withLock { () -> Bool in
            if !tracksListed { subtitleFilesWhileOpening.append(url) }
            return aborted || !tracksListed
        }
        guard !later else { return }
        spawn("ff.sub-file") { session in
            session.loadSubtitleFile(url)
            session.reportTracks()
        }
    }

    /// Shifts the drawn subtitles.
    func setSubtitleDelay(_ seconds: Double) { subtitles.setDelay(seconds) }

    /// Reads and decodes a subtitle file into a new source; a file that cannot be read is
    /// logged and left out.
    func loadSubtitleFile(_ url: URL) {
        do throws(PlaybackError) {
            let file = try SubtitleFile.load(url, options: options, interrupt: interrupt)
            if let encoding = file.encoding {
                PlaybackLog.log(.debug, "ffmpeg", "subtitle \(url.lastPathComponent): not UTF-8, read as \(encoding)")
            }
            subtitles.addFile(file)
        } catch {
            if !interrupt.isRaised { PlaybackLog.log(.warning, "ffmpeg", "subtitle file: \(error)") }
        }
    }

    /// Starts libass on a thread of its own (fontconfig may take a moment).
    private func startSubtitleRenderer() {
        spawn("ff.sub-fonts") { session in
            let book = session.subtitles
            let renderer = SubtitleRenderer(fonts: book.fontsForRenderer)
            if renderer == nil { PlaybackLog.log(.warning, "ffmpeg", "libass: cannot start; subtitles are not drawn") }
            book.install(renderer)
        }
    }

    // MARK: - Switching (read thread)

    /// Carries out the queued audio and video switches, then reports the tracks.
    func carryOutTrackRequests(_ requests: [TrackRequest], in format: FormatInput) {
        for request in requests {
            switch request.kind {
            case .audio: switchAudio(to: request.streamIndex, in: format)
            case .video: switchVideo(to: request.streamIndex, in: format)
            case .subtitle: break
            }
        }
        reportTracks()
    }

    /// Deselects the audio or video playing (`index` nil: muted or hidden) or brings it back
    /// (`index` is the stream playing); returns `index` when it names another stream to switch to.
    private func streamToSwitch(_ kind: TrackKind, to index: Int32?) -> Int32? {
        lock.withLock {
            let playing = kind == .audio ? audioStreamIndex : videoStreamIndex
            guard let index, index != playing else {
                if kind == .audio { audioMuted = index == nil } else { videoHidden = index == nil }
                return nil
            }
            return index
        }
    }

    /// Plays audio stream `index` from the position on (nil: silence, the clock running): its
    /// idle packets from the position become the audio queue behind a switch of decoder, the
    /// frames decoded from the old stream are dropped, and samples before the position are cut.
    private func switchAudio(to index: Int32?, in format: FormatInput) {
        guard let index = streamToSwitch(.audio, to: index) else { return }
        guard hasAudio, lock.withLock({ idleAudioPackets[index] != nil }) else { return }
        let decoder: CodecDecoder
        do throws(PlaybackError) {
            decoder = try CodecDecoder(stream: format.stream(index))
        } catch {
            PlaybackLog.log(.warning, "ffmpeg", "audio track \(index): \(error)")
            return
        }
        audioTimeBase = format.stream(index).pointee.time_base
        lock.withLock {
            let position = seekInProgress?.target ?? clock.now()
            var playing = audioPackets
            var idle = PacketQueue()
            idle.append(contentsOf: &playing, serial: 0)
            var next = idleAudioPackets.removeValue(forKey: index) ?? PacketQueue()
            next.dropPackets(endingBefore: position, into: packetPool)
            audioSerial += 1
            var fresh = PacketQueue()
            fresh.putSwitch(to: decoder, serial: audioSerial)
            fresh.append(contentsOf: &next, serial: audioSerial)
            if readerAtEnd { fresh.put(nil, serial: audioSerial, packetDuration: 0) }
            fresh.lastQueuedTime = max(position, audioPackets.lastQueuedTime)
            audioPackets = fresh
            idleAudioPackets[audioStreamIndex] = idle
            audioStreamIndex = index
            audioMuted = false
            audioFrames.flush()
            audioDiscardBefore = (audioSerial, position)
            wakeAll()
        }
    }

    /// Plays video stream `index` (nil: pictures not drawn): the queued pictures of the old
    /// stream play out, then the new one's from its next keyframe.
    private func switchVideo(to index: Int32?, in format: FormatInput) {
        guard let index = streamToSwitch(.video, to: index), hasVideo else { return }
        let stream = format.stream(index)
        let guessed = av_guess_frame_rate(format.context, stream, nil)
        let frameDuration = guessed.num > 0 && guessed.den > 0 ? Double(guessed.den) / Double(guessed.num) : videoFrameDuration
        let decoder: CodecDecoder
        do throws(PlaybackError) {
            decoder = try CodecDecoder(stream: stream, frameDuration: frameDuration)
        } catch {
            PlaybackLog.log(.warning, "ffmpeg", "video track \(index): \(error)")
            return
        }
        format.stream(videoStreamIndex).pointee.discard = AVDISCARD_ALL
        stream.pointee.discard = AVDISCARD_DEFAULT
        videoTimeBase = stream.pointee.time_base
        videoFrameDuration = frameDuration
        videoAwaitingKeyframe = true
        let aspect = Self.containerAspect(of: stream, rotation: decoder.rotation)
        pictureLock.withLock { videoAspect = aspect }
        lock.withLock {
            videoPackets.putSwitch(to: decoder, serial: serial)
            videoStreamIndex = index
            videoHidden = false
            videoPacketsReady.broadcast()
        }
    }

    // MARK: - Subtitle packets (read thread)

    /// Decodes a packet of a text subtitle stream into the book; false when `packet` is not one.
    func takeSubtitlePacket(_ packet: UnsafeMutablePointer<AVPacket>) -> Bool {
        let index = packet.pointee.stream_index
        guard let decoder = subtitleDecoders[index] else { return false }
        subtitles.add(decoder.decode(packet), to: .stream(index))
        return true
    }

    /// After a seek to `target`: the subtitle decoders start afresh and the selected
    /// subtitle's cues are reported again.
    func restartSubtitles(at target: Double) {
        for decoder in subtitleDecoders.values { decoder.flush() }
        subtitles.restart(at: target)
    }
}
#endif

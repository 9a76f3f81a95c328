#if GStreamer
import Dispatch
import FoundationEssentials
import MediaProbe
import PlaybackKit

// Tracks, tags, chapters and subtitle cues. playbin numbers the streams of each kind (its
// current-video/-audio/-text); the engine id of a track is that number. For a local file
// libavformat's probe (`StreamProbe`) completes what playbin does not say: stream flags,
// titles, languages, FFmpeg's codec names, the container's tags and chapters. The external
// subtitle file is playbin's "suburi", its last text stream; playbin takes one such file.
// Cues are read ahead from the file (`SubtitleCueReader`). Everything here runs on the loop
// thread.

extension GStreamerSession {
    // MARK: - Opening

    /// Before the pipeline is built: probes a local file and takes the first subtitle file of
    /// the options (playbin plays one external file at a time; further ones are left out).
    func prepareMediaModel() {
        if source.isFile {
            do {
                probe = try StreamProbe.read(source.url)
            } catch {
                PlaybackLog.log(.warning, "gstreamer", "\(error.message)")
            }
        }
        externalSubtitle = openingSubtitleFetched ? openingSubtitleCopy : options.subtitleURLs.first
        if options.subtitleURLs.count > 1 {
            PlaybackLog.log(.warning, "gstreamer", "playbin plays one subtitle file: \(options.subtitleURLs.count - 1) more left out")
        }
    }

    /// Prerolled, before `sink.prepared`: the tracks, the tags, the chapters and the cues of
    /// the subtitle playbin shows.
    func reportMediaModel() {
        pipeline?.followSubtitleDrawing()
        sink.tracksChanged(engineTracks())
        if let probe {
            sink.metadataChanged(probe.tags)
            if !probe.chapters.isEmpty { sink.chaptersChanged(probe.chapters) }
        }
        reportSubtitleCues()
    }

    // MARK: - The track list

    /// playbin's streams as engine tracks, completed from the probe where its streams of a
    /// kind are as many as playbin's embedded ones (else its own tags say the language and
    /// title); the external file last.
    func engineTracks() -> [EngineTrack] {
        guard let pipeline else { return [] }
        var tracks: [EngineTrack] = []
        for kind in [TrackKind.video, .audio, .subtitle] {
            let count = pipeline.streamCount(kind)
            let current = kind == .audio ? pendingAudioSwitch ?? pipeline.currentStream(kind) : pipeline.currentStream(kind)
            let embeddedCount = kind == .subtitle ? embeddedSubtitleCount(pipeline) : count
            let probed = probe?.streams.filter { $0.kind == kind } ?? []
            for index in 0..<embeddedCount {
                let stream = probed.count == embeddedCount ? probed[index] : nil
                // Without the probe (remote media), playbin's own tags.
                let tags: (language: String?, title: String?) = stream == nil ? pipeline.streamTags(kind, index: index) : (stream?.language, stream?.title)
                tracks.append(EngineTrack(
                    kind: kind, engineID: String(index), title: tags.title, language: tags.language,
                    codec: stream?.codec, isDefault: stream?.isDefault ?? false, isForced: stream?.isForced ?? false,
                    isSelected: current == index))
            }
            if kind == .subtitle, let externalSubtitle, count > embeddedCount {
                let codec = externalSubtitle.isFileURL ? (try? StreamProbe.read(externalSubtitle))?.streams.first?.codec : nil
                tracks.append(EngineTrack(kind: .subtitle, engineID: String(embeddedCount), codec: codec,
                                          isExternal: true, isSelected: current == embeddedCount))
            }
        }
        return tracks
    }

    /// playbin's text streams that are the media's own: as many as the probe found (the
    /// external file, when playbin could read it, comes after them), else all but the file's.
    func embeddedSubtitleCount(_ pipeline: GStreamerPipeline) -> Int {
        let count = pipeline.streamCount(.subtitle)
        if let probe { return min(count, probe.streams.filter { $0.kind == .subtitle }.count) }
        return externalSubtitle != nil ? max(0, count - 1) : count
    }

    // MARK: - Selections

    /// Plays stream `engineID` of `kind` (none when nil) and reports the new list, and the
    /// new subtitle's cues.
    func selectTrackNow(kind: TrackKind, engineID: String?) {
        guard let pipeline else { return }
        let index = engineID.flatMap { Int($0) }
        if engineID != nil, index == nil { return }
        let shown = kind == .subtitle ? pipeline.currentStream(.subtitle) : nil
        if kind == .audio, phase == .ready, !(wantsPlaying && !buffering) {
            pendingAudioSwitch = .some(index)
            sink.tracksChanged(engineTracks())
            return
        }
        if kind == .audio { pendingAudioSwitch = nil }
        pipeline.selectStream(kind, index: index)
        if kind == .subtitle, let index, index != shown { restartTextStream() }
        sink.tracksChanged(engineTracks())
        if kind == .subtitle { reportSubtitleCues() }
    }

    /// A text stream newly shown in a pipeline that has started needs a flushing seek to where
    /// playback is, else playback never finishes: while paused, playbin's text selector holds
    /// back the streams not shown, the one shown until then may have delivered its end already
    /// (a short local file is read ahead whole while prerolling), and the newly shown one then
    /// never delivers its end (film.mkv's ASS track chosen at prepare). The seek is sent once
    /// playing (`applyWantedState`): sent while paused right after an audio switch, it can
    /// deadlock in playbin. It is not reported, like a rate seek; the engine's own seek, which
    /// flushes too, takes its place.
    func restartTextStream() {
        guard phase == .ready, !atEnd, resumeAfterReopen == nil else { return }
        textRestartOwed = true
        if wantsPlaying, !buffering, seekInFlight == nil { applyWantedState() }
    }

    // MARK: - Subtitle files

    /// Adds `url` as playbin's subtitle file once prepared: playbin reads "suburi" only when
    /// it starts, so the pipeline goes to READY and back, then returns to where it was
    /// (`resumeAfterReopening`) with the same video and audio streams. playbin plays one file: with one playing already, `url` is
    /// left out (a warning in the log) and the list does not change.
    func addSubtitleNow(_ url: URL) {
        guard phase == .ready, let pipeline else { return }
        guard externalSubtitle == nil else {
            PlaybackLog.log(.warning, "gstreamer", "playbin plays one subtitle file: \(url.lastPathComponent) left out")
            return
        }
        guard url.isFileURL else {
            fetchSubtitle(url) { [weak self] copy in
                if let copy { self?.addSubtitleNow(copy) }
            }
            return
        }
        let position = atEnd ? (duration > 0 ? duration : 0) : (pipeline.position() ?? 0)
        var streams: [TrackKind: Int?] = [:]
        for kind in [TrackKind.video, .audio] { streams[kind] = pipeline.currentStream(kind) }
        if let pending = pendingAudioSwitch { streams[.audio] = .some(pending) }
        pendingAudioSwitch = nil
        externalSubtitle = url
        stopPositionTimer()
        stopSeekSettleTimer()
        seekInFlight = nil
        pipeline.setState(.ready)
        pipeline.dropPendingMessages()
        pipeline.setSubtitleFile(url)
        // playbin links no text stream with its text flag off; the player selects the new
        // file once it is listed.
        pipeline.selectStream(.subtitle, index: 0)
        resumeAfterReopen = (position, streams)
        if pipeline.setState(.paused) == .failure {
            resumeAfterReopen = nil
            fail(PlaybackError(code: .engine, message: "addSubtitle: the pipeline refused to restart with \(url.lastPathComponent)"))
        }
    }

    /// Prerolled again after `addSubtitleNow`: reports the list with the new file and goes back
    /// to where playback was (a seek that is not reported; the rate comes with it).
    func resumeAfterReopening() {
        guard let (position, streams) = resumeAfterReopen, let pipeline, pipeline.waitForState(timeout: 0).isSettled else { return }
        resumeAfterReopen = nil
        // Only streams that played: a kind playbin had none of then keeps its flag.
        for (kind, index) in streams { if let index { pipeline.selectStream(kind, index: index) } }
        sink.tracksChanged(engineTracks())
        rateSeekOwed = false
        if position > 0 || rate != 1, pipeline.seek(to: position, rate: rate, mode: .accurate) {
            seekInFlight = .rate
            watchSeekSettling()
        } else {
            applyWantedState()
        }
    }

    /// Subtitles drawn at a size that follows the picture's height.
    func sizeSubtitleFont() {
        guard naturalSize.height > 0 else { return }
        pipeline?.setSubtitleFontSize(max(10, Int((Double(naturalSize.height) * 0.15).rounded())))
    }

    /// Fetches the subtitle file at the http(s) `url` off the loop thread (with the app's
    /// headers and authorities) into the session's folder and hands the copy (nil when it
    /// could not be fetched, with a warning) to `then` on the loop. playbin reads a subtitle
    /// file over http in push mode, where its typefinder takes a small ASS file for plain
    /// text and drops it; a local file it reads whole.
    func fetchSubtitle(_ url: URL, then: @escaping @Sendable (URL?) -> Void) {
        let folder = subtitleCopies ?? FileManager.default.temporaryDirectory.appendingPathComponent("playbackkit-subtitles-\(UUID().uuidString)")
        subtitleCopies = folder
        let into = folder.appendingPathComponent(UUID().uuidString), options = options, loop = loop
        DispatchQueue.global(qos: .userInitiated).async {
            var copy: URL?
            do {
                copy = try SubtitleCueReader.localCopy(of: url, in: into, options: options)
            } catch {
                PlaybackLog.log(.warning, "gstreamer", "the subtitle file \(url.absoluteString) is left out: \(error)")
            }
            _ = loop.post { then(copy) }
        }
    }

    // MARK: - Cues

    /// Every cue of the subtitle shown now, read from its file: the media (local files) or the
    /// external file (always local: one over http(s) plays from its copy). Nothing when none
    /// shows or the media is remote.
    func reportSubtitleCues() {
        guard let pipeline, let index = pipeline.currentStream(.subtitle) else { return }
        let embeddedCount = embeddedSubtitleCount(pipeline)
        let file: URL, subtitleIndex: Int
        if index < embeddedCount {
            guard source.isFile else { return }
            (file, subtitleIndex) = (source.url, index)
        } else {
            guard let externalSubtitle, externalSubtitle.isFileURL else { return }
            (file, subtitleIndex) = (externalSubtitle, 0)
        }
        do {
            for cue in try SubtitleCueReader.cues(in: file, subtitleIndex: subtitleIndex) { sink.subtitleCue(cue) }
        } catch {
            PlaybackLog.log(.warning, "gstreamer", "\(error.message)")
        }
    }
}
#endif

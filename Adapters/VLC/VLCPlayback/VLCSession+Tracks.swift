#if VLC
import CVLC
import Dispatch
import FoundationEssentials
import MediaProbe
import PlaybackKit
import SubtitleOverlay

// MARK: - Tracks, subtitles, tags and chapters

/// libVLC 3 lists streams without default or forced flags, FFmpeg's codec names or most tags,
/// and hands out no subtitle text: for local files the container is read once more with
/// libavformat (`StreamProbe`), and the cues of the selected subtitle come from the shared
/// `SubtitleCueReader`. libVLC's ES ids follow the container's stream order within each kind
/// (mkv, mp4), so the n-th libVLC stream of a kind is the n-th stream of that kind the probe lists.
extension VLCSession {
    /// Reads the container of a local file (nil for network sources or unreadable files).
    func probeSource() {
        guard source.isFile else { return }
        probe = try? StreamProbe.read(source.url)
    }

    /// The engine tracks: embedded streams in container order, then added files in the order
    /// they were added, each with libVLC's own selection.
    func engineTracks() -> [EngineTrack] {
        guard let player else { return [] }
        let streams = embeddedStreams(player)
        var tracks: [EngineTrack] = []
        var selected = Dictionary(uniqueKeysWithValues: TrackKind.allCases.map { ($0, player.selectedStream($0)) })
        if subtitleOverlay != nil { selected[.subtitle] = drawnSubtitle ?? -1 }
        if let probe {
            var used: [TrackKind: Int] = [:]
            for stream in probe.streams {
                let place = used[stream.kind, default: 0]
                used[stream.kind] = place + 1
                let ofKind = streams.filter { $0.kind == stream.kind }
                guard place < ofKind.count else { continue }
                let id = ofKind[place].id
                tracks.append(EngineTrack(
                    kind: stream.kind, engineID: String(id), title: stream.title, language: stream.language,
                    codec: stream.codec, isDefault: stream.isDefault, isForced: stream.isForced,
                    isSelected: selected[stream.kind] == id))
            }
        } else {
            for stream in streams {
                tracks.append(EngineTrack(kind: stream.kind, engineID: String(stream.id), title: stream.description,
                                          language: stream.language, isSelected: selected[stream.kind] == stream.id))
            }
        }
        let embedded = Set(streams.filter { $0.kind == .subtitle }.map(\.id))
        let added = player.subtitleStreamIDs().filter { !embedded.contains($0) }.sorted()
        for (id, file) in zip(added, externalSubtitles) {
            tracks.append(EngineTrack(kind: .subtitle, engineID: String(id), codec: file.codec, isExternal: true,
                                      isSelected: selected[.subtitle] == id))
        }
        return tracks
    }

    /// The media's own streams: those the parse listed, or (network sources, not parsed) the
    /// media's streams without the last subtitle ones, which are the added files'.
    private func embeddedStreams(_ player: VLCMediaPlayer) -> [VLCStream] {
        if let parsedStreams { return parsedStreams }
        var streams = player.mediaStreams()
        for _ in 0..<externalSubtitles.count {
            guard let last = streams.lastIndex(where: { $0.kind == .subtitle }) else { break }
            streams.remove(at: last)
        }
        return streams
    }

    /// Reports the tracks and reads the cues of the selected subtitle when it changed.
    func reportTracks() {
        adoptLibVLCSubtitleChoice()
        let tracks = engineTracks()
        sink.tracksChanged(tracks)
        readCues(tracks)
    }

    /// Reports the tags and chapters (the probe's for local files, libVLC's tags otherwise).
    func reportTagsAndChapters() {
        sink.metadataChanged(probe?.tags ?? player?.tags() ?? [:])
        sink.chaptersChanged(probe?.chapters ?? [])
    }

    /// Adds the files of `options.subtitleURLs` before playback starts (not selected: the
    /// player picks among the tracks at prepare).
    func addOpeningSubtitles() {
        for url in options.subtitleURLs { addSubtitleFile(url, select: false) }
    }

    /// Adds a subtitle file as a new track; it is listed once libVLC has made its stream.
    func addSubtitleFile(_ url: URL, select: Bool) {
        guard let player else { return }
        let codec = url.isFileURL ? (try? StreamProbe.read(url))?.streams.first { $0.kind == .subtitle }?.codec : nil
        guard player.addSubtitleFile(url, select: select) else {
            PlaybackLog.log(.warning, "vlc", "libVLC did not add the subtitle file \(url.lastPathComponent)\(detail())")
            return
        }
        externalSubtitles.append(VLCExternalSubtitle(url: url, codec: codec))
    }

    /// The media option that makes libVLC's subtitle decoder read the first local subtitle
    /// file that is not UTF-8 by the package's rule (`SubtitleEncoding`); nil when all are.
    func subtitleEncodingOption() -> String? {
        for url in options.subtitleURLs where url.isFileURL {
            guard let data = FileManager.default.contents(atPath: url.path) else { continue }
            let encoding = SubtitleEncoding.detect(data).textAfterDemuxing
            if encoding != .utf8 { return ":subsdec-encoding=\(encoding.rawValue)" }
        }
        return nil
    }

    func selectTrack(kind: TrackKind, engineID: String?) {
        guard let player else { return }
        let id = engineID.flatMap { Int32($0) } ?? -1
        if kind == .subtitle, subtitleOverlay != nil {
            // Drawn by the overlay; libVLC shows none.
            drawnSubtitle = id >= 0 ? id : nil
            if player.selectedStream(.subtitle) >= 0 { player.selectStream(.subtitle, id: -1) }
        } else if !player.selectStream(kind, id: id) {
            PlaybackLog.log(.warning, "vlc", "libVLC refused to select \(kind) stream \(id)\(detail())")
        }
        reportTracks()
    }

    func setSubtitleDelay(_ seconds: TimeInterval) {
        player?.setSubtitleDelay(seconds)
        subtitleOverlay?.setDelay(seconds)
    }

    /// With the overlay drawing subtitles, a subtitle libVLC selected on its own (a default
    /// stream at the start, a file added selected) becomes the overlay's, and libVLC's goes off.
    private func adoptLibVLCSubtitleChoice() {
        guard subtitleOverlay != nil, let player else { return }
        let chosen = player.selectedStream(.subtitle)
        guard chosen >= 0 else { return }
        drawnSubtitle = chosen
        player.selectStream(.subtitle, id: -1)
    }

    /// A stream appeared while prepared (an added subtitle file): the list changed.
    func streamAppeared() {
        if phase == .ready { reportTracks() }
    }

    // MARK: - Cues

    /// libVLC 3 draws subtitles but does not hand out their text: the cues of the selected
    /// subtitle are read ahead from its file (the media for embedded streams of a local file;
    /// an added file local or over http(s)) with the shared reader, off the queue, and
    /// reported unless the selection changed meanwhile.
    private func readCues(_ tracks: [EngineTrack]) {
        let selected = tracks.first { $0.kind == .subtitle && $0.isSelected }
        guard selected?.engineID != cuesReadFor else { return }
        cuesReadFor = selected?.engineID
        sink.subtitleCuesReset()
        subtitleOverlay?.clear()
        guard let selected else { return }
        let file: (url: URL, subtitleIndex: Int)
        if selected.isExternal {
            let external = tracks.filter { $0.kind == .subtitle && $0.isExternal }
            guard let place = external.firstIndex(of: selected), place < externalSubtitles.count else { return }
            file = (externalSubtitles[place].url, 0)
        } else {
            guard source.isFile, let place = tracks.filter({ $0.kind == .subtitle && !$0.isExternal }).firstIndex(of: selected) else { return }
            file = (source.url, place)
        }
        let id = selected.engineID, sink = sink, queue = queue, options = options
        DispatchQueue.global(qos: .utility).async { [weak self] in
            let reading: SubtitleCueReader.Reading
            do {
                reading = try SubtitleCueReader.read(file.url, subtitleIndex: file.subtitleIndex, options: options)
            } catch {
                PlaybackLog.log(.warning, "vlc", "the cues of \(file.url.lastPathComponent) cannot be read: \(error)")
                return
            }
            queue.async { [weak self] in
                guard let self, self.phase != .finished, self.cuesReadFor == id else { return }
                self.subtitleOverlay?.install(SubtitleScript(
                    header: reading.header,
                    events: reading.events.map { SubtitleScript.Event(fields: $0.fields, start: $0.start, end: $0.end) },
                    fonts: reading.fonts.map { EmbeddedFont(name: $0.name, data: $0.data) }))
                for cue in reading.cues { sink.subtitleCue(cue) }
            }
        }
    }
}

/// A subtitle file added to the player, in the order added.
struct VLCExternalSubtitle {
    var url: URL
    /// FFmpeg's name of its codec, when the file could be read.
    var codec: String?
}
#endif

import FoundationEssentials

/// The track state of one session, touched only on the player's queue.
struct TrackSession {
    /// A choice the app made before prepare, applied at prepare.
    enum Request: Equatable {
        /// The track with this contract id.
        case track(String)
        /// No track of the kind.
        case none
        /// The subtitle file added before prepare with this index among the external ones.
        case addedSubtitle(Int)
    }

    var table = TrackTable()
    /// What the app asked for before prepare, oldest first: the last one that names a track
    /// of the media wins.
    var requested: [TrackKind: [Request]] = [:]
    /// Files `addSubtitle(url:)` added before prepare, opened after `subtitleURLs`.
    var addedBeforePrepare: [URL] = []
    /// `addSubtitle(url:)` while prepared: select the next external track the engine lists.
    var selectsNextExternal = 0
    var cues = CueClock()
    var cueTick: ScheduledWork?
}

// MARK: - MediaPlayback: tracks, subtitles, metadata, chapters

extension EnginePlayer {
    public var tracks: [MediaTrack] { published.get().tracks }
    public var engineReportedTracks: [MediaTrack] { published.get().engineReportedTracks }
    public var metadata: MediaMetadata { published.get().metadata }
    public var chapters: [Chapter] {
        let published = published.get()
        return Chapter.completingEnds(published.chapters, duration: published.duration)
    }
    public var currentSubtitle: SubtitleCue? { published.get().currentSubtitle }

    public func selectTrack(id: String) {
        guard let kind = TrackKind(rawValue: String(id.prefix { $0 != ":" })) else { return }
        post { $0.requestTrack(kind, .track(id)) }
    }

    public func deselectTrack(kind: TrackKind) {
        post { $0.requestTrack(kind, .none) }
    }

    public func addSubtitle(url: URL) {
        post { player in
            if player.phase == .idle {
                // Opened with the others at prepare.
                let index = player.options.subtitleURLs.count + player.trackSession.addedBeforePrepare.count
                player.trackSession.addedBeforePrepare.append(url)
                player.trackSession.requested[.subtitle, default: []].append(.addedSubtitle(index))
            } else {
                player.trackSession.selectsNextExternal += 1
                player.engine?.addSubtitle(url)
            }
        }
    }

    public var subtitleDelay: TimeInterval {
        get { published.get().subtitleDelay }
        set {
            guard newValue.isFinite else { return }
            published.withLock { $0.subtitleDelay = newValue }
            post { player in
                if player.phase != .idle { player.engine?.setSubtitleDelay(newValue) }
                player.updateCue()
            }
        }
    }

    // MARK: - Opening

    /// The options handed to the engine: the app's, with the files added before prepare.
    func optionsForOpening() -> PlaybackOptions {
        var opening = options
        opening.subtitleURLs += trackSession.addedBeforePrepare
        return opening
    }

    /// Prepared: carries out what the app asked for before prepare and its preferred
    /// languages, then announces the tracks and the metadata (before `.preparedToPlay`).
    func applyInitialTracks() {
        let table = trackSession.table
        let externalSubtitles = table.engineTracks.filter { $0.kind == .subtitle && $0.isExternal }
        let externalIDs = table.tracks.filter { $0.kind == .subtitle && $0.isExternal }.map(\.id)
        var requested: [TrackKind: String?] = [:]
        for (kind, requests) in trackSession.requested {
            // The last request that names something this media has.
            for request in requests.reversed() {
                switch request {
                case .track(let id) where table.engineTrack(id: id)?.kind == kind:
                    requested[kind] = .some(id)
                case .none:
                    requested[kind] = .some(nil)
                case .addedSubtitle(let index) where index < externalIDs.count:
                    requested[kind] = .some(externalIDs[index])
                default:
                    continue
                }
                break
            }
        }
        let choices = table.initialChoices(
            requested: requested, audioLanguages: options.preferredAudioLanguages,
            subtitleLanguages: options.preferredSubtitleLanguages,
            firstAddedSubtitle: externalSubtitles.first?.engineID)
        for kind in TrackKind.allCases {
            guard let choice = choices[kind] else { continue }
            carryOut(kind, engineID: choice)
        }
        trackSession.requested = [:]
        if published.get().subtitleDelay != 0 { engine?.setSubtitleDelay(published.get().subtitleDelay) }
        publishTracks(announce: true)
        hub.send(.metadataChanged(published.get().metadata))
    }

    /// Selects `engineID` (nil: none) for `kind` in the engine unless it is so already.
    private func carryOut(_ kind: TrackKind, engineID: String?) {
        let current = trackSession.table.engineTracks.first { $0.kind == kind && $0.isSelected }?.engineID
        trackSession.table.noteChoice(kind, engineID: engineID)
        guard current != engineID else { return }
        engine?.selectTrack(kind: kind, engineID: engineID)
        if kind == .subtitle { engineSubtitleCuesReset() }
    }

    // MARK: - Requests

    func requestTrack(_ kind: TrackKind, _ request: TrackSession.Request) {
        guard phase == .prepared else {
            trackSession.requested[kind, default: []].append(request)
            return
        }
        switch request {
        case .track(let id):
            guard let track = trackSession.table.engineTrack(id: id), track.kind == kind else { return }
            carryOut(kind, engineID: track.engineID)
        case .none:
            carryOut(kind, engineID: nil)
        case .addedSubtitle:
            return
        }
        publishTracks(announce: true)
    }

    // MARK: - Engine reports

    func engineTracksChanged(_ tracks: [EngineTrack]) {
        let externalsBefore = trackSession.table.engineTracks.filter(\.isExternal).count
        trackSession.table.update(tracks)
        let externals = trackSession.table.engineTracks.filter { $0.isExternal && $0.kind == .subtitle }
        if trackSession.selectsNextExternal > 0, externals.count > externalsBefore, let newest = externals.last {
            trackSession.selectsNextExternal -= 1
            carryOut(.subtitle, engineID: newest.engineID)
        }
        guard phase == .prepared else { return }
        publishTracks(announce: true)
    }

    func engineMetadataChanged(_ tags: [String: String]) {
        let metadata = MediaMetadata(tags: tags)
        let changed = published.withLock { p -> Bool in
            defer { p.metadata = metadata }
            return p.metadata != metadata
        }
        if changed, phase == .prepared { hub.send(.metadataChanged(metadata)) }
    }

    func engineSubtitleCue(_ cue: SubtitleCue) {
        trackSession.cues.add(cue)
        updateCue()
    }

    func engineSubtitleCuesReset() {
        trackSession.cues.reset()
        updateCue()
    }

    /// Publishes the track list; sends `.tracksChanged` when it changed (or always, at prepare).
    private func publishTracks(announce: Bool) {
        let tracks = trackSession.table.tracks
        let reported = trackSession.table.engineReportedTracks
        let changed = published.withLock { p -> Bool in
            defer {
                p.tracks = tracks
                p.engineReportedTracks = reported
            }
            return p.tracks != tracks
        }
        if announce, changed || phase != .prepared { hub.send(.tracksChanged(tracks)) }
    }

    // MARK: - The cue clock

    /// How often the cue clock looks at the position while cues are known (well within a frame).
    static let cueTickInterval = 0.02

    /// Sends `.subtitleChanged` when the cue showing at the position changed, and keeps
    /// looking while there are cues.
    func updateCue() {
        guard phase == .prepared else { return }
        let delay = published.get().subtitleDelay
        let position = clock.read()
        trackSession.cues.prune(before: position, delay: delay)
        let showing = trackSession.cues.cue(at: position, delay: delay)
        let changed = published.withLock { p -> Bool in
            defer { p.currentSubtitle = showing }
            return p.currentSubtitle != showing
        }
        if changed { hub.send(.subtitleChanged(showing)) }
        let active = !trackSession.cues.cues.isEmpty || showing != nil
        if active, trackSession.cueTick == nil {
            let generation = published.get().generation
            trackSession.cueTick = time.schedule(after: Self.cueTickInterval, on: queue) { [weak self] in
                guard let self, self.published.get().generation == generation else { return }
                self.trackSession.cueTick = nil
                self.updateCue()
            }
        }
    }

    /// The session ended: no tracks, tags, chapters or cues until the next prepare.
    func resetTracks() {
        trackSession.cueTick?.cancel()
        let requested = trackSession.requested
        let added = trackSession.addedBeforePrepare
        trackSession = TrackSession()
        trackSession.requested = requested
        trackSession.addedBeforePrepare = added
        let hadSubtitle = published.withLock { p -> Bool in
            defer {
                p.tracks = []
                p.engineReportedTracks = []
                p.metadata = .empty
                p.chapters = []
                p.currentSubtitle = nil
            }
            return p.currentSubtitle != nil
        }
        if hadSubtitle { hub.send(.subtitleChanged(nil)) }
    }
}

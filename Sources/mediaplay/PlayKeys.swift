import Dispatch
import FoundationEssentials
import Glibc
import CommandLineSupport
import PlaybackKit

/// The terminal player's keys, read from stdin in raw mode: space pause, arrows seek 5 s,
/// `n`/`p` next and previous item, `a`/`s` cycle the audio and subtitle tracks, `9`/`0`
/// volume, `m` mute, `[`/`]` speed, `,`/`.` one frame back/forward (paused), `i` details of
/// the engine, the source and its streams, `q` quit. The volume, mute and speed chosen carry over to the next item of a queue.
final class PlayKeys: @unchecked Sendable {
    // @unchecked: every member is touched only on `queue`.
    private let queue: DispatchQueue
    private let playQueue: PlaybackQueue
    private let announce: (String) -> Void
    private var source: DispatchSourceRead?
    private var pending: [UInt8] = []
    private var savedTerminal = termios()
    private var rawMode = false
    private var volume: Float = 1
    private var muted = false
    private var rate: Float = 1
    /// The track of each kind the keys chose last for the current item (nil inside: off), so a
    /// quick second press goes on from it before the player's list shows the change.
    private var chosenTracks: [TrackKind: String?] = [:]

    /// The speeds `[` and `]` step through.
    static let rates: [Float] = [0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4]
    /// The volume change of one press of `9` or `0`.
    static let volumeStep: Float = 0.1

    /// Keys for `playQueue`'s current player; `announce` writes a line above the time widget.
    init(queue: DispatchQueue, playQueue: PlaybackQueue, announce: @escaping (String) -> Void) {
        self.queue = queue
        self.playQueue = playQueue
        self.announce = announce
    }

    /// Puts the terminal in raw mode and starts reading keys.
    func start() {
        queue.sync {
            enterRawMode()
            let source = DispatchSource.makeReadSource(fileDescriptor: STDIN_FILENO, queue: queue)
            source.setEventHandler { [self] in readKeys() }
            source.resume()
            self.source = source
        }
    }

    /// Stops reading and gives the terminal back as it was.
    func stop() {
        queue.sync {
            source?.cancel()
            source = nil
            restoreTerminal()
        }
    }

    /// Gives a new item of the queue the volume, mute and speed chosen so far.
    func itemStarted() {
        queue.async { [self] in
            chosenTracks = [:]
            guard let player = playQueue.player else { return }
            if volume != 1 || muted { player.playbackVolume = muted ? 0 : volume }
            if rate != 1 { player.playbackRate = rate }
        }
    }

    // MARK: - Reading

    private func readKeys() {
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = read(STDIN_FILENO, &bytes, bytes.count)
        guard count > 0 else {
            source?.cancel()
            return
        }
        pending.append(contentsOf: bytes[0..<count])
        while !pending.isEmpty {
            if pending[0] == 0x1B {
                guard pending.count >= 3 else { return }
                if pending[1] == 0x5B, let player = playQueue.player {
                    if pending[2] == 0x43 { Self.seek(player, by: 5) }
                    if pending[2] == 0x44 { Self.seek(player, by: -5) }
                }
                pending.removeFirst(3)
                continue
            }
            press(pending.removeFirst())
        }
    }

    /// Carries out one key.
    private func press(_ key: UInt8) {
        switch key {
        case UInt8(ascii: " "):
            if playQueue.player?.isPlaying == true { playQueue.pause() } else { playQueue.play() }
        case UInt8(ascii: "n"), UInt8(ascii: "N"): playQueue.next()
        case UInt8(ascii: "p"), UInt8(ascii: "P"): playQueue.previous()
        case UInt8(ascii: "q"), UInt8(ascii: "Q"), 0x03: playQueue.shutdown()
        case UInt8(ascii: "a"): cycle(.audio)
        case UInt8(ascii: "s"): cycle(.subtitle)
        case UInt8(ascii: "9"): changeVolume(by: -Self.volumeStep)
        case UInt8(ascii: "0"): changeVolume(by: Self.volumeStep)
        case UInt8(ascii: "m"): toggleMute()
        case UInt8(ascii: "["): stepRate(by: -1)
        case UInt8(ascii: "]"): stepRate(by: 1)
        case UInt8(ascii: ","): stepFrame(by: -1)
        case UInt8(ascii: "."): stepFrame(by: 1)
        case UInt8(ascii: "i"): showDetails()
        default: break
        }
    }

    // MARK: - Actions

    /// Selects the track of `kind` after the selected one; subtitles go through "off" after
    /// the last, audio wraps to the first.
    private func cycle(_ kind: TrackKind) {
        guard let player = playQueue.player else { return }
        let tracks = player.tracks.filter { $0.kind == kind }
        guard !tracks.isEmpty else {
            announce("no \(kind.rawValue) track")
            return
        }
        let selected: Int? = if let chosen = chosenTracks[kind] {
            chosen.flatMap { id in tracks.firstIndex { $0.id == id } }
        } else {
            tracks.firstIndex(where: \.isSelected)
        }
        let next = selected.map { $0 + 1 } ?? 0
        if next < tracks.count {
            choose(tracks[next], on: player)
        } else if kind == .subtitle {
            player.deselectTrack(kind: .subtitle)
            chosenTracks[kind] = .some(nil)
            announce("subtitle: off")
        } else if selected != 0 {
            choose(tracks[0], on: player)
        }
    }

    private func choose(_ track: MediaTrack, on player: any MediaPlayback) {
        player.selectTrack(id: track.id)
        chosenTracks[track.kind] = .some(track.id)
        announce("\(track.kind.rawValue): \(InfoCommand.describe(track, idWidth: 0))")
    }

    private func changeVolume(by delta: Float) {
        volume = max(0, min(1, ((volume + delta) * 10).rounded() / 10))
        muted = false
        playQueue.player?.playbackVolume = volume
        announce("volume: \(Int((volume * 100).rounded())) %")
    }

    private func toggleMute() {
        muted.toggle()
        playQueue.player?.playbackVolume = muted ? 0 : volume
        announce(muted ? "muted" : "volume: \(Int((volume * 100).rounded())) %")
    }

    private func stepRate(by steps: Int) {
        let index = Self.rates.firstIndex(where: { $0 >= rate }) ?? Self.rates.count - 1
        rate = Self.rates[max(0, min(Self.rates.count - 1, index + steps))]
        playQueue.player?.playbackRate = rate
        announce("speed: \(String(cFormat: "%.2f", Double(rate)))x")
    }

    /// Steps `count` frames (pausing first) and, once the step landed, writes the frame shown.
    private func stepFrame(by count: Int) {
        guard let player = playQueue.player else { return }
        let rate = player.nominalFrameRate
        guard rate > 0 else {
            announce("frame step: the frame rate is unknown")
            return
        }
        let events = player.events
        player.stepFrames(count)
        Task { [self] in
            for await event in events {
                if case .finished = event { return }
                guard case .seekCompleted(let position) = event else { continue }
                let frame = FrameTiming(rate: rate).frame(at: position)
                queue.async { self.announce("frame \(frame) (\(String(cFormat: "%.3f", position)) s)") }
                return
            }
        }
    }

    private func showDetails() {
        guard let player = playQueue.player, let index = playQueue.currentIndex else { return }
        let version = Backends.backend(named: player.backendName)?.engineVersion ?? "unknown version"
        let source = MediaSource(playQueue.items[index])
        let details = InfoCommand.text(player, source: source, backend: "\(player.backendName) (\(version))")
        announce(details.hasSuffix("\n") ? String(details.dropLast()) : details)
    }

    /// Seeks `delta` seconds from the position, within the media (the window player's arrows too).
    static func seek(_ player: any MediaPlayback, by delta: TimeInterval) {
        var target = player.currentPlaybackTime + delta
        if player.duration > 0 { target = min(target, player.duration) }
        player.currentPlaybackTime = max(0, target)
    }

    // MARK: - Terminal

    private func enterRawMode() {
        guard tcgetattr(STDIN_FILENO, &savedTerminal) == 0 else { return }
        var raw = savedTerminal
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        if tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 { rawMode = true }
    }

    private func restoreTerminal() {
        guard rawMode else { return }
        tcsetattr(STDIN_FILENO, TCSANOW, &savedTerminal)
        rawMode = false
    }
}

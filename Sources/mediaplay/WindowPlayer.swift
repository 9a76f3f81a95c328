import CommandLineSupport
import FoundationEssentials
import Glibc
import PlaybackKit
import X11Windows

/// `mediaplay play --window`: an X11 window of its own that the engine draws the video into,
/// with the time and state in its title and a thin seek bar at the bottom (a click seeks
/// there). Keys in the window: space pauses, the arrows seek 5 s, n and p go to the next and
/// the previous item, f cycles the scaling modes, F toggles fullscreen, q or Escape quits
/// (as does closing the window).
///
/// The top-level window holds two windows of ours: the video area, handed to the engine, and
/// the seek bar below it, which no engine draws over.
final class WindowPlayer: @unchecked Sendable {
    // @unchecked: the connection and the state below are used by `init` on the caller's thread,
    // then only by the window's own thread (`run`); `stopping` is guarded.
    private let connection: X11Connection
    private let frame: UInt
    private let bar: UInt
    /// The window the engine draws into.
    let videoWindow: UInt
    private var size: VideoSize
    private let windowedSize: VideoSize
    private var fullscreen = false
    private var mode = ScalingMode.aspectFit
    private var lastTitle = ""
    private var lastBarFill = -1
    private var lastPlayer: ObjectIdentifier?
    private let stopping = Locked(false)
    private let names: [String]

    /// The height of the seek bar, in pixels.
    static let barHeight = 6

    /// The scaling modes `f` goes through, in order.
    static let modes: [ScalingMode] = [.aspectFit, .aspectFill, .fill, .none]

    /// Opens the window on $DISPLAY: `size` for the video area (default 640x360), the whole
    /// screen when `fullscreen`; `names` are the items' names for the title.
    init(size: VideoSize?, fullscreen: Bool, names: [String]) throws {
        guard let connection = X11Connection() else {
            let display = ProcessInfo.processInfo.environment["DISPLAY"] ?? ""
            throw PlaybackError(code: .invalidArgument, message: display.isEmpty
                ? "--window needs an X display: DISPLAY is not set"
                : "--window: no X server answers on DISPLAY=\(display)")
        }
        let video = size ?? VideoSize(width: 640, height: 360)
        let total = VideoSize(width: video.width, height: video.height + Self.barHeight)
        guard let frame = connection.makeWindow(size: total, title: "mediaplay") else {
            throw PlaybackError(code: .engine, message: "--window: the X server did not show a \(total) window")
        }
        guard let videoWindow = connection.makeChildWindow(of: frame, PixelRect(x: 0, y: 0, width: video.width, height: video.height)),
              let bar = connection.makeChildWindow(of: frame, PixelRect(x: 0, y: video.height, width: video.width, height: Self.barHeight)) else {
            throw PlaybackError(code: .engine, message: "--window: the X server made no video area")
        }
        self.connection = connection
        self.frame = frame
        self.videoWindow = videoWindow
        self.bar = bar
        self.size = total
        self.windowedSize = total
        self.names = names
        connection.focus(frame)
        if fullscreen { toggleFullscreen() }
    }

    /// The window `--window [--size WxH] [--fullscreen]` asks for, or nil without `--window`.
    static func fromArguments(_ arguments: Arguments, sources: [MediaSource]) throws -> WindowPlayer? {
        guard arguments.flag("--window") else {
            if arguments.value("--size") != nil || arguments.flag("--fullscreen") {
                throw PlaybackError(code: .invalidArgument, message: "--size and --fullscreen go with --window")
            }
            return nil
        }
        var size: VideoSize?
        if let text = arguments.value("--size") {
            let parts = text.lowercased().split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, (16...16384).contains(parts[0]), (16...16384).contains(parts[1]) else {
                throw PlaybackError(code: .invalidArgument, message: "--size takes WIDTHxHEIGHT (16 to 16384 each), not '\(text)'")
            }
            size = VideoSize(width: parts[0], height: parts[1])
        }
        let names = sources.map { $0.isFile ? $0.url.lastPathComponent : $0.url.absoluteString }
        return try WindowPlayer(size: size, fullscreen: arguments.flag("--fullscreen"), names: names)
    }

    /// Runs the window (its events, title and seek bar) on a thread of its own for `playQueue`
    /// until `stop()`; closing the window or q shuts the queue down.
    func start(_ playQueue: PlaybackQueue) {
        DetachedThread.start(name: "mediaplay.window") { [self] in
            while !stopping.get() {
                if let (window, event) = connection.nextEvent(timeout: 0.1) {
                    handle(event, in: window, playQueue)
                }
                refresh(playQueue)
            }
        }
    }

    /// Ends the window's thread.
    func stop() { stopping.set(true) }

    // MARK: - Events

    private func handle(_ event: X11Event, in window: UInt, _ playQueue: PlaybackQueue) {
        switch event {
        case .key(let key):
            handleKey(key, playQueue)
        case .click(let x, _, let button) where window == bar && button == 1:
            guard let player = playQueue.player, player.duration > 0 else { return }
            let fraction = Double(x) / Double(max(1, size.width))
            player.currentPlaybackTime = max(0, min(player.duration, fraction * player.duration))
        case .resized(let newSize) where window == frame:
            guard newSize != size else { return }
            size = newSize
            let videoHeight = max(1, newSize.height - Self.barHeight)
            connection.place(videoWindow, PixelRect(x: 0, y: 0, width: newSize.width, height: videoHeight))
            connection.place(bar, PixelRect(x: 0, y: videoHeight, width: newSize.width, height: Self.barHeight))
            lastBarFill = -1
        case .exposed where window == bar:
            lastBarFill = -1
        case .closeRequested:
            playQueue.shutdown()
        default:
            break
        }
    }

    private func handleKey(_ key: X11Key, _ playQueue: PlaybackQueue) {
        let player = playQueue.player
        switch (key.symbol, key.text) {
        case (_, " "):
            if player?.isPlaying == true { playQueue.pause() } else { playQueue.play() }
        case (X11Key.right, _): player.map { PlayKeys.seek($0, by: 5) }
        case (X11Key.left, _): player.map { PlayKeys.seek($0, by: -5) }
        case (_, ","): player?.stepFrames(-1)
        case (_, "."): player?.stepFrames(1)
        case (_, "n"), (_, "N"): playQueue.next()
        case (_, "p"), (_, "P"): playQueue.previous()
        case (_, "f"):
            let next = Self.modes.firstIndex(of: mode).map { (Int($0) + 1) % Self.modes.count } ?? 0
            mode = Self.modes[next]
            player?.scalingMode = mode
            lastTitle = ""
        case (_, "F"): toggleFullscreen()
        case (_, "q"), (_, "Q"), (X11Key.escape, _): playQueue.shutdown()
        default: break
        }
    }

    private func toggleFullscreen() {
        fullscreen.toggle()
        connection.setFullscreen(frame, fullscreen, restoring: windowedSize)
    }

    // MARK: - Title and seek bar

    /// Sets the title and redraws the seek bar when what they show changed; a new player
    /// (the next item) gets the current scaling mode.
    private func refresh(_ playQueue: PlaybackQueue) {
        guard let player = playQueue.player else { return }
        let identity = ObjectIdentifier(player as AnyObject)
        if identity != lastPlayer {
            lastPlayer = identity
            player.scalingMode = mode
        }
        let position = player.currentPlaybackTime, duration = player.duration
        var state = ""
        if !player.isPreparedToPlay {
            state = " (opening)"
        } else if player.playbackState == .paused {
            state = " (paused)"
        } else if player.loadState.contains(.stalled) {
            state = " (buffering)"
        }
        let index = playQueue.currentIndex ?? 0
        let name = index < names.count ? names[index] : ""
        let title = "\(name) — \(clockText(position)) / \(clockText(duration))\(state) [\(mode)] — mediaplay"
        if title != lastTitle {
            lastTitle = title
            connection.setTitle(frame, title)
        }
        let filled = duration > 0 ? Int(Double(size.width) * min(1, max(0, position / duration))) : 0
        guard filled != lastBarFill else { return }
        lastBarFill = filled
        connection.fill(bar, PixelRect(x: 0, y: 0, width: filled, height: Self.barHeight), rgb: 0xE0_40_40)
        connection.fill(bar, PixelRect(x: filled, y: 0, width: size.width - filled, height: Self.barHeight), rgb: 0x40_40_40)
    }
}

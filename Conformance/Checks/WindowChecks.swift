import FoundationEssentials
import PlaybackKit
import X11Windows

/// `.window(handle:)` output, checked by grabbing the X11 window: every scaling mode's geometry
/// (the same probes as the `.frames` scaling checks, in a 400x200 window), a paused seek, a
/// resize while playing, two windows at once and a redraw on expose while paused.
///
/// The family is optional: it needs an X display ($DISPLAY, or Xvfb, which the suite starts on
/// a free display when $DISPLAY is unset). Without one every check is skipped (not run), never
/// passed.
enum WindowChecks {
    static let all: [Check] = [aspectFit, aspectFill, fill, none, pausedSeek, resize, twoWindows, exposePaused, pausedChanges, nextPlayer, subtitles]

    /// The family's name, the part of every check's name before the dot.
    static let family = "window"

    /// The window the scaling checks play into: the `.frames` checks' viewport.
    static let size = ScalingChecks.viewport

    /// How long the engine may take to show a picture asked of it (a paused seek, a resize, an
    /// expose), on a loaded 2-core machine.
    static let drawTimeout: TimeInterval = 3

    // MARK: - The display and players

    /// A connection to the display; skips the check when there is none.
    static func connect() throws -> X11Connection {
        do {
            try VirtualDisplay.ensure()
        } catch {
            throw CheckSkip("no X display: \(error.reason)")
        }
        guard let connection = X11Connection() else {
            throw CheckFailure("the X display \(ProcessInfo.processInfo.environment["DISPLAY"] ?? "") accepts no connection")
        }
        return connection
    }

    /// A window of `size` at `origin`; fails the check when the server makes none.
    static func window(_ connection: X11Connection, size: VideoSize, at origin: (x: Int, y: Int) = (0, 0),
                       title: String) throws -> UInt {
        guard let window = connection.makeWindow(size: size, origin: origin, title: title) else {
            throw CheckFailure("the X server did not show a \(size) window")
        }
        return window
    }

    /// A player of frames.mp4 drawing into `window` with `mode`, prepared.
    static func player(_ context: CheckContext, window: UInt, mode: ScalingMode) async throws -> CheckPlayer {
        let p = try context.player(url: context.fixture("frames.mp4")) { $0.videoOutput = .window(handle: window) }
        try await p.prepare()
        p.player.scalingMode = mode
        try expect(p.player.scalingMode == mode, "scalingMode reads \(p.player.scalingMode) after setting \(mode)")
        return p
    }

    // MARK: - Reading the window

    /// Grabs `window` until its picture matches `expectation` (and, when `frame` is given, shows
    /// that frame number ±1 in its picture area), at most `timeout` seconds; fails the check
    /// with what the last grab showed.
    @discardableResult
    static func waitForPicture(_ connection: X11Connection, _ window: UInt, _ what: String,
                               _ expectation: ScalingChecks.Expectation, frame expectedFrame: Int? = nil,
                               timeout: TimeInterval = drawTimeout) async throws -> VideoFrame {
        let deadline = monotonicSeconds() + timeout
        var problem = "nothing grabbed"
        while true {
            if let grabbed = connection.grab(window) {
                let wrong = expectation.probes.map { ScalingChecks.matches(grabbed, $0) }.filter { !$0.0 }.map(\.1)
                if !wrong.isEmpty {
                    problem = "\(wrong.count) of \(expectation.probes.count) probes wrong: " + wrong.prefix(4).joined(separator: "; ")
                } else if let expectedFrame {
                    let number = FramePattern.frameNumber(in: grabbed, region: expectation.numberRegion)
                    if let number, abs(number - expectedFrame) <= 1 { return grabbed }
                    problem = number.map { "the window shows frame \($0), expected \(expectedFrame)" }
                        ?? "no frame number readable in the picture area \(expectation.numberRegion)"
                } else {
                    return grabbed
                }
            } else {
                problem = "the window could not be grabbed"
            }
            guard monotonicSeconds() < deadline else {
                throw CheckFailure("\(what): after \(format(timeout)) s \(problem)")
            }
            try await observe(for: 0.05)
        }
    }

    /// The frame shown at the paused player's position.
    static func pausedFrame(_ p: CheckPlayer) -> Int { FramePattern.frame(at: p.position) }

    // MARK: - Scaling modes

    /// Plays into a 400x200 window with `mode`, pauses after 0.4 s and checks the window.
    static func check(_ context: CheckContext, mode: ScalingMode) async throws {
        let connection = try connect()
        let window = try window(connection, size: size, title: "window.\(mode)")
        let p = try await player(context, window: window, mode: mode)
        try await p.play()
        try await p.waitForPosition(atLeast: 0.4, timeout: 5)
        try await p.pause()
        try await waitForPicture(connection, window, "\(mode)", ScalingChecks.expected(mode), frame: pausedFrame(p))
    }

    static let aspectFit = Check("window.scaling-aspect-fit", "aspectFit in a 400x200 window: the whole picture at x 66..333, black bars left and right") { context in
        try await check(context, mode: .aspectFit)
    }

    static let aspectFill = Check("window.scaling-aspect-fill", "aspectFill in a 400x200 window: filled, top and bottom cropped, no bars") { context in
        try await check(context, mode: .aspectFill)
    }

    static let fill = Check("window.scaling-fill", "fill in a 400x200 window: stretched to the whole window") { context in
        try await check(context, mode: .fill)
    }

    static let none = Check("window.scaling-none", "none in a 400x200 window: natural size centred, rows 20..220 of the picture, bars at the sides") { context in
        try await check(context, mode: .none)
    }

    // MARK: - Seeking, resizing, two windows, expose

    static let pausedSeek = Check("window.seek-paused", "a seek while paused shows the new frame in the window") { context in
        let connection = try connect()
        let window = try window(connection, size: size, title: "window.seek-paused")
        let p = try await player(context, window: window, mode: .aspectFit)
        try await p.seek(to: 1.2)
        try await waitForPicture(connection, window, "after seeking to 1.2 s while paused",
                                 ScalingChecks.expected(.aspectFit), frame: pausedFrame(p))
        try await p.seek(to: 0.6)
        try await waitForPicture(connection, window, "after seeking back to 0.6 s while paused",
                                 ScalingChecks.expected(.aspectFit), frame: pausedFrame(p))
    }

    /// aspectFit of the 320x240 clip in a 240x360 window: 240x180 at rows 90..270.
    static let portrait = VideoSize(width: 240, height: 360)
    static let portraitFit = ScalingChecks.Expectation(probes: [
        ScalingChecks.Probe(120, 40, .black, "top bar"), ScalingChecks.Probe(20, 84, .black, "top bar"),
        ScalingChecks.Probe(120, 320, .black, "bottom bar"), ScalingChecks.Probe(220, 276, .black, "bottom bar"),
        ScalingChecks.Probe(120, 112, .band, "number band (rows 90..135)"), ScalingChecks.Probe(120, 180, .grey, "centre"),
        ScalingChecks.Probe(4, 180, .grey, "left edge, no bar"), ScalingChecks.Probe(235, 180, .grey, "right edge, no bar"),
        ScalingChecks.Probe(60, 250, .red, "bottom left (rows 225..270)"), ScalingChecks.Probe(180, 250, .blue, "bottom right"),
    ], numberRegion: PixelRect(x: 0, y: 90, width: 240, height: 180))

    static let resize = Check("window.resize", "the picture follows the window from 400x200 to 240x360 while playing (aspectFit: bars move from the sides to top and bottom)") { context in
        let connection = try connect()
        let window = try window(connection, size: size, title: "window.resize")
        let p = try await player(context, window: window, mode: .aspectFit)
        try await p.play()
        try await waitForPicture(connection, window, "playing at 400x200", ScalingChecks.expected(.aspectFit))
        connection.resize(window, to: portrait)
        try await waitForPicture(connection, window, "playing after the resize to 240x360", portraitFit)
        try expect(p.player.playbackState == .playing, "the player is \(p.player.playbackState) after the resize, expected playing")
        try await p.pause()
        try await waitForPicture(connection, window, "paused at 240x360", portraitFit, frame: pausedFrame(p))
    }

    static let twoWindows = Check("window.two-windows", "two players of one process in two windows at once (aspectFill at 400x200, aspectFit at 240x360), each right") { context in
        let connection = try connect()
        let wide = try window(connection, size: size, title: "window.two-windows 1")
        let tall = try window(connection, size: portrait, at: (x: 440, y: 0), title: "window.two-windows 2")
        let first = try await player(context, window: wide, mode: .aspectFill)
        let second = try await player(context, window: tall, mode: .aspectFit)
        try await first.play()
        try await second.play()
        try await first.waitForPosition(atLeast: 0.4, timeout: 5)
        try await second.waitForPosition(atLeast: 0.4, timeout: 5)
        try await waitForPicture(connection, wide, "the first window, while both play", ScalingChecks.expected(.aspectFill))
        try await waitForPicture(connection, tall, "the second window, while both play", portraitFit)
        try await first.pause()
        try await second.pause()
        try await waitForPicture(connection, wide, "the first window, paused", ScalingChecks.expected(.aspectFill), frame: pausedFrame(first))
        try await waitForPicture(connection, tall, "the second window, paused", portraitFit, frame: pausedFrame(second))
    }

    static let exposePaused = Check("window.expose-paused", "a paused player draws its picture again when the window is cleared and exposed") { context in
        let connection = try connect()
        let window = try window(connection, size: size, title: "window.expose-paused")
        let p = try await player(context, window: window, mode: .aspectFit)
        try await p.play()
        try await p.waitForPosition(atLeast: 0.4, timeout: 5)
        try await p.pause()
        let frame = pausedFrame(p)
        try await waitForPicture(connection, window, "paused", ScalingChecks.expected(.aspectFit), frame: frame)
        for round in 1...2 {
            connection.clearAndExpose(window)
            try await waitForPicture(connection, window, "after expose \(round) while paused",
                                     ScalingChecks.expected(.aspectFit), frame: frame)
        }
        try expect(p.player.playbackState == .paused, "the player is \(p.player.playbackState) after the exposes, expected paused")
    }

    static let nextPlayer = Check("window.next-player", "a new player given the window right after the last one's shutdown() draws into it (as an app playing its next file)") { context in
        let connection = try connect()
        let window = try window(connection, size: size, title: "window.next-player")
        let first = try await player(context, window: window, mode: .fill)
        try await first.play()
        try await waitForPicture(connection, window, "the first player", ScalingChecks.expected(.fill))
        first.player.shutdown()
        connection.clearAndExpose(window)
        let second = try await player(context, window: window, mode: .aspectFit)
        try await second.seek(to: 0.8)
        try await waitForPicture(connection, window, "the next player, paused at 0.8 s", ScalingChecks.expected(.aspectFit),
                                 frame: pausedFrame(second))
    }

    static let subtitles = Check("window.subtitles", "film.mkv in a window of its own size with subtitle:0 selected: the cue's text is drawn in the window while it shows (1.0-1.4 s), and gone after it (1.75-1.95 s)") { context in
        let connection = try connect()
        let window = try window(connection, size: VideoSize(width: 320, height: 240), title: "window.subtitles")
        let p = try context.player(url: context.fixture("tracks/film.mkv")) { $0.videoOutput = .window(handle: window) }
        p.player.selectTrack(id: "subtitle:0")
        try await p.prepare()
        _ = try await p.seek(to: 0.8)
        try await p.play()
        try await p.waitForPosition(atLeast: 1.0, timeout: 4)
        var during = 0
        while during < 40, p.position <= 1.4 {
            if let grabbed = connection.grab(window) { during = max(during, TrackChecks.subtitlePixels(in: grabbed)) }
            try await observe(for: 0.03)
        }
        try expect(during >= 40, "while the cue \"First line\" shows (1.0-1.4 s) the window has at most \(during) text-coloured pixels in its lower half, expected drawn text")
        try await p.waitForPosition(atLeast: 1.75, timeout: 3)
        var after = Int.max
        while after >= 10, p.position <= 1.95 {
            if let grabbed = connection.grab(window) { after = min(after, TrackChecks.subtitlePixels(in: grabbed)) }
            try await observe(for: 0.03)
        }
        try expect(after < 10, "after the cue (1.75-1.95 s) the window still has \(after) text-coloured pixels in its lower half")
    }

    static let pausedChanges = Check("window.paused-changes", "while paused, a new scaling mode and a resize of the window show at once (the paused picture laid out again)") { context in
        let connection = try connect()
        let window = try window(connection, size: size, title: "window.paused-changes")
        let p = try await player(context, window: window, mode: .aspectFit)
        try await p.seek(to: 0.8)
        let frame = pausedFrame(p)
        try await waitForPicture(connection, window, "paused at 0.8 s", ScalingChecks.expected(.aspectFit), frame: frame)
        p.player.scalingMode = .fill
        try await waitForPicture(connection, window, "paused, after scalingMode = .fill", ScalingChecks.expected(.fill), frame: frame)
        p.player.scalingMode = .aspectFit
        connection.resize(window, to: portrait)
        try await waitForPicture(connection, window, "paused, back to aspectFit and resized to 240x360", portraitFit, frame: frame)
        try expect(p.player.playbackState == .paused, "the player is \(p.player.playbackState) after the changes, expected paused")
    }
}

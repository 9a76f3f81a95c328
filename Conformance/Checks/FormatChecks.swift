import FoundationEssentials
import PlaybackKit

/// One clip of the format sweep in the fixtures' `formats/` folder: 3 s of the frame-numbered
/// 320x240 picture at 25 fps and a sine (or the sine alone), in one pairing of codecs and
/// container (`FixtureClips.formats` makes them).
struct FormatClip: Sendable {
    /// The file's name in `formats/`: `<video>-<audio>.<container>`, or `<audio>.<container>`
    /// for sound alone.
    let file: String
    /// The video codec, as people name it; nil for a clip without video.
    let video: String?
    /// The audio codec, as people name it; nil for a clip without audio.
    let audio: String?
    /// The container, as people name it.
    let container: String

    /// The clip's length in seconds.
    static let seconds = 3.0
    /// The clip's picture size.
    static let size = VideoSize(width: 320, height: 240)

    /// The fixture's path inside the fixtures folder.
    var path: String { "formats/\(file)" }
    /// The check's name: `format.` and the file name with its dot as a dash.
    var checkName: String { "format." + file.replacing(".", with: "-") }
    /// What the clip holds, e.g. "VP9 + Opus in WebM".
    var label: String {
        let codecs = [video, audio].compactMap { $0 }.joined(separator: " + ")
        return "\(codecs) in \(container)"
    }
}

/// The format sweep: every clip of `formats/` prepares with its duration and size, starts
/// playing within 0.3 s (the position, and the picture within that and a frame), plays at
/// real time, seeks while playing and while paused to the right frame, and ends once. One
/// check per clip, named after it (`format.vp9-opus-webm`); every failure names the clip.
enum FormatChecks {
    /// The clips: every video codec (H.264, HEVC, VP9, AV1, MPEG-1, MPEG-2, MPEG-4 Part 2,
    /// Theora, WMV 8), every audio codec (AAC, MP2, MP3, Opus, Vorbis, FLAC, PCM, WMA, Speex,
    /// G.711) and every container (MP4, Matroska, WebM, MPEG-TS, MPEG-PS, Ogg, AVI, ASF, WAV)
    /// at least once, and seven clips of sound alone (Opus, Speex and FLAC in Ogg, FLAC, MP3,
    /// AAC in ADTS, 8 kHz µ-law in WAV).
    static let clips: [FormatClip] = [
        FormatClip(file: "h264-aac.mp4", video: "H.264", audio: "AAC", container: "MP4"),
        FormatClip(file: "hevc-aac.mp4", video: "HEVC", audio: "AAC", container: "MP4"),
        FormatClip(file: "h264-aac.ts", video: "H.264", audio: "AAC", container: "MPEG-TS"),
        FormatClip(file: "h264-flac.mkv", video: "H.264", audio: "FLAC", container: "Matroska"),
        FormatClip(file: "h264-pcm.mkv", video: "H.264", audio: "PCM s16le", container: "Matroska"),
        FormatClip(file: "vp9-opus.webm", video: "VP9", audio: "Opus", container: "WebM"),
        FormatClip(file: "vp9-vorbis.webm", video: "VP9", audio: "Vorbis", container: "WebM"),
        FormatClip(file: "mpeg2-mp3.ts", video: "MPEG-2", audio: "MP3", container: "MPEG-TS"),
        FormatClip(file: "mpeg1-mp2.mpg", video: "MPEG-1", audio: "MP2", container: "MPEG-PS"),
        FormatClip(file: "mpeg4-mp3.avi", video: "MPEG-4 Part 2", audio: "MP3", container: "AVI"),
        FormatClip(file: "theora-vorbis.ogg", video: "Theora", audio: "Vorbis", container: "Ogg"),
        FormatClip(file: "wmv2-wmav2.wmv", video: "WMV 8", audio: "WMA 2", container: "ASF"),
        FormatClip(file: "opus.ogg", video: nil, audio: "Opus", container: "Ogg"),
        FormatClip(file: "speex.ogg", video: nil, audio: "Speex", container: "Ogg"),
        FormatClip(file: "flac.flac", video: nil, audio: "FLAC", container: "FLAC"),
        FormatClip(file: "flac.oga", video: nil, audio: "FLAC", container: "Ogg"),
        FormatClip(file: "mulaw.wav", video: nil, audio: "G.711 µ-law, 8 kHz", container: "WAV"),
        FormatClip(file: "mp3.mp3", video: nil, audio: "MP3", container: "MP3"),
        FormatClip(file: "aac.aac", video: nil, audio: "AAC", container: "ADTS"),
        FormatClip(file: "av1-opus.mkv", video: "AV1", audio: "Opus", container: "Matroska"),
    ]

    /// One check per clip, in the order of `clips`, then the first pictures of them all.
    static let all: [Check] = clips.map(sweepCheck) + [firstPicture]

    /// The first picture `.frames` gets of each clip with video: the start's, stamped 0 (a
    /// stream whose timestamps start late, as MPEG program and transport streams do, included).
    static let firstPicture = Check(
        "format.first-picture",
        "the first .frames picture of each clip of the format sweep with video comes within 2 s of prepareToPlay(), shows frame 0 and is stamped 0 (± 1 ms), as the media's timeline starts at 0 on every engine",
        timeout: 40
    ) { context in
        // Every clip is tried and judged on its own; the failure names each one that failed.
        try await context.eachClip(clips.filter { $0.video != nil }, key: \.path) { clip in
            let p = try context.player(url: try fixture(context, clip), frames: true)
            defer { p.player.shutdown() }
            p.player.prepareToPlay()
            guard await p.frames!.waitUntil(count: 1, timeout: 2), let first = p.frames!.records.first else {
                throw CheckFailure("no .frames picture within 2 s of prepareToPlay()")
            }
            try expect(first.number == 0, "the first .frames picture shows frame \(first.number.map(String.init) ?? "unreadable"), expected 0")
            try expect(abs(first.presentationTime) <= 0.001,
                       "the first .frames picture is stamped \(format(first.presentationTime)) s, expected 0 (the media's start)")
        }
    }

    /// The sweep of one clip, as a check.
    static func sweepCheck(_ clip: FormatClip) -> Check {
        Check(clip.checkName, "\(clip.label) (\(clip.path)): prepares with duration 3 s and its size, starts within 0.3 s, plays at real time, seeks playing and paused, ends once",
              timeout: 20) { context in
            try await CheckFailure.naming(clip.path) { try await sweep(context, clip) }
        }
    }

    /// The longest wait from `play()` to the position moving (and, a frame later, the picture:
    /// the position alone moves from `play()` on in `EnginePlayer`, whose clock runs from it).
    static let startLimit = 0.3
    /// How far the measured pace may be from real time.
    static let paceTolerance = 0.10
    /// How far from its duration a clip may say it is.
    static let durationTolerance = 0.2
    /// One frame of the clips.
    static let frame = 1.0 / FramePattern.frameRate
    /// The target of the seek while playing (forward, past where the pace measurement ends).
    static let playingSeekTarget = 2.0
    /// The targets of the accurate seeks while paused: backward, between two whole seconds;
    /// then into the first second, before every clip's second keyframe (a demuxer that finds
    /// a time by searching its packets, as in MPEG-TS and MPEG-PS, can land past the first).
    static let pausedSeekTargets = [1.18, 0.5]

    /// The clip's URL. A clip this ffmpeg build could not make (a `.missing` note beside it
    /// says why) skips the check with that reason; a clip missing without a note fails it,
    /// since it should be there.
    static func fixture(_ context: CheckContext, _ clip: FormatClip) throws -> URL {
        let url = context.fixtures.appendingPathComponent(clip.path)
        if FileManager.default.fileExists(atPath: url.path) { return url }
        let note = context.fixtures.appendingPathComponent(clip.path + ".missing")
        if let data = try? Data(contentsOf: note) {
            throw CheckSkip("\(clip.path) was not made: \(String(decoding: data, as: UTF8.self).trimmingWhitespace())")
        }
        throw CheckFailure("the fixture is missing from \(context.fixtures.path) and no \(clip.path).missing says why (FixtureRecipe.make(in:) makes it)")
    }

    /// The whole sweep for one clip.
    static func sweep(_ context: CheckContext, _ clip: FormatClip) async throws {
        let p = try context.player(url: fixture(context, clip))
        try await p.prepare()
        let duration = p.player.duration
        try expect(abs(duration - FormatClip.seconds) <= durationTolerance,
                   "duration \(format(duration)) s, expected \(format(FormatClip.seconds)) s ± \(format(durationTolerance))")
        let hasVideo = clip.video != nil
        let size = p.player.naturalSize
        try expect(size == (hasVideo ? FormatClip.size : .zero),
                   "natural size \(size.width)x\(size.height), expected \(hasVideo ? "\(FormatClip.size.width)x\(FormatClip.size.height)" : "none")")

        try await measureStart(p, hasVideo: hasVideo)
        try await measurePace(p, hasVideo: hasVideo)
        try await seekWhilePlaying(p, hasVideo: hasVideo)
        try await p.pause()
        try await seekWhilePaused(p, hasVideo: hasVideo)
        try await playToEnd(p, duration: duration)
    }

    /// Calls `play()` and reads the position (and the picture) every 10 ms: the position must
    /// move past where it stood within `startLimit`, and the picture within that and a frame.
    static func measureStart(_ p: CheckPlayer, hasVideo: Bool) async throws {
        let startPosition = p.position
        let startFrame: Int? = if hasVideo { try p.thumbnailFrameNumber("prepared") } else { nil }
        let mark = p.mark
        p.step("play(), then reading the position every 10 ms until it moves")
        let called = monotonicSeconds()
        p.player.play()
        var positionMoved: TimeInterval?
        var pictureMoved: (seconds: TimeInterval, frame: Int)?
        while positionMoved == nil || (startFrame != nil && pictureMoved == nil) {
            if positionMoved == nil, p.position > startPosition { positionMoved = monotonicSeconds() - called }
            if let startFrame, pictureMoved == nil,
               let picture = p.player.thumbnailAtCurrentTime(),
               let shown = FramePattern.frameNumber(in: picture), shown != startFrame {
                pictureMoved = (monotonicSeconds() - called, shown)
            }
            let waited = monotonicSeconds() - called
            if waited > 3 {
                let what = positionMoved == nil ? "the position (\(format(p.position)) s)" : "the picture (frame \(startFrame ?? 0))"
                throw CheckFailure("\(what) had not moved \(format(waited)) s after play() (state \(p.player.playbackState))")
            }
            if let error = p.recorder.events(since: mark).first(where: \.isError) {
                throw CheckFailure("the player failed after play(): \(describe(error))")
            }
            try await observe(for: 0.01)
        }
        let moved = positionMoved ?? 0
        try expect(moved <= startLimit,
                   "the position first moved \(Int(moved * 1000)) ms after play(), expected within \(Int(startLimit * 1000)) ms")
        if let pictureMoved, let startFrame {
            try expect(pictureMoved.seconds <= startLimit + frame,
                       "the picture first changed (frame \(startFrame) to \(pictureMoved.frame)) \(Int(pictureMoved.seconds * 1000)) ms after play(), expected within \(Int((startLimit + frame) * 1000)) ms")
        }
        try await p.recorder.waitFor(".playbackStateChanged(.playing)", since: mark, timeout: 2) { $0 == .playbackStateChanged(.playing) }
    }

    /// Over about 1 s of wall time the position advances at real time (±`paceTolerance`), and
    /// the picture too (the same, plus one frame for where the frames fall).
    static func measurePace(_ p: CheckPlayer, hasVideo: Bool) async throws {
        p.step("measuring the pace over 1 s")
        let wall0 = monotonicSeconds(), position0 = p.position
        let frame0 = if hasVideo { try p.thumbnailFrameNumber("start of the pace measurement") } else { 0 }
        try await observe(for: 1.0)
        let wall1 = monotonicSeconds(), position1 = p.position
        let frame1 = if hasVideo { try p.thumbnailFrameNumber("end of the pace measurement") } else { 0 }
        let wall = wall1 - wall0
        let pace = (position1 - position0) / wall
        try expect(abs(pace - 1) <= paceTolerance,
                   "the position advanced \(format(position1 - position0)) s in \(format(wall)) s: \(format(pace))x, expected 1x ± \(Int(paceTolerance * 100))%")
        if hasVideo {
            let shown = Double(frame1 - frame0) * frame
            try expect(abs(shown - wall) <= wall * paceTolerance + frame,
                       "the picture advanced from frame \(frame0) to \(frame1) (\(format(shown)) s) in \(format(wall)) s, expected real time ± \(Int(paceTolerance * 100))% and a frame")
        }
    }

    /// A seek forward while playing completes near its target and playing goes on from there,
    /// with the picture of the new place.
    static func seekWhilePlaying(_ p: CheckPlayer, hasVideo: Bool) async throws {
        let target = playingSeekTarget
        let reached = try await p.seek(to: target, near: nil, timeout: 5)
        try expect(abs(reached - target) <= SeekChecks.landing + 0.05,
                   "a seek to \(format(target)) s while playing reported .seekCompleted(\(format(reached)))")
        try await p.waitForPosition(atLeast: reached + 0.2, timeout: 2)
        try expect(p.player.playbackState == .playing, "after a seek while playing the state is \(p.player.playbackState)")
        if hasVideo {
            let position = p.position
            let shown = try p.thumbnailFrameNumber("playing after the seek to \(format(target)) s")
            try expect(shown >= FramePattern.frame(at: target) - 1 && shown <= FramePattern.frame(at: position) + 2,
                       "playing at \(format(position)) s after a seek to \(format(target)) s the picture is frame \(shown)")
        }
    }

    /// Accurate seeks back while paused (`pausedSeekTargets`) land on their targets, stay
    /// paused, and the picture is the frame of the target and of the position (±1).
    static func seekWhilePaused(_ p: CheckPlayer, hasVideo: Bool) async throws {
        for target in pausedSeekTargets { try await seekWhilePaused(p, to: target, hasVideo: hasVideo) }
    }

    /// One accurate seek while paused, to `target`.
    static func seekWhilePaused(_ p: CheckPlayer, to target: TimeInterval, hasVideo: Bool) async throws {
        let mark = p.mark
        let reached = try await p.seek(to: target, near: nil, timeout: 5)
        let expected = FramePattern.frame(at: target)
        try expect(abs(reached - target) <= SeekChecks.landing || abs(reached - FramePattern.time(ofFrame: expected)) <= SeekChecks.landing,
                   "a seek to \(format(target)) s while paused reported .seekCompleted(\(format(reached)))")
        try expect(!p.states(since: mark).contains(.playing) && p.player.playbackState == .paused,
                   "a seek while paused left the state \(p.player.playbackState) (states since: \(p.states(since: mark)))")
        if hasVideo {
            let position = p.position
            let shown = try p.thumbnailFrameNumber("paused after the seek to \(format(target)) s")
            try expect(abs(shown - FramePattern.frame(at: position)) <= 1 && abs(shown - expected) <= 1,
                       "paused after a seek to \(format(target)) s (frame \(expected)) the position is \(format(position)) s (frame \(FramePattern.frame(at: position))) and the picture is frame \(shown)")
        }
    }

    /// Plays from the paused position to the end: it takes the rest of the clip's time (at
    /// least), and ends with exactly one `.finished(.playbackEnded)` in the whole run.
    static func playToEnd(_ p: CheckPlayer, duration: TimeInterval) async throws {
        let remaining = duration - p.position
        let mark = p.mark
        let started = monotonicSeconds()
        try await p.play()
        try await p.waitForEnd(since: mark, timeout: remaining + 3)
        let took = monotonicSeconds() - started
        try expect(took >= remaining - 0.3,
                   "playing the last \(format(remaining)) s ended after \(format(took)) s: too early")
        try await observe(for: 0.5)
        let finishes = p.recorder.events().filter(\.isFinished)
        try expect(finishes == [.finished(.playbackEnded)],
                   "the run finished with \(summary(finishes)), expected exactly one .finished(.playbackEnded)")
        try expect(p.player.playbackState == .stopped, "at the end the state is \(p.player.playbackState), expected stopped")
    }
}

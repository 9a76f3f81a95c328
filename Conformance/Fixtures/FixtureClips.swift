import FoundationEssentials

// MARK: - What one run of ffmpeg makes

/// One file (or HLS folder) the recipe makes with one run of the ffmpeg CLI, in the fixtures
/// folder (relative paths in the arguments name files there). ffmpeg writes beside the
/// output, under a name starting with `.partial-`, and the result is moved into place once
/// it is whole, so a run that stops halfway leaves no clip that looks made.
struct FixtureJob: Sendable {
    /// The file, relative to the fixtures folder; with `hlsSegments`, the playlist's folder.
    let output: String
    /// ffmpeg's arguments after `-nostdin -hide_banner -loglevel error -y`, without the
    /// output file (which comes last).
    let arguments: [String]
    /// HTTP Live Streaming: the output is a folder of `index.m3u8` and this many segments
    /// (`segment0.ts` ...), which the playlist must list.
    var hlsSegments: Int? = nil

    /// The job as the stamp counts it.
    var description: String {
        "ffmpeg \(arguments.joined(separator: " ")) \(output)" + (hlsSegments.map { " (HLS, \($0) segments)" } ?? "")
    }
}

/// A clip of the format sweep, made by the first of its ways whose encoders this ffmpeg
/// build has, then read back with ffprobe. When no way fits, `<file>.missing` says why and
/// the clip's check is skipped with that reason.
struct FormatJob: Sendable {
    /// One way to make the clip.
    struct Way: Sendable {
        /// The video encoder; nil for sound alone.
        let videoEncoder: String?
        /// The audio encoder.
        let audioEncoder: String
        /// Output options after the codecs.
        let options: [String]
        /// Environment variables ffmpeg and ffprobe get.
        var environment: [String: String] = [:]
    }

    /// The file in `formats/`.
    let file: String
    /// ffprobe's names of the streams, in order ("h264,aac").
    let codecs: String
    /// The ways to make it, in order of preference.
    let ways: [Way]
    /// Why it is not made when no way fits; nil: the first missing encoder of the only way.
    var missingReason: String? = nil

    /// The path in the fixtures folder.
    var path: String { "formats/\(file)" }

    /// The arguments of one way, without the output file.
    static func arguments(_ way: Way) -> [String] {
        var arguments: [String] = []
        if way.videoEncoder != nil {
            arguments += ["-f", "lavfi", "-i", "color=c=gray:s=320x240:r=25:d=3,format=yuv420p"]
        }
        arguments += ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=3"]
        if let video = way.videoEncoder {
            arguments += ["-vf", FixtureClips.numberedPicture, "-pix_fmt", "yuv420p", "-c:v", video, "-g", "25"]
        }
        return arguments + ["-c:a", way.audioEncoder, "-ar", "48000", "-ac", "2"] + way.options + ["-t", "3"]
    }

    /// The job as the stamp counts it: every way.
    var description: String {
        "format \(file) \(codecs): " + ways.map { way in
            let environment = way.environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value) " }.joined()
            return environment + Self.arguments(way).joined(separator: " ")
        }.joined(separator: " | ")
    }
}

// MARK: - The clips

/// The media of the fixtures, as ffmpeg arguments (lavfi sources only, nothing downloaded).
///
/// Frame-numbered clips carry their frame number N (0-based, 25 fps) as 16 bits in the top
/// band: bit i (least significant first) is column i of 16 equal columns, light for 1 and
/// dark for 0 (`FramePattern` reads it). Below it is mid grey; the bottom quarter is red on
/// the left half, blue on the right.
enum FixtureClips {
    /// The filter that paints the numbered picture (geq reads N, X, Y, W, H per pixel).
    static let numberedPicture = numberedPicture(middleLuma: 128)

    /// The numbered picture with `middleLuma` as the luma of its middle (mid grey: 128).
    static func numberedPicture(middleLuma: Int) -> String {
        let band = "lt(Y,H/4)", bottom = "gte(Y,3*H/4)", left = "lt(X,W/2)"
        let bit = "mod(floor(N/pow(2,floor(X*16/W))),2)"
        return "geq=lum='if(\(band),if(\(bit),235,16),if(\(bottom),if(\(left),81,41),\(middleLuma)))'"
            + ":cb='if(\(bottom),if(\(left),90,240),128)':cr='if(\(bottom),if(\(left),240,110),128)'"
    }

    /// A numbered clip without sound; `extra` comes right after the picture filter.
    static func video(_ name: String, seconds: Int, width: Int, height: Int, _ extra: [String] = []) -> FixtureJob {
        FixtureJob(output: name, arguments: [
            "-f", "lavfi", "-i", "color=c=gray:s=\(width)x\(height):r=25:d=\(seconds),format=yuv420p",
            "-vf", numberedPicture,
        ] + extra + [
            "-c:v", "libx264", "-preset", "veryfast", "-crf", "12", "-g", "50", "-bf", "2",
            "-pix_fmt", "yuv420p", "-t", "\(seconds)",
        ])
    }

    /// A numbered clip with a 440 Hz sine (H.264 + AAC), a keyframe every `keyframeInterval`
    /// frames.
    static func withAudio(_ name: String, seconds: Int, width: Int, height: Int, keyframeInterval: Int = 50) -> FixtureJob {
        FixtureJob(output: name, arguments: [
            "-f", "lavfi", "-i", "color=c=gray:s=\(width)x\(height):r=25:d=\(seconds),format=yuv420p",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)",
            "-vf", numberedPicture, "-c:v", "libx264", "-preset", "veryfast", "-crf", "12",
            "-g", "\(keyframeInterval)", "-keyint_min", "\(keyframeInterval)", "-sc_threshold", "0", "-bf", "2",
            "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "96k", "-ac", "2", "-t", "\(seconds)",
        ])
    }

    /// The two halves of size-change.ts: 2 s at 320x240, then 2 s at 480x360 (joined by the recipe).
    static let sizeChangeParts = ["part-a.ts", "part-b.ts"]

    /// The colour of still.mp4's picture (0xRRGGBB).
    static let stillColor = "0x3080C0"

    /// The main clips.
    static let main: [FixtureJob] = [
        // 10 s, 320x240, 25 fps, H.264 + AAC: the main frame-numbered clip.
        withAudio("frames.mp4", seconds: 10, width: 320, height: 240),
        // 12 s in MPEG-TS with keyframes 10 s apart (0 and 10 s), as broadcasters' long groups
        // of pictures: a seek there lands on any packet, rarely on a keyframe.
        withAudio("long-gop.ts", seconds: 12, width: 320, height: 240, keyframeInterval: 250),
        // 3 s with audio: for checks that play to the end.
        withAudio("short.mp4", seconds: 3, width: 320, height: 240),
        // Video only (no audio stream at all).
        video("video-only.mp4", seconds: 6, width: 320, height: 240),
        // 2 s of the numbered picture with 3 s of sound: the picture ends a second before
        // the sound (its last frame, 49, at 1.96 s).
        FixtureJob(output: "video-ends-early.mp4", arguments: [
            "-f", "lavfi", "-i", "color=c=gray:s=320x240:r=25:d=2,format=yuv420p",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=3",
            "-vf", numberedPicture, "-c:v", "libx264", "-preset", "veryfast", "-crf", "12", "-g", "50", "-bf", "2",
            "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "96k", "-ac", "2",
        ]),
        // Audio only.
        FixtureJob(output: "audio-only.m4a", arguments: [
            "-f", "lavfi", "-i", "sine=frequency=660:sample_rate=48000:duration=6", "-c:a", "aac", "-b:a", "96k", "-ac", "2",
        ]),
        // Non-square pixels: 320x240 stored, sample aspect 3:2, displayed 480x240.
        video("anamorphic.mp4", seconds: 4, width: 320, height: 240, ["-aspect", "2:1"]),
        // Pixels narrower than tall: 360x240 stored, sample aspect 8:9 (as NTSC DVDs and DV
        // have them), displayed 320x240: the width shrinks, the height stays.
        video("narrow-pixels.mp4", seconds: 2, width: 360, height: 240, ["-aspect", "4:3"]),
        // 4 s of one still picture (every frame alike, as a title card or a cover picture with
        // music), 320x240, 25 fps, H.264 + AAC.
        FixtureJob(output: "still.mp4", arguments: [
            "-f", "lavfi", "-i", "color=c=\(stillColor):s=320x240:r=25:d=4,format=yuv420p",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=4",
            "-c:v", "libx264", "-preset", "veryfast", "-crf", "12", "-g", "50", "-bf", "2",
            "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "96k", "-ac", "2", "-t", "4",
        ]),
        // Interlaced coding (H.264, top field first, 25 frames a second) of the numbered
        // picture: one picture per coded frame, not one per field, is what is handed on.
        video("interlaced.mp4", seconds: 3, width: 320, height: 240, ["-flags", "+ildct+ilme", "-x264-params", "tff=1"]),
        // The size changes mid-stream: 2 s at 320x240, then 2 s at 480x360, in one MPEG-TS.
        video(sizeChangeParts[0], seconds: 2, width: 320, height: 240, ["-bsf:v", "h264_mp4toannexb", "-f", "mpegts"]),
        video(sizeChangeParts[1], seconds: 2, width: 480, height: 360,
              ["-output_ts_offset", "2", "-bsf:v", "h264_mp4toannexb", "-f", "mpegts"]),
    ]

    // MARK: - The media of the network checks

    /// The media the network checks (`Checks/Network*.swift`) serve from the suite's local
    /// HTTP server:
    ///
    /// - hls/: the frame-numbered 320x240 picture with a 440 Hz sine, 10 s as HTTP Live
    ///   Streaming (index.m3u8, a VOD playlist of five 2 s MPEG-TS segments, segment0.ts ...
    ///   segment4.ts). A keyframe every second and no B-frames; the transport stream's clock
    ///   starts with the first picture (no mux delay), and the sound is shifted by the AAC
    ///   encoder's priming (1024 samples), so that picture and sound both start at 0 and frame
    ///   N is at N / 25 s, as in the MP4 clips.
    /// - dense.mp4: 12 s of the numbered picture under grain at about 8 Mbit/s, index first:
    ///   the read-ahead cap check needs a source far larger than 1 MiB per second of media.
    static let streaming: [FixtureJob] = [
        FixtureJob(output: "hls", arguments: [
            "-f", "lavfi", "-i", "color=c=gray:s=320x240:r=25:d=10,format=yuv420p",
            "-itsoffset", "0.021333", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=10",
            "-vf", numberedPicture, "-c:v", "libx264", "-preset", "veryfast", "-crf", "12", "-g", "25", "-keyint_min", "25",
            "-sc_threshold", "0", "-bf", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "96k", "-ac", "2", "-t", "10",
            "-muxdelay", "0", "-muxpreload", "0", "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod",
        ], hlsSegments: 5),
        FixtureJob(output: "dense.mp4", arguments: [
            "-f", "lavfi", "-i", "color=c=gray:s=320x240:r=25:d=12,format=yuv420p",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=12",
            "-vf", "\(numberedPicture),noise=c0s=25:c0f=t+u", "-c:v", "libx264", "-preset", "ultrafast", "-qp", "12", "-g", "25",
            "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "96k", "-ac", "2", "-movflags", "+faststart", "-t", "12",
        ]),
    ]

    // MARK: - The format sweep

    private static let h264 = ["-preset", "veryfast", "-crf", "16", "-bf", "2"]
    private static let x265 = ["-preset", "ultrafast", "-crf", "18", "-x265-params", "log-level=error"]
    private static let vp9 = ["-deadline", "realtime", "-cpu-used", "8", "-crf", "24", "-b:v", "0"]

    private static func format(_ file: String, _ video: String?, _ audio: String, _ codecs: String, _ options: [String]) -> FormatJob {
        FormatJob(file: file, codecs: codecs, ways: [FormatJob.Way(videoEncoder: video, audioEncoder: audio, options: options)])
    }

    /// The format sweep, into `formats/`: every clip is 3 s of the numbered 320x240 picture
    /// at 25 fps with a 440 Hz sine (48 kHz stereo), keyframes every second, named
    /// `<video codec>-<audio codec>.<container>` (`<audio codec>.<container>` for sound
    /// alone), as `FormatChecks.clips` lists them.
    static let formats: [FormatJob] = [
        format("h264-aac.mp4", "libx264", "aac", "h264,aac", h264 + ["-b:a", "96k"]),
        format("hevc-aac.mp4", "libx265", "aac", "hevc,aac", x265 + ["-tag:v", "hvc1", "-b:a", "96k"]),
        // Timestamps ten hours in, as a broadcast capture has them (the media's timeline
        // still starts at 0).
        format("h264-aac.ts", "libx264", "aac", "h264,aac", h264 + ["-b:a", "96k", "-output_ts_offset", "36000"]),
        format("h264-flac.mkv", "libx264", "flac", "h264,flac", h264),
        format("h264-pcm.mkv", "libx264", "pcm_s16le", "h264,pcm_s16le", h264),
        format("vp9-opus.webm", "libvpx-vp9", "libopus", "vp9,opus", vp9 + ["-b:a", "96k"]),
        format("vp9-vorbis.webm", "libvpx-vp9", "libvorbis", "vp9,vorbis", vp9 + ["-q:a", "4"]),
        format("mpeg2-mp3.ts", "mpeg2video", "libmp3lame", "mpeg2video,mp3", ["-q:v", "3", "-bf", "2", "-b:a", "128k"]),
        // (AVI has no timestamps to shift: without this, the MP3 encoder delay moves frame 1 to 0.08 s.)
        // An MPEG program stream (.mpg, .vob) as DVD and broadcast recorders write it: its
        // timestamps start at the mux delay (about 0.5 s), not at 0.
        format("mpeg1-mp2.mpg", "mpeg1video", "mp2", "mpeg1video,mp2", ["-q:v", "3", "-bf", "2", "-b:a", "192k"]),
        format("mpeg4-mp3.avi", "mpeg4", "libmp3lame", "mpeg4,mp3", ["-q:v", "3", "-b:a", "128k", "-avoid_negative_ts", "disabled"]),
        format("theora-vorbis.ogg", "libtheora", "libvorbis", "theora,vorbis", ["-q:v", "8", "-q:a", "4"]),
        // Windows Media in ASF, as older cameras, phones and downloads have it.
        format("wmv2-wmav2.wmv", "wmv2", "wmav2", "wmv2,wmav2", ["-b:v", "1M", "-b:a", "128k"]),
        // Sound alone: Opus in Ogg, as .opus files have it.
        format("opus.ogg", nil, "libopus", "opus", ["-b:a", "96k"]),
        // Sound alone: a FLAC file, as music libraries have it (lossless: a player's audio
        // output may take its samples far ahead of their time).
        format("flac.flac", nil, "flac", "flac", []),
        // Sound alone: FLAC in Ogg (.oga), as some music stores and rippers write it.
        format("flac.oga", nil, "flac", "flac", []),
        // Sound alone: Speex in Ogg (.spx), speech at 16 kHz mono, as voice recorders and
        // VoIP archives have it.
        format("speex.ogg", nil, "libspeex", "speex", ["-ar", "16000", "-ac", "1"]),
        // Sound alone: G.711 µ-law at 8 kHz mono in WAV, as telephone systems, voicemail and
        // call recorders write it: a sample rate far below music's.
        format("mulaw.wav", nil, "pcm_mulaw", "pcm_mulaw", ["-ar", "8000", "-ac", "1"]),
        // Sound alone: an MP3 file as ffmpeg writes it by default (44.1 kHz, 128 kb/s, its
        // first frame a LAME Info tag coded at 64 kb/s: an engine that times the file by that
        // frame's bitrate gets twice its length).
        format("mp3.mp3", nil, "libmp3lame", "mp3", ["-ar", "44100"]),
        // Sound alone: raw AAC in ADTS frames (.aac files, radio streams), with no index or
        // length anywhere: an engine reads or estimates it.
        format("aac.aac", nil, "aac", "aac", ["-b:a", "128k", "-f", "adts"]),
        // AV1 with the fastest encoder there is.
        FormatJob(file: "av1-opus.mkv", codecs: "av1,opus", ways: [
            FormatJob.Way(videoEncoder: "libsvtav1", audioEncoder: "libopus", options: ["-preset", "12", "-crf", "30", "-b:a", "96k"],
                          environment: ["SVT_LOG": "1"]),
            FormatJob.Way(videoEncoder: "libaom-av1", audioEncoder: "libopus",
                          options: ["-usage", "realtime", "-cpu-used", "8", "-crf", "30", "-b:a", "96k"]),
            FormatJob.Way(videoEncoder: "librav1e", audioEncoder: "libopus", options: ["-speed", "10", "-qp", "80", "-b:a", "96k"]),
        ], missingReason: "this ffmpeg build has no AV1 encoder (libsvtav1, libaom-av1 or librav1e)"),
    ]

    // MARK: - The picture-size sweep

    /// The filter chain that paints a W x H picture of the size sweep (see `SizeSweep`):
    /// a 1-pixel light border around mid grey (both a shade darker on odd frames, so that
    /// every frame differs from the one before); from 8x8 up, a marker just inside each
    /// corner, m = max(2, min(W,H)/6) pixels square (red, green, blue, yellow clockwise from
    /// the top left, yellow bottom right); from 64x48 up, the frame number in the middle
    /// third of the rows. drawbox is fast at every size; the number's bits are boxes enabled
    /// on the frames whose number has that bit set.
    static func sizePattern(width w: Int, height h: Int) -> String {
        let m = max(2, min(w, h) / 6)
        var chain = [
            "drawbox=x=0:y=0:w=\(w):h=\(h):t=fill:color=0x707070:enable='mod(n,2)'",
            "drawbox=x=0:y=0:w=\(w):h=\(h):t=1:color=0xEBEBEB:enable='not(mod(n,2))'",
            "drawbox=x=0:y=0:w=\(w):h=\(h):t=1:color=0xD8D8D8:enable='mod(n,2)'",
        ]
        if w >= 8, h >= 8 {
            chain += [
                "drawbox=x=1:y=1:w=\(m):h=\(m):t=fill:color=red",
                "drawbox=x=\(w - 1 - m):y=1:w=\(m):h=\(m):t=fill:color=lime",
                "drawbox=x=1:y=\(h - 1 - m):w=\(m):h=\(m):t=fill:color=blue",
                "drawbox=x=\(w - 1 - m):y=\(h - 1 - m):w=\(m):h=\(m):t=fill:color=yellow",
            ]
        }
        if w >= 64, h >= 48 {
            let top = h / 3, rows = 2 * h / 3 - h / 3
            chain.append("drawbox=x=1:y=\(top):w=\(w - 2):h=\(rows):t=fill:color=0x101010")
            for bit in 0..<16 {
                let x0 = bit == 0 ? 1 : (bit * w + 15) / 16
                let x1 = bit == 15 ? w - 1 : ((bit + 1) * w + 15) / 16
                chain.append("drawbox=x=\(x0):y=\(top):w=\(x1 - x0):h=\(rows):t=fill:color=0xEBEBEB:enable='mod(floor(n/\(1 << bit)),2)'")
            }
        }
        return chain.joined(separator: ",")
    }

    /// One clip of the size sweep: 1 s, 25 fps, a keyframe every 10 frames, painted in 4:4:4
    /// (the color source rounds odd sizes down in 4:2:0), then subsampled.
    static func sizeClip(_ clip: SweepClip) -> FixtureJob {
        let w = clip.size.width, h = clip.size.height
        let pixels = clip.codec == .ffv1 ? "yuv444p" : "yuv420p"
        let input = ["-f", "lavfi", "-i", "color=c=0x808080:s=\(w)x\(h):r=25:d=1,format=yuv444p",
                     "-vf", "\(sizePattern(width: w, height: h)),format=\(pixels)"]
        let encoder: [String] = switch clip.codec {
        case .h264: ["-c:v", "libx264", "-preset", "ultrafast", "-qp", "10", "-g", "10", "-bf", "2", "-pix_fmt", "yuv420p"]
        case .vp9: ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-crf", "4", "-b:v", "0", "-g", "10", "-pix_fmt", "yuv420p"]
        case .ffv1: ["-c:v", "ffv1", "-g", "10", "-pix_fmt", "yuv444p"]
        }
        return FixtureJob(output: clip.fixture, arguments: input + encoder + ["-t", "1"])
    }

    /// Every clip of the size sweep.
    static var sizes: [FixtureJob] { SizeSweep.all.map(sizeClip) }

    // MARK: - Turned pictures

    /// The turned clips: a clip copied with a `rotate` tag, which ffmpeg's MP4 muxer writes
    /// into a display matrix. The size sweep's 320x240 clip (its border and corner markers
    /// tell which way a picture is shown) at each turn, and anamorphic.mp4 (3:2 pixels) at a
    /// quarter turn.
    static let turned: [(source: String, turn: Int, output: String)] = [90, 180, 270].map {
        ("sizes/320x240.mp4", $0, turnedFixture($0))
    } + [("anamorphic.mp4", 90, "turned-anamorphic-90.mp4")]

    /// The fixture of the size sweep's 320x240 clip with the `rotate` tag `turn`.
    static func turnedFixture(_ turn: Int) -> String { "turned-\(turn).mp4" }

    /// ffmpeg's arguments (before the output) that copy `input` with the `rotate` tag `turn`.
    static func turnedArguments(input: String, turn: Int) -> [String] {
        ["-i", input, "-c", "copy", "-metadata:s:v:0", "rotate=\(turn)"]
    }

    /// The turned clips, as the stamp counts them.
    static var turnedDescription: String {
        turned.map { "ffmpeg \(turnedArguments(input: $0.source, turn: $0.turn).joined(separator: " ")) \($0.output)" }
            .joined(separator: "\n")
    }

    // MARK: - Broken inputs

    /// The seed of random.mp4's bytes.
    static let randomSeed: UInt64 = 20261130
    /// The length of random.mp4.
    static let randomLength = 256 * 1024

    /// The broken inputs, as the stamp counts them: empty.mp4 (no bytes), truncated.mp4
    /// (frames.mp4 cut at 2/5, before its index), random.mp4 (random bytes), text.mp4 (a text
    /// file) and directory.mp4 (a folder).
    static let brokenDescription = "broken: empty.mp4; truncated.mp4 = frames.mp4 * 2/5; random.mp4 = \(randomLength) bytes of SplitMix64(\(randomSeed)); text.mp4 = 200 lines; directory.mp4/"
}

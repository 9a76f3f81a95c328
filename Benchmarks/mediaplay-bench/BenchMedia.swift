import FoundationEssentials
import Glibc
import CommandLineSupport
import PlaybackKit

/// One clip the bench generates: H.264 (x264) + AAC in MP4, from lavfi test sources.
struct BenchClip: Sendable {
    /// What the clip is for, e.g. "1080p".
    var label: String
    var width: Int
    var height: Int
    var framesPerSecond: Int
    /// Length in seconds; both sides of a comparison play it to the end.
    var seconds: Int
    /// Keyframe interval in seconds.
    var gopSeconds: Int = 2

    /// The file name, which spells every parameter so that a changed clip is made anew.
    var fileName: String {
        "bench-\(width)x\(height)p\(framesPerSecond)-\(seconds)s-gop\(gopSeconds).mp4"
    }

    /// Frames in the clip.
    var frameCount: Int { framesPerSecond * seconds }

    /// `1080p 20 s, GOP 2 s`: how the thumbnail sweep's tables name the clip.
    var shortName: String {
        "\(height)p \(seconds) s, GOP \(gopSeconds) s"
    }

    /// `1920x1080 30 fps, 20 s, GOP 2 s`.
    var summary: String {
        "\(width)x\(height) \(framesPerSecond) fps H.264 + AAC, \(seconds) s, GOP \(gopSeconds) s"
    }

    /// The ffmpeg command that writes the clip to `path`.
    func generateCommand(to path: String) -> [String] {
        let gop = String(framesPerSecond * gopSeconds)
        return [
            "ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
            "-f", "lavfi", "-i", "testsrc2=size=\(width)x\(height):rate=\(framesPerSecond):duration=\(seconds)",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)",
            "-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-pix_fmt", "yuv420p",
            "-g", gop, "-keyint_min", gop, "-sc_threshold", "0", "-bf", "2",
            "-c:a", "aac", "-b:a", "128k", "-ac", "2",
            "-movflags", "+faststart", "-t", String(seconds), "-f", "mp4", path,
        ]
    }
}

/// The clips the bench measures with, generated once into a cache folder.
struct BenchMedia: Sendable {
    /// Playback CPU, peak memory, time to prepared and thumbnails: 1080p30.
    static let playback = BenchClip(label: "1080p", width: 1920, height: 1080, framesPerSecond: 30, seconds: 20)
    /// Thumbnails of another shape: 720p30 with a keyframe every 5 s (150 pictures), so a
    /// picture in the middle of a GOP lies 75 pictures from the keyframe before it, against 30
    /// in the 1080p clip's 2 s GOPs. The GOP is in the file name, so this recipe makes its own
    /// file and the other clips' cached files stay valid.
    static let longGOP = BenchClip(label: "720p, GOP 5 s", width: 1280, height: 720, framesPerSecond: 30, seconds: 25, gopSeconds: 5)
    /// Accurate seeks: a 60 s 720p30 file.
    static let seeking = BenchClip(label: "720p", width: 1280, height: 720, framesPerSecond: 30, seconds: 60)
    /// Concurrency: a short 480p30 clip, many players at once.
    static let concurrency = BenchClip(label: "480p", width: 854, height: 480, framesPerSecond: 30, seconds: 5)

    /// The clips the thumbnail sweep takes pictures of.
    static let thumbnailClips = [playback, longGOP]
    /// Every clip the bench uses, in the order they are generated.
    static let allClips = [playback, longGOP, seeking, concurrency]

    /// The folder the clips are kept in.
    let folder: URL

    /// Paths of the clips of playback, seeking and concurrency.
    var playbackFile: String { folder.appendingPathComponent(Self.playback.fileName).path }
    var seekingFile: String { folder.appendingPathComponent(Self.seeking.fileName).path }
    var concurrencyFile: String { folder.appendingPathComponent(Self.concurrency.fileName).path }

    /// The path of any of the bench's clips in this folder.
    func path(of clip: BenchClip) -> String { folder.appendingPathComponent(clip.fileName).path }

    /// Makes every clip that is missing (written to a temporary name, then renamed, so an
    /// interrupted run never leaves a partial clip behind). Returns the seconds spent.
    static func prepare(in folder: URL, log: (String) -> Void) async throws -> (BenchMedia, TimeInterval) {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // Other users (the VLC player runs unprivileged) must be able to read the clips.
        chmod(folder.path, 0o755)
        let started = monotonicSeconds()
        for clip in allClips {
            let path = folder.appendingPathComponent(clip.fileName).path
            if FileManager.default.fileExists(atPath: path) { continue }
            log("generating \(clip.fileName) (\(clip.summary))")
            let partial = path + ".partial.mp4"
            let result = try await ChildProcess.run(clip.generateCommand(to: partial), timeLimit: 600)
            guard result.succeeded else {
                unlink(partial)
                throw PlaybackError(code: .engine, message: "bench: generating \(clip.fileName) with ffmpeg failed (\(result.failureDescription))")
            }
            guard rename(partial, path) == 0 else {
                throw PlaybackError(code: .engine, message: "bench: cannot rename \(partial): \(String(cString: strerror(errno)))")
            }
            chmod(path, 0o644)
        }
        return (BenchMedia(folder: folder), monotonicSeconds() - started)
    }
}

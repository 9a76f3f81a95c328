#if MPV
import Foundation
import MPVPlayback
import PlaybackConformance
import PlaybackKit
import Testing

// Helpers for the mpv tests: players on fixtures, thread counts. Events
// and frames are recorded with PlaybackConformance's EventRecorder and FrameCollector.

/// An mpv player for the fixture `name` (null audio unless asked otherwise).
func mpvPlayer(_ name: String, video: VideoOutput = .none, audio: AudioOutput = .null,
               configure: (inout PlaybackOptions) -> Void = { _ in }) throws -> any MediaPlayback {
    var options = PlaybackOptions(videoOutput: video, audioOutput: audio)
    configure(&options)
    return try MPVBackend().makePlayer(url: try TestFixtures.file(name), options: options)
}

/// One frame of the 25 fps fixtures, and a little.
let mpvFrameTolerance = 1.0 / FramePattern.frameRate + 0.001

/// Threads of this process now.
func mpvThreadCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
}

/// Waits (up to `timeout` seconds) until at most `limit` threads are left: shut-down players
/// tear their cores down on their own threads, which must not be cut off by the process ending.
func mpvWaitForThreads(atMost limit: Int, timeout: TimeInterval = 5) async {
    let deadline = Date().addingTimeInterval(timeout)
    while mpvThreadCount() > limit, Date() < deadline {
        try? await Task.sleep(for: .milliseconds(50))
    }
}
#endif

import Foundation
import PlaybackConformance
import PlaybackKit
import Testing
import X11Windows

/// `mediaplay play --window`, run as a user does, on $DISPLAY or an Xvfb the test starts.
@Suite(.serialized, .enabled(if: VirtualDisplay.isAvailable, "needs an X display: $DISPLAY, or Xvfb installed"))
struct WindowPlayerTests {
    /// The player's window, found by its title once it says a second has played; then its
    /// picture (frames.mp4, 320x240, aspectFit in 320x180: 240x180 at x 40) and its seek bar.
    @Test(arguments: CLI.backends)
    func playsIntoAWindowOfItsOwn(backend: String) async throws {
        let connection = try #require(X11Connection())
        // A name of this backend's own, so the title tells its window from any other.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mediaplay-window-\(getpid())-\(backend)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let clip = folder.appendingPathComponent("frames-\(backend).mp4")
        try FileManager.default.createSymbolicLink(at: clip, withDestinationURL: CLI.fixtures.appendingPathComponent("frames.mp4"))
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["play", "--window", "--size", "320x180", "--audio", "null", "--backend", backend, clip.path]
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        defer {
            // Ended before the display goes (with this process), so it ends cleanly; SIGKILL,
            // as the child may inherit a test thread's blocked SIGTERM.
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(15)
        var found: (window: UInt, title: String)?
        while found == nil, Date() < deadline, process.isRunning {
            found = connection.topLevelWindows().first { $0.title.hasPrefix("frames-\(backend).mp4 — 00:00:01 / 00:00:10") }
            if found == nil { try await Task.sleep(nanoseconds: 20_000_000) }
        }
        let window = try #require(found, "no window titled with a second played of \(clip.lastPathComponent) within 15 s").window
        #expect(found?.title.hasSuffix("[aspectFit] — mediaplay") == true, "title: \(found?.title ?? "")")
        let picture = try #require(connection.grab(window))
        #expect(picture.size == VideoSize(width: 320, height: 186), "the window is \(picture.size)")
        func luma(_ x: Int, _ y: Int) -> Int { FramePattern.luma(picture, x: x, y: y) }
        func rgb(_ x: Int, _ y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) { picture.pixel(x: x, y: y) }
        #expect(luma(20, 90) < 40 && luma(300, 90) < 40, "the bars beside the picture are not black")
        #expect((90...170).contains(luma(160, 90)), "the picture's middle is not grey: \(rgb(160, 90))")
        #expect(rgb(100, 165).r > 160 && rgb(220, 165).b > 160, "the bottom is not red and blue: \(rgb(100, 165)), \(rgb(220, 165))")
        // The seek bar: played (red) from the left, grey after.
        #expect(rgb(2, 183).r > 160 && rgb(2, 183).g < 100, "the seek bar's played part: \(rgb(2, 183))")
        #expect(rgb(316, 183).r < 100, "the seek bar's rest: \(rgb(316, 183))")
    }

}

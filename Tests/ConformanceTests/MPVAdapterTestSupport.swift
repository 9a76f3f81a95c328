#if MPV
import Foundation
import MPVPlayback
import PlaybackConformance
import PlaybackKit
import Testing

// Helpers for the mpv tests: players on fixtures, a local HTTP server, thread counts. Events
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

/// A minimal HTTP/1.1 file server on 127.0.0.1 that records each request's header lines and
/// answers byte ranges, so tests can see what the engine sends over HTTP.
final class MPVTestHTTPServer: @unchecked Sendable {
    // @unchecked: `requests` is touched only with `lock` held; the socket is closed once in `stop()`.
    private let lock = NSLock()
    private var requests: [[String]] = []
    private let listener: Int32
    private let media: Data
    /// The port it listens on.
    let port: UInt16

    init(serving file: URL) throws {
        media = try Data(contentsOf: file)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(listener, raw, length) == 0 && listen(listener, 8) == 0 && getsockname(listener, raw, &length) == 0
            }
        }
        guard bound else { throw PlaybackError(code: .network, message: "test server: cannot listen") }
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Header lines of every request so far.
    var receivedHeaders: [[String]] { lock.withLock { requests } }

    func stop() { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let thread = Thread { [self] in serve(client) }
            thread.start()
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.contains(Data("\r\n\r\n".utf8)) {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return }
            received.append(contentsOf: buffer[0..<count])
        }
        let lines = String(decoding: received, as: UTF8.self).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        lock.withLock { requests.append(lines) }
        var start = 0
        if let range = lines.first(where: { $0.lowercased().hasPrefix("range: bytes=") }) {
            start = Int(range.dropFirst("range: bytes=".count).prefix { $0.isNumber }) ?? 0
        }
        start = min(start, media.count)
        let body = media.subdata(in: start..<media.count)
        let status = start > 0 ? "206 Partial Content" : "200 OK"
        var head = "HTTP/1.1 \(status)\r\nContent-Type: video/mp4\r\nAccept-Ranges: bytes\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
        if start > 0 { head += "Content-Range: bytes \(start)-\(media.count - 1)/\(media.count)\r\n" }
        head += "\r\n"
        let reply = Data(head.utf8) + body
        reply.withUnsafeBytes { bytes in
            var sent = 0
            while sent < bytes.count {
                let count = send(client, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
                guard count > 0 else { return }
                sent += count
            }
        }
    }
}

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

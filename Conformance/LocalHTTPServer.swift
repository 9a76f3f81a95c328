import FoundationEssentials
import LoopbackHTTP
import PlaybackKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small HTTP/1.1 server on 127.0.0.1 (a free port, never another address) for network
/// tests: the conformance checks start and stop one per check, and adapter tests can use it
/// the same way. Each path is a `Route`: content served with byte ranges (optionally paced to
/// a throughput cap, stalling at an offset, or dropping the connection once mid-file), a bare
/// status (404, 500, ...), a redirect, or silence (the request is read and never answered).
/// With a `TLSServerIdentity` it speaks https instead.
///
/// Every request is logged with its header lines, the status answered and the body bytes sent
/// so far (`requests`), so a test can see what an engine asked for and how much it was given.
/// Each response closes its connection (`Connection: close`). `stop()` closes every
/// connection, stalled and silent ones included.
///
/// ```swift
/// let server = try LocalHTTPServer()
/// server.route("/clip.mp4", .content(try .file(clipURL)))
/// server.route("/gone.mp4", .status(404))
/// let player = try backend.makePlayer(url: server.url("/clip.mp4"), options: options)
/// ...
/// print(server.requests.map { "\($0.method) \($0.path) \($0.header("user-agent") ?? "-")" })
/// server.stop()
/// ```
public final class LocalHTTPServer: @unchecked Sendable {
    // @unchecked: `routes`, `connections`, `dropped`, `pacing` and `stopped` are guarded by
    // `condition`; the request log is a `Watched`; the rest is set in init and only read.

    // MARK: - Routes

    /// What the server answers on one path.
    public enum Route: Sendable {
        /// The content, with byte ranges (200 or 206; 416 for a range past the end).
        case content(Content)
        /// A bare status with a short text body (e.g. 404, 500).
        case status(Int)
        /// `302 Found` to a path on this server (`/other.mp4`) or a full URL.
        case redirect(String)
        /// The request is read and logged, and never answered: the connection stays open and
        /// silent until the server stops.
        case silent
    }

    /// Bytes served on a path, and how they are sent.
    public struct Content: Sendable {
        /// The body.
        public var data: Data
        /// The `Content-Type` header.
        public var contentType: String
        /// Throughput cap in bytes per second, shared by every response on the path; nil: as
        /// fast as the connection takes it. Changing it applies to responses in progress.
        public var bytesPerSecond: Int?
        /// Every response stops sending at this body offset and keeps its connection open,
        /// silent, until the server stops (headers say the full length).
        public var stallAt: Int?
        /// The first response on the path that reaches this body offset closes its connection
        /// there (later ones are served whole).
        public var dropOnceAt: Int?
        /// Bytes the server lets sit in the kernel between it and the client's program (its
        /// send queue and the client's receive queue, read from /proc/net/tcp) before it sends
        /// more, as a real link holds only so much in flight; nil: as much as the kernel takes
        /// (on loopback it grows a fast reader's receive queue to megabytes).
        public var maxInFlight: Int?

        /// Content with the given body and settings.
        public init(_ data: Data, contentType: String = "application/octet-stream", bytesPerSecond: Int? = nil,
                    stallAt: Int? = nil, dropOnceAt: Int? = nil, maxInFlight: Int? = nil) {
            self.data = data
            self.contentType = contentType
            self.bytesPerSecond = bytesPerSecond
            self.stallAt = stallAt
            self.dropOnceAt = dropOnceAt
            self.maxInFlight = maxInFlight
        }

        /// The file at `url`, its content type chosen by its extension.
        public static func file(_ url: URL) throws -> Content {
            Content(try Data(contentsOf: url), contentType: contentType(forExtension: url.pathExtension))
        }

        /// The MP4 file at `url` with its index (`moov`) moved before the media data, as
        /// `-movflags +faststart` writes it, for players that read straight through.
        public static func indexFirstMP4(_ url: URL) throws -> Content {
            let data = try Data(contentsOf: url)
            return Content(MP4Boxes.indexFirst(data) ?? data, contentType: "video/mp4")
        }

        /// The content type for a file extension (m3u8, ts, mp4, ...).
        public static func contentType(forExtension ext: String) -> String {
            switch ext.lowercased() {
            case "m3u8": "application/vnd.apple.mpegurl"
            case "ts": "video/mp2t"
            case "mp4", "m4v": "video/mp4"
            case "m4a": "audio/mp4"
            case "mkv": "video/x-matroska"
            case "webm": "video/webm"
            default: "application/octet-stream"
            }
        }
    }

    // MARK: - The request log

    /// One header line of a request.
    public struct Header: Sendable, Equatable {
        /// The name as the client wrote it.
        public let name: String
        /// The value, without surrounding blanks.
        public let value: String
    }

    /// One request the server read, and what it answered so far.
    public struct Request: Sendable {
        /// 1 for the first request, counting up.
        public let number: Int
        /// `GET`, `HEAD`, ...
        public let method: String
        /// The path, without the query.
        public let path: String
        /// Every header line, in order.
        public let headers: [Header]
        /// The first byte of a `Range: bytes=` request, nil without one.
        public let rangeStart: Int?
        /// The last byte of a range request, nil when open-ended or without one.
        public let rangeEnd: Int?
        /// When it was read (seconds on a monotonic clock).
        public let time: TimeInterval
        /// The client's port (its end of the connection on 127.0.0.1).
        public let clientPort: Int
        /// The status answered; 0 while none (a silent route).
        public internal(set) var status = 0
        /// Body bytes sent so far.
        public internal(set) var bodyBytesSent = 0

        /// The value of the first header called `name` (any case), or nil.
        public func header(_ name: String) -> String? {
            let wanted = name.lowercased()
            return headers.first { $0.name.lowercased() == wanted }?.value
        }
    }

    // MARK: - State

    /// The port it listens on.
    public let port: Int
    /// `http`, or `https` with a TLS identity.
    public let scheme: String
    private let listener: Int32
    private let tls: TLSServerIdentity?
    private let log = Watched<[Request]>([])
    /// How many responses have stalled (or stayed silent) so far.
    private let stallCount = Watched(0)
    /// How many connections ended without a request the server could read (closed by the
    /// client, a failed TLS handshake, or no request within the receive timeout).
    private let requestlessCount = Watched(0)
    private let condition = ConditionVariable()
    private var routes: [String: Route] = [:]
    private var connections: Set<Int32> = []
    /// Paths whose one drop happened.
    private var dropped: Set<String> = []
    /// For each paced path, when its next chunk may go (monotonic seconds).
    private var pacing: [String: Double] = [:]
    private var stopped = false

    /// Starts listening on 127.0.0.1, speaking https when `tls` is given. No routes yet:
    /// every path answers 404 until one is added.
    public init(tls: TLSServerIdentity? = nil) throws {
        self.tls = tls
        scheme = tls == nil ? "http" : "https"
        (listener, port) = try Self.listen()
        DetachedThread.start(name: "http-server") { [self] in acceptLoop() }
    }

    deinit { stop() }

    /// Serves `route` on `path` (replacing what was there).
    public func route(_ path: String, _ route: Route) {
        condition.withLock { routes[path] = route }
    }

    /// Serves every file of `folder` as content under `prefix` (`/hls` + `/index.m3u8`).
    public func routeFolder(_ folder: URL, at prefix: String) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        for name in names where !name.hasPrefix(".") {
            route(prefix + "/" + name, .content(try .file(folder.appendingPathComponent(name))))
        }
    }

    /// Changes the content served on `path` (e.g. lifts its throughput cap); responses in
    /// progress follow the new cap, stall and drop offsets.
    public func changeContent(at path: String, _ change: (inout Content) -> Void) {
        condition.withLock {
            guard case .content(var content)? = routes[path] else { return }
            change(&content)
            routes[path] = .content(content)
        }
    }

    /// The URL of `path` on this server, e.g. `url("/media.mp4")`.
    public func url(_ path: String) -> URL { URL(string: "\(scheme)://127.0.0.1:\(port)\(path)")! }

    /// Every request so far, in the order they were read.
    public var requests: [Request] { log.read { $0 } }

    /// The requests for `path`.
    public func requests(for path: String) -> [Request] { requests.filter { $0.path == path } }

    /// Body bytes sent so far on every path (`path` nil) or on one.
    public func bodyBytesSent(path: String? = nil) -> Int {
        log.read { list in list.filter { path == nil || $0.path == path }.reduce(0) { $0 + $1.bodyBytesSent } }
    }

    /// How many responses have stalled (or stayed silent) so far.
    public var stalls: Int { stallCount.read { $0 } }

    /// How many connections ended without a request the server could read.
    public var connectionsWithoutRequest: Int { requestlessCount.read { $0 } }

    /// Waits until a response has stalled (the player reads into data that never comes) or a
    /// silent route got a request, at most `timeout` seconds; whether one did.
    public func waitForStall(timeout: TimeInterval) async -> Bool {
        await stallCount.wait(timeout: timeout) { $0 > 0 }
    }

    /// Waits for a logged request that `match` accepts, at most `timeout` seconds; returns it
    /// (as logged when the wait ended), or nil when none came.
    public func waitForRequest(timeout: TimeInterval, where match: @escaping @Sendable (Request) -> Bool) async -> Request? {
        _ = await log.wait(timeout: timeout) { $0.contains(where: match) }
        return requests.first(where: match)
    }

    /// Stops listening and closes every connection, stalled and silent ones included.
    public func stop() {
        condition.lock()
        guard !stopped else {
            condition.unlock()
            return
        }
        stopped = true
        let open = connections
        connections.removeAll()
        condition.broadcast()
        condition.unlock()
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// A URL on 127.0.0.1 where nothing listens (a port just freed), for "connection refused".
    public static func refusedURL(path: String = "/media.mp4") throws -> URL {
        let (fd, port) = try listen()
        close(fd)
        return URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    // MARK: - Sockets

    private static func listen() throws -> (Int32, Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServerError("socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, Glibc.listen(fd, 32) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw ServerError("bind/listen on 127.0.0.1: \(reason)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    private func acceptLoop() {
        while true {
            var peer = sockaddr_in()
            var peerLength = socklen_t(MemoryLayout<sockaddr_in>.size)
            let client = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &peerLength) }
            }
            let clientPort = Int(UInt16(bigEndian: peer.sin_port))
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            condition.lock()
            if stopped {
                condition.unlock()
                close(client)
                return
            }
            connections.insert(client)
            condition.unlock()
            DetachedThread.start(name: "http-connection") { [self] in
                DetachedThread.blockBrokenPipeSignals()
                let connection = ServerConnection(fd: client, tls: tls)
                if !connection.open() || !serve(connection, clientPort: clientPort) {
                    requestlessCount.update { $0 += 1 }
                }
                connection.close()
                condition.lock()
                connections.remove(client)
                condition.unlock()
                close(client)
            }
        }
    }

    // MARK: - One request

    /// Reads one request and answers it; false when no request could be read.
    private func serve(_ connection: ServerConnection, clientPort: Int) -> Bool {
        guard let parsed = HTTPRequestHead.read(with: connection.receive) else { return false }
        var number = 0
        log.update { list in
            number = list.count + 1
            list.append(Request(number: number, method: parsed.method, path: parsed.path, headers: parsed.headers.map { Header(name: $0.name, value: $0.value) },
                                rangeStart: parsed.rangeStart, rangeEnd: parsed.rangeEnd, time: monotonicSeconds(),
                                clientPort: clientPort))
        }
        PlaybackLog.log(.debug, "conformance-http", "#\(number) \(parsed.method) \(parsed.path) range \(parsed.rangeStart.map(String.init) ?? "-")-\(parsed.rangeEnd.map(String.init) ?? "")")
        let route = condition.withLock { routes[parsed.path] }
        switch route {
        case .content(let content)?:
            serveContent(content, for: parsed, number: number, clientPort: clientPort, on: connection)
        case .status(let status)?:
            answer(status, number: number, on: connection)
        case .redirect(let target)?:
            let location = target.hasPrefix("/") ? url(target).absoluteString : target
            setStatus(302, number: number)
            _ = connection.send(text: "HTTP/1.1 302 Found\r\nLocation: \(location)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        case .silent?:
            stallCount.update { $0 += 1 }
            holdUntilStopped()
        case nil:
            answer(404, number: number, on: connection)
        }
        return true
    }

    private func answer(_ status: Int, number: Int, on connection: ServerConnection) {
        let reason = Self.reasons[status] ?? "Status"
        let body = "\(status) \(reason)\n"
        setStatus(status, number: number)
        _ = connection.send(text: "HTTP/1.1 \(status) \(reason)\r\nContent-Length: \(body.utf8.count)\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n\(body)")
    }

    private static let reasons = [200: "OK", 206: "Partial Content", 302: "Found", 403: "Forbidden", 404: "Not Found",
                                  416: "Range Not Satisfiable", 500: "Internal Server Error", 503: "Service Unavailable"]

    private func setStatus(_ status: Int, number: Int) {
        log.update { $0[number - 1].status = status }
    }

    private func serveContent(_ content: Content, for request: HTTPRequestHead, number: Int, clientPort: Int, on connection: ServerConnection) {
        let size = content.data.count
        var start = request.rangeStart ?? 0
        var end = min(size, (request.rangeEnd ?? (size - 1)) + 1)
        if let suffix = request.suffixLength {
            start = max(0, size - suffix)
            end = size
        }
        let ranged = request.rangeStart != nil || request.suffixLength != nil
        guard size == 0 || (start < size && start < end) else {
            setStatus(416, number: number)
            _ = connection.send(text: "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */\(size)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        }
        var head = ranged ? "HTTP/1.1 206 Partial Content\r\n" : "HTTP/1.1 200 OK\r\n"
        if ranged { head += "Content-Range: bytes \(start)-\(end - 1)/\(size)\r\n" }
        head += "Content-Length: \(end - start)\r\nContent-Type: \(content.contentType)\r\nAccept-Ranges: bytes\r\nConnection: close\r\n\r\n"
        setStatus(ranged ? 206 : 200, number: number)
        guard connection.send(text: head), request.method != "HEAD" else { return }
        sendBody(content.data, path: request.path, from: start, to: end, number: number, clientPort: clientPort, on: connection)
    }

    /// What the body loop does next.
    private enum Step { case send(count: Int, notBefore: Double, maxInFlight: Int?), stall, drop, stop }

    private func sendBody(_ data: Data, path: String, from start: Int, to end: Int, number: Int, clientPort: Int,
                          on connection: ServerConnection) {
        var offset = start
        while offset < end {
            switch nextStep(path: path, offset: offset, end: end) {
            case .stop:
                return
            case .drop:
                PlaybackLog.log(.debug, "conformance-http", "#\(number) \(path): dropping the connection at byte \(offset)")
                return
            case .stall:
                PlaybackLog.log(.debug, "conformance-http", "#\(number) \(path): stalling at byte \(offset) of \(data.count)")
                stallCount.update { $0 += 1 }
                holdUntilStopped()
                return
            case .send(let count, let notBefore, let maxInFlight):
                if let maxInFlight, !waitForRoom(maxInFlight, clientPort: clientPort) { return }
                if notBefore > monotonicSeconds() {
                    let stopping = condition.withLock { () -> Bool in
                        while !stopped, monotonicSeconds() < notBefore { _ = condition.wait(until: notBefore) }
                        return stopped
                    }
                    if stopping { return }
                }
                let sent = data.withUnsafeBytes { all in
                    connection.send(UnsafeRawBufferPointer(rebasing: all[offset..<offset + count]))
                }
                guard sent else { return }
                offset += count
                log.update { $0[number - 1].bodyBytesSent += count }
            }
        }
    }

    /// Decides the next chunk of a body at `offset` from the path's current settings.
    private func nextStep(path: String, offset: Int, end: Int) -> Step {
        condition.withLock {
            if stopped { return .stop }
            guard case .content(let content)? = routes[path] else { return .stop }
            if let stall = content.stallAt, offset >= stall { return .stall }
            let dropPending = content.dropOnceAt != nil && !dropped.contains(path)
            if dropPending, let drop = content.dropOnceAt, offset >= drop {
                dropped.insert(path)
                return .drop
            }
            var limit = end
            if let stall = content.stallAt { limit = min(limit, stall) }
            if dropPending, let drop = content.dropOnceAt { limit = min(limit, drop) }
            var count = min(limit - offset, 16 * 1024)
            var notBefore = 0.0
            if let rate = content.bytesPerSecond, rate > 0 {
                count = min(count, max(256, rate / 50))
                let now = monotonicSeconds()
                let slot = max(now, pacing[path] ?? now)
                pacing[path] = slot + Double(count) / Double(rate)
                notBefore = slot
            }
            return .send(count: count, notBefore: notBefore, maxInFlight: content.maxInFlight)
        }
    }

    /// Waits until at most `limit` bytes of the connection to `clientPort` sit in the kernel
    /// (checked every 5 ms); false when the server stopped or the connection is gone.
    private func waitForRoom(_ limit: Int, clientPort: Int) -> Bool {
        while true {
            // Nil: /proc/net/tcp unreadable.
            guard let held = SocketQueues.inFlight(localPort: port, peerPort: clientPort), held > limit else { return true }
            let stopping = condition.withLock { () -> Bool in
                if !stopped { _ = condition.wait(until: monotonicSeconds() + 0.005) }
                return stopped
            }
            if stopping { return false }
        }
    }

    /// Holds the connection open, sending nothing, until the server stops.
    private func holdUntilStopped() {
        condition.lock()
        while !stopped { condition.wait() }
        condition.unlock()
    }
}

/// Why the local server could not start.
struct ServerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import FoundationEssentials
import PlaybackKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small HTTP/1.1 server on 127.0.0.1 (a free port) for the network checks. It serves one
/// media file with Range support under several paths, each one connection per request:
///
/// - `/media.mp4`: the whole file.
/// - `/stall-open.mp4`: only the first `openPrefix` bytes of the file, then it stalls forever
///   (headers sent, the rest never comes), so opening cannot finish.
/// - `/stall-play.mp4`: the file rewritten with its index (`moov`) first, served up to
///   `playCut` (about a third into the media data), then it stalls forever, so a player that
///   reads straight through prepares, plays the first seconds and then waits for data.
/// - anything else: 404.
///
/// It never talks to another address. `stop()` closes every connection.
final class LocalHTTPServer: @unchecked Sendable {
    // @unchecked: `connections` and `stopped` are guarded by `condition`; the rest is immutable.
    private let media: Data
    /// The file with its index first, for `/stall-play.mp4`.
    private let indexFirst: Data
    private let listener: Int32
    /// The port it listens on.
    let port: Int
    /// Bytes `/stall-open.mp4` serves before it stalls.
    let openPrefix: Int
    /// Bytes of `/stall-play.mp4` served from the start before it stalls.
    let playCut: Int
    /// How many responses have stalled so far.
    let stalls = Watched(0)
    private let condition = ConditionVariable()
    private var connections: Set<Int32> = []
    private var stopped = false

    /// Reads `media` and starts listening.
    init(media file: URL) throws {
        media = try Data(contentsOf: file)
        indexFirst = MP4Boxes.indexFirst(media) ?? media
        if let mdat = MP4Boxes(indexFirst).range(of: "mdat") {
            playCut = mdat.lowerBound + (mdat.count * 35) / 100
        } else {
            playCut = indexFirst.count * 35 / 100
        }
        openPrefix = min(media.count / 8, 16 * 1024)
        (listener, port) = try Self.listen()
        DetachedThread.start { [self] in acceptLoop() }
    }

    deinit { stop() }

    /// Waits until a response has stalled (the player reads into the missing data), at most
    /// `timeout` seconds; whether one did.
    func waitForStall(timeout: TimeInterval) async -> Bool {
        await stalls.wait(timeout: timeout) { $0 > 0 }
    }

    /// The URL of `path` on this server, e.g. `url("/media.mp4")`.
    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Stops listening and closes every connection, stalled ones included.
    func stop() {
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
    static func refusedURL() throws -> URL {
        let (fd, port) = try listen()
        close(fd)
        return URL(string: "http://127.0.0.1:\(port)/media.mp4")!
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
        guard bound == 0, Glibc.listen(fd, 16) == 0 else {
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
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
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
            DetachedThread.start { [self] in
                serve(client)
                condition.lock()
                connections.remove(client)
                condition.unlock()
                close(client)
            }
        }
    }

    // MARK: - One request

    private func serve(_ fd: Int32) {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let request = readRequest(fd) else { return }
        PlaybackLog.log(.debug, "conformance-http", "\(request.method) \(request.path) range \(request.rangeStart.map(String.init) ?? "-")-\(request.rangeEnd.map(String.init) ?? "")")
        let body: Data
        let servedEnd: Int
        switch request.path {
        case "/media.mp4":
            body = media
            servedEnd = media.count
        case "/stall-open.mp4":
            body = media
            servedEnd = openPrefix
        case "/stall-play.mp4":
            body = indexFirst
            servedEnd = playCut
        default:
            send(fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nnot found")
            return
        }
        let size = body.count
        let start = request.rangeStart ?? 0
        let end = min(size, (request.rangeEnd ?? (size - 1)) + 1)
        guard start < size, start < end else {
            send(fd, "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */\(size)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        }
        var head = request.rangeStart == nil ? "HTTP/1.1 200 OK\r\n" : "HTTP/1.1 206 Partial Content\r\n"
        if request.rangeStart != nil { head += "Content-Range: bytes \(start)-\(end - 1)/\(size)\r\n" }
        head += "Content-Length: \(end - start)\r\nContent-Type: video/mp4\r\nAccept-Ranges: bytes\r\nConnection: close\r\n\r\n"
        guard send(fd, head), request.method != "HEAD" else { return }
        let available = min(end, max(start, servedEnd))
        guard sendMedia(fd, body, from: start, to: available) else { return }
        if available < end {
            PlaybackLog.log(.debug, "conformance-http", "\(request.path): stalling at byte \(available) of \(size)")
            stalls.update { $0 += 1 }
            stallUntilStopped()
        }
    }

    private struct Request {
        var method: String
        var path: String
        var rangeStart: Int?
        var rangeEnd: Int?
    }

    private func readRequest(_ fd: Int32) -> Request? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let terminator: [UInt8] = Array("\r\n\r\n".utf8)
        while bytes.count < 64 * 1024 {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return nil }
            let searchFrom = max(0, bytes.count - 3)
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count >= 4, (searchFrom...(bytes.count - 4)).contains(where: { Array(bytes[$0..<$0 + 4]) == terminator }) {
                break
            }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let lines = text.components(separatedBy: "\r\n")
        let first = lines.first?.split(separator: " ") ?? []
        guard first.count >= 2 else { return nil }
        var request = Request(method: String(first[0]).uppercased(), path: String(first[1]))
        if let query = request.path.firstIndex(of: "?") { request.path = String(request.path[..<query]) }
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingBlanks().lowercased() == "range" else { continue }
            let value = parts[1].trimmingBlanks()
            guard value.hasPrefix("bytes=") else { continue }
            let bounds = value.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            if bounds.count == 2 {
                request.rangeStart = Int(bounds[0]) ?? 0
                request.rangeEnd = Int(bounds[1])
            }
        }
        return request
    }

    @discardableResult
    private func send(_ fd: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { write(fd, $0) }
    }

    private func sendMedia(_ fd: Int32, _ body: Data, from start: Int, to end: Int) -> Bool {
        guard start < end else { return true }
        return body.withUnsafeBytes { all in
            var offset = start
            while offset < end {
                let upTo = min(end, offset + 16 * 1024)
                if !write(fd, UnsafeRawBufferPointer(rebasing: all[offset..<upTo])) { return false }
                offset = upTo
            }
            return true
        }
    }

    private func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
        var sent = 0
        while sent < buffer.count {
            let count = Glibc.send(fd, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return false }
            sent += count
        }
        return true
    }

    /// Holds the connection open, sending nothing, until the server stops.
    private func stallUntilStopped() {
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

/// The top-level boxes of an MP4 file.
struct MP4Boxes {
    /// `data` with its `moov` box moved before `mdat` (chunk offsets shifted to match), or nil
    /// when it already comes first or the file is not laid out as expected.
    static func indexFirst(_ data: Data) -> Data? {
        let boxes = MP4Boxes(data)
        guard let moov = boxes.range(of: "moov"), let mdat = boxes.range(of: "mdat"),
              moov.lowerBound > mdat.lowerBound else { return nil }
        var index = [UInt8](data[moov])
        guard shiftChunkOffsets(&index, in: 0..<index.count, by: index.count) else { return nil }
        var result = Data(data[..<mdat.lowerBound])
        result.append(contentsOf: index)
        result.append(data[mdat.lowerBound..<moov.lowerBound])
        result.append(data[moov.upperBound...])
        return result
    }

    /// Adds `shift` to every chunk offset (`stco`, `co64`) in the boxes within `range`.
    private static func shiftChunkOffsets(_ bytes: inout [UInt8], in range: Range<Int>, by shift: Int) -> Bool {
        func read(_ at: Int, _ count: Int) -> Int { bytes[at..<at + count].reduce(0) { $0 << 8 | Int($1) } }
        func write(_ value: Int, _ at: Int, _ count: Int) {
            for i in 0..<count { bytes[at + i] = UInt8(truncatingIfNeeded: value >> (8 * (count - 1 - i))) }
        }
        var offset = range.lowerBound
        while offset + 8 <= range.upperBound {
            var size = read(offset, 4)
            var header = 8
            if size == 1 {
                guard offset + 16 <= range.upperBound else { return false }
                size = read(offset + 8, 8)
                header = 16
            } else if size == 0 {
                size = range.upperBound - offset
            }
            guard size >= header, offset + size <= range.upperBound else { return false }
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            let body = offset + header
            switch type {
            case "moov", "trak", "mdia", "minf", "stbl", "edts", "udta":
                guard shiftChunkOffsets(&bytes, in: body..<offset + size, by: shift) else { return false }
            case "stco", "co64":
                let width = type == "stco" ? 4 : 8
                let count = read(body + 4, 4)
                guard body + 8 + count * width <= offset + size else { return false }
                for entry in 0..<count {
                    let at = body + 8 + entry * width
                    write(read(at, width) + shift, at, width)
                }
            default:
                break
            }
            offset += size
        }
        return true
    }

    private var boxes: [(type: String, range: Range<Int>)] = []

    init(_ data: Data) {
        let bytes = [UInt8](data)
        var offset = 0
        while offset + 8 <= bytes.count {
            var size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            if size == 1, offset + 16 <= bytes.count {
                size = bytes[offset + 8..<offset + 16].reduce(0) { $0 << 8 | Int($1) }
            } else if size == 0 {
                size = bytes.count - offset
            }
            guard size >= 8 else { break }
            boxes.append((type, offset..<min(bytes.count, offset + size)))
            offset += size
        }
    }

    /// Where the first box of `type` lies.
    func range(of type: String) -> Range<Int>? { boxes.first { $0.type == type }?.range }
}

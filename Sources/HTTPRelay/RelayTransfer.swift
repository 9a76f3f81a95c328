#if Curl
import CCurl
import FoundationEssentials
import Glibc
import LoopbackHTTP
import PlaybackKit

// MARK: - The connection from the engine

/// the engine's end of one relayed request: what the relay writes back to it. Used by the
/// request's own thread alone.
final class RelayConnection {
    let fd: Int32
    let relay: HTTPRelay
    /// True once the status line and headers went out.
    private(set) var headSent = false
    /// True once a write found the engine gone.
    private(set) var peerGone = false
    /// the engine's port, for its receive queue (`SocketQueues`) when the relay keeps what sits in
    /// the kernel small; nil otherwise.
    private let peerPort: Int?
    /// Bytes sent since the kernel's queues were last looked at.
    private var sentSinceCheck = 0

    /// The most the kernel may hold between the relay and the engine (both sockets' queues) when
    /// the app capped the read-ahead: without it, the engine's receive buffer, which the kernel
    /// grows to megabytes on loopback, would hold what the cap keeps out of the engine.
    static let inFlightLimit = 64 * 1024

    init(fd: Int32, relay: HTTPRelay) {
        self.fd = fd
        self.relay = relay
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        peerPort = relay.settings.smallBuffers && named == 0 ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }

    /// Sends the status line and `headers`, and `Connection: close` (one request per
    /// connection: the body ends when the connection does unless a length is given).
    func sendHead(status: Int, headers: [(name: String, value: String)]) {
        guard !headSent else { return }
        headSent = true
        var text = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        for header in headers { text += "\(header.name): \(header.value)\r\n" }
        text += "Connection: close\r\n\r\n"
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { send($0) }
    }

    /// Answers with `status`, `headers` and no body (the relay's own answers).
    func sendEmpty(status: Int, headers: [(name: String, value: String)] = []) {
        sendHead(status: status, headers: headers + [("Content-Length", "0")])
    }

    /// Sends all of `bytes`, waiting while the engine's socket is full; false when the engine is gone
    /// or the relay stopped.
    func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard waitForRoom() else { return false }
        var sent = 0
        while sent < bytes.count {
            guard !relay.isStopped else { return false }
            let count = Glibc.send(fd, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            if count < 0, errno == EINTR { continue }
            if count <= 0 {
                peerGone = true
                return false
            }
            sent += count
        }
        sentSinceCheck += sent
        return true
    }

    /// With a read-ahead cap, waits (looking every 10 ms; the kernel tells no event for it)
    /// until at most `inFlightLimit` bytes sit between the relay and the engine; false when
    /// the engine hung up or the relay stopped meanwhile.
    private func waitForRoom() -> Bool {
        guard let peerPort, sentSinceCheck >= Self.inFlightLimit / 4 else { return true }
        sentSinceCheck = 0
        while let held = SocketQueues.inFlight(localPort: relay.addresses.port, peerPort: peerPort), held > Self.inFlightLimit {
            guard !relay.isStopped else { return false }
            var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&waiting, 1, 10) > 0 {
                peerGone = true
                return false
            }
        }
        return true
    }

    /// True when the engine closed its end (it sends nothing after its request, so anything
    /// readable is the end).
    var isClosedByPeer: Bool {
        var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&waiting, 1, 0) > 0
    }

    /// Serves a local file a trusted playlist named, with Range for a regular file.
    func sendFile(_ path: String, request: HTTPRequestHead) {
        let file = open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else {
            relay.noteFailure("open \(path): \(String(cString: strerror(errno)))")
            sendEmpty(status: 404)
            return
        }
        defer { close(file) }
        var status = stat()
        fstat(file, &status)
        var remaining = Int.max
        if status.st_mode & S_IFMT == S_IFREG {
            let size = Int(status.st_size)
            var start = request.rangeStart ?? 0
            var end = min(request.rangeEnd ?? (size - 1), size - 1)
            if let suffix = request.suffixLength { start = max(0, size - suffix); end = size - 1 }
            let ranged = request.rangeStart != nil || request.suffixLength != nil
            if ranged, start >= size, size > 0 {
                sendEmpty(status: 416, headers: [("Content-Range", "bytes */\(size)")])
                return
            }
            remaining = max(0, end - start + 1)
            lseek(file, off_t(start), SEEK_SET)
            var headers: [(name: String, value: String)] = [("Content-Length", String(remaining)), ("Accept-Ranges", "bytes")]
            if ranged { headers.append(("Content-Range", "bytes \(start)-\(end)/\(size)")) }
            sendHead(status: ranged ? 206 : 200, headers: headers)
        } else {
            sendHead(status: 200, headers: [])
        }
        guard request.method == "GET" else { return }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while remaining > 0, !relay.isStopped {
            let count = chunk.withUnsafeMutableBytes { read(file, $0.baseAddress, min($0.count, remaining)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            remaining -= count
            guard chunk.withUnsafeBytes({ send(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }) else { return }
        }
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 416: "Range Not Satisfiable"
        case 502: "Bad Gateway"
        default: status < 400 ? "OK" : "Error"
        }
    }
}

// MARK: - Connections kept between requests

/// The connections, TLS sessions and DNS answers the transfers of one relay share, so that
/// each request the engine makes (a segment, a Range request) reuses the open connection to
/// the server instead of a new TCP and TLS handshake.
final class RelayConnectionShare: @unchecked Sendable {
    // @unchecked: libcurl takes the share's own mutexes (its lock callbacks) around every use.
    let share: UnsafeMutablePointer<pk_curl_share>?

    init() { share = pk_curl_share_new() }

    deinit { pk_curl_share_free(share) }
}

// MARK: - One upstream request

/// One request the engine made of the relay, fetched from the real server with libcurl and passed
/// back as it arrives (a playlist whole, rewritten). Runs on the request's own thread.
final class RelayTransfer {
    /// What every upstream request of one relay carries.
    struct Settings: Sendable {
        /// The app's request headers (they replace the engine's own of the same name).
        var headers: [(name: String, value: String)]
        /// A PEM file of the authorities to trust (the system's and the app's), or nil for
        /// the system's.
        var authorities: String?
        /// How long connecting (TCP and TLS) may take, in seconds.
        var connectTimeout: Double
        /// Keep the socket and libcurl buffers small (a read-ahead cap is set).
        var smallBuffers: Bool
    }

    /// the engine's request headers that describe its own connection, not the resource.
    private static let hopByHop: Set<String> = ["host", "connection", "keep-alive", "te", "trailer", "transfer-encoding",
                                                "upgrade", "proxy-authorization", "proxy-connection"]
    /// The response headers passed back to the engine (and those starting with `icy-`).
    private static let passedBack: Set<String> = ["content-type", "content-length", "content-range", "accept-ranges",
                                                  "last-modified", "etag", "content-encoding", "content-disposition",
                                                  "cache-control", "expires", "date", "location"]

    private enum Mode { case undecided, passThrough, playlist }

    private let request: HTTPRequestHead
    private let upstream: String
    private let connection: RelayConnection
    private let relay: HTTPRelay
    private var status = 0
    private var responseHeaders: [(name: String, value: String)] = []
    private var mode = Mode.undecided
    private var playlist: [UInt8] = []
    private var tooLarge = false

    init(request: HTTPRequestHead, upstream: String, connection: RelayConnection, relay: HTTPRelay) {
        self.request = request
        self.upstream = upstream
        self.connection = connection
        self.relay = relay
    }

    /// Fetches and passes back; returns when the transfer ended, failed or was abandoned.
    func run() {
        _ = Self.globalSetUp
        guard let handle = curl_easy_init() else {
            relay.noteFailure("\(upstream): libcurl could not make a transfer")
            connection.sendEmpty(status: 502)
            return
        }
        defer { curl_easy_cleanup(handle) }
        var list: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(list) }
        for header in requestHeaders() { list = curl_slist_append(list, "\(header.name): \(header.value)") }
        let errorText = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorText.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        defer { errorText.deallocate() }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let settings = relay.settings
        _ = pk_curl_set_pointer(handle, CURLOPT_URL, upstream)
        _ = pk_curl_set_pointer(handle, CURLOPT_HTTPHEADER, list)
        _ = pk_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, errorText)
        _ = pk_curl_set_pointer(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        if let authorities = settings.authorities { _ = pk_curl_set_pointer(handle, CURLOPT_CAINFO, authorities) }
        if let share = relay.connectionShare.share { _ = pk_curl_use_share(handle, share) }
        _ = pk_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = pk_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        _ = pk_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(settings.connectTimeout * 1000))
        if request.method == "HEAD" { _ = pk_curl_set_long(handle, CURLOPT_NOBODY, 1) }
        if settings.smallBuffers {
            _ = pk_curl_set_long(handle, CURLOPT_BUFFERSIZE, 16 * 1024)
            _ = pk_curl_cap_receive_buffer(handle, 64 * 1024)
        }
        _ = pk_curl_set_data_function(handle, CURLOPT_HEADERFUNCTION) { buffer, size, count, context in
            let transfer = Unmanaged<RelayTransfer>.fromOpaque(context!).takeUnretainedValue()
            transfer.received(headerLine: UnsafeRawBufferPointer(start: buffer, count: size * count))
            return size * count
        }
        _ = pk_curl_set_pointer(handle, CURLOPT_HEADERDATA, context)
        _ = pk_curl_set_data_function(handle, CURLOPT_WRITEFUNCTION) { buffer, size, count, context in
            let transfer = Unmanaged<RelayTransfer>.fromOpaque(context!).takeUnretainedValue()
            return transfer.received(body: UnsafeRawBufferPointer(start: buffer, count: size * count)) ? size * count : 0
        }
        _ = pk_curl_set_pointer(handle, CURLOPT_WRITEDATA, context)
        _ = pk_curl_set_long(handle, CURLOPT_NOPROGRESS, 0)
        _ = pk_curl_set_progress_function(handle) { context, _, _, _, _ in
            let transfer = Unmanaged<RelayTransfer>.fromOpaque(context!).takeUnretainedValue()
            return transfer.shouldAbandon ? 1 : 0
        }
        _ = pk_curl_set_pointer(handle, CURLOPT_XFERINFODATA, context)
        let code = curl_easy_perform(handle)
        finish(code, detail: String(cString: errorText))
    }

    private static let globalSetUp: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    // MARK: - Headers

    /// the engine's request headers but those about its connection, with the app's in place of
    /// any of the same name.
    private func requestHeaders() -> [(name: String, value: String)] {
        let appNames = Set(relay.settings.headers.map { $0.name.lowercased() })
        let own = request.headers.filter {
            let name = $0.name.lowercased()
            return !Self.hopByHop.contains(name) && !appNames.contains(name)
        }
        return own + relay.settings.headers
    }

    private func received(headerLine bytes: UnsafeRawBufferPointer) {
        let line = String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
        if line.hasPrefix("HTTP/") {
            // A new response (after a 1xx): start over.
            let parts = line.split(separator: " ", maxSplits: 2)
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            responseHeaders = []
            return
        }
        let parts = line.split(separator: ":", maxSplits: 1)
        guard parts.count == 2 else { return }
        responseHeaders.append((String(parts[0]).trimmingBlanks(), String(parts[1]).trimmingBlanks()))
    }

    private func responseHeader(_ name: String) -> String? {
        responseHeaders.first { $0.name.lowercased() == name }?.value
    }

    /// The response headers the engine gets: those that describe the resource, a redirect's
    /// target relayed, and `length` in place of the server's length and range when given.
    private func headersPassedBack(length: Int? = nil) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        for header in responseHeaders {
            let name = header.name.lowercased()
            guard Self.passedBack.contains(name) || name.hasPrefix("icy-") else { continue }
            if name == "content-length" || name == "content-range", length != nil { continue }
            if name == "location" {
                guard let base = URL(string: upstream) else { continue }
                headers.append((header.name, relay.relayed(header.value, base: base)))
                continue
            }
            headers.append(header)
        }
        if let length { headers.append(("Content-Length", String(length))) }
        return headers
    }

    // MARK: - Body

    /// Passes `bytes` of the body on (or keeps them, for a playlist); false to abandon.
    private func received(body bytes: UnsafeRawBufferPointer) -> Bool {
        if mode == .undecided {
            // the engine asks for `Range: bytes=0-`; a playlist's answer from its first byte is
            // rewritten whole, and goes back as a 200.
            let fromStart = status == 200 || (status == 206 && responseHeader("content-range")?.hasPrefix("bytes 0-") == true)
            let isPlaylist = fromStart && request.method == "GET"
                && RelayPlaylist.isPlaylist(contentType: responseHeader("content-type"), url: upstream)
            mode = isPlaylist ? .playlist : .passThrough
        }
        switch mode {
        case .playlist:
            guard playlist.count + bytes.count <= RelayPlaylist.maximumSize else {
                tooLarge = true
                return false
            }
            playlist.append(contentsOf: bytes)
            return true
        case .passThrough, .undecided:
            connection.sendHead(status: status, headers: headersPassedBack())
            return connection.send(bytes)
        }
    }

    /// Abandons the transfer once the relay stopped or the engine hung up (checked while data
    /// moves, and about once a second while it does not).
    private var shouldAbandon: Bool { relay.isStopped || connection.peerGone || connection.isClosedByPeer }

    private func finish(_ code: CURLcode, detail: String) {
        if code == CURLE_OK {
            if mode == .playlist {
                sendPlaylist()
            } else {
                connection.sendHead(status: status, headers: headersPassedBack())
            }
            return
        }
        if relay.isStopped || connection.peerGone { return }
        let reason = tooLarge ? "the playlist is over \(RelayPlaylist.maximumSize / (1024 * 1024)) MiB"
            : (detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail)
        relay.noteFailure("\(upstream): \(reason)")
        // Once the head is out, closing early is the dropped connection the engine would have met.
        connection.sendEmpty(status: 502)
    }

    private func sendPlaylist() {
        guard let base = URL(string: upstream) else { return }
        let text = RelayPlaylist.rewrite(String(decoding: playlist, as: UTF8.self)) { relay.relayed($0, base: base) }
        let bytes = Array(text.utf8)
        connection.sendHead(status: 200, headers: headersPassedBack(length: bytes.count))
        _ = bytes.withUnsafeBytes { connection.send($0) }
    }
}
#endif

#if Curl
import FoundationEssentials
import Glibc
import LoopbackHTTP
import PlaybackKit
import Synchronization

/// A loopback HTTP server in front of one remote source, for engines whose own http client
/// cannot do what the app asks: libVLC 3 sends no request header but User-Agent and Referer
/// and follows a playlist to a local file only when the playlist itself is local; GStreamer's
/// HLS demuxer fetches variant playlists and keys with a downloader of its own that sends none
/// of the app's headers.
///
/// The engine opens `location`, a URL on 127.0.0.1 under a random token; each request it
/// makes there is fetched from the real server by libcurl (`RelayTransfer`) with the app's
/// headers and authorities, and passed back as it arrives: the status, the headers a player
/// needs, the body, at the engine's pace (with a read-ahead cap the sockets on both sides are
/// kept small, so what the engine does not read is not fetched). Redirects go back with their
/// target relayed too; playlists (m3u8, m3u) go back with every URL in them relayed
/// (`RelayPlaylist`), so segments, keys and variants on any server come through here, and a
/// local file a playlist names is served only when `PlaybackOptions.remoteMayReferenceLocalFiles`
/// allows it (else the play ends in `.forbiddenURL`, from `refusal`).
package final class HTTPRelay: Sendable {
    /// The relay's address for the source, for the engine.
    package let location: String
    /// How relayed URLs are written and read back.
    let addresses: RelayAddresses
    /// Which local references the source may make.
    let policy: ReferencePolicy
    /// What each upstream request carries.
    let settings: RelayTransfer.Settings
    /// The upstream connections the transfers reuse; freed with the relay, once every
    /// transfer (each holds the relay) ended.
    let connectionShare = RelayConnectionShare()
    private let listener: Int32
    private let stopped = Atomic<Bool>(false)
    /// The connections being served, shut down by `stop()` (each thread closes its own).
    private let connections = Locked<Set<Int32>>([])
    private let failure = Locked<String?>(nil)
    private let refused = Locked<PlaybackError?>(nil)

    /// Listens on 127.0.0.1 (a port the system picks) for the engine's requests for `source`.
    package init(source: MediaSource, options: PlaybackOptions) throws(PlaybackError) {
        policy = ReferencePolicy(source: source, options: options)
        var authorities: String?
        if let extra = options.tlsCertificateAuthorities { authorities = try TLSTrust.bundle(adding: extra).path }
        settings = RelayTransfer.Settings(
            headers: options.httpHeaders.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
            authorities: authorities, connectTimeout: max(1, options.openTimeout),
            smallBuffers: options.maxBufferBytes != nil)
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw Self.error("socket", errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(socket, $0, length) }
        }
        guard bound == 0, Glibc.listen(socket, 16) == 0 else {
            let code = errno
            Glibc.close(socket)
            throw Self.error("bind", code)
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        listener = socket
        addresses = RelayAddresses(port: Int(UInt16(bigEndian: address.sin_port)), token: Self.randomToken())
        guard let relayed = addresses.relayed(source.url) else {
            Glibc.close(socket)
            throw PlaybackError(code: .invalidArgument, message: "open: \(source.url.absoluteString) cannot be relayed")
        }
        location = relayed
        DetachedThread.start(name: "http-relay") { [self] in acceptLoop() }
    }

    /// Stops listening and ends every relayed transfer; returns at once (the threads end on
    /// their own within a second).
    package func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        connections.withLock { open in
            for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// True once `stop()` ran.
    var isStopped: Bool { stopped.load(ordering: .acquiring) }

    /// The first upstream failure (no connection, a certificate that does not verify, ...),
    /// in libcurl's words, for the error the play ends with.
    package var upstreamFailure: String? { failure.get() }

    /// The `.forbiddenURL` error when a playlist named a local file the policy refuses.
    package var refusal: PlaybackError? { refused.get() }

    /// The error a play through the relay ends with instead of `error`, the engine's own: the
    /// refusal of a local reference when there was one, else `error` with the first upstream
    /// failure in libcurl's words added.
    package func explaining(_ error: PlaybackError) -> PlaybackError {
        if let refusal { return refusal }
        guard let failure = upstreamFailure else { return error }
        return PlaybackError(code: error.code, message: "\(error.message) (relayed request: \(failure))")
    }

    /// Notes an upstream failure (the first one is kept).
    func noteFailure(_ message: String) {
        failure.withLock { if $0 == nil { $0 = message } }
        PlaybackLog.log(.debug, "http-relay", "\(message)")
    }

    /// Notes a refused reference (the first one is kept).
    func noteRefusal(_ error: PlaybackError) {
        refused.withLock { if $0 == nil { $0 = error } }
    }

    /// `reference` (a playlist's URL or a redirect's target) resolved against `base`, as
    /// the engine is to fetch it (see `RelayPlaylist.relayed`).
    func relayed(_ reference: String, base: URL) -> String {
        RelayPlaylist.relayed(reference, base: base, addresses: addresses, policy: policy) { noteRefusal($0) }
    }

    // MARK: - Connections

    private func acceptLoop() {
        while !isStopped {
            var waiting = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 200) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let admitted = connections.withLock { open -> Bool in
                guard !isStopped else { return false }
                open.insert(client)
                return true
            }
            guard admitted else {
                Glibc.close(client)
                break
            }
            DetachedThread.start(name: "http-relay-conn") { [self] in
                serve(client)
                connections.withLock { _ = $0.remove(client) }
                Glibc.close(client)
            }
        }
        Glibc.close(listener)
    }

    private func serve(_ client: Int32) {
        DetachedThread.blockBrokenPipeSignals()
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // A small send buffer: what the engine has not read stays with the server.
        var sendBuffer: Int32 = 64 * 1024
        setsockopt(client, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
        let request = HTTPRequestHead.read { buffer in
            while true {
                let count = recv(client, buffer.baseAddress, buffer.count, 0)
                if count < 0, errno == EINTR { continue }
                return count
            }
        }
        guard let request else { return }
        let connection = RelayConnection(fd: client, relay: self)
        guard request.method == "GET" || request.method == "HEAD" else {
            connection.sendEmpty(status: 405)
            return
        }
        switch addresses.destination(ofTarget: request.target) {
        case .remote(let url)?:
            RelayTransfer(request: request, upstream: url, connection: connection, relay: self).run()
        case .file(let path)?:
            guard !policy.confinesToRemote else {
                noteRefusal(policy.refusal(of: "file://" + path) ?? PlaybackError(code: .forbiddenURL, message: "open: \(path)"))
                connection.sendEmpty(status: 403)
                return
            }
            connection.sendFile(path, request: request)
        case .refused?:
            connection.sendEmpty(status: 403)
        case nil:
            connection.sendEmpty(status: 404)
        }
    }

    private static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let text = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }.joined()
    }

    private static func error(_ step: String, _ code: Int32) -> PlaybackError {
        PlaybackError(code: .engine, message: "open: the loopback relay could not listen on 127.0.0.1 (\(step): \(String(cString: strerror(code))))")
    }
}
#endif

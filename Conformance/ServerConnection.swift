import COpenSSL
import FoundationEssentials
import PlaybackKit
#if canImport(Glibc)
import Glibc
#endif

// MARK: - TLS identity

/// The certificate and key the local server presents for https (an OpenSSL server context).
public final class TLSServerIdentity: @unchecked Sendable {
    // @unchecked: the context is configured in init and afterwards only used to make sessions
    // (SSL_new), which OpenSSL allows from several threads on a context nobody changes.
    let context: OpaquePointer

    /// Loads the PEM certificate chain (the server's certificate first) and its private key.
    public init(certificateChain: URL, privateKey: URL) throws {
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw ServerError("TLS: SSL_CTX_new failed: \(Self.lastError())")
        }
        self.context = context
        guard SSL_CTX_use_certificate_chain_file(context, certificateChain.path) == 1 else {
            throw ServerError("TLS: cannot load \(certificateChain.path): \(Self.lastError())")
        }
        guard SSL_CTX_use_PrivateKey_file(context, privateKey.path, SSL_FILETYPE_PEM) == 1,
              SSL_CTX_check_private_key(context) == 1 else {
            throw ServerError("TLS: cannot load \(privateKey.path): \(Self.lastError())")
        }
    }

    deinit { SSL_CTX_free(context) }

    /// OpenSSL's oldest queued error on this thread, as text.
    static func lastError() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        pk_ssl_take_error(&buffer, buffer.count)
        let text = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return text.isEmpty ? "no detail" : text
    }
}

// MARK: - One connection

/// One accepted connection of the local server, plain or TLS. Used by its own thread alone.
final class ServerConnection {
    let fd: Int32
    private let identity: TLSServerIdentity?
    private var session: OpaquePointer?

    init(fd: Int32, tls identity: TLSServerIdentity?) {
        self.fd = fd
        self.identity = identity
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // A small send buffer: what the server counts as sent is close to what the client
        // has taken (the read-ahead checks compare it with a cap).
        var sendBuffer: Int32 = 32 * 1024
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Makes the TLS handshake when the server speaks https; false when it failed (the client
    /// refused the certificate, or is not speaking TLS).
    func open() -> Bool {
        guard let identity else { return true }
        guard let session = SSL_new(identity.context) else { return false }
        self.session = session
        SSL_set_fd(session, fd)
        let status = SSL_accept(session)
        if status != 1 {
            PlaybackLog.log(.debug, "conformance-http", "TLS handshake failed: \(TLSServerIdentity.lastError())")
            return false
        }
        return true
    }

    /// Reads what arrived into `buffer`; the byte count, 0 at the end, negative on error.
    func receive(_ buffer: UnsafeMutableRawBufferPointer) -> Int {
        if let session {
            return Int(SSL_read(session, buffer.baseAddress, Int32(buffer.count)))
        }
        while true {
            let count = recv(fd, buffer.baseAddress, buffer.count, 0)
            if count < 0, errno == EINTR { continue }
            return count
        }
    }

    /// Sends all of `buffer`; false when the connection is gone.
    func send(_ buffer: UnsafeRawBufferPointer) -> Bool {
        guard buffer.count > 0 else { return true }
        if let session {
            return SSL_write(session, buffer.baseAddress, Int32(buffer.count)) == Int32(buffer.count)
        }
        var sent = 0
        while sent < buffer.count {
            let count = Glibc.send(fd, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return false }
            sent += count
        }
        return true
    }

    /// Sends `text` as UTF-8.
    func send(text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { send($0) }
    }

    /// Ends the TLS session (the socket itself is closed by the server).
    func close() {
        guard let session else { return }
        SSL_shutdown(session)
        SSL_free(session)
        self.session = nil
    }
}

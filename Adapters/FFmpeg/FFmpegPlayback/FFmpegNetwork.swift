#if FFmpeg
import CFFmpeg
import FoundationEssentials
import PlaybackKit

/// How the engine opens a network source and everything it leads to (HLS playlists,
/// segments and keys): every open goes through the format context's `io_open`, which this
/// replaces. Each open gets the app's headers, the timeouts, reconnection after a dropped
/// connection and certificate verification; a reference the `ReferencePolicy` forbids (a
/// local file named by remote media) is refused before anything opens it, and remembered so
/// that the session fails with `.forbiddenURL`. Outlives the format context it is installed
/// on (the session holds both).
final class NetworkAccess: @unchecked Sendable {
    // @unchecked: `refused` is Locked; everything else is set in init and only read, from
    // the read thread's FFmpeg calls.

    /// The C signature of `AVFormatContext.io_open`.
    typealias IOOpen = @convention(c) (UnsafeMutablePointer<AVFormatContext>?, UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?,
                                       UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Int32

    let policy: ReferencePolicy
    /// The protocol options every open gets unless it has them already.
    let settings: [(String, String)]
    private let refused = Locked<PlaybackError?>(nil)
    private var defaultOpen: IOOpen?

    /// Protocols a confined remote source may use (FFmpeg's `protocol_whitelist`): http(s)
    /// and what they are made of, decryption of HLS segments included.
    static let remoteProtocols = "http,https,tls,tcp,crypto,httpproxy"

    /// Seconds any network read or connect may block before it fails (and is retried).
    static let readTimeoutSeconds = 15

    init(source: MediaSource, options: PlaybackOptions) throws(PlaybackError) {
        policy = ReferencePolicy(source: source, options: options)
        var settings: [(String, String)] = [
            ("rw_timeout", String(Self.readTimeoutSeconds * 1_000_000)),  // microseconds
            // Seek (a new request) rather than read through more than a few bytes: a source
            // that stalls inside data the demuxer skips must not hold up opening.
            ("short_seek_size", "1"),
            // A connection that ends before the body does is opened again with a Range
            // request from where it stopped (at once, then after 1 and 3 s). Not after a
            // network error: FFmpeg would retry failed connects too, and opening a source
            // that is not there must fail at once.
            ("reconnect", "1"),
            ("reconnect_delay_max", "4"),
            // https: the certificate must verify against the system's authorities and the app's.
            ("tls_verify", "1"),
            ("ca_file", try options.tlsCertificateAuthorities.map { url throws(PlaybackError) in try TLSTrust.bundle(adding: url).path } ?? TLSTrust.systemBundle),
        ]
        if let cap = options.maxBufferBytes, cap > 0 {
            // The socket's receive buffer is read-ahead too: without a size the kernel grows
            // it past 2 MiB on a fast link.
            settings.append(("recv_buffer_size", String(Self.receiveBufferSize(cap: cap))))
        }
        if !options.httpHeaders.isEmpty {
            let text = options.httpHeaders.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)\r\n" }.joined()
            settings.append(("headers", text))
        }
        // A remote source the app trusts may also lead to local files (FFmpeg's default for
        // http lets it reach none).
        settings.append(("protocol_whitelist", policy.confinesToRemote ? Self.remoteProtocols : Self.remoteProtocols + ",file,data"))
        self.settings = settings
    }

    /// The socket receive buffer for a read-ahead cap of `cap` bytes: an eighth of it, within
    /// 32...256 KiB (enough for 20 Mbit/s at a 50 ms round trip).
    static func receiveBufferSize(cap: Int) -> Int { min(256 * 1024, max(32 * 1024, cap / 8)) }

    /// The refusal that stopped an open, if any (the session then fails with it).
    var refusal: PlaybackError? { refused.get() }

    /// Adds the settings to `dictionary` (keeping what it has).
    func apply(to dictionary: inout OpaquePointer?) {
        for (key, value) in settings { av_dict_set(&dictionary, key, value, AV_DICT_DONT_OVERWRITE) }
    }

    /// Makes every open of `context` (and of the contexts nested in it) go through `open`.
    func install(on context: UnsafeMutablePointer<AVFormatContext>) {
        defaultOpen = context.pointee.io_open
        context.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
        context.pointee.io_open = { context, pb, url, flags, options in
            guard let context, let opaque = context.pointee.opaque, let url else { return pk_av_error(EINVAL) }
            return Unmanaged<NetworkAccess>.fromOpaque(opaque).takeUnretainedValue()
                .open(context, pb, url, flags, options)
        }
    }

    /// One open: refused when the policy forbids it, else opened with the settings added.
    private func open(_ context: UnsafeMutablePointer<AVFormatContext>, _ pb: UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?,
                      _ url: UnsafePointer<CChar>, _ flags: Int32, _ options: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
        let location = String(cString: url)
        if let refusal = policy.refusal(of: location) {
            PlaybackLog.log(.info, "ffmpeg", "refused to open \(location): \(refusal.message)")
            refused.withLock { if $0 == nil { $0 = refusal } }
            return pk_av_error(EPERM)
        }
        if let options {
            apply(to: &options.pointee)
        } else {
            var local: OpaquePointer?
            apply(to: &local)
            defer { av_dict_free(&local) }
            return defaultOpen?(context, pb, url, flags, &local) ?? pk_av_error(ENOSYS)
        }
        return defaultOpen?(context, pb, url, flags, options) ?? pk_av_error(ENOSYS)
    }
}
#endif

import FoundationEssentials
import Glibc

// MARK: - References from remote media

/// What an engine may open on behalf of a source besides the source itself: the segments,
/// variants and keys a playlist or manifest names. Remote media (http, https) may lead only
/// to other remote resources unless `PlaybackOptions.remoteMayReferenceLocalFiles` says the
/// app trusts it; every engine asks this one policy before it opens a reference.
public struct ReferencePolicy: Sendable, Equatable {
    /// The source the references come from.
    public let source: MediaSource
    /// True when references to anything but http(s) must be refused: a remote source whose
    /// references the app does not trust.
    public let confinesToRemote: Bool

    /// The schemes a confined source may reach.
    public static let remoteSchemes: Set<String> = ["http", "https"]

    /// The policy for `source` opened with `options`.
    public init(source: MediaSource, options: PlaybackOptions) {
        self.source = source
        confinesToRemote = source.isHTTP && !options.remoteMayReferenceLocalFiles
    }

    /// Nil when the engine may open `reference` (a URL or a path, as the engine is about to
    /// open it), else the `.forbiddenURL` error to end the play with.
    public func refusal(of reference: String) -> PlaybackError? {
        guard confinesToRemote, !Self.isRemote(reference) else { return nil }
        return PlaybackError(
            code: .forbiddenURL,
            message: "open: \(source.url.absoluteString) references \(reference), which is not an http(s) URL; "
                + "remote media may lead only to remote resources (PlaybackOptions.remoteMayReferenceLocalFiles)")
    }

    /// True for http and https URLs, also wrapped as FFmpeg names decrypted ones
    /// (`crypto+https://...`, `crypto:https://...`).
    public static func isRemote(_ reference: String) -> Bool {
        var text = reference.lowercased()
        for wrapper in ["crypto+", "crypto:"] where text.hasPrefix(wrapper) {
            text.removeFirst(wrapper.count)
        }
        guard let colon = text.firstIndex(of: ":") else { return false }
        let scheme = String(text[..<colon])
        return remoteSchemes.contains(scheme) && text[colon...].hasPrefix("://")
    }
}

// MARK: - Certificate authorities

/// The certificate authorities an engine trusts for https.
public enum TLSTrust {
    /// Where Debian keeps the system's authorities, one PEM file.
    public static let systemBundle = "/etc/ssl/certs/ca-certificates.crt"

    /// A folder holding a copy of the PEM file `extra` alone, for engines that trust a folder
    /// of authorities besides the system's (libVLC's gnutls-dir-trust). Made once per content
    /// in the temporary folder.
    public static func folder(holding extra: URL) throws(PlaybackError) -> URL {
        guard let added = FileManager.default.contents(atPath: extra.path), !added.isEmpty else {
            throw PlaybackError(code: .invalidArgument, message: "open: tlsCertificateAuthorities \(extra.path) cannot be read or is empty")
        }
        let folder = URL(fileURLWithPath: "/tmp").appendingPathComponent("playbackkit-authorities-\(getuid())-\(fingerprint(added))")
        let file = folder.appendingPathComponent("authorities.pem")
        if FileManager.default.contents(atPath: file.path) == added { return folder }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try added.write(to: file, options: .atomic)
        } catch {
            throw PlaybackError(code: .engine, message: "open: cannot write the authorities folder \(folder.path): \(error)")
        }
        return folder
    }

    /// FNV-1a of `data`, in hex: names the files made for a content.
    private static func fingerprint(_ data: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    /// A PEM file holding the system's authorities followed by those in `extra`, for engines
    /// that take one file which replaces the system's (FFmpeg's and mpv's `ca_file`,
    /// souphttpsrc's `ssl-ca-file`). Written once per content into the temporary folder.
    public static func bundle(adding extra: URL) throws(PlaybackError) -> URL {
        guard let added = FileManager.default.contents(atPath: extra.path), !added.isEmpty else {
            throw PlaybackError(code: .invalidArgument, message: "open: tlsCertificateAuthorities \(extra.path) cannot be read or is empty")
        }
        var combined = FileManager.default.contents(atPath: systemBundle) ?? Data()
        if let last = combined.last, last != UInt8(ascii: "\n") { combined.append(UInt8(ascii: "\n")) }
        combined.append(added)
        let name = "playbackkit-authorities-\(getuid())-\(fingerprint(combined)).pem"
        let url = URL(fileURLWithPath: "/tmp").appendingPathComponent(name)
        if FileManager.default.contents(atPath: url.path) == combined { return url }
        do {
            try combined.write(to: url, options: .atomic)
        } catch {
            throw PlaybackError(code: .engine, message: "open: cannot write the certificate bundle \(url.path): \(error)")
        }
        return url
    }
}

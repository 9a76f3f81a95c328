#if Curl
import FoundationEssentials
import PlaybackKit

// MARK: - Relayed URLs

/// How `HTTPRelay` writes a URL for the engine and reads it back. A remote URL keeps its
/// scheme, authority, path and query as path segments under the token
/// (`http://127.0.0.1:PORT/TOKEN/https/example.com:8443/videos/a.m3u8?key=1`), so that a
/// reference the engine resolves relative to it (`b.ts`, `../c/d.ts`) lands on the relay with the
/// same meaning; a local file is `/TOKEN/file/PATH`.
package struct RelayAddresses: Sendable, Equatable {
    /// Where a relayed request goes.
    package enum Destination: Equatable {
        /// An http(s) URL.
        case remote(String)
        /// A local file's path.
        case file(String)
        /// A reference the policy refused (answered 403).
        case refused
    }

    /// The relay's port on 127.0.0.1.
    package let port: Int
    /// The secret first path segment: only the engine learns it, so that no other program on the
    /// machine can make the relay fetch with the app's headers.
    package let token: String

    /// Addresses under `token` on the relay's `port`.
    package init(port: Int, token: String) {
        self.port = port
        self.token = token
    }

    /// The start of every relayed URL.
    package var prefix: String { "http://127.0.0.1:\(port)/\(token)" }

    /// Where a refused reference is sent.
    package var refusedLocation: String { prefix + "/refused" }

    /// The relayed form of `url` (http, https or file), or nil for another scheme.
    package func relayed(_ url: URL) -> String? { relayed(absolute: url.absoluteString) }

    /// The relayed form of an absolute URL written as text, or nil for another scheme.
    package func relayed(absolute text: String) -> String? {
        guard let separator = text.firstRange(of: "://") else { return nil }
        let scheme = text[..<separator.lowerBound].lowercased()
        var rest = Substring(text[separator.upperBound...])
        if let fragment = rest.firstIndex(of: "#") { rest = rest[..<fragment] }
        switch scheme {
        case "http", "https":
            let end = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            let authority = rest[..<end]
            guard !authority.isEmpty else { return nil }
            var tail = String(rest[end...])
            if !tail.hasPrefix("/") { tail = "/" + tail }
            return "\(prefix)/\(scheme)/\(Self.escapeAuthority(authority))\(tail)"
        case "file":
            guard let path = URL(string: text)?.path, path.hasPrefix("/") else { return nil }
            return "\(prefix)/file\(Self.percentEncodedPath(path))"
        default:
            return nil
        }
    }

    /// Where the request target `target` (path and query, as the engine sent it) goes, or nil when
    /// it is not one of this relay's URLs.
    package func destination(ofTarget target: String) -> Destination? {
        let start = "/\(token)/"
        guard target.hasPrefix(start) else { return nil }
        let rest = target.dropFirst(start.count)
        let schemeEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let scheme = String(rest[..<schemeEnd])
        let afterScheme = rest[schemeEnd...]
        switch scheme {
        case "refused":
            return .refused
        case "file":
            let path = Self.percentDecoded(afterScheme)
            return path.hasPrefix("/") && !path.contains("\0") ? .file(path) : nil
        case "http", "https":
            let remainder = afterScheme.dropFirst()
            let end = remainder.firstIndex { $0 == "/" || $0 == "?" } ?? remainder.endIndex
            let authority = remainder[..<end]
            guard !authority.isEmpty else { return nil }
            var tail = String(remainder[end...])
            if !tail.hasPrefix("/") { tail = "/" + tail }
            return .remote("\(scheme)://\(Self.unescapeAuthority(authority))\(tail)")
        default:
            return nil
        }
    }

    // MARK: - Escaping

    /// An IPv6 literal's brackets may not stand in a path segment.
    private static func escapeAuthority(_ authority: Substring) -> String {
        String(authority).replacing("[", with: "%5B").replacing("]", with: "%5D")
    }

    private static func unescapeAuthority(_ authority: Substring) -> String {
        String(authority).replacing("%5B", with: "[").replacing("%5D", with: "]")
    }

    /// `path` with every byte but the unreserved ones, `/` and the sub-delimiters as `%XX`.
    static func percentEncodedPath(_ path: String) -> String {
        let kept = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/!$&'()*+,;=:@".utf8)
        var encoded = ""
        for byte in path.utf8 {
            if kept.contains(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                encoded += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return encoded
    }

    /// `text` with its `%XX` escapes decoded (the query, if any, left out).
    static func percentDecoded(_ text: Substring) -> String {
        let path = text.firstIndex(of: "?").map { text[..<$0] } ?? text
        var bytes: [UInt8] = []
        var utf8 = Array(path.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2,
               let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

// MARK: - Playlists

/// Rewrites a playlist (HLS m3u8, or a plain m3u) that the relay passes to the engine: every URL
/// in it, resolved against where the playlist came from, is written as a relayed URL, so
/// that the engine fetches segments, keys, variants and renditions through the relay too; a
/// local reference the policy refuses is written as the refused address, and reported.
package enum RelayPlaylist {
    /// The most a playlist may hold; a larger body is not a playlist the relay rewrites.
    static let maximumSize = 16 * 1024 * 1024

    /// True when a response is a playlist: an mpegurl content type, or an `.m3u8` / `.m3u`
    /// path when the server names no type.
    package static func isPlaylist(contentType: String?, url: String) -> Bool {
        if let type = contentType?.lowercased(), type.contains("mpegurl") { return true }
        var path = Substring(url)
        if let query = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<query] }
        let lowered = path.lowercased()
        let typeless = contentType == nil || contentType!.lowercased().hasPrefix("text/plain")
            || contentType!.lowercased().hasPrefix("application/octet-stream")
        return typeless && (lowered.hasSuffix(".m3u8") || lowered.hasSuffix(".m3u"))
    }

    /// `reference` (from a playlist or a redirect), resolved against `base`, as the engine gets
    /// it: an http(s) URL relayed; a local file relayed when `policy` allows it, else the
    /// refused address (and `refused` told why); anything else as it is.
    package static func relayed(_ reference: String, base: URL, addresses: RelayAddresses, policy: ReferencePolicy,
                        refused: (PlaybackError) -> Void) -> String {
        guard let resolved = URL(string: reference, relativeTo: base)?.absoluteURL else { return reference }
        let absolute = resolved.absoluteString
        if ReferencePolicy.isRemote(absolute) { return addresses.relayed(absolute: absolute) ?? reference }
        if let error = policy.refusal(of: absolute) {
            refused(error)
            return addresses.refusedLocation
        }
        return resolved.scheme?.lowercased() == "file" ? addresses.relayed(resolved) ?? reference : reference
    }

    /// `text` with each URL line and each `URI="..."` attribute passed through `relay`.
    package static func rewrite(_ text: String, relayingEach relay: (String) -> String) -> String {
        var lines: [String] = []
        // Split by scalars: a String takes "\r\n" for one character.
        for rawLine in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = String(String.UnicodeScalarView(rawLine))
            let carriageReturn = line.hasSuffix("\r")
            if carriageReturn { line.removeLast() }
            let trimmed = line.trimmingWhitespace()
            if trimmed.isEmpty {
                // kept as it is
            } else if trimmed.hasPrefix("#") {
                line = relayAttributes(in: line, relay)
            } else {
                line = relay(trimmed)
            }
            lines.append(carriageReturn ? line + "\r" : line)
        }
        return lines.joined(separator: "\n")
    }

    /// A tag line with the value of each `URI="..."` attribute (the name is upper case, as
    /// the HLS specification writes every attribute name) relayed.
    private static func relayAttributes(in line: String, _ relay: (String) -> String) -> String {
        var result = ""
        var rest = Substring(line)
        while let start = rest.firstRange(of: "URI=\"") {
            result += rest[..<start.upperBound]
            rest = rest[start.upperBound...]
            guard let end = rest.firstIndex(of: "\"") else { break }
            result += relay(String(rest[..<end]))
            rest = rest[end...]
        }
        return result + rest
    }
}
#endif

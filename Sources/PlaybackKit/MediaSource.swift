import FoundationEssentials
import Glibc

/// A URL as a player opens it: a local file or a remote stream, checked against the URL
/// policy before any engine sees it, so every engine fails the same way on the same input.
public struct MediaSource: Sendable, Equatable {
    /// The normalised URL: a file URL for local paths.
    public var url: URL
    /// The lower-cased scheme ("file", "http", ...).
    public var scheme: String
    /// True for local files.
    public var isFile: Bool { scheme == "file" }
    /// True for http(s).
    public var isHTTP: Bool { scheme == "http" || scheme == "https" }
    /// The file path, for local files.
    public var path: String { url.path }

    /// Resolves `url` (a file URL, a plain path with no scheme, or a remote URL).
    public init(_ url: URL) {
        if let scheme = url.scheme?.lowercased(), !scheme.isEmpty {
            self.url = url
            self.scheme = scheme
        } else {
            self.url = URL(fileURLWithPath: url.path.isEmpty ? url.relativeString : url.path)
            self.scheme = "file"
        }
    }

    /// Resolves a command-line argument: a URL with a scheme, else a path.
    public init(argument: String) {
        if let url = URL(string: argument), let scheme = url.scheme, scheme.count > 1 {
            self.init(url)
        } else {
            self.init(URL(fileURLWithPath: argument))
        }
    }

    /// `precheck(allowedSchemes:)` with the options' schemes, and for http(s) sources an
    /// unreadable `tlsCertificateAuthorities` file (`.invalidArgument`). Nil when the source
    /// may be handed to an engine.
    public func precheck(options: PlaybackOptions) -> PlaybackError? {
        if let error = precheck(allowedSchemes: options.allowedSchemes) { return error }
        if isHTTP, let authorities = options.tlsCertificateAuthorities, access(authorities.path, R_OK) != 0 {
            return PlaybackError(code: .invalidArgument, message: "open: tlsCertificateAuthorities \(authorities.path): \(String(cString: strerror(errno)))")
        }
        return nil
    }

    /// The error an engine would give late, found early: a forbidden scheme, nothing at
    /// the path, a directory or other non-regular file, an unreadable or empty file. Nil when
    /// the source may be handed to an engine.
    public func precheck(allowedSchemes: Set<String>) -> PlaybackError? {
        guard allowedSchemes.contains(scheme) else {
            return PlaybackError(code: .forbiddenURL, message: "open: scheme '\(scheme)' is not allowed (allowed: \(allowedSchemes.sorted().joined(separator: ", ")))")
        }
        guard isFile else {
            if url.host == nil || url.host!.isEmpty {
                return PlaybackError(code: .invalidArgument, message: "open: \(url.absoluteString) has no host")
            }
            return nil
        }
        var info = stat()
        guard stat(path, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            return PlaybackError(code: .sourceNotFound, message: "open: \(path): \(reason)")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            return PlaybackError(code: .sourceNotFound, message: "open: \(path) is not a regular file")
        }
        guard access(path, R_OK) == 0 else {
            return PlaybackError(code: .sourceNotFound, message: "open: \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_size > 0 else {
            return PlaybackError(code: .unsupportedFormat, message: "open: \(path) is empty")
        }
        return nil
    }
}

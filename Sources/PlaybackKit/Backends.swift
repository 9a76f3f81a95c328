import FoundationEssentials

/// One engine that can make players: what an adapter module registers.
public protocol PlaybackBackend: Sendable {
    /// The name apps and `--backend` use: "gstreamer", "ffmpeg", "mpv", "vlc".
    var name: String { get }
    /// The engine and its version as linked, e.g. "libmpv 2.0.0".
    var engineVersion: String { get }
    /// Makes a player for `url` (a file URL, a plain path, or http(s)).
    func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback
}

/// The process-wide registry of backends.
public enum Backends {
    /// The environment variable naming the backend used when none is given.
    public static let environmentVariable = "MEDIAPLAYBACK_BACKEND"

    private static let registry = Locked<[any PlaybackBackend]>([])

    /// Adds a backend; one registered under the same name is replaced in place.
    public static func register(_ backend: any PlaybackBackend) {
        registry.withLock { list in
            if let index = list.firstIndex(where: { $0.name == backend.name }) {
                list[index] = backend
            } else {
                list.append(backend)
            }
        }
    }

    /// Every registered backend, in registration order.
    public static var all: [any PlaybackBackend] { registry.withLock { $0 } }

    /// The backend with that name (case-insensitive), or nil.
    public static func backend(named name: String) -> (any PlaybackBackend)? {
        let wanted = name.lowercased()
        return all.first { $0.name.lowercased() == wanted }
    }

    /// The backend `name` names; nil: the `MEDIAPLAYBACK_BACKEND` environment variable, else
    /// the first registered. An unknown name throws `PlaybackError(.backendUnavailable)` that
    /// lists the known names.
    public static func resolve(_ name: String?) throws -> any PlaybackBackend {
        let chosen = name ?? environmentChoice
        let known = all
        if let chosen {
            if let backend = backend(named: chosen) { return backend }
            throw unknownBackend(chosen, known: known.map(\.name))
        }
        guard let first = known.first else {
            throw PlaybackError(code: .backendUnavailable, message: "no backend is registered")
        }
        return first
    }

    /// Makes a player with the backend `backend` names; nil: the `MEDIAPLAYBACK_BACKEND`
    /// environment variable, else the first registered. An unknown name throws
    /// `PlaybackError(.backendUnavailable)` that lists the known names. A list of names
    /// separated by commas ("vlc,ffmpeg"), here or in the environment variable, makes the
    /// player of `makePlayer(backends:url:options:)` over those names.
    public static func makePlayer(backend: String?, url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        if let chosen = backend ?? environmentChoice, chosen.contains(",") {
            return try makePlayer(backends: names(in: chosen), url: url, options: options)
        }
        return try resolve(backend).makePlayer(url: url, options: options)
    }

    // MARK: - Lists of backends

    /// The value of `MEDIAPLAYBACK_BACKEND`, or nil when it is unset or empty.
    private static var environmentChoice: String? {
        ProcessInfo.processInfo.environment[environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The names in a list separated by commas ("vlc,ffmpeg" or "vlc, ffmpeg"), in order;
    /// empty names are left out.
    public static func names(in list: String) -> [String] {
        list.split(separator: ",").map { $0.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
            .filter { !$0.isEmpty }
    }

    /// The list of names `backend` gives, as `makePlayer(backend:url:options:)` reads it: the
    /// name or list given, else `MEDIAPLAYBACK_BACKEND`, else the first registered backend
    /// (empty when none is registered).
    public static func requestedNames(_ backend: String?) -> [String] {
        if let chosen = backend ?? environmentChoice { return names(in: chosen) }
        return all.first.map { [$0.name] } ?? []
    }

    /// The registered backend named `name` (case-insensitive), or one that stands for the
    /// missing name: its `makePlayer` throws `PlaybackError(.backendUnavailable)` listing the
    /// known names. What `makePlayer(backends:url:options:)` tries for each name.
    public static func candidate(named name: String) -> any PlaybackBackend {
        if let backend = backend(named: name) { return backend }
        return UnavailableBackend(name: name, known: all.map(\.name))
    }

    /// The error for a name no backend has, listing the `known` ones.
    static func unknownBackend(_ name: String, known: [String]) -> PlaybackError {
        PlaybackError(code: .backendUnavailable,
                      message: "unknown backend '\(name)'; known backends: \(known.isEmpty ? "none" : known.joined(separator: ", "))")
    }
}

/// A name no registered backend has: every player it is asked for fails as unavailable.
struct UnavailableBackend: PlaybackBackend {
    /// The name asked for.
    let name: String
    /// The names registered when it was asked for.
    let known: [String]

    var engineVersion: String { "unavailable" }

    func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        throw Backends.unknownBackend(name, known: known)
    }
}

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
        let environment = ProcessInfo.processInfo.environment[environmentVariable]
        let chosen = name ?? environment.flatMap { $0.isEmpty ? nil : $0 }
        let known = all
        if let chosen {
            if let backend = backend(named: chosen) { return backend }
            let names = known.map(\.name).joined(separator: ", ")
            throw PlaybackError(
                code: .backendUnavailable,
                message: "unknown backend '\(chosen)'; known backends: \(names.isEmpty ? "none" : names)")
        }
        guard let first = known.first else {
            throw PlaybackError(code: .backendUnavailable, message: "no backend is registered")
        }
        return first
    }

    /// Makes a player with the backend `backend` names; nil: the `MEDIAPLAYBACK_BACKEND`
    /// environment variable, else the first registered. An unknown name throws
    /// `PlaybackError(.backendUnavailable)` that lists the known names.
    public static func makePlayer(backend: String?, url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        try resolve(backend).makePlayer(url: url, options: options)
    }
}

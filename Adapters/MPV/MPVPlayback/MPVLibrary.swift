#if MPV
import CMPV
import PlaybackKit

/// libmpv loaded at run time: the binary does not link it, so a process loads libmpv and its
/// many dependencies only when it first makes an mpv player (or asks for its version).
enum MPVLibrary {
    /// Loads libmpv once; later calls return at once. Throws `.backendUnavailable` with the
    /// loader's reason (dlerror()'s text or a missing symbol) when it cannot be loaded.
    static func load() throws(PlaybackError) {
        if let reason = pk_mpv_load() {
            throw PlaybackError(code: .backendUnavailable, message: "loading libmpv: \(String(cString: reason))")
        }
    }

    /// The client API version of the loaded libmpv, e.g. "libmpv 2.0.0", or
    /// "libmpv unavailable: <reason>" when it cannot be loaded.
    static var versionDescription: String {
        if let reason = pk_mpv_load() {
            return "libmpv unavailable: \(String(cString: reason))"
        }
        let version = pk_mpv_client_api_version()
        return "libmpv \(pk_mpv_api_major(version)).\(pk_mpv_api_minor(version)).0"
    }
}
#endif

#if VLC
import CVLC
import FoundationEssentials
import Glibc
import PlaybackKit
import Synchronization

/// The one `libvlc_instance_t` of the process, made on first use and kept for the process's
/// life. Its log goes to `PlaybackLog`; the last error or warning is kept for error messages.
final class VLCInstance: @unchecked Sendable {
    // @unchecked: `handle` is set once in init and never changed; libVLC's instance calls are
    // thread-safe.
    let handle: OpaquePointer

    /// Arguments for a headless instance that also works as root: no Xlib threading, no on-video
    /// titles or OSD, no subtitle files found beside the media, no config files, software decoding,
    /// no deinterlacing, nothing printed.
    static let arguments = [
        "--no-xlib", "--no-video-title-show", "--no-osd", "--no-snapshot-preview",
        "--no-sub-autodetect-file", "--ignore-config",
        "--avcodec-hw=none", "--no-metadata-network-access",
        // Interlaced pictures are handed on as decoded (fields woven), as the other engines
        // hand them on: libVLC deinterlaces them by default.
        "--deinterlace=0",
        // Also quiets libavcodec's own printing to stderr; libVLC's log still reaches the
        // callback below.
        "--quiet",
    ]

    private static let made = Locked<Result<VLCInstance, PlaybackError>?>(nil)

    /// The shared instance, made on the first call.
    static func shared() throws(PlaybackError) -> VLCInstance {
        let result = made.withLock { slot -> Result<VLCInstance, PlaybackError> in
            if let slot { return slot }
            let created: Result<VLCInstance, PlaybackError>
            if let instance = VLCInstance() {
                created = .success(instance)
            } else {
                created = .failure(PlaybackError(code: .backendUnavailable, message: "libvlc_new: libVLC could not start (are the VLC plugins installed? \(VLCLog.lastProblem() ?? "no message"))"))
            }
            slot = created
            return created
        }
        return try result.get()
    }

    private init?() {
        let cStrings = Self.arguments.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        var argv = cStrings.map { UnsafePointer<CChar>($0) }
        guard let handle = argv.withUnsafeMutableBufferPointer({ libvlc_new(Int32($0.count), $0.baseAddress) }) else {
            return nil
        }
        self.handle = handle
        libvlc_log_set(handle, vlcLogCallback, nil)
    }
}

// MARK: - Log

/// libVLC's log, routed to `PlaybackLog`, with the last error or warning kept for messages.
enum VLCLog {
    private static let lastMessage = Locked<String?>(nil)

    /// Messages libVLC 3 logs as errors while it merely tries hardware picture formats the
    /// memory output cannot take before it settles on a software one.
    private static let negotiationNoise = [
        "Too high level of recursion", "Failed to create video converter",
        "Failed to adapt decoder format to display", "video output creation failed",
        "failed to create video output",
    ]

    /// The last error or warning libVLC logged (without format-negotiation noise).
    static func lastProblem() -> String? { lastMessage.get() }

    /// Forgets the last problem (before opening something new).
    static func clearProblem() { lastMessage.set(nil) }

    // MARK: - Local references of remote playlists

    /// The first local reference each adaptive demuxer (by object id) listed so far.
    private static let listedLocal = Locked<[UInt: String]>([:])
    /// Local references of remote playlists, by the playlist's location (without the scheme).
    private static let localReferences = Locked<[String: String]>([:])
    /// The locations (without the scheme) of the playlists the adaptive module opened and no
    /// session has asked about yet.
    private static let adaptiveLocations = Locked<Set<String>>([])

    /// Reads the adaptive module's playlist dump: it lists every segment ("Segment #0
    /// url=...") and then names the playlist it opens ("opening playlist file (location)").
    /// libVLC 3 reads local segments only for a local playlist and gives no reason when it
    /// skips them; this is how the session learns that a remote playlist named local files.
    fileprivate static func adaptive(object: UInt, text: String) {
        let line = text.trimmingBlanks()
        if line.hasPrefix("Segment #"), let field = line.split(separator: " ").first(where: { $0.hasPrefix("url=") }) {
            let url = String(field.dropFirst(4))
            guard !ReferencePolicy.isRemote(url) else { return }
            listedLocal.withLock { if $0[object] == nil { $0[object] = url } }
        } else if line.hasPrefix("opening playlist file ("), line.hasSuffix(")") {
            let location = String(line.dropFirst("opening playlist file (".count).dropLast())
            adaptiveLocations.withLock { _ = $0.insert(location) }
            guard let url = listedLocal.withLock({ $0.removeValue(forKey: object) }) else { return }
            localReferences.withLock { $0[location] = url }
        }
    }

    /// The local reference the remote playlist at `location` (`host:port/path`) named, if the
    /// adaptive module listed one; forgotten once taken.
    static func takeLocalReference(location: String) -> String? {
        localReferences.withLock { $0.removeValue(forKey: location) }
    }

    /// True when the adaptive module (HLS, DASH) opened the playlist at `location`
    /// (`host:port/path`); forgotten once asked.
    static func takeAdaptive(location: String) -> Bool {
        adaptiveLocations.withLock { $0.remove(location) != nil }
    }

    // MARK: - The end of an input's wait for its decoders

    /// The format of the message libVLC 3's input logs, on its own thread, once its decoders
    /// hold their first pictures after buffering (a start or a seek), right before it sets its
    /// clock and lets them show those pictures (`EsOutDecodersStopBuffering`).
    fileprivate static let decoderWaitDoneFormat = "Decoder wait done in %d ms"

    /// What to call when the input running on a thread logs the end of its decoder wait, by
    /// thread; each is called once.
    private static let decoderWaits = Locked<[pthread_t: (owner: ObjectIdentifier, action: @Sendable () -> Void)]>([:])
    /// How many entries `decoderWaits` holds, read for every message libVLC logs.
    fileprivate static let pendingDecoderWaits = Atomic<Int>(0)

    /// Calls `action` once, from libVLC's input thread, when the input whose thread calls this
    /// (from a libVLC event) logs that its decoders are ready; replaces an earlier wait on the
    /// same thread. Returns the thread, for `cancelDecoderWait(thread:owner:)`.
    static func whenDecodersReady(owner: AnyObject, _ action: @escaping @Sendable () -> Void) -> pthread_t {
        let thread = pthread_self()
        decoderWaits.withLock { waits in
            waits[thread] = (ObjectIdentifier(owner), action)
            pendingDecoderWaits.store(waits.count, ordering: .releasing)
        }
        return thread
    }

    /// Forgets the wait `owner` registered on `thread`, if it is still there.
    static func cancelDecoderWait(thread: pthread_t, owner: AnyObject) {
        decoderWaits.withLock { waits in
            guard waits[thread]?.owner == ObjectIdentifier(owner) else { return }
            waits[thread] = nil
            pendingDecoderWaits.store(waits.count, ordering: .releasing)
        }
    }

    /// libVLC logged the end of a decoder wait on the calling thread.
    fileprivate static func decodersReady() {
        let thread = pthread_self()
        let action = decoderWaits.withLock { waits -> (@Sendable () -> Void)? in
            defer { pendingDecoderWaits.store(waits.count, ordering: .releasing) }
            return waits.removeValue(forKey: thread)?.action
        }
        action?()
    }

    fileprivate static func record(level: Int32, module: String, text: String) {
        let mapped: PlaybackLog.Level
        switch level {
        case Int32(LIBVLC_ERROR.rawValue): mapped = .error
        case Int32(LIBVLC_WARNING.rawValue): mapped = .warning
        case Int32(LIBVLC_NOTICE.rawValue): mapped = .info
        default: mapped = .debug
        }
        let noise = negotiationNoise.contains { text.contains($0) }
        if mapped >= .warning, !noise {
            lastMessage.set(module.isEmpty ? text : "\(module): \(text)")
        }
        // libVLC's errors are often recoverable; show them as warnings, and the noise as debug.
        PlaybackLog.log(noise ? .debug : min(mapped, .warning), "vlc", module.isEmpty ? text : "\(module): \(text)")
    }
}

/// libVLC's log callback: formats the message and hands it on. Runs on libVLC's threads and
/// never calls back into libVLC except to read the message's context.
private let vlcLogCallback: libvlc_log_cb = { _, level, context, format, args in
    guard let args else { return }
    var module: UnsafePointer<CChar>?
    var file: UnsafePointer<CChar>?
    var line: UInt32 = 0
    libvlc_log_get_context(context, &module, &file, &line)
    if let format, VLCLog.pendingDecoderWaits.load(ordering: .acquiring) > 0,
       strcmp(format, VLCLog.decoderWaitDoneFormat) == 0 {
        VLCLog.decodersReady()
    }
    let adaptive = module.map { strcmp($0, "adaptive") == 0 } ?? false
    guard adaptive || level >= Int32(LIBVLC_WARNING.rawValue) || PlaybackLog.enabled(.debug) else { return }
    var buffer = [CChar](repeating: 0, count: 1024)
    _ = pk_vlc_format_log(&buffer, buffer.count, format, args)
    let length = buffer.firstIndex(of: 0) ?? buffer.count
    let text = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    if adaptive {
        var name: UnsafePointer<CChar>?
        var header: UnsafePointer<CChar>?
        var object: UInt = 0
        libvlc_log_get_object(context, &name, &header, &object)
        VLCLog.adaptive(object: object, text: text)
    }
    guard level >= Int32(LIBVLC_WARNING.rawValue) || PlaybackLog.enabled(.debug) else { return }
    VLCLog.record(level: level, module: module.map { String(cString: $0) } ?? "", text: text)
}
#endif

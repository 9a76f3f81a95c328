#if MPV
import CMPV
import FoundationEssentials
import Glibc
import PlaybackKit

/// Owns one `mpv_handle`: created, configured and initialised in `init`, destroyed in
/// `destroy()` and nowhere else. Every libmpv client call of the adapter goes through it.
///
/// Calls from any thread register as users of the handle for their duration (without holding
/// a lock while libmpv works, so a slow call never holds up another thread); `destroy()` waits
/// until no call is running. `waitEvent` alone is not counted: only the event thread calls it,
/// and that same thread is the one that calls `destroy()`.
final class MPVHandle: @unchecked Sendable {
    // @unchecked: `raw` and `activeCalls` are read and written with `condition` held; libmpv
    // allows calls on one handle from several threads at once.
    private let condition = ConditionVariable()
    private var raw: OpaquePointer?
    private var activeCalls = 0
    /// The handle for `waitEvent`, kept separately so that waiting needs no bookkeeping.
    private let eventHandle: OpaquePointer

    /// Creates a core, applies `options` (name, value) and `listOptions` (name, items) in order
    /// and initialises it.
    init(options: [(String, String)], listOptions: [(String, [String])] = []) throws(PlaybackError) {
        try MPVLibrary.load()
        guard let handle = pk_mpv_create() else {
            throw PlaybackError(code: .backendUnavailable, message: "mpv_create: libmpv could not create a player core")
        }
        for (name, value) in options {
            let status = pk_mpv_set_option_string(handle, name, value)
            if status < 0 {
                pk_mpv_terminate_destroy(handle)
                throw PlaybackError(code: .engine, message: "mpv option \(name)=\(value): \(MPVHandle.describe(status))")
            }
        }
        for (name, items) in listOptions {
            let status = MPVHandle.setStringList(handle, name, items)
            if status < 0 {
                pk_mpv_terminate_destroy(handle)
                throw PlaybackError(code: .engine, message: "mpv option \(name): \(MPVHandle.describe(status))")
            }
        }
        let status = pk_mpv_initialize(handle)
        if status < 0 {
            pk_mpv_terminate_destroy(handle)
            throw PlaybackError(code: .engine, message: "mpv_initialize: \(MPVHandle.describe(status))")
        }
        raw = handle
        eventHandle = handle
    }

    /// Sets a string-list option from separate items (no splitting on commas).
    private static func setStringList(_ handle: OpaquePointer, _ name: String, _ items: [String]) -> Int32 {
        let copies = items.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        var nodes = copies.map { copy -> mpv_node in
            var node = mpv_node()
            node.format = MPV_FORMAT_STRING
            node.u.string = copy
            return node
        }
        return nodes.withUnsafeMutableBufferPointer { buffer in
            var list = mpv_node_list()
            list.num = Int32(buffer.count)
            list.values = buffer.baseAddress
            return withUnsafeMutablePointer(to: &list) { listPointer in
                var node = mpv_node()
                node.format = MPV_FORMAT_NODE_ARRAY
                node.u.list = listPointer
                return pk_mpv_set_option(handle, name, MPV_FORMAT_NODE, &node)
            }
        }
    }

    /// libmpv's text for an error status.
    static func describe(_ status: Int32) -> String {
        String(cString: pk_mpv_error_string(status))
    }

    /// Runs `body` with the live handle, or returns nil once it is destroyed.
    func withHandle<R>(_ body: (OpaquePointer) -> R) -> R? {
        condition.lock()
        guard let handle = raw else {
            condition.unlock()
            return nil
        }
        activeCalls += 1
        condition.unlock()
        defer {
            condition.lock()
            activeCalls -= 1
            if activeCalls == 0 { condition.broadcast() }
            condition.unlock()
        }
        return body(handle)
    }

    // MARK: - Commands and properties

    /// Queues a command; its reply arrives as MPV_EVENT_COMMAND_REPLY with `replyID`.
    @discardableResult
    func commandAsync(_ arguments: [String], replyID: UInt64 = 0) -> Int32 {
        withCStringArray(arguments) { argv in
            withHandle { pk_mpv_command_async($0, replyID, argv) } ?? MPV_ERROR_UNINITIALIZED.rawValue
        }
    }

    /// Runs a command and returns its result node, converted; waits for the core.
    func commandReturningNode(_ arguments: [String]) -> MPVValue? {
        withCStringArray(arguments) { argv in
            withHandle { handle -> MPVValue? in
                var result = mpv_node()
                guard pk_mpv_command_ret(handle, argv, &result) >= 0 else { return nil }
                defer { pk_mpv_free_node_contents(&result) }
                return MPVValue(result)
            } ?? nil
        }
    }

    /// Sets a flag property without waiting.
    func setFlagAsync(_ name: String, _ value: Bool) {
        var flag: Int32 = value ? 1 : 0
        _ = withHandle { pk_mpv_set_property_async($0, 0, name, MPV_FORMAT_FLAG, &flag) }
    }

    /// Sets a floating-point property without waiting.
    func setDoubleAsync(_ name: String, _ value: Double) {
        var number = value
        _ = withHandle { pk_mpv_set_property_async($0, 0, name, MPV_FORMAT_DOUBLE, &number) }
    }

    /// Sets a property from its text form without waiting.
    func setStringAsync(_ name: String, _ value: String) {
        value.withCString { text in
            var pointer: UnsafePointer<CChar>? = text
            _ = withHandle { pk_mpv_set_property_async($0, 0, name, MPV_FORMAT_STRING, &pointer) }
        }
    }

    /// Reads a floating-point property (the core answers at once for these).
    func getDouble(_ name: String) -> Double? {
        withHandle { handle -> Double? in
            var value = 0.0
            return pk_mpv_get_property(handle, name, MPV_FORMAT_DOUBLE, &value) >= 0 ? value : nil
        } ?? nil
    }

    /// The video's frames per second: the container's (`container-fps`), else the rate mpv
    /// measured from the decoded frames (`estimated-vf-fps`); nil when neither is known.
    func nominalFrameRate() -> Double? {
        for name in ["container-fps", "estimated-vf-fps"] {
            if let rate = getDouble(name), rate.isFinite, rate > 0 { return rate }
        }
        return nil
    }

    /// Reads an integer property.
    func getInt(_ name: String) -> Int? {
        withHandle { handle -> Int? in
            var value: Int64 = 0
            return pk_mpv_get_property(handle, name, MPV_FORMAT_INT64, &value) >= 0 ? Int(value) : nil
        } ?? nil
    }

    /// Reads a property in its text form.
    func getString(_ name: String) -> String? {
        withHandle { handle -> String? in
            guard let text = pk_mpv_get_property_string(handle, name) else { return nil }
            defer { pk_mpv_free(text) }
            return String(cString: text)
        } ?? nil
    }

    /// Reads a property as a node (maps, lists), converted.
    func getValue(_ name: String) -> MPVValue? {
        withHandle { handle -> MPVValue? in
            var node = mpv_node()
            guard pk_mpv_get_property(handle, name, MPV_FORMAT_NODE, &node) >= 0 else { return nil }
            defer { pk_mpv_free_node_contents(&node) }
            return MPVValue(node)
        } ?? nil
    }

    /// Asks for MPV_EVENT_PROPERTY_CHANGE events of `name` in `format`, tagged with `id`.
    func observe(_ name: String, format: mpv_format, id: UInt64) {
        _ = withHandle { pk_mpv_observe_property($0, id, name, format) }
    }

    /// Asks for log messages at `level` and above as MPV_EVENT_LOG_MESSAGE.
    func requestLogMessages(level: String) {
        _ = withHandle { pk_mpv_request_log_messages($0, level) }
    }

    // MARK: - Events

    /// Waits up to `timeout` seconds for the next event. Event thread only.
    func waitEvent(timeout: Double) -> mpv_event {
        pk_mpv_wait_event(eventHandle, timeout).pointee
    }

    /// Makes a pending `waitEvent` return. Any thread, also the render thread.
    func wakeup() {
        _ = withHandle { pk_mpv_wakeup($0) }
    }

    /// How far the process's uptime clock (`ProcessInfo.systemUptime`) is ahead of mpv's own
    /// (`mpv_get_time_us`, which frame target times use), in seconds; nil once destroyed.
    func uptimeAheadOfCoreClock() -> TimeInterval? {
        withHandle { handle in
            let before = ProcessInfo.processInfo.systemUptime
            let core = Double(pk_mpv_get_time_us(handle)) / 1e6
            let after = ProcessInfo.processInfo.systemUptime
            return (before + after) / 2 - core
        }
    }

    /// Creates the software render context on this core.
    func makeSoftwareRenderContext() -> OpaquePointer? {
        withHandle { handle -> OpaquePointer? in
            var context: OpaquePointer?
            var params = [
                mpv_render_param(type: MPV_RENDER_PARAM_API_TYPE, data: UnsafeMutableRawPointer(mutating: pk_mpv_render_api_type_sw())),
                mpv_render_param(type: MPV_RENDER_PARAM_INVALID, data: nil),
            ]
            let status = pk_mpv_render_context_create(&context, handle, &params)
            if status < 0 {
                PlaybackLog.log(.warning, "mpv", "mpv_render_context_create(sw): \(MPVHandle.describe(status))")
                return nil
            }
            return context
        } ?? nil
    }

    // MARK: - Teardown

    /// Destroys the core (after its render context was freed), once no call is running.
    /// Called once, by the event thread.
    func destroy() {
        condition.lock()
        let handle = raw
        raw = nil
        while activeCalls > 0 { condition.wait() }
        condition.unlock()
        if let handle { pk_mpv_terminate_destroy(handle) }
    }
}

/// Calls `body` with a NULL-terminated C array of `strings`, valid during the call.
func withCStringArray<R>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    var pointers: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) }
    pointers.append(nil)
    return pointers.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
}
#endif

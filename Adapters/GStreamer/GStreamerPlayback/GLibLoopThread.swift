#if GStreamer
import CGStreamer
import FoundationEssentials
import PlaybackKit

/// A GLib main loop on a dedicated thread with its own `GMainContext` (pushed as that thread's
/// default), so a player's bus watch and timers never depend on an application's GLib loop.
///
/// `post` queues work on the loop from any thread and returns. `stop` ends the loop after the
/// work already queued; the `finish` closure given to `start` then runs on the loop thread,
/// after which the context and the loop are released in one place.
final class GLibLoopThread: @unchecked Sendable {
    // @unchecked: `context`, `loop` and `accepting` are guarded by `lock`; the loop thread alone
    // iterates the context.

    private let lock = MutexLock()
    private var context: OpaquePointer?     // GMainContext*
    private var loop: OpaquePointer?        // GMainLoop*
    private var accepting = true
    private let name: String

    /// Makes the context and the loop; `start` runs them.
    init(name: String) {
        self.name = name
        let context = g_main_context_new()
        self.context = context
        self.loop = g_main_loop_new(context, 0)
    }

    deinit {
        // Only reached if `start` was never called (a started thread keeps `self` alive).
        releaseContext()
    }

    /// The context sources are attached to, while the loop runs.
    var mainContext: OpaquePointer? { lock.withLock { context } }

    /// Starts the thread: it runs the loop until `stop`, then calls `finish` there.
    func start(finish: @escaping @Sendable () -> Void) {
        DetachedThread.start(name: name) { [self] in
            guard let context = mainContext, let loop = lock.withLock({ self.loop }) else { return }
            g_main_context_push_thread_default(context)
            g_main_loop_run(loop)
            finish()
            g_main_context_pop_thread_default(context)
            releaseContext()
        }
    }

    /// Runs `work` on the loop thread after what is already queued; dropped once `stop` was
    /// called. Returns false when dropped.
    @discardableResult
    func post(_ work: @escaping () -> Void) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard accepting, let context else { return false }
        attachIdle(work, to: context)
        return true
    }

    /// Ends the loop after the work already queued. Later `post`s are dropped.
    func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard accepting, let context, let loop else { return }
        accepting = false
        // Quitting from inside the loop: a g_main_loop_quit before g_main_loop_run started
        // would be lost.
        nonisolated(unsafe) let quitLoop = loop
        attachIdle({ g_main_loop_quit(quitLoop) }, to: context)
    }

    /// A repeating timer on the loop; `tick` returns false to stop. It runs until then or
    /// until the returned timer is cancelled or released.
    func addTimer(milliseconds: UInt32, _ tick: @escaping () -> Bool) -> LoopTimer? {
        guard let context = mainContext, let source = g_timeout_source_new(milliseconds) else { return nil }
        let box = Unmanaged.passRetained(WorkBox({ _ = tick() }, repeating: tick)).toOpaque()
        g_source_set_callback(source, { data in
            let box = Unmanaged<WorkBox>.fromOpaque(data!).takeUnretainedValue()
            return box.handedOver().repeating?() == true ? pk_g_source_continue() : pk_g_source_remove()
        }, box, { data in Unmanaged<WorkBox>.fromOpaque(data!).release() })
        g_source_attach(source, context)
        return LoopTimer(source)
    }

    // MARK: - Private

    private func attachIdle(_ work: @escaping () -> Void, to context: OpaquePointer) {
        let source = g_idle_source_new()
        g_source_set_priority(source, 0)  // G_PRIORITY_DEFAULT: in step with bus messages
        let box = Unmanaged.passRetained(WorkBox(work)).toOpaque()
        g_source_set_callback(source, { data in
            Unmanaged<WorkBox>.fromOpaque(data!).takeUnretainedValue().handedOver().work()
            return pk_g_source_remove()
        }, box, { data in Unmanaged<WorkBox>.fromOpaque(data!).release() })
        g_source_attach(source, context)
        g_source_unref(source)
    }

    /// Unrefs the loop and the context; sources still attached are destroyed with it, which
    /// releases their closures.
    private func releaseContext() {
        let (context, loop) = lock.withLock { () -> (OpaquePointer?, OpaquePointer?) in
            defer {
                self.context = nil
                self.loop = nil
                accepting = false
            }
            return (self.context, self.loop)
        }
        if let loop { g_main_loop_unref(loop) }
        if let context { g_main_context_unref(context) }
    }
}

/// A timer on a `GLibLoopThread`, used on its loop thread: `cancel()`, or releasing it, stops
/// it (it may have stopped already, its tick having returned false).
final class LoopTimer {
    private var source: UnsafeMutablePointer<GSource>?

    fileprivate init(_ source: UnsafeMutablePointer<GSource>) { self.source = source }

    deinit { cancel() }

    /// Stops the timer and drops the reference to it; safe to call twice.
    func cancel() {
        guard let source else { return }
        g_source_destroy(source)
        g_source_unref(source)
        self.source = nil
    }
}

/// A closure carried through a C `gpointer`.
///
/// It is made on one thread and run on the loop thread; GLib orders the two with its own
/// futex-based locks, which the thread sanitizer cannot see, so both sides also take one mutex
/// (`init`, `handedOver`): the ordering is then visible, and the sanitizer keeps watching
/// everything the work touches. (A mutex shared by every box: one inside the box would itself
/// be read before it is taken.)
private final class WorkBox {
    let work: () -> Void
    let repeating: (() -> Bool)?
    private static let handoff = MutexLock()

    init(_ work: @escaping () -> Void, repeating: (() -> Bool)? = nil) {
        self.work = work
        self.repeating = repeating
        Self.handoff.withLock {}
    }

    /// The box, read on the loop thread after the thread that made it let go of `handoff`.
    func handedOver() -> WorkBox {
        Self.handoff.withLock {}
        return self
    }
}
#endif

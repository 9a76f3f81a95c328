import FoundationEssentials

/// Holds back the pictures a player hands to the app's `.frames` handler until the player is
/// the one the app sees: a try of a fallback player before it is chosen, an item of a queue
/// prepared ahead. The latest picture from before is kept and handed over when the gate
/// opens (the picture the player shows, e.g. its first frame once prepared); after `close()`
/// nothing passes any more.
final class PictureGate: Sendable {
    private struct State: Sendable {
        var isOpen = false
        var isClosed = false
        var held: VideoFrame?
        var handler: (@Sendable (VideoFrame) -> Void)?
    }

    private let state = Locked(State())

    /// `options` with its `.frames` handler passing through this gate (other outputs as they are).
    func gating(_ options: PlaybackOptions) -> PlaybackOptions {
        guard case .frames(let viewport, let handler) = options.videoOutput else { return options }
        state.withLock { $0.handler = handler }
        var gated = options
        gated.videoOutput = .frames(viewport: viewport) { [state] frame in
            let passes = state.withLock { s -> Bool in
                if !s.isOpen, !s.isClosed { s.held = frame }
                return s.isOpen
            }
            if passes { handler(frame) }
        }
        return gated
    }

    /// Lets pictures through from now on, starting with the one held back.
    func open() {
        let (held, handler) = state.withLock { s -> (VideoFrame?, (@Sendable (VideoFrame) -> Void)?) in
            guard !s.isClosed, !s.isOpen else { return (nil, nil) }
            s.isOpen = true
            defer { s.held = nil }
            return (s.held, s.handler)
        }
        if let held, let handler { handler(held) }
    }

    /// Lets no picture through any more.
    func close() {
        state.withLock { s in
            s.isOpen = false
            s.isClosed = true
            s.held = nil
        }
    }
}

import FoundationEssentials

/// Holds back the pictures a player hands to the app's `.frames` or `.yuvFrames` handler
/// until the player is the one the app sees: a try of a fallback player before it is chosen,
/// an item of a queue prepared ahead. The latest picture from before is kept (a YUV picture
/// as a copy: its planes are borrowed) and handed over when the gate opens (the picture the
/// player shows, e.g. its first frame once prepared); after `close()` nothing passes any more.
final class PictureGate: Sendable {
    /// A picture held back, and the handler it goes to.
    private enum Held: @unchecked Sendable {
        // @unchecked: a YUV picture is held as a copy, which owns its planes and is never written.
        case rgba(VideoFrame, @Sendable (VideoFrame) -> Void)
        case yuv(YUVFrame, @Sendable (YUVFrame) -> Void)

        func deliver() {
            switch self {
            case .rgba(let frame, let handler): handler(frame)
            case .yuv(let frame, let handler): handler(frame)
            }
        }
    }

    private struct State: Sendable {
        var isOpen = false
        var isClosed = false
        var held: Held?
    }

    private let state = Locked(State())

    /// `options` with its `.frames` or `.yuvFrames` handler passing through this gate (other
    /// outputs as they are).
    func gating(_ options: PlaybackOptions) -> PlaybackOptions {
        var gated = options
        switch options.videoOutput {
        case .frames(let viewport, let handler):
            gated.videoOutput = .frames(viewport: viewport) { [state] frame in
                if Self.passes(state, holding: { .rgba(frame, handler) }) { handler(frame) }
            }
        case .yuvFrames(let handler):
            gated.videoOutput = .yuvFrames { [state] frame in
                if Self.passes(state, holding: { .yuv(frame.copy(), handler) }) { handler(frame) }
            }
        case .none, .window:
            break
        }
        return gated
    }

    /// True when the gate is open; while it is neither open nor closed, keeps `held()`.
    private static func passes(_ state: Locked<State>, holding held: () -> Held) -> Bool {
        state.withLock { s -> Bool in
            if !s.isOpen, !s.isClosed { s.held = held() }
            return s.isOpen
        }
    }

    /// Lets pictures through from now on, starting with the one held back.
    func open() {
        let held = state.withLock { s -> Held? in
            guard !s.isClosed, !s.isOpen else { return nil }
            s.isOpen = true
            defer { s.held = nil }
            return s.held
        }
        held?.deliver()
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

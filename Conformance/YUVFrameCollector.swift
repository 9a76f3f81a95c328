import FoundationEssentials
import Glibc
import PlaybackKit

/// Collects the pictures of a `.yuvFrames` output for the checks: a record of each (its
/// frame number read from the Y plane, time, size, layout, and what is wrong with its planes)
/// and a copy of the latest.
public final class YUVFrameCollector: Sendable {
    /// One delivered picture.
    public struct Record: Sendable {
        /// The frame number read from the Y plane (`FramePattern`), or nil.
        public let number: Int?
        /// The picture's media time.
        public let presentationTime: TimeInterval
        /// Its size in pixels, and the size it is to be shown at.
        public let size: VideoSize
        public let displaySize: VideoSize
        /// How its chroma is stored.
        public let layout: YUVPixelLayout
        /// What is wrong with its planes' geometry, or with its copy; nil when nothing.
        public let problem: String?
    }

    /// The latest picture, as a copy that owns its planes.
    public struct Latest: @unchecked Sendable {
        // @unchecked: a copy owns its planes, and nothing writes them.
        public let frame: YUVFrame
    }

    struct State: Sendable {
        var records: [Record] = []
        var latest: Latest?
    }

    let state = Watched(State())

    /// A collector with nothing collected.
    public init() {}

    /// The handler to put into `VideoOutput.yuvFrames`.
    public var handler: @Sendable (YUVFrame) -> Void {
        { [self] frame in
            let copy = frame.copy()
            let problem = Self.planeProblem(frame) ?? Self.copyProblem(frame, copy)
            let number = problem == nil ? FramePattern.frameNumber(inLuma: frame.planes[0]) : nil
            let record = Record(number: number, presentationTime: frame.presentationTime, size: frame.size,
                                displaySize: frame.displaySize, layout: frame.layout, problem: problem)
            state.update {
                $0.records.append(record)
                $0.latest = Latest(frame: copy)
            }
        }
    }

    /// How many pictures arrived so far: pass it as `since` to look only at later ones.
    public var count: Int { state.read { $0.records.count } }
    /// A record of every picture so far, in arrival order.
    public var records: [Record] { state.read { $0.records } }
    /// A copy of the last picture delivered.
    public var latest: YUVFrame? { state.read { $0.latest?.frame } }

    /// Waits until at least `count` pictures have arrived, at most `timeout` seconds; whether they did.
    public func waitUntil(count: Int, timeout: TimeInterval) async -> Bool {
        await state.wait(timeout: timeout) { $0.records.count >= count }
    }

    /// Waits for a picture after the first `mark` ones that `match` accepts; fails the check
    /// if none comes within `timeout`.
    @discardableResult
    func waitFor(_ what: String, since mark: Int = 0, timeout: TimeInterval,
                 _ match: @escaping @Sendable (Record) -> Bool) async throws -> Record {
        _ = await state.wait(timeout: timeout) { s in
            s.records[min(mark, s.records.count)...].contains(where: match)
        }
        try Task.checkCancellation()
        let records = records
        if let found = records[min(mark, records.count)...].first(where: match) { return found }
        let seen = records[min(mark, records.count)...].suffix(5).map { "\($0.number.map(String.init) ?? "?")@\(format($0.presentationTime))" }
        throw CheckFailure("no .yuvFrames picture \(what) within \(format(timeout)) s (last seen: \(seen.joined(separator: ", ")))")
    }

    // MARK: - What is wrong with a picture

    /// What is wrong with the planes of `frame` (their number, row bytes, rows, strides), or nil.
    /// (`copyProblem` then reads every row of every plane, so a memory checker sees a plane
    /// shorter than it says.)
    static func planeProblem(_ frame: YUVFrame) -> String? {
        let expected = YUVFrame.planeGeometry(frame.layout, width: frame.width, height: frame.height)
        guard frame.width > 0, frame.height > 0 else { return "an empty \(frame.size) picture" }
        guard frame.planes.count == expected.count else {
            return "\(frame.layout) with \(frame.planes.count) planes, expected \(expected.count)"
        }
        for (index, (plane, wanted)) in zip(frame.planes, expected).enumerated() {
            guard plane.rowBytes == wanted.rowBytes, plane.rows == wanted.rows else {
                return "plane \(index) of the \(frame.layout) \(frame.size) picture has rows of \(plane.rowBytes) bytes x \(plane.rows), expected \(wanted.rowBytes) x \(wanted.rows)"
            }
            guard plane.bytesPerRow >= plane.rowBytes else {
                return "plane \(index) has a stride of \(plane.bytesPerRow) for rows of \(plane.rowBytes) bytes"
            }
        }
        return nil
    }

    /// What differs between `frame` and its `copy`, or nil.
    static func copyProblem(_ frame: YUVFrame, _ copy: YUVFrame) -> String? {
        guard copy.ownsPlanes, !frame.ownsPlanes || frame.planes.first?.baseAddress != copy.planes.first?.baseAddress else {
            return "copy() does not own its planes"
        }
        guard copy.size == frame.size, copy.layout == frame.layout, copy.presentationTime == frame.presentationTime,
              copy.displaySize == frame.displaySize else { return "copy() changed the picture's description" }
        for (index, (plane, copied)) in zip(frame.planes, copy.planes).enumerated() {
            for row in 0..<plane.rows
            where memcmp(plane.baseAddress + row * plane.bytesPerRow, copied.baseAddress + row * copied.bytesPerRow, plane.rowBytes) != 0 {
                return "copy() differs from the picture in plane \(index), row \(row)"
            }
        }
        return nil
    }
}

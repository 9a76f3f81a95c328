import Foundation
import PlaybackKit

/// The faults of the `.yuvFrames` output, made by bending the app's handler.
extension FaultyPlayer {
    /// A YUV picture kept from one call of the handler to the next, as a copy.
    private struct HeldPicture: @unchecked Sendable {
        // @unchecked: a copy owns its planes, and nothing writes them.
        let frame: YUVFrame
    }

    /// `options` with its `.yuvFrames` handler bent for `fault` (other options as they are).
    static func bendingYUVOutput(_ fault: Fault, _ options: PlaybackOptions) -> PlaybackOptions {
        guard case .yuvFrames(let handler) = options.videoOutput else { return options }
        var bent = options
        switch fault {
        case .swapsYUVFramePairs:
            let held = Locked<HeldPicture?>(nil)
            bent.videoOutput = .yuvFrames { frame in
                let earlier = held.withLock { slot -> HeldPicture? in
                    defer { slot = slot == nil ? HeldPicture(frame: frame.copy()) : nil }
                    return slot
                }
                if let earlier {
                    handler(frame)
                    handler(earlier.frame)
                }
            }
        case .yuvOneFrameLate:
            let held = Locked<HeldPicture?>(nil)
            bent.videoOutput = .yuvFrames { frame in
                let earlier = held.withLock { slot -> HeldPicture? in
                    defer { slot = HeldPicture(frame: frame.copy()) }
                    return slot
                }
                if let earlier { handler(earlier.frame) }
            }
        case .yuvDropsLastColumn:
            bent.videoOutput = .yuvFrames { frame in handler(reframed(frame, width: max(1, frame.width - 1))) }
        case .swapsChromaPlanes:
            bent.videoOutput = .yuvFrames { frame in
                guard frame.layout == .i420 else { return handler(frame) }
                handler(reframed(frame, planes: [frame.planes[0], frame.planes[2], frame.planes[1]]))
            }
        case .yuvDisplaysStoredSize:
            bent.videoOutput = .yuvFrames { frame in handler(reframed(frame, displaySize: frame.size)) }
        case .yuvFlipsRange:
            bent.videoOutput = .yuvFrames { frame in handler(reframed(frame, fullRange: !frame.fullRange)) }
        default:
            break
        }
        return bent
    }

    /// `frame` over the same memory, `width` pixels wide (its planes' rows cut to fit), with
    /// other `planes`, another `displaySize` or another range flag.
    private static func reframed(_ frame: YUVFrame, width: Int? = nil, planes: [YUVPlane]? = nil,
                                 displaySize: VideoSize? = nil, fullRange: Bool? = nil) -> YUVFrame {
        let width = width ?? frame.width
        let geometry = YUVFrame.planeGeometry(frame.layout, width: width, height: frame.height)
        let planes = zip(planes ?? frame.planes, geometry).map { plane, wanted in
            YUVPlane(baseAddress: plane.baseAddress, bytesPerRow: plane.bytesPerRow, rowBytes: wanted.rowBytes, rows: wanted.rows)
        }
        return YUVFrame(layout: frame.layout, width: width, height: frame.height, displaySize: displaySize ?? frame.displaySize,
                        planes: planes, presentationTime: frame.presentationTime, matrix: frame.matrix,
                        fullRange: fullRange ?? frame.fullRange, converter: nil)
    }
}

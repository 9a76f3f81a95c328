#if VLC
import Testing
@testable import VLCPlayback

/// How pictures libVLC shows while playing are stamped when the time report the estimate
/// runs on is late: the stamps follow the pictures, not the report.
@Suite("VLC picture times")
struct VLCPictureTimesTests {
    /// A running clock at 0 s, 25 frames a second, whose first picture was stamped.
    private func runningAtZero() -> VLCPictureTimes {
        let times = VLCPictureTimes()
        times.setFrameDuration(0.04, nominal: true)
        times.enter(.running, at: 0)
        let first = times.stampPicture(repeated: false, identical: false)
        #expect(first.time == 0 && first.present)
        return times
    }

    @Test("a new picture after a time report that lags a frame is the next frame, not the last one again")
    func newPictureAfterALateReportIsTheNextFrame() {
        let times = runningAtZero()
        times.timeReported(0)  // the report names the frame already shown
        let second = times.stampPicture(repeated: false, identical: false)
        #expect(abs(second.time - 0.04) < 1e-9, "stamped \(second.time)")
        times.timeReported(0)  // two frames behind now
        let third = times.stampPicture(repeated: false, identical: false)
        #expect(abs(third.time - 0.08) < 1e-9, "stamped \(third.time)")
    }

    @Test("a picture like the last one, with an estimate far before the next frame, stays on the last frame")
    func identicalPictureStaysOnItsFrame() {
        let times = runningAtZero()
        times.timeReported(0)
        let again = times.stampPicture(repeated: false, identical: true)
        #expect(again.time > 0 && again.time < 0.04, "stamped \(again.time)")
    }

    @Test("a picture whose estimate lies frames ahead (libVLC dropped some) follows the estimate")
    func droppedFramesFollowTheEstimate() {
        let times = runningAtZero()
        times.timeReported(0.2)
        let later = times.stampPicture(repeated: false, identical: false)
        #expect(abs(later.time - 0.2) < 1e-9, "stamped \(later.time)")
    }
}
#endif

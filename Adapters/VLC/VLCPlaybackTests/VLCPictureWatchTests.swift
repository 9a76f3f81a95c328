#if VLC
import Testing
@testable import VLCPlayback

/// The verdicts on pictures libVLC shows while a start waits for its first one.
@Suite("VLC picture watch")
struct VLCPictureWatchTests {
    @Test("the first picture after a hold is kept and told of, once; later ones are neither")
    func firstPictureIsToldOfOnce() {
        var state = VLCVideoCallbacks.Watch.firstPicture(seen: false)
        let first = VLCVideoCallbacks.verdict(repeated: false, identical: false, output: 1, state: &state)
        #expect(first.keep && first.first)
        #expect(state == .firstPicture(seen: true))
        let second = VLCVideoCallbacks.verdict(repeated: false, identical: false, output: 1, state: &state)
        #expect(!second.keep && !second.first)
        let redisplay = VLCVideoCallbacks.verdict(repeated: true, identical: true, output: 1, state: &state)
        #expect(!redisplay.keep && !redisplay.first)
    }

    @Test("a picture shown while a hold is armed again is told of, whatever the pictures before it")
    func rearmedHoldTellsOfTheNextPicture() {
        // The start's paused seek showed nothing; its play for a picture arms the hold again.
        var state = VLCVideoCallbacks.Watch.firstPicture(seen: true)
        #expect(!VLCVideoCallbacks.verdict(repeated: false, identical: false, output: 1, state: &state).first)
        state = .firstPicture(seen: false)
        let verdict = VLCVideoCallbacks.verdict(repeated: true, identical: true, output: 2, state: &state)
        #expect(verdict.keep && verdict.first)
    }

    @Test("pictures outside a hold are kept and not taken for a start's first")
    func picturesOutsideAHoldAreNotFirst() {
        var state = VLCVideoCallbacks.Watch.off
        let verdict = VLCVideoCallbacks.verdict(repeated: false, identical: false, output: 1, state: &state)
        #expect(verdict.keep && !verdict.first && !verdict.seekPicture)
    }
}
#endif

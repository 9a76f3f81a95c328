import Foundation
import Testing
@testable import PlaybackKit

/// The position clock on a manual time source: exact figures, no waiting.
@Suite struct PositionClockTests {
    private let time = ManualTimeSource()
    private func wait(_ seconds: Double) { time.advance(by: seconds) }

    @Test func advancesAtTheRateAndHoldsWhenStopped() {
        let clock = PositionClock(time: time)
        clock.setDuration(100)
        clock.jump(to: 5, running: true)
        wait(0.2)
        clock.sample(5.2)
        #expect(abs(clock.read() - 5.2) < 1e-9)
        clock.setRunning(false)
        let held = clock.read()
        wait(0.1)
        #expect(clock.read() == held)
        clock.setRate(2)
        clock.setRunning(true)
        wait(0.2)
        #expect(abs(clock.read() - held - 0.4) < 1e-9)
    }

    @Test func neverRunsBackwardsOnALateSample() {
        let clock = PositionClock(time: time)
        clock.jump(to: 1, running: true)
        wait(0.1)
        let before = clock.read()
        clock.sample(0.5)  // behind, but within the snap threshold
        #expect(clock.read() >= before)
    }

    @Test func stopsRunningPastTheLastSample() {
        let clock = PositionClock(time: time)
        clock.jump(to: 0, running: true)
        wait(PositionClock.maximumLead + 0.2)
        #expect(clock.read() == PositionClock.maximumLead)
    }

    @Test func clampsToTheDuration() {
        let clock = PositionClock(time: time)
        clock.setDuration(2)
        clock.jump(to: 5, running: false)
        #expect(clock.read() == 2)
        clock.jump(to: -1, running: false)
        #expect(clock.read() == 0)
    }
}

@Suite struct EventHubTests {
    @Test func everyStreamGetsEveryEventInOrderAndFinishes() async {
        let hub = EventHub()
        let first = hub.makeStream(), second = hub.makeStream()
        let sent: [PlaybackEvent] = [.preparedToPlay, .playbackStateChanged(.playing), .seekCompleted(2), .finished(.playbackEnded)]
        for event in sent { hub.send(event) }
        hub.finish()
        var a: [PlaybackEvent] = [], b: [PlaybackEvent] = []
        for await event in first { a.append(event) }
        for await event in second { b.append(event) }
        #expect(a == sent)
        #expect(b == sent)
        var late: [PlaybackEvent] = []
        for await event in hub.makeStream() { late.append(event) }
        #expect(late.isEmpty)
    }
}

@Suite struct StaleSampleTests {
    private let time = ManualTimeSource()

    @Test func aSampleFromBeforeASeekDoesNotPullThePositionBack() {
        let clock = PositionClock(time: time)
        clock.setDuration(10)
        clock.jump(to: 8, running: true)
        clock.sample(1.2)  // sent before the seek, arrives after it
        #expect(clock.read() >= 8)
        time.advance(by: 0.35)
        clock.sample(8.35)
        #expect(abs(clock.read() - 8.35) < 1e-9)
    }
}

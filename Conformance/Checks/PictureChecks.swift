import FoundationEssentials
import Glibc
import PlaybackKit

/// Natural size, size changes, thumbnails, `.frames` order.
enum PictureChecks {
    static let all: [Check] = [naturalSize, anamorphic, sizeChange, thumbnailCurrent, thumbnailAudioOnly, stillScene, framesOrder, seeksWhilePlaying, slowHandler, interlaced, afterPictureEnds]

    /// Prepares `fixture` and checks `naturalSize` and the `.naturalSizeAvailable` event.
    static func expectSize(_ context: CheckContext, _ fixture: String, _ expected: VideoSize) async throws {
        let p = try context.player(fixture)
        try await p.prepare()
        try expect(p.player.naturalSize == expected, "\(fixture): naturalSize is \(p.player.naturalSize), expected \(expected)")
        let sizes = p.recorder.events().compactMap { event -> VideoSize? in
            if case .naturalSizeAvailable(let size) = event { return size }
            return nil
        }
        try expect(sizes == [expected], "\(fixture): .naturalSizeAvailable events \(sizes), expected [\(expected)]")
        if let picture = p.player.thumbnailAtCurrentTime() {
            try expect(picture.size == expected, "\(fixture): the thumbnail is \(picture.size), expected the natural size \(expected)")
        } else {
            throw CheckFailure("\(fixture): thumbnailAtCurrentTime() is nil after prepare")
        }
    }

    static let naturalSize = Check("picture.natural-size", "naturalSize and .naturalSizeAvailable give 320x240 for frames.mp4; the thumbnail has that size") { context in
        try await expectSize(context, "frames.mp4", VideoSize(width: 320, height: 240))
    }

    static let anamorphic = Check("picture.anamorphic", "the pixel aspect is applied to the width, the height kept: anamorphic.mp4 (320x240 stored, 3:2 pixels) is 480x240, narrow-pixels.mp4 (360x240 stored, 8:9 pixels, as NTSC DVDs have them) 320x240") { context in
        try await expectSize(context, "anamorphic.mp4", VideoSize(width: 480, height: 240))
        try await expectSize(context, "narrow-pixels.mp4", VideoSize(width: 320, height: 240))
    }

    static let sizeChange = Check("picture.size-change", "a size change mid-stream sends .naturalSizeAvailable again (size-change.ts: 320x240, then 480x360)") { context in
        let p = try context.player("size-change.ts", frames: true)
        try await p.prepare()
        let first = VideoSize(width: 320, height: 240), second = VideoSize(width: 480, height: 360)
        try expect(p.player.naturalSize == first, "at the start naturalSize is \(p.player.naturalSize), expected \(first)")
        let mark = p.mark
        try await p.play()
        try await p.recorder.waitFor(".naturalSizeAvailable(\(second))", since: mark, timeout: 6) { $0 == .naturalSizeAvailable(second) }
        try expect(p.player.naturalSize == second, "after the change naturalSize is \(p.player.naturalSize), expected \(second)")
        let position = p.position
        try expect(position >= 1.5, ".naturalSizeAvailable(\(second)) came at \(format(position)) s, more than 0.5 s before the change at 2 s")
        _ = try await p.frames!.waitFor("a \(second) frame", since: 0, timeout: 3) { $0.size == second }
        _ = try p.thumbnailFrameNumber("after the size change")
        let picture = p.player.thumbnailAtCurrentTime()
        try expect(picture?.size == second, "after the size change the thumbnail is \(picture.map { "\($0.size)" } ?? "nil"), expected \(second)")
    }

    static let thumbnailCurrent = Check("picture.thumbnail-current", "thumbnailAtCurrentTime() is the frame at currentPlaybackTime (±1 frame)") { context in
        let p = try context.player("frames.mp4")
        try await p.prepare()
        try await p.play()
        for stop in [1.2, 2.5] {
            try await p.waitForPosition(atLeast: stop, timeout: 5)
            try await p.pause()
            let position = p.position
            let expected = FramePattern.frame(at: position)
            let shown = try p.thumbnailFrameNumber("paused at \(format(position)) s")
            try expect(abs(shown - expected) <= 1, "paused at \(format(position)) s (frame \(expected)) the thumbnail is frame \(shown)")
            if let picture = p.player.thumbnailAtCurrentTime() {
                try expect(picture.size == VideoSize(width: 320, height: 240), "the thumbnail is \(picture.size), not the natural 320x240")
                try expect(abs(picture.presentationTime - FramePattern.time(ofFrame: shown)) <= 0.021,
                           "the thumbnail of frame \(shown) says presentationTime \(format(picture.presentationTime))")
            }
            try await p.play()
        }
        try await p.pause()
        try await p.seek(to: 6.2)
        let shown = try p.thumbnailFrameNumber("after a seek to 6.2 s")
        try expect(abs(shown - FramePattern.frame(at: p.position)) <= 1, "at \(format(p.position)) s after a seek the thumbnail is frame \(shown)")
    }

    static let thumbnailAudioOnly = Check("picture.thumbnail-audio-only", "audio only: thumbnailAtCurrentTime() is nil, naturalSize zero, no .naturalSizeAvailable") { context in
        let p = try context.player("audio-only.m4a")
        try await p.prepare()
        try expect(p.player.thumbnailAtCurrentTime() == nil, "audio only, prepared: thumbnailAtCurrentTime() is not nil")
        try expect(p.player.naturalSize == .zero, "audio only: naturalSize is \(p.player.naturalSize)")
        try await p.play()
        try await p.waitForPosition(atLeast: 0.5, timeout: 5)
        try expect(p.player.thumbnailAtCurrentTime() == nil, "audio only, playing: thumbnailAtCurrentTime() is not nil")
        let sizes = p.recorder.events().filter { if case .naturalSizeAvailable = $0 { true } else { false } }
        try expect(sizes.isEmpty, "audio only: \(summary(sizes))")
    }

    static let stillScene = Check("picture.still-scene", "every frame alike (a still picture): paused and playing seeks settle, thumbnails show the picture, .frames hands on every frame") { context in
        let p = try context.player("still.mp4", frames: true)
        try await p.prepare()
        for target in [2.0, 0.6, 3.2] {
            let reached = try await p.seek(to: target, near: 0.05, timeout: 3)
            try expectStillPicture(p.player.thumbnailAtCurrentTime(), "the thumbnail paused at \(format(reached)) s")
        }
        try await p.seek(to: 0.4, near: 0.05, timeout: 3)
        let before = p.frames!.count
        try await p.play()
        try await p.waitForPosition(atLeast: 1.6, timeout: 5)
        try await p.seek(to: 2.4, near: 0.05, timeout: 3)
        try await p.waitForPosition(atLeast: 3.0, timeout: 5)
        try await p.pause()
        let records = Array(p.frames!.records.dropFirst(before))
        // About 1.2 s of playing before the seek and 0.6 s after it, at 25 frames a second.
        try expect(records.count >= 30, "playing about 1.8 s of a 25 fps still scene handed on \(records.count) frames, expected about 45")
        for (earlier, later) in zip(records, records.dropFirst()) {
            try expect(later.presentationTime > earlier.presentationTime,
                       "frame times do not rise: \(format(earlier.presentationTime)) s then \(format(later.presentationTime)) s")
        }
        try expectStillPicture(p.frames!.latest, "the last frame handed on")
    }

    /// Fails unless `picture` is still.mp4's picture: 320x240, its colour in the middle.
    private static func expectStillPicture(_ picture: VideoFrame?, _ what: String) throws {
        guard let picture else { throw CheckFailure("\(what) is nil") }
        try expect(picture.size == VideoSize(width: 320, height: 240), "\(what) is \(picture.size), not 320x240")
        let expected = Int(FixtureClips.stillColor.dropFirst(2), radix: 16)!
        let (r, g, b, _) = picture.pixel(x: 160, y: 120)
        let wanted = [(expected >> 16) & 0xFF, (expected >> 8) & 0xFF, expected & 0xFF]
        let distance = zip([Int(r), Int(g), Int(b)], wanted).map { abs($0 - $1) }.max() ?? 0
        try expect(distance <= 12, "\(what) shows (\(r), \(g), \(b)) in the middle, expected about \(wanted)")
    }

    static let framesOrder = Check("picture.frames-order", ".frames delivers natural-size frames in presentation order, timestamps rising and matching the picture, across a pause and resume and a seek while playing") { context in
        let p = try context.player("frames.mp4", frames: true)
        try await playAcrossPauseAndSeek(p)
        let records = p.frames!.records
        try expect(records.count >= 50, "only \(records.count) frames delivered for 2.4 s of playback")
        try expectPresentationOrder(records.map { ($0.number, $0.presentationTime) })
        for (index, record) in records.enumerated() {
            try expect(record.size == VideoSize(width: 320, height: 240), "frame \(index) is \(record.size), expected the natural 320x240")
        }
        try expectOwnTimes(records)
        try expectFramesAcrossSeek(records.compactMap(\.number))
    }

    /// Where `seeksWhilePlaying` seeks, in turn: onto keyframes (frames.mp4 has one every 2 s)
    /// and between them, back and forth.
    static let seeksWhilePlayingTargets = [6.0, 2.52, 8.0, 4.4, 0.96, 7.2]

    static let seeksWhilePlaying = Check(
        "picture.seeks-while-playing",
        ".frames while playing through seeks back and forth, onto keyframes and between them, each 30-115 ms after the last completed (the decoder still busy): each completes on the target's picture (up to 3 frames on), and every picture handed on carries its own time, none from before a seek stamped after it"
    ) { context in
        let p = try context.player("frames.mp4", frames: true)
        try await p.prepare()
        try await p.play()
        try await p.waitForPosition(atLeast: 0.5, timeout: 6)
        for (index, target) in seeksWhilePlayingTargets.enumerated() {
            try await p.seek(to: target, near: 0.15)
            let shown = try p.thumbnailFrameNumber("after the seek to \(format(target)) s while playing")
            let targetFrame = FramePattern.frame(at: target)
            try expect(shown >= targetFrame && shown <= targetFrame + 3,
                       "a seek to \(format(target)) s while playing completed on frame \(shown), expected \(targetFrame) to \(targetFrame + 3)")
            // Playing on for a moment before the next seek, a different one each time.
            try await observe(for: 0.03 + 0.017 * Double(index * 5 % 6))
        }
        try await observe(for: 0.3)
        try await p.pause()
        try expectOwnTimes(p.frames!.records)
    }

    /// How long the handler of `slowHandler` takes for each picture: longer than frames.mp4's
    /// 40 ms between pictures, so the engine must leave pictures out.
    static let slowHandlerWork = 0.1

    static let slowHandler = Check(
        "picture.slow-handler",
        "a .frames handler slower than the pictures come (100 ms each, 40 ms apart): the engine leaves pictures out, never hands over a broken one: every picture is whole, with its frame's own time, in order; the position and the pictures keep real time"
    ) { context in
        let collector = FrameCollector()
        let p = try context.player(url: try context.fixture("frames.mp4")) { options in
            options.videoOutput = .frames(viewport: nil) { frame in
                collector.handler(frame)
                // The app's own work on the picture (uploading, drawing), done on the
                // engine's thread as the contract allows.
                usleep(UInt32(slowHandlerWork * 1_000_000))
            }
        }
        try await p.prepare()
        try await p.play()
        try await p.waitForPosition(atLeast: 0.5, timeout: 5)
        let wall0 = monotonicSeconds(), position0 = p.position, mark = collector.count
        try await observe(for: 2.5)
        let wall = monotonicSeconds() - wall0, position1 = p.position
        try await p.pause()
        let pace = (position1 - position0) / wall
        try expect(abs(pace - 1) <= 0.1, "the position advanced \(format(position1 - position0)) s in \(format(wall)) s: \(format(pace))x, expected 1x ± 10%")
        let records = collector.records
        let during = Array(records[mark...])
        let expectedCount = Int(wall / slowHandlerWork / 2)
        try expect(during.count >= expectedCount, "\(during.count) pictures in \(format(wall)) s, expected at least \(expectedCount) (half of what the handler can take)")
        try expectOwnTimes(records)
        try expectPresentationOrder(records.map { ($0.number, $0.presentationTime) })
        if let first = during.first?.number, let last = during.last?.number, let firstTime = during.first?.arrival, let lastTime = during.last?.arrival, lastTime > firstTime {
            let picturePace = Double(last - first) / FramePattern.frameRate / (lastTime - firstTime)
            try expect(abs(picturePace - 1) <= 0.15, "the pictures went from frame \(first) to \(last) in \(format(lastTime - firstTime)) s: \(format(picturePace))x, expected 1x ± 15%")
        }
    }

    /// Where `playAcrossPauseAndSeek` seeks to while playing.
    static let seekWhilePlayingTarget = 2.4

    /// Plays frames.mp4 (prepared here) to 1 s, pauses and at once plays again (as a
    /// play/pause toggle does), plays to 1.6 s, seeks to `seekWhilePlayingTarget` while
    /// playing, plays to 3.2 s and pauses: about 60 frames.
    static func playAcrossPauseAndSeek(_ p: CheckPlayer) async throws {
        try await p.prepare()
        try await p.play()
        try await p.waitForPosition(atLeast: 1.0, timeout: 6)
        try await p.pause()
        try await p.play()
        try await p.waitForPosition(atLeast: 1.6, timeout: 6)
        try await p.seek(to: seekWhilePlayingTarget)
        try await p.waitForPosition(atLeast: 3.2, timeout: 6)
        try await p.pause()
    }

    /// Fails unless the frame numbers delivered by `playAcrossPauseAndSeek` go on from the
    /// seek target's frame itself, with few gaps before and after the seek.
    static func expectFramesAcrossSeek(_ numbers: [Int]) throws {
        let targetFrame = FramePattern.frame(at: seekWhilePlayingTarget)
        guard let landing = numbers.firstIndex(where: { $0 >= targetFrame }) else {
            throw CheckFailure("no frame from the seek target \(format(seekWhilePlayingTarget)) s on was delivered (the last: \(numbers.last ?? -1))")
        }
        try expect(numbers[landing] == targetFrame,
                   "after the seek to \(format(seekWhilePlayingTarget)) s while playing the first frame delivered from there is \(numbers[landing]), expected \(targetFrame)")
        try expectFewGaps(Array(numbers[..<landing]))
        try expectFewGaps(Array(numbers[landing...]))
    }

    static let interlaced = Check(
        "picture.interlaced",
        "an interlaced-coded clip (interlaced.mp4: H.264, top field first, 25 frames a second): .frames hands on one picture per coded frame, as decoded, not one per field: over 1.5 s of playing the frame numbers rise by one from picture to picture and the times 40 ms apart"
    ) { context in
        let p = try context.player("interlaced.mp4", frames: true)
        try await p.prepare()
        let mark = p.frames!.count
        try await p.play()
        try await observe(for: 1.5)
        try await p.pause()
        let pictures = p.frames!.records.dropFirst(mark).filter { $0.number != nil }
        try expect(pictures.count >= 30, "\(pictures.count) numbered pictures in 1.5 s of playing, expected about 37")
        for (previous, next) in zip(pictures, pictures.dropFirst()) {
            if next.number == previous.number, previous.presentationTime == next.presentationTime { continue }  // the prepared picture again
            try expect(next.number! - previous.number! == 1 || next.number! - previous.number! == 2,
                       "frame \(previous.number!) at \(format(previous.presentationTime)) s, then frame \(next.number!) at \(format(next.presentationTime)) s: one picture per coded frame is expected (a field rate doubles the pictures)")
            let step = next.presentationTime - previous.presentationTime
            try expect(step >= 0.035, "pictures \(format(step)) s apart (frames \(previous.number!) and \(next.number!)), expected 40 ms: one picture per coded frame")
        }
    }

    // MARK: - picture.after-picture-ends

    /// The last frame of video-ends-early.mp4, whose picture ends a second before its sound.
    static let lastFrameBeforeSoundEnds = 49

    static let afterPictureEnds = Check(
        "picture.after-picture-ends",
        "where the picture ends before the sound (video-ends-early.mp4: frames 0-49, the last at 1.96 s; sound to 3 s) the last picture stays: opened at 2.5 s, after paused seeks to 2.2 s and 2.0 s and while playing on past 2 s, the thumbnail is frame 49, stamped from its own time to the position; the position goes on to the end"
    ) { context in
        let p = try context.player("video-ends-early.mp4")
        p.player.currentPlaybackTime = 2.5
        try await p.prepare()
        try expect(abs(p.position - 2.5) <= SeekChecks.landing, "prepared after a seek to 2.5 s, the position is \(format(p.position)) s")
        try expectLastPicture(p, "prepared at 2.5 s")
        try await p.seek(to: 1.0)
        let back = try p.thumbnailFrameNumber("after a seek back to 1 s")
        try expect(back == 25, "after a seek back to 1 s the picture is frame \(back), expected 25")
        for target in [2.2, 2.0] {
            let reached = try await p.seek(to: target)
            try expect(abs(reached - target) <= SeekChecks.landing, "a paused seek to \(format(target)) s reported .seekCompleted(\(format(reached))): the sound goes on there")
            try expectLastPicture(p, "after a paused seek to \(format(target)) s")
        }
        try await p.seek(to: 1.5)
        let mark = p.mark
        try await p.play()
        try await p.waitForPosition(atLeast: 2.3, timeout: 5)
        try expectLastPicture(p, "playing at \(format(p.position)) s")
        try await p.waitForEnd(since: mark, timeout: 5)
    }

    /// Fails unless the thumbnail is video-ends-early.mp4's last frame.
    private static func expectLastPicture(_ p: CheckPlayer, _ when: String) throws {
        let last = lastFrameBeforeSoundEnds
        let shown = try p.thumbnailFrameNumber(when)
        try expect(shown == last, "\(when) the picture is frame \(shown), expected the last one, \(last) (the picture ends at 2 s, the sound goes on to 3 s)")
        // Its time: its own, or the time it is held at (the position), nothing outside those.
        if let picture = p.player.thumbnailAtCurrentTime() {
            let own = FramePattern.time(ofFrame: last), position = p.position
            try expect(picture.presentationTime >= own - 0.021 && picture.presentationTime <= position + 0.021,
                       "\(when) the thumbnail of frame \(last) says presentationTime \(format(picture.presentationTime)), expected from its own time, \(format(own)) s, to the position, \(format(position)) s")
        }
    }

    /// Fails unless every delivered picture carries a readable frame number (a broken one does
    /// not) and its own frame's time (±21 ms).
    static func expectOwnTimes(_ records: [FrameCollector.Record]) throws {
        for (index, record) in records.enumerated() {
            guard let number = record.number else {
                throw CheckFailure("delivered picture \(index) (time \(format(record.presentationTime))) carries no readable frame number")
            }
            try expect(abs(record.presentationTime - FramePattern.time(ofFrame: number)) <= 0.021,
                       "frame \(number) came with presentationTime \(format(record.presentationTime)), expected \(format(FramePattern.time(ofFrame: number)))")
        }
    }

    /// Fails unless the pictures' times rise (the first picture may be presented again when
    /// playback starts; nothing else may repeat).
    static func expectPresentationOrder(_ pictures: [(number: Int?, time: TimeInterval)]) throws {
        for (index, (previous, next)) in zip(pictures, pictures.dropFirst()).enumerated() {
            if index == 0, next.time == previous.time { continue }
            try expect(next.time > previous.time,
                       "presentation times do not rise: frame \(previous.number ?? -1) at \(format(previous.time)) then frame \(next.number ?? -1) at \(format(next.time))")
        }
    }

    /// Fails when more than a tenth of the steps between frame numbers skip a frame.
    static func expectFewGaps(_ numbers: [Int]) throws {
        let skipped = zip(numbers, numbers.dropFirst()).filter { $1 - $0 > 1 }.count
        try expect(skipped <= numbers.count / 10, "\(skipped) gaps in \(numbers.count) frames at normal speed")
    }
}

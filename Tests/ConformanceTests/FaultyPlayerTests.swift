import Foundation
import PlaybackBackends
import PlaybackConformance
import PlaybackKit
import Testing

/// One deliberate fault, the checks run against it, and the ones that must fail.
struct FaultCase: Sendable, CustomTestStringConvertible {
    let fault: FaultyPlayer.Fault
    /// The checks run: those that must fail and a sample of unrelated ones that must pass.
    let sample: [String]
    let mustFail: Set<String>
    /// Text every failure's reason must contain.
    let reasonContains: String
    /// Tells this case from another one of the same fault.
    var label: String? = nil

    var testDescription: String { label.map { "\(fault.rawValue) (\($0))" } ?? fault.rawValue }

    static let all: [FaultCase] = [
        FaultCase(fault: .jumpsAheadAfterResume,
                  sample: ["time.resume-no-jump", "time.pause-holds", "time.smooth", "lifecycle.prepared"],
                  mustFail: ["time.resume-no-jump"], reasonContains: "leapt ahead"),
        FaultCase(fault: .reportsEndForBrokenFile,
                  sample: ["bad-input.empty", "bad-input.random", "bad-input.nonexistent", "bad-input.scheme-ftp",
                           "lifecycle.prepared", "end.finished-once"],
                  mustFail: ["bad-input.empty", "bad-input.random", "bad-input.nonexistent", "bad-input.scheme-ftp"],
                  reasonContains: "finished(playbackEnded)"),
        FaultCase(fault: .ignoresSeekBeforePrepare,
                  sample: ["seek.before-prepare", "seek.paused-shows-frame", "seek.negative", "lifecycle.prepared"],
                  mustFail: ["seek.before-prepare"], reasonContains: "prepared after a seek to 4 s"),
        FaultCase(fault: .positionRunsBackwards,
                  sample: ["time.smooth", "time.pause-holds", "lifecycle.prepared", "seek.paused-shows-frame"],
                  mustFail: ["time.smooth"], reasonContains: "went back"),
        FaultCase(fault: .neverCompletesSeeks,
                  sample: ["seek.accurate-frame", "seek.storm", "seek.negative", "lifecycle.prepared", "time.smooth"],
                  mustFail: ["seek.accurate-frame", "seek.storm", "seek.negative"], reasonContains: ".seekCompleted"),
        FaultCase(fault: .blocksInSeek,
                  sample: ["seek.negative", "lifecycle.autoplay-off"],
                  mustFail: ["seek.negative"], reasonContains: "hang"),
        FaultCase(fault: .slowThumbnail,
                  sample: ["api.prompt-during-prepare", "lifecycle.prepared", "picture.natural-size"],
                  mustFail: ["api.prompt-during-prepare"], reasonContains: "thumbnailAtCurrentTime() took"),
        FaultCase(fault: .swapsFramePairs,
                  sample: ["picture.frames-order", "picture.natural-size", "picture.anamorphic"],
                  mustFail: ["picture.frames-order"], reasonContains: "do not rise"),
        FaultCase(fault: .endsTwice,
                  sample: ["end.finished-once", "lifecycle.prepared", "seek.negative"],
                  mustFail: ["end.finished-once"], reasonContains: "exactly one"),
        FaultCase(fault: .stopsSilently,
                  sample: ["lifecycle.stop", "lifecycle.state-order", "lifecycle.prepared", "lifecycle.autoplay-on"],
                  mustFail: ["lifecycle.stop", "lifecycle.state-order"], reasonContains: "userExited"),
        FaultCase(fault: .ignoresRate,
                  sample: ["rate.double", "volume.round-trip", "lifecycle.prepared"],
                  mustFail: ["rate.double"], reasonContains: "expected 2x"),
        FaultCase(fault: .leaksAThreadPerPlayer,
                  sample: ["stress.setup-teardown", "lifecycle.prepared"],
                  mustFail: ["stress.setup-teardown"], reasonContains: "threads, baseline"),
        FaultCase(fault: .slowCallsUnderLoad,
                  sample: ["stress.state-storm", "lifecycle.prepared"],
                  mustFail: ["stress.state-storm"], reasonContains: "playbackVolume"),
        FaultCase(fault: .playsOneAtATime,
                  sample: ["stress.many-at-once", "lifecycle.prepared", "time.smooth"],
                  mustFail: ["stress.many-at-once"], reasonContains: "expected 1x"),
        FaultCase(fault: .leaksInnerWhenReleased,
                  sample: ["stress.released-without-shutdown", "lifecycle.shutdown"],
                  mustFail: ["stress.released-without-shutdown"], reasonContains: "threads, baseline"),
        FaultCase(fault: .slowStart,
                  sample: ["format.h264-aac-mp4", "lifecycle.prepared", "time.smooth"],
                  mustFail: ["format.h264-aac-mp4"], reasonContains: "after play(), expected within 300 ms"),
        FaultCase(fault: .ignoresVolume,
                  sample: ["volume.round-trip", "rate.double", "lifecycle.prepared"],
                  mustFail: ["volume.round-trip"], reasonContains: "the engine reports"),
        FaultCase(fault: .countsNoBytes,
                  sample: ["http.open", "lifecycle.prepared"],
                  mustFail: ["http.open"], reasonContains: "numberOfBytesTransferred is 0"),
        FaultCase(fault: .ignoresScalingMode,
                  sample: ["picture.scaling-aspect-fit", "picture.scaling-aspect-fill", "picture.scaling-fill", "picture.scaling-none"],
                  mustFail: ["picture.scaling-aspect-fill", "picture.scaling-fill", "picture.scaling-none"], reasonContains: "probes wrong"),
        FaultCase(fault: .keepsFirstNaturalSize,
                  sample: ["picture.size-change", "picture.natural-size", "picture.anamorphic"],
                  mustFail: ["picture.size-change"], reasonContains: "480x360"),
        FaultCase(fault: .assumesFourByThree,
                  sample: ["picture.anamorphic", "picture.natural-size"],
                  mustFail: ["picture.anamorphic"], reasonContains: "expected 480x240"),
        FaultCase(fault: .stretchesHeightOfNarrowPixels,
                  sample: ["picture.anamorphic", "picture.natural-size"],
                  mustFail: ["picture.anamorphic"], reasonContains: "expected 320x240"),
        FaultCase(fault: .staleThumbnail,
                  sample: ["picture.thumbnail-current", "picture.natural-size"],
                  mustFail: ["picture.thumbnail-current"], reasonContains: "the thumbnail is frame"),
        FaultCase(fault: .dropsPictureAfterVideoEnds,
                  sample: ["picture.after-picture-ends", "picture.thumbnail-current", "seek.accurate-frame"],
                  mustFail: ["picture.after-picture-ends"], reasonContains: "prepared at 2.5 s: thumbnailAtCurrentTime() is nil"),
        FaultCase(fault: .dropsHTTPHeaders,
                  sample: ["http.headers", "http.open"],
                  mustFail: ["http.headers"], reasonContains: "lacks"),
        FaultCase(fault: .ignoresReadAheadCap,
                  sample: ["http.read-ahead-cap", "http.open"],
                  mustFail: ["http.read-ahead-cap"], reasonContains: "over the bytes played"),
        FaultCase(fault: .trustsRemoteReferences,
                  sample: ["http.local-reference", "http.hls-play-seek"],
                  mustFail: ["http.local-reference"], reasonContains: "file://"),
        FaultCase(fault: .hidesStalls,
                  sample: ["http.stall-load-state", "http.open"],
                  mustFail: ["http.stall-load-state"], reasonContains: "stalled"),
        // Without .stalled the slow source either times out waiting for it or plays to its end
        // first: the check's reason names the source either way.
        FaultCase(fault: .hidesStalls,
                  sample: ["http.slow-source", "http.open"],
                  mustFail: ["http.slow-source"], reasonContains: "source", label: "slow source"),
        FaultCase(fault: .playableBehindPosition,
                  sample: ["http.range-seek", "http.open"],
                  mustFail: ["http.range-seek"], reasonContains: "lies behind the position"),
        FaultCase(fault: .waitsForeverOnSilentServers,
                  sample: ["http.unresponsive-open", "http.unresponsive-play", "http.open"],
                  mustFail: ["http.unresponsive-open", "http.unresponsive-play"], reasonContains: "no .finished within"),
        FaultCase(fault: .mislabelsNetworkErrors,
                  sample: ["http.errors", "http.tls-untrusted", "http.redirect"],
                  mustFail: ["http.errors", "http.tls-untrusted"], reasonContains: "code engine"),
        FaultCase(fault: .dropsLastColumn,
                  sample: ["picture-size.tiny", "picture.frames-order", "picture.natural-size"],
                  mustFail: ["picture-size.tiny", "picture.frames-order"], reasonContains: "expected"),
        FaultCase(fault: .stampsStalePictureAtSeek,
                  sample: ["picture.seeks-while-playing", "picture.natural-size"],
                  mustFail: ["picture.seeks-while-playing"], reasonContains: "came with presentationTime"),
        FaultCase(fault: .dropsLikeFrames,
                  sample: ["picture.still-scene", "picture.frames-order"],
                  mustFail: ["picture.still-scene"], reasonContains: "still scene handed on"),
        FaultCase(fault: .leavesAlphaZero,
                  sample: ["picture-size.tiny", "picture.natural-size"],
                  mustFail: ["picture-size.tiny"], reasonContains: "alpha 0"),
        FaultCase(fault: .ignoresTrackSelection,
                  sample: ["tracks.select-before-prepare", "tracks.table", "metadata.tags"],
                  mustFail: ["tracks.select-before-prepare"], reasonContains: "selected"),
        FaultCase(fault: .lateCues,
                  sample: ["subtitles.embedded", "tracks.table", "chapters.list"],
                  mustFail: ["subtitles.embedded"], reasonContains: "SubRip"),
        FaultCase(fault: .decodesCueTextTwice,
                  sample: ["subtitles.utf16", "subtitles.legacy-encoding", "tracks.table"],
                  mustFail: ["subtitles.utf16", "subtitles.legacy-encoding"], reasonContains: ".subtitleChanged texts"),
        FaultCase(fault: .dropsStyledWebVTT,
                  sample: ["subtitles.webvtt-style", "subtitles.external"],
                  mustFail: ["subtitles.webvtt-style"], reasonContains: "subtitle:2"),
        FaultCase(fault: .neverEndsWithSubtitles,
                  sample: ["subtitles.to-the-end", "end.finished-once", "subtitles.embedded"],
                  mustFail: ["subtitles.to-the-end"], reasonContains: "no .finished(.playbackEnded)"),
        FaultCase(fault: .doublesPictures,
                  sample: ["picture.interlaced", "picture.natural-size"],
                  mustFail: ["picture.interlaced"], reasonContains: "one picture per coded frame"),
        FaultCase(fault: .stampsFirstFrameLate,
                  sample: ["format.first-picture", "lifecycle.prepared"],
                  mustFail: ["format.first-picture"], reasonContains: "expected 0 (the media's start)"),
        FaultCase(fault: .ignoresDisplayMatrix,
                  sample: ["picture-size.rotated", "picture-size.tiny", "lifecycle.prepared"],
                  mustFail: ["picture-size.rotated"], reasonContains: "upright"),
        FaultCase(fault: .listsCoverAsVideo,
                  sample: ["tracks.cover-art", "tracks.table"],
                  mustFail: ["tracks.cover-art"], reasonContains: "Album cover"),
        FaultCase(fault: .dropsMetadata,
                  sample: ["metadata.tags", "chapters.list"],
                  mustFail: ["metadata.tags"], reasonContains: "metadata is"),
        FaultCase(fault: .shiftsChapters,
                  sample: ["chapters.list", "metadata.tags"],
                  mustFail: ["chapters.list"], reasonContains: "differs from"),
        FaultCase(fault: .slowStart,
                  sample: ["queue.gapless", "queue.repeat-all"],
                  mustFail: ["queue.gapless"], reasonContains: "gaps at the boundaries", label: "queue"),
        FaultCase(fault: .namesNoBackend,
                  sample: ["fallback.backend-name", "fallback.unknown-name", "fallback.after-failure", "lifecycle.prepared"],
                  mustFail: ["fallback.backend-name", "fallback.unknown-name"], reasonContains: "backendName is \"\""),
        FaultCase(fault: .leaksAThreadWhenItFails,
                  sample: ["fallback.no-leak", "fallback.engine-fails", "lifecycle.prepared"],
                  mustFail: ["fallback.no-leak"], reasonContains: "threads, baseline"),
        FaultCase(fault: .swapsYUVFramePairs,
                  sample: ["yuv.frames-order", "yuv.picture"],
                  mustFail: ["yuv.frames-order"], reasonContains: "do not rise"),
        FaultCase(fault: .yuvOneFrameLate,
                  sample: ["yuv.paused-seek", "yuv.frames-order", "yuv.picture"],
                  mustFail: ["yuv.paused-seek"], reasonContains: "frame 50"),
        FaultCase(fault: .yuvDropsLastColumn,
                  sample: ["yuv-size.tiny", "yuv.frames-order", "yuv.anamorphic"],
                  mustFail: ["yuv-size.tiny", "yuv.frames-order", "yuv.anamorphic"], reasonContains: "expected"),
        FaultCase(fault: .swapsChromaPlanes,
                  sample: ["yuv.picture", "yuv.frames-order", "yuv.paused-seek"],
                  mustFail: ["yuv.picture"], reasonContains: "U, V in the bottom quarter"),
        FaultCase(fault: .firstPictureNearStart,
                  sample: ["seek.first-frames", "seek.accurate-frame", "seek.negative"],
                  mustFail: ["seek.first-frames"], reasonContains: "shows frame 3, expected frame 1"),
        FaultCase(fault: .landsOnNextKeyframe,
                  sample: ["seek.long-gop", "seek.accurate-frame", "seek.negative"],
                  mustFail: ["seek.long-gop"], reasonContains: "a paused seek to 3.3 s reported .seekCompleted(10"),
        FaultCase(fault: .expandsRangeAgain,
                  sample: ["pixel-format.h264-full-range-mp4", "pixel-format.h264-yuv420p10-mp4", "pixel-format.png-rgb24-mov", "yuv-pixel-format.h264-full-range-mp4"],
                  mustFail: ["pixel-format.h264-full-range-mp4"], reasonContains: "expected grey 40"),
        FaultCase(fault: .yuvFlipsRange,
                  sample: ["yuv-pixel-format.h264-full-range-mp4", "pixel-format.h264-full-range-mp4"],
                  mustFail: ["yuv-pixel-format.h264-full-range-mp4"], reasonContains: "says fullRange true"),
        FaultCase(fault: .queuesEveryPicture,
                  sample: ["picture.slow-handler", "picture.frames-order"],
                  mustFail: ["picture.slow-handler"], reasonContains: "the pictures went from frame"),
        FaultCase(fault: .stepsTwoFrames,
                  sample: ["seek.frame-step", "seek.accurate-frame", "seek.negative"],
                  mustFail: ["seek.frame-step"], reasonContains: "stepFrames(1) from frame 25 shows frame 27"),
        FaultCase(fault: .yuvDisplaysStoredSize,
                  sample: ["yuv.anamorphic", "yuv.frames-order"],
                  mustFail: ["yuv.anamorphic"], reasonContains: "displaySize is 320x240"),
        FaultCase(fault: .endsOnTimeWhilePaused,
                  sample: ["end.pause-near-end", "end.finished-once", "time.pause-holds"],
                  mustFail: ["end.pause-near-end"], reasonContains: "while paused"),
    ]
}

/// The real backend the faulty players wrap: mpv when compiled in, else the first one.
func backendForFaults() -> (any PlaybackBackend)? {
    PlaybackBackends.registerBuiltIns()
    return Backends.backend(named: "mpv") ?? Backends.all.first
}

extension ConformanceRuns {
    /// Each deliberately faulty player fails exactly the checks it should, and passes the rest
    /// of its sample: proof that every family of checks can fail.
    @Suite(.enabled(if: backendForFaults() != nil, "needs a compiled-in backend"))
    struct FaultyPlayerTests {
        @Test("a faulty player fails exactly the checks it should", arguments: FaultCase.all)
        func failsExactly(_ faultCase: FaultCase) async throws {
            try await expectCaught(faultCase, wrapping: #require(backendForFaults()))
        }
    }
}

/// Runs `faultCase`'s sample against the faulty player over `backend` and expects exactly its
/// checks to fail, each for its reason. Another check that fails is run again (the whole
/// suite's attempts in all): one that passes then is written out as a flake of the engine
/// underneath, for its race to be found, instead of failing the test.
func expectCaught(_ faultCase: FaultCase, wrapping backend: any PlaybackBackend) async throws {
    let fixtures = try TestFixtures.ensure()
    let fault = faultCase.fault
    let suite = ConformanceSuite(name: "\(backend.name)+\(fault.rawValue)", fixtures: fixtures) { url, options in
        try FaultyPlayer.make(fault, backend: backend, url: url, options: options)
    }
    let report = await suite.run(only: Set(faultCase.sample))
    #expect(report.results.count == faultCase.sample.count)
    var failed = Set(report.failures.map(\.name))
    // Another check that failed runs again, up to the suite's attempts: a pass there is a
    // flake of the engine underneath, written out, not a fault the player was made with.
    let others = failed.subtracting(faultCase.mustFail)
    if !others.isEmpty {
        let retried = await suite.run(only: others, attempts: ConformanceRuns.attempts - 1)
        let recovered = others.subtracting(retried.failures.map(\.name))
        for failure in report.failures where recovered.contains(failure.name) {
            let line = "flaky: \(report.backend)/\(failure.name) (passed when run again): \(failure.outcome.reason ?? "")\n"
            FileHandle.standardError.write(Data(line.utf8))
        }
        failed.subtract(recovered)
    }
    #expect(failed == faultCase.mustFail, "\(fault.rawValue): failed \(failed.sorted()), expected \(faultCase.mustFail.sorted())\n\(report.renderText())")
    #expect(report.skips.isEmpty, "\(fault.rawValue): skipped \(report.skips.map(\.name))")
    for failure in report.failures where faultCase.mustFail.contains(failure.name) {
        #expect(failure.outcome.reason?.contains(faultCase.reasonContains) == true,
                "\(failure.name) failed for another reason: \(failure.outcome.reason ?? "")")
    }
}

import PlaybackConformance

/// The checks xine-lib 1.2.13 cannot pass, each with the reason in xine's own terms (the
/// README, "What xine cannot do", has the details). The runner shows them as FAIL with this
/// reason; only other failures fail the run, and one that passes is pointed out.
let knownFailures: [ConformanceCommand.KnownFailure] = [
    ConformanceCommand.KnownFailure(
        backend: "xine", check: "picture.size-change",
        reason: "xine's ffmpeg video decoder keeps the video size of the first picture (XINE_STREAM_INFO_VIDEO_WIDTH/HEIGHT stay 320x240, no XINE_EVENT_FRAME_FORMAT_CHANGE for H.264) and the raw output passes only the decoder's padded planes (512x400 for the 480x360 half, without the crop): the new size cannot be told"),
    ConformanceCommand.KnownFailure(
        backend: "xine", check: "picture-size.tiny",
        reason: "xine plays no FFV1 in Matroska (5x3.mkv): xine_open succeeds, XINE_STREAM_INFO_VIDEO_HANDLED is 0 and no video codec is named; the H.264 and VP9 clips of the sweep pass"),
    ConformanceCommand.KnownFailure(
        backend: "xine", check: "picture-size.odd",
        reason: "xine plays no FFV1 in Matroska (97x61.mkv, 641x359.mkv), as picture-size.tiny; the VP9 clips of the sweep pass"),
    ConformanceCommand.KnownFailure(
        backend: "xine", check: "format.mpeg2-mp3-ts",
        reason: "xine's MPEG-TS demuxer seeks by byte rate: xine_play(stream, 0, 2000) in this MPEG-2 stream ends it (XINE_EVENT_UI_PLAYBACK_FINISHED), xine_get_pos_length meanwhile reporting a time of some 22 hours"),
    ConformanceCommand.KnownFailure(
        backend: "xine", check: "format.theora-vorbis-ogg",
        reason: "xine's Ogg demuxer cannot seek in this Theora stream: xine_play(stream, 0, 2000) ends it (XINE_EVENT_UI_PLAYBACK_FINISHED) or lands a second early"),
    ConformanceCommand.KnownFailure(
        backend: "xine", check: "format.opus-ogg",
        reason: "xine's Ogg demuxer gives Opus neither a length nor a time: xine_get_pos_length reports length 0 and time 0 while it plays the sound"),
]

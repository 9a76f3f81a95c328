import Glibc
import PlaybackConformance
import XinePlayback

// The conformance suite against the xine backend, with the command line of
// `mediaplay conformance`: `swift run xine-conformance [--check NAME]... [--json]`.
// The checks xine cannot pass are listed with the reason (README, "What xine cannot do").
exit(await ConformanceCommand.run(backends: [XineBackend()], expectations: expectations))

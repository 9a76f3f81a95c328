#!/usr/bin/env bash
# Makes the media the tests and the conformance suite use into a folder (default: Fixtures/
# at the top of the checkout). The recipe itself ships inside the PlaybackConformance library
# (Conformance/Fixtures/: the ffmpeg CLI and lavfi sources, the subtitle files), so that any
# package can make the same media with FixtureRecipe.make(in:); this script runs it through
# `mediaplay conformance --make-fixtures`. A stamp makes later runs return at once.
#
# The tests and mediaplay make the fixtures themselves when they need them; this script is
# for making them ahead of time, or into another folder.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/Fixtures}
case $out in /*) ;; *) out=$PWD/$out ;; esac
cd "$here"
swift build --product mediaplay >/dev/null
"$(swift build --product mediaplay --show-bin-path)/mediaplay" conformance --make-fixtures --fixtures "$out" >/dev/null

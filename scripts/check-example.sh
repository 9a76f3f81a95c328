#!/usr/bin/env bash
# The worked adapter example: builds Examples/XineAdapter (a PlaybackBackend over xine-lib
# 1.2, a package of its own that depends on this one by path) in release, and runs the
# conformance suite against it through its runner, with this checkout's fixtures.
#
#   scripts/check-example.sh                          every family the adapter implements (below)
#   scripts/check-example.sh --check NAME... [--json] the runner's options: those checks (the
#                                                     gate runs --check lifecycle --check bad-input)
#   scripts/check-example.sh --all [OPTION]...        the whole suite (about 5 minutes), with
#                                                     the runner's options (--attempts, --strict)
#
# Without --check it runs every family the adapter implements: all but http (a minute more,
# half of it xine's network limits; the adapter refuses HLS, whose xine input crashed, see the
# example's README), and tracks, subtitles, metadata and chapters
# (the adapter implements none of them beyond tags). Examples/XineAdapter/README.md has the
# whole suite's matrix.
#
# The exit status is the runner's: 0 when every check passed or failed only as the example's
# expectations allow (Examples/XineAdapter/README.md, "What xine cannot do").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
families=(lifecycle time seek end picture rate volume bad-input api picture-size format pixel-format stress fallback queue)
arguments=("$@")
if [ "${1:-}" = "--all" ]; then
  arguments=("${@:2}")
elif ! printf '%s\n' "$@" | grep -q -- '^--check'; then
  for family in "${families[@]}"; do arguments+=(--check "$family"); done
fi
cd "$root/Examples/XineAdapter"
swift build -c release --product xine-conformance
.build/release/xine-conformance --fixtures "$root/Fixtures" "${arguments[@]}"

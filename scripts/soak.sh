#!/usr/bin/env bash
# The soak (not part of every CI run): a 10-minute file played to the end with the position
# held within 100 ms of the wall clock, and 2,000 setup/teardown cycles, per backend; prints
# threads, fds and resident memory before and after, and the worst drift.
#
#   scripts/soak.sh [BACKEND]        every compiled-in backend, or one
#
# Takes about 11 minutes a backend. The long clip (320x240 25 fps H.264 + AAC, 10 min) is made
# once into Fixtures/soak/ with the ffmpeg CLI.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/make-fixtures.sh
mkdir -p Fixtures/soak
media=Fixtures/soak/ten-minutes.mp4
if [ ! -s "$media" ]; then
  ffmpeg -nostdin -hide_banner -loglevel error -y -f lavfi -i "testsrc2=size=320x240:rate=25" \
    -f lavfi -i "sine=frequency=440:sample_rate=48000" -t 600 -c:v libx264 -preset ultrafast -g 50 \
    -pix_fmt yuv420p -c:a aac -b:a 64k "$media.part.mp4"
  mv "$media.part.mp4" "$media"
fi
export PLAYBACK_SOAK=1 PLAYBACK_SOAK_MEDIA="$PWD/$media"
[ $# -gt 0 ] && export PLAYBACK_SOAK_BACKEND=$1
swift test --no-parallel --filter SoakTests 2>&1 | grep -E "^soak:|✔|✘|passed|failed" 

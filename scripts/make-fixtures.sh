#!/usr/bin/env bash
# Makes the media the tests and the conformance suite use, with the ffmpeg CLI and lavfi
# sources, into a folder (default: Fixtures/ at the top of the checkout). Runs once: a stamp
# with this script's checksum makes later runs return at once.
#
# Frame-numbered clips carry their frame number N (0-based, 25 fps) as 16 bits in the top
# band: bit i (least significant first) is column i of 16 equal columns, light for 1 and dark
# for 0. Below it is mid grey; the bottom quarter is red on the left half, blue on the right.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/Fixtures}
mkdir -p "$out"
# One run at a time: another waits here, then finds the stamp and returns.
exec 9>"$out/.lock"
flock 9
sum=$(cat "$0" "$here"/scripts/fixtures/*.sh | sha256sum | cut -c1-16)
[ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$sum" ] && exit 0
command -v ffmpeg >/dev/null || { echo "make-fixtures: ffmpeg is not installed (apt-get install -y ffmpeg)" >&2; exit 1; }

ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }

# The numbered picture for a W x H source: geq reads N, X, Y, W, H per pixel.
pattern() {
  local w=$1 h=$2
  local band="lt(Y,H/4)" bottom="gte(Y,3*H/4)" left="lt(X,W/2)"
  local bit="mod(floor(N/pow(2,floor(X*16/W))),2)"
  echo "geq=lum='if($band,if($bit,235,16),if($bottom,if($left,81,41),128))':cb='if($bottom,if($left,90,240),128)':cr='if($bottom,if($left,240,110),128)'"
}

video() {  # name seconds width height [extra output args...]
  local name=$1 seconds=$2 w=$3 h=$4; shift 4
  ff -f lavfi -i "color=c=gray:s=${w}x${h}:r=25:d=$seconds,format=yuv420p" \
     -vf "$(pattern "$w" "$h")" "$@" -c:v libx264 -preset veryfast -crf 12 -g 50 -bf 2 \
     -pix_fmt yuv420p -t "$seconds" "$out/$name"
}

with_audio() {  # name seconds width height
  local name=$1 seconds=$2 w=$3 h=$4
  ff -f lavfi -i "color=c=gray:s=${w}x${h}:r=25:d=$seconds,format=yuv420p" \
     -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=$seconds" \
     -vf "$(pattern "$w" "$h")" -c:v libx264 -preset veryfast -crf 12 -g 50 -bf 2 -pix_fmt yuv420p \
     -c:a aac -b:a 96k -ac 2 -t "$seconds" "$out/$name"
}

# 10 s, 320x240, 25 fps, H.264 + AAC: the main frame-numbered clip.
with_audio frames.mp4 10 320 240
# 3 s with audio: for checks that play to the end.
with_audio short.mp4 3 320 240
# Video only (no audio stream at all).
video video-only.mp4 6 320 240
# Audio only.
ff -f lavfi -i "sine=frequency=660:sample_rate=48000:duration=6" -c:a aac -b:a 96k -ac 2 "$out/audio-only.m4a"
# Non-square pixels: 320x240 stored, sample aspect 3:2, displayed 480x240.
video anamorphic.mp4 4 320 240 -aspect 2:1
# The size changes mid-stream: 2 s at 320x240, then 2 s at 480x360, in one MPEG-TS.
video part-a.ts 2 320 240 -bsf:v h264_mp4toannexb -f mpegts
video part-b.ts 2 480 360 -output_ts_offset 2 -bsf:v h264_mp4toannexb -f mpegts
cat "$out/part-a.ts" "$out/part-b.ts" > "$out/size-change.ts"
rm -f "$out/part-a.ts" "$out/part-b.ts"

# Broken inputs.
: > "$out/empty.mp4"
full=$(stat -c %s "$out/frames.mp4")
head -c $((full * 2 / 5)) "$out/frames.mp4" > "$out/truncated.mp4"   # moov is at the end: cut off
python3 - "$out/random.mp4" <<'PY'
import random, sys
random.seed(20261130)
open(sys.argv[1], "wb").write(bytes(random.getrandbits(8) for _ in range(256 * 1024)))
PY
printf 'This is a text file, not media.\n%.0s' {1..200} > "$out/text.mp4"
mkdir -p "$out/directory.mp4"

# The picture-size sweep and the format sweep, each in a subfolder of its own; the media of
# the network checks (HLS and a dense clip).
for part in "$here"/scripts/fixtures/*.sh; do
  # shellcheck source=/dev/null
  source "$part"
done

echo "$sum" > "$out/.stamp"

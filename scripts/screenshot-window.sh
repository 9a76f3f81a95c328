#!/usr/bin/env bash
# Takes a screenshot of the desktop player, `mediaplay play --window`, under its own Xvfb, for
# the README: a clip made here with lavfi (testsrc2 and a tone) plays into a 640x360 window,
# and the window is grabbed with xwd two seconds in, title bar text and seek bar included
# (the title goes below the picture, as there is no window manager to draw it).
#
# usage: scripts/screenshot-window.sh [OUT.png] [BACKEND]   (default docs/mediaplay-window.png,
# the first compiled-in backend); MEDIAPLAY names the tool (default .build/debug/mediaplay).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/docs/mediaplay-window.png}
backend=${2:-}
tool=${MEDIAPLAY:-$here/.build/debug/mediaplay}
[ -x "$tool" ] || { echo "screenshot-window: build the tool first (swift build --product mediaplay)" >&2; exit 1; }
for command in Xvfb xwd xwininfo xdpyinfo ffmpeg; do
  command -v "$command" >/dev/null || { echo "screenshot-window: $command is missing (scripts/setup.sh installs it)" >&2; exit 1; }
done

work=$(mktemp -d)
server="" player=""
cleanup() {
  [ -n "$player" ] && kill "$player" 2>/dev/null || true
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Xvfb picks a free display and writes its number once it accepts connections.
Xvfb -displayfd 3 -screen 0 1280x1024x24 -nolisten tcp 3>"$work/display" >/dev/null 2>&1 &
server=$!
for _ in $(seq 100); do [ -s "$work/display" ] && break; sleep 0.1; done
[ -s "$work/display" ] || { echo "screenshot-window: Xvfb did not start" >&2; exit 1; }
export DISPLAY=":$(tr -dc 0-9 <"$work/display")"
for _ in $(seq 100); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done

ffmpeg -nostdin -hide_banner -loglevel error -y -f lavfi -i "testsrc2=s=640x360:r=25:d=8" \
  -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=8" -c:v libx264 -preset veryfast \
  -pix_fmt yuv420p -c:a aac -shortest "$work/sample.mp4"

"$tool" play --window --size 640x360 --audio null ${backend:+--backend "$backend"} "$work/sample.mp4" \
  >/dev/null 2>"$work/player.log" &
player=$!

# The window whose title says two seconds have played.
window=""
for _ in $(seq 200); do
  window=$(xwininfo -root -tree | awk '/ — 00:00:02 \/ .* — mediaplay"/ { print $1; exit }')
  [ -n "$window" ] && break
  kill -0 "$player" 2>/dev/null || { cat "$work/player.log" >&2; exit 1; }
  sleep 0.05
done
[ -n "$window" ] || { echo "screenshot-window: no player window showed two seconds played" >&2; exit 1; }
title=$(xwininfo -id "$window" | sed -n 's/^xwininfo: Window id: [^"]*"\(.*\)"$/\1/p')
xwd -silent -id "$window" -out "$work/window.xwd"

# The picture, with its title drawn in a strip below it.
mkdir -p "$(dirname "$out")"
font=$(fc-match -f '%{file}' 'DejaVu Sans' 2>/dev/null || true)
printf '%s' "$title" >"$work/title.txt"
ffmpeg -nostdin -hide_banner -loglevel error -y -i "$work/window.xwd" -vf \
  "pad=iw:ih+28:0:0:0x202020,drawtext=textfile=$work/title.txt${font:+:fontfile=$font}:fontcolor=white:fontsize=15:x=8:y=h-22" \
  -frames:v 1 -pix_fmt rgb24 "$out"
echo "screenshot-window: $out ($title)"

#!/usr/bin/env bash
# Installs the Debian packages PlaybackKit builds, tests and runs with, where missing.
# Needs root (or sudo). Safe to run again: installs nothing when all is there.
set -euo pipefail
packages=(
  pkg-config libpng-dev ffmpeg
  # the conformance suite's https server (OpenSSL) and its test certificates (the openssl tool)
  libssl-dev openssl
  # GStreamer: core, base plugins (playbin, appsink, videoconvert), good and libav decoders,
  # bad (tsdemux, h264parse for MPEG-TS), ugly (asfdemux for Windows Media), X11 video sinks
  # for window output, tools
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-plugins-base
  gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly gstreamer1.0-libav gstreamer1.0-x
  gstreamer1.0-tools
  # FFmpeg engine: the libraries, SDL2 audio, X11 for window output, libass (and the DejaVu
  # fonts fontconfig finds) for drawn subtitles
  libavformat-dev libavcodec-dev libavfilter-dev libavutil-dev libswscale-dev libswresample-dev
  libsdl2-dev libx11-dev libass-dev fonts-dejavu-core
  # libmpv and its player
  libmpv-dev mpv
  # libVLC 3 and its player
  libvlc-dev vlc-plugin-base vlc-bin
  # libcurl, for libVLC's relay (request headers libVLC 3 cannot send, the app's authorities)
  libcurl4-openssl-dev
  # valgrind's memcheck, for scripts/check-memory.sh
  valgrind
  # xine-lib 1.2 for the adapter example (Examples/XineAdapter): headers, decoders, demuxers
  libxine2-dev libxine2-ffmpeg libxine2-misc-plugins
  # window output: the Xvfb server the window checks start when there is no $DISPLAY, xwd,
  # xwininfo and xdpyinfo for the screenshot script
  xvfb x11-apps x11-utils
)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# pkg-config files for the engines whose own ones carry flags SwiftPM refuses (and warns about
# on every build): -pthread from GLib, -D_REENTRANT from SDL2. Each lists only the include
# and library flags of the real ones; Package.swift names these. Regenerated on every run,
# so they follow the installed versions. Libraries loaded at run time (SDL2, by the FFmpeg
# engine's system audio output) give their include flags only.
pcdir=/usr/local/lib/pkgconfig
write_pc() {  # name, "linked pkg-config modules", "header-only modules"
  local name=$1 linked=$2 headers=${3:-}
  local cflags libs
  # shellcheck disable=SC2086  # word splitting of the module lists is meant
  cflags=$(pkg-config --cflags-only-I $linked $headers)
  # shellcheck disable=SC2086
  libs=$(pkg-config --libs-only-L --libs-only-l $linked)
  printf 'Name: %s\nDescription: PlaybackKit build flags for %s\nVersion: 1\nCflags: %s\nLibs: %s\n' \
    "$name" "$linked${headers:+ (headers of $headers)}" "$cflags" "$libs" | $sudo tee "$pcdir/$name.pc" >/dev/null
}
$sudo mkdir -p "$pcdir"
write_pc playbackkit-gstreamer "gstreamer-1.0 gstreamer-app-1.0 gstreamer-video-1.0 gstreamer-audio-1.0 gio-2.0"
write_pc playbackkit-ffmpeg "libavformat libavcodec libavfilter libswscale libswresample libavutil" sdl2
command -v swift >/dev/null || { echo "setup: swift (6.1 or later) is not on PATH" >&2; exit 1; }
# The test media is made on first use (by the tests, mediaplay and the conformance runner, with
# the ffmpeg CLI installed above); scripts/make-fixtures.sh makes it ahead of time.

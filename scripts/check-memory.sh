#!/usr/bin/env bash
# Runs the memory and thread checkers over PlaybackKit (see README, "Memory safety").
#
#   scripts/check-memory.sh asan [FILTER]     swift test --sanitize=address (core tests, the
#                                             converter tests and the conformance suite for
#                                             every backend, or the tests FILTER selects)
#   scripts/check-memory.sh tsan [FILTER]     the same with --sanitize=thread
#   scripts/check-memory.sh memcheck [--backend NAME|all] [--check NAME]...
#                                             valgrind's memcheck over mediaplay: the picture-
#                                             size sweep (every family, or those named) and the
#                                             thumbnail, .frames and .yuvFrames paths, per backend
#   scripts/check-memory.sh memcheck-cli [--backend NAME|all]
#                                             memcheck over the thumbnail, .frames and .yuvFrames
#                                             paths alone (what the gate runs)
#   scripts/check-memory.sh release           mediaplay conformance --backend all, release build
#
# Each mode exits non-zero when its checker reports an error of ours. Engine-internal reports
# that are not ours are in scripts/valgrind/*.supp and scripts/sanitizers/*.supp, one reason
# per entry. The sanitizer builds use their own scratch folders (.build/asan, .build/tsan).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}; shift || true
here=$(pwd)
backends=(gstreamer ffmpeg mpv vlc)
# The mediaplay memcheck runs: MEDIAPLAY, else the debug build (built first).
mediaplay=${MEDIAPLAY:-}

# memcheck LOG SECONDS COMMAND...: COMMAND under memcheck with the suppressions, its report
# in LOG, stopped after SECONDS (so a hang fails instead of stalling the run).
memcheck() {
  local log=$1 limit=$2; shift 2
  timeout "$limit" valgrind --error-exitcode=99 --num-callers=40 \
    --suppressions=scripts/valgrind/engines.supp --suppressions=scripts/valgrind/swift-runtime.supp \
    --log-file="$log" "$@"
}

# memcheck_cli BACKEND: the command-line paths a user runs, a thumbnail, .frames and
# .yuvFrames playback, at sizes that once corrupted memory (MEMCHECK_CLI_SIZES). Each run is
# bounded, so a hang fails, not stalls.
memcheck_cli() {
  local backend=$1 status=0
  mkdir -p .build/memcheck
  # Opening may take 40 times its real-time limit (20 s), as the checks' deadlines: at
  # memcheck's pace libVLC drops most pictures as late, and its start can play for seconds
  # before one is shown.
  local slow=(--open-timeout 800)
  for size in ${MEMCHECK_CLI_SIZES:-424x240 426x320 1706x960}; do
    memcheck ".build/memcheck/$backend-thumbnail-$size.log" 900 "$mediaplay" thumbnail --backend "$backend" "${slow[@]}" \
      --at 0.5 "Fixtures/sizes/$size.mp4" -o ".build/memcheck/$backend-$size.png" >/dev/null || status=$?
    memcheck ".build/memcheck/$backend-frames-$size.log" 900 "$mediaplay" play --backend "$backend" "${slow[@]}" \
      --audio null --video frames --quiet "Fixtures/sizes/$size.mp4" >/dev/null || status=$?
    memcheck ".build/memcheck/$backend-yuv-$size.log" 900 "$mediaplay" play --backend "$backend" "${slow[@]}" \
      --audio null --video yuv --quiet "Fixtures/sizes/$size.mp4" >/dev/null || status=$?
  done
  return "$status"
}

# memcheck_errors BACKEND STATUS: the errors memcheck reported in BACKEND's logs, on stderr.
memcheck_errors() {
  local errors
  errors=$(grep -h "ERROR SUMMARY" .build/memcheck/"$1"*.log | awk '{ sum += $4 } END { print sum + 0 }')
  echo "memcheck: $1: $errors errors (logs in .build/memcheck/$1*.log), exit $2" >&2
}

memcheck_one() {  # backend checks...
  local backend=$1; shift
  local log=".build/memcheck/$backend.log"
  local checks=(--check picture-size)
  if [ $# -gt 0 ]; then
    checks=()
    for check in "$@"; do checks+=(--check "$check"); done
  fi
  mkdir -p .build/memcheck
  echo "memcheck: $backend: ${*:-every picture-size check}, thumbnails, .frames and .yuvFrames" >&2
  local status=0
  # The conformance checks of the sweep, slowed deadlines (memcheck runs 20-50x slower).
  # What this run judges is memory: an error memcheck reports (exit 99), a crash or a hang.
  # A check that fails only on its timing at memcheck's pace (exit 1 with no error reported;
  # libVLC can play a 1-second clip to its end before a pause lands) is written out, and
  # left to the real-time conformance runs to judge.
  local checks_status=0
  PLAYBACK_CONFORMANCE_SLOWDOWN=40 memcheck "$log" 5400 \
    "$mediaplay" conformance --backend "$backend" "${checks[@]}" || checks_status=$?
  if [ "$checks_status" -eq 1 ]; then
    echo "memcheck: $backend: a check failed at memcheck's pace (above); memory is judged by memcheck's report" >&2
  elif [ "$checks_status" -ne 0 ]; then
    status=$checks_status
  fi
  memcheck_cli "$backend" || status=$?
  memcheck_errors "$backend" "$status"
  return "$status"
}

case $mode in
  asan|tsan)
    sanitizer=address; [ "$mode" = tsan ] && sanitizer=thread
    filter=${1:-"PlaybackKitTests|PictureConversionTests|ConformanceRuns"}
    export ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1"
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$here/scripts/sanitizers/tsan.supp"
    swift build --build-tests --sanitize="$sanitizer" --scratch-path ".build/$mode"
    swift test --skip-build --sanitize="$sanitizer" --scratch-path ".build/$mode" --no-parallel --filter "$filter"
    ;;
  memcheck|memcheck-cli)
    command -v valgrind >/dev/null || { echo "check-memory: valgrind is not installed (apt-get install -y valgrind)" >&2; exit 1; }
    chosen=all; checks=()
    while [ $# -gt 0 ]; do
      case $1 in
        --backend) chosen=$2; shift 2 ;;
        --check) checks+=("$2"); shift 2 ;;
        *) echo "check-memory: unknown argument $1" >&2; exit 2 ;;
      esac
    done
    [ "$chosen" = all ] || backends=("$chosen")
    if [ -z "$mediaplay" ]; then
      swift build --product mediaplay
      mediaplay=.build/debug/mediaplay
    fi
    # The fixtures, made (or confirmed) outside memcheck.
    "$mediaplay" conformance --make-fixtures >/dev/null
    failed=0
    for backend in "${backends[@]}"; do
      if [ "$mode" = memcheck-cli ]; then
        rm -f .build/memcheck/"$backend"-*.log
        status=0
        memcheck_cli "$backend" || status=$?
        memcheck_errors "$backend" "$status"
        [ "$status" -eq 0 ] || failed=1
      else
        memcheck_one "$backend" ${checks[@]+"${checks[@]}"} || failed=1
      fi
    done
    exit $failed
    ;;
  release)
    swift build -c release --product mediaplay
    .build/release/mediaplay conformance --backend all
    ;;
  *)
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac

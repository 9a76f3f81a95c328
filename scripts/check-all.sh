#!/usr/bin/env bash
# Everything the gate (scripts/gate.sh) leaves out, for the engines a change touched: run it
# before resolving an issue, and put its summary line in the closing note. Hours, not minutes,
# for every engine.
#
#   scripts/check-all.sh [--backend NAME[,NAME]...] [--skip STEP]... [STEP]...
#
# Steps (all by default):
#   conformance   the whole conformance suite from the release build, every family,
#                 --attempts 3 --strict: a listed failure that passes (XPASS) fails it too
#   asan-tests    the whole test suite under the address sanitizer: the conformance suite
#                 through the tests, the adapters' own end-to-end tests, the faulty-player and
#                 fallback suites, the command line's playback tests
#   tsan          the core and converter tests and the conformance suite under the thread
#                 sanitizer
#   memcheck      valgrind's memcheck over the whole picture-size sweep and the command line's
#                 picture paths
#   example       the xine adapter example's whole suite (only without --backend, or with
#                 --backend xine)
#
# It writes .build/check-all/report.json: each step's verdict and duration, and the release
# conformance run's matrix (per check: backend, verdict, attempts with their reasons,
# duration). The last line is the summary.
set -uo pipefail
cd "$(dirname "$0")/.."
out=.build/check-all
mkdir -p "$out"
started=$(date +%s)
all_steps=(conformance asan-tests tsan memcheck example)
backends=(gstreamer ffmpeg mpv vlc)
chosen=all
steps=()
skipped=()
while [ $# -gt 0 ]; do
  case $1 in
    --backend) chosen=$2; shift 2 ;;
    --skip) skipped+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *)
      printf '%s\n' "${all_steps[@]}" | grep -qx -- "$1" || { echo "check-all: unknown step '$1' (steps: ${all_steps[*]})" >&2; exit 2; }
      steps+=("$1"); shift ;;
  esac
done
[ ${#steps[@]} -gt 0 ] || steps=("${all_steps[@]}")
if [ "$chosen" != all ]; then
  IFS=, read -r -a backends <<<"$chosen"
fi
engines=()
for name in "${backends[@]}"; do [ "$name" = xine ] || engines+=("$name"); done
engine_list=$(IFS=,; echo "${engines[*]:-}")
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1"

step_json=()
failed_steps=()
chosen_step() {
  printf '%s\n' "${steps[@]}" | grep -qx -- "$1" || return 1
  ! printf '%s\n' "${skipped[@]+"${skipped[@]}"}" | grep -qx -- "$1"
}

source scripts/lib/timed-step.sh

# step NAME COMMAND...: runs COMMAND as step NAME, timed, when chosen.
step() {
  local name=$1; shift
  chosen_step "$name" || return 0
  timed_step check-all "$name" "$@"
  [ "$step_status" -eq 0 ] || failed_steps+=("$name")
  step_json+=("{\"step\": \"$name\", \"verdict\": \"$step_verdict\", \"exit\": $step_status, \"seconds\": $step_seconds}")
}

conformance() {
  [ -n "$engine_list" ] || return 0
  swift build -c release --product mediaplay || return 1
  .build/release/mediaplay conformance --backend "$engine_list" --attempts 3 --strict --json \
    >"$out/conformance.json" 2>"$out/conformance.log"
  local status=$?
  grep -E '^(flaky|FAIL|xpass|listed|unsupported): |^[a-z]+: [0-9]+ passed' "$out/conformance.log" >&2
  return $status
}

asan_tests() {
  [ -n "$engine_list" ] || return 0
  # The tests that name a backend take those chosen (PLAYBACK_TEST_BACKENDS); the adapters'
  # own suites of the others are skipped.
  local skip=()
  printf '%s\n' "${engines[@]}" | grep -qx gstreamer || skip+=(--skip 'GStreamerAdapterTests')
  printf '%s\n' "${engines[@]}" | grep -qx ffmpeg || skip+=(--skip 'FFmpegEngineTests|FFmpegTrackTests')
  printf '%s\n' "${engines[@]}" | grep -qx mpv || skip+=(--skip 'MPVAdapterTests|MPVNullOutputTests')
  printf '%s\n' "${engines[@]}" | grep -qx vlc || skip+=(--skip 'VLCAdapterTests')
  swift build --build-tests --sanitize=address --scratch-path .build/asan || return 1
  PLAYBACK_TEST_BACKENDS="$engine_list" swift test --skip-build --sanitize=address --scratch-path .build/asan \
    --no-parallel "${skip[@]}" 2>&1 | tee "$out/asan-tests.log" | grep -E '^(flaky|FAIL): |✘|Test run with'
  return "${PIPESTATUS[0]}"
}

tsan() {
  [ -n "$engine_list" ] || return 0
  PLAYBACK_TEST_BACKENDS="$engine_list" scripts/check-memory.sh tsan 2>&1 | tee "$out/tsan.log" | grep -E '^(flaky|FAIL): |✘|Test run with|ThreadSanitizer'
  return "${PIPESTATUS[0]}"
}

memcheck() {
  [ -n "$engine_list" ] || return 0
  swift build -c release --product mediaplay || return 1
  local status=0
  for backend in "${engines[@]}"; do
    MEDIAPLAY=.build/release/mediaplay scripts/check-memory.sh memcheck --backend "$backend" || status=1
  done
  return $status
}

example() {
  [ "$chosen" = all ] || printf '%s\n' "${backends[@]}" | grep -qx xine || return 0
  scripts/check-example.sh --all --attempts 3 --strict --json >"$out/example.json" 2>"$out/example.log"
  local status=$?
  grep -E '^(flaky|FAIL|xpass|listed|unsupported): |^[a-z]+: [0-9]+ passed' "$out/example.log" >&2
  return $status
}

step conformance conformance
step asan-tests asan_tests
step tsan tsan
step memcheck memcheck
step example example

total=$(( $(date +%s) - started ))
{
  printf '{\n  "backends": "%s",\n  "seconds": %d,\n  "steps": [\n' "${backends[*]}" "$total"
  for index in "${!step_json[@]}"; do
    separator=","; [ "$index" -eq $(( ${#step_json[@]} - 1 )) ] && separator=""
    printf '    %s%s\n' "${step_json[$index]}" "$separator"
  done
  printf '  ],\n  "conformance": '
  if chosen_step conformance && [ -s "$out/conformance.json" ]; then cat "$out/conformance.json"; else echo "null"; fi
  printf ',\n  "example": '
  if chosen_step example && [ -s "$out/example.json" ]; then cat "$out/example.json"; else echo "null"; fi
  printf '}\n'
} >"$out/report.json"

logs=()
chosen_step conformance && logs+=("$out/conformance.log")
chosen_step example && logs+=("$out/example.log")
summary=$(cat "${logs[@]}" 2>/dev/null | grep -E '^[a-z]+: [0-9]+ passed' | sed 's/ ([0-9]* s)//' | paste -sd ';' | sed 's/;/; /g')
flaky=$(cat "${logs[@]}" 2>/dev/null | grep -c '^flaky: ' || true)
verdict=PASSED
[ ${#failed_steps[@]} -eq 0 ] || verdict="FAILED (${failed_steps[*]})"
echo "check-all: $verdict in ${total} s for ${backends[*]}: ${summary:-conformance not run}; ${flaky:-0} flaky; report in $out/report.json" >&2
[ ${#failed_steps[@]} -eq 0 ]

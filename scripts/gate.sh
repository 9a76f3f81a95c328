#!/usr/bin/env bash
# The gate: what a contributor runs before a pull request and what CI runs (.ci/run), after
# scripts/setup.sh. About 21 minutes on two cores from a clean clone. Each step prints its
# name and start time, then its duration; the last line is the summary.
#
#   scripts/gate.sh            every step
#   scripts/gate.sh STEP...    those steps alone (names below), e.g. `scripts/gate.sh conformance`
#
# Steps:
#   build         the release build of every product, warnings as errors
#   build-asan    the debug build with the address sanitizer, tests included, warnings as errors
#   unit          every deterministic test, under the address sanitizer: the core rules on the
#                 scripted engine and manual clock, the converter's guard-byte sweep, the
#                 registry, URL policy, queue and fallback rules, the runner's retry and
#                 expectation rules, the command line's argument handling
#   fixtures      the test media (FixtureRecipe), made once
#   conformance   the whole conformance suite from the release build, every check on every
#                 engine, failed checks retried (--attempts 3, FLAKY reported); a crash or a
#                 hang fails it
#   asan-pictures the engines' picture paths under the address sanitizer: the size sweep's
#                 residue, common and tiny clips through .frames and .yuvFrames, and the command
#                 line's thumbnail, .frames and .yuvFrames at the sizes that once corrupted memory
#   memcheck      valgrind's memcheck over the release mediaplay's thumbnail, .frames and
#                 .yuvFrames at those sizes, every engine
#   example       the xine adapter example, built outside the package: its lifecycle and
#                 bad-input families
#
# scripts/check-all.sh runs everything this leaves out (the whole test suite under the
# sanitizers, memcheck over the whole sweep, the adapters' end-to-end tests, the faulty-player
# self-test, the xine example's whole suite) and fails on an out-of-date expectation.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=.build/gate
mkdir -p "$out"
started=$(date +%s)
all_steps=(build build-asan unit fixtures conformance asan-pictures memcheck example)
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=("${all_steps[@]}")
for name in "${steps[@]}"; do
  printf '%s\n' "${all_steps[@]}" | grep -qx -- "$name" || { echo "gate: unknown step '$name' (steps: ${all_steps[*]})" >&2; exit 2; }
done
backends=(gstreamer ffmpeg mpv vlc)
mediaplay=.build/release/mediaplay
asan_mediaplay=.build/asan/debug/mediaplay
# An error the address sanitizer reports ends the process with status 86, apart from a check's
# failure (status 1).
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1:exitcode=86"

# The window family needs an X display: the runner starts Xvfb when there is none.
# The engines, two to a lane (see conformance()).
conformance_lanes=(gstreamer,vlc ffmpeg,mpv)

report_lines=()
failed_steps=()

source scripts/lib/timed-step.sh

# step NAME COMMAND...: runs COMMAND as step NAME, timed, unless the step is not chosen.
step() {
  local name=$1; shift
  printf '%s\n' "${steps[@]}" | grep -qx -- "$name" || return 0
  timed_step gate "$name" "$@"
  [ "$step_status" -eq 0 ] || failed_steps+=("$name")
  report_lines+=("$(printf '%-14s %5d s  %s (exit %d)' "$name" "$step_seconds" "$step_verdict" "$step_status")")
}

build() { swift build -c release -Xswiftc -warnings-as-errors; }
build_asan() { swift build --build-tests --sanitize=address -Xswiftc -warnings-as-errors --scratch-path .build/asan; }

unit() {
  swift test --skip-build --sanitize=address --scratch-path .build/asan --no-parallel \
    --filter 'PlaybackKitTests|PictureConversionTests|ExpectationTests|ConformanceCommandTests|MediaplayArgumentTests'
}

fixtures() { "$mediaplay" conformance --make-fixtures >/dev/null; }

conformance() {
  # Two lanes, two engines each: the checks wait on real time far more than they compute, so
  # two runs side by side keep their pace on two cores.
  local status=0 pids=() lane
  for lane in "${conformance_lanes[@]}"; do
    # A bound on the whole lane, far above its 10 minutes, so that nothing can stall the gate.
    timeout 1800 "$mediaplay" conformance --backend "$lane" --attempts 3 --json \
      >"$out/conformance-${lane/,/-}.json" 2>"$out/conformance-${lane/,/-}.log" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  cat "$out"/conformance-*.log >"$out/conformance.log"
  grep -E '^(flaky|FAIL|xpass|listed|unsupported): |^[a-z]+: [0-9]+ passed' "$out/conformance.log" >&2
  return $status
}

asan_pictures() {
  local status=0 checks_status=0
  # Memory is judged here: an error the sanitizer reports (status 86), a crash or a hang
  # fails the step. The pictures themselves are the release run's to judge: slowed by the
  # sanitizer, libVLC now and then shows a picture decoded without its reference (a flat grey
  # row where the border is), in H.264 as in VP9, so a check that fails only that way
  # (status 1) is written out and does not fail the step. The deadlines are stretched for the
  # debug build.
  PLAYBACK_CONFORMANCE_SLOWDOWN=4 timeout 1200 "$asan_mediaplay" conformance --backend all --attempts 2 \
    --check picture-size.residues --check picture-size.common --check picture-size.tiny \
    --check yuv-size.residues --check yuv-size.common --check yuv-size.tiny \
    >"$out/asan-pictures.txt" 2>"$out/asan-pictures.log" || checks_status=$?
  grep -E '^(flaky|FAIL): |^[a-z]+: [0-9]+ passed|ERROR: AddressSanitizer' "$out/asan-pictures.log" >&2
  if [ "$checks_status" -eq 1 ]; then
    echo "gate: asan: a check failed on its pictures at the sanitizer's pace (above); the release run judges pictures, the sanitizer found no error" >&2
  elif [ "$checks_status" -ne 0 ]; then
    echo "gate: asan: the sweep ended with status $checks_status (86: an error the address sanitizer reports; see $out/asan-pictures.log)" >&2
    status=1
  fi
  for backend in "${backends[@]}"; do
    for size in 424x240 426x320 1706x960; do
      local clip="Fixtures/sizes/$size.mp4"
      "$asan_mediaplay" thumbnail --backend "$backend" --at 0.5 "$clip" -o "$out/asan-$backend-$size.png" >/dev/null 2>>"$out/asan-pictures.log" \
        || { echo "gate: asan: thumbnail $backend $size failed" >&2; status=1; }
      for video in frames yuv; do
        "$asan_mediaplay" play --backend "$backend" --audio null --video "$video" --quiet "$clip" >/dev/null 2>>"$out/asan-pictures.log" \
          || { echo "gate: asan: play --video $video $backend $size failed" >&2; status=1; }
      done
    done
  done
  return $status
}

memcheck() {
  # Two lanes (memcheck runs one core a process); each lane takes every other engine.
  local status=0 pids=()
  for lane in 0 1; do
    (
      lane_status=0
      for index in "${!backends[@]}"; do
        [ $((index % 2)) -eq "$lane" ] || continue
        MEDIAPLAY="$mediaplay" MEMCHECK_CLI_SIZES="424x240 426x320" scripts/check-memory.sh memcheck-cli --backend "${backends[$index]}" \
          || lane_status=1
      done
      exit $lane_status
    ) &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  return $status
}

example() { scripts/check-example.sh --check lifecycle --check bad-input; }

step build build
step build-asan build_asan
step unit unit
step fixtures fixtures
step conformance conformance
step asan-pictures asan_pictures
step memcheck memcheck
step example example

total=$(( $(date +%s) - started ))
echo "" >&2
echo "gate: steps" >&2
for line in "${report_lines[@]}"; do echo "  $line" >&2; done
if [ -f "$out/conformance.log" ] && printf '%s\n' "${steps[@]}" | grep -qx conformance; then
  summary=$(grep -E '^[a-z]+: [0-9]+ passed' "$out/conformance.log" | sed 's/ ([0-9]* s)//' | paste -sd ';' | sed 's/;/; /g')
else
  summary="conformance not run"
fi
# Every flake of this run, in the conformance and sanitizer steps: passed on a later attempt,
# or listed as flaky and failing every attempt.
logs=()
for log in "$out/conformance.log" "$out/asan-pictures.log"; do [ -f "$log" ] && logs+=("$log"); done
flaky=$(cat "${logs[@]}" /dev/null | grep -c '^flaky: .*(passed on attempt' || true)
listed=$(cat "${logs[@]}" /dev/null | grep -c '^flaky: .*(listed; failed all' || true)
summary="$summary; flaky: $flaky passed on a later attempt, $listed listed failing every attempt"
if [ ${#failed_steps[@]} -eq 0 ]; then
  echo "gate: PASSED in ${total} s: ${#report_lines[@]} steps; $summary" >&2
  exit 0
fi
echo "gate: FAILED in ${total} s: ${failed_steps[*]}; $summary" >&2
exit 1

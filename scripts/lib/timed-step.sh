# Sourced by scripts/gate.sh and scripts/check-all.sh.
#
# timed_step LABEL NAME COMMAND...: runs COMMAND as step NAME, printing
# "LABEL: step NAME: started HH:MM:SS" before and "LABEL: step NAME: passed|failed (exit N)
# in S s" after. Sets step_status, step_verdict and step_seconds for the caller's report.
timed_step() {
  local label=$1 name=$2; shift 2
  local begin; begin=$(date +%s)
  echo "$label: step $name: started $(date -u +%H:%M:%S)" >&2
  step_status=0
  "$@" || step_status=$?
  step_seconds=$(( $(date +%s) - begin ))
  step_verdict=passed
  [ "$step_status" -eq 0 ] || step_verdict=failed
  echo "$label: step $name: $step_verdict (exit $step_status) in ${step_seconds} s" >&2
}

# bench/phases.sh — sourced by the device scripts bench/gpu/device_run.sh and bench/multi/device_run.sh:
# which phases were asked for, the time left of the budget, the summary, and timed phases whose
# output is line-buffered into a log (so a call cut off from outside still brings back what it printed).
# The script sets OUT, BUDGET, START and the array phases first; PHASE_PRINT_ONLY=1 makes phase print
# each command and its time limit instead of running it (a dry run of the commands).

# whether phase $1 was asked for
has() { local p; for p in "${phases[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
# seconds left of BUDGET
left() { echo $(( BUDGET - ($(date +%s) - START) )); }
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"
# a line to stdout and to the summary
note() { echo "$*" | tee -a "$SUMMARY"; }
# runs a command with a time limit, stdout+stderr line-buffered into a log; notes exit and time
phase() {  # name limit_s log command...
  local name=$1 limit=$2 log=$3; shift 3
  local t0=$(date +%s) rc
  if [ "$limit" -lt 10 ]; then note "$name: skipped (budget spent)"; return 0; fi
  if [ "${PHASE_PRINT_ONLY:-0}" = 1 ]; then note "$name: dry run, limit $limit s: $*"; return 0; fi
  timeout --kill-after=5 "$limit" stdbuf -oL -eL "$@" > "$log" 2>&1
  rc=$?
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    note "$name: CUT OFF after $(( $(date +%s) - t0 )) s (limit $limit s); partial log $log"
  else
    note "$name: exit $rc in $(( $(date +%s) - t0 )) s"
  fi
  return 0
}

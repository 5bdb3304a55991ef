# bench/common/phases.sh — sourced by every benchmark script (bench/gpu/run.sh, bench/multi/run.sh,
# bench/sql/*.sh): the phases asked for, a phase run with its output in a log and its "RESULT ..." lines
# on stdout and in the summary as they come, statistics over numbers on stdin, and the GPUs this
# machine shows.  The script sets OUT (the output folder) and the array phases before sourcing it.
# PHASE_PRINT_ONLY=1 makes phase print each command instead of running it.

mkdir -p "$OUT"
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"
BENCH_START=$(date +%s)
BENCH_FAILED=0

# whether phase $1 was asked for
has() { local p; for p in "${phases[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
# a line to stdout and to the summary
note() { echo "$*" | tee -a "$SUMMARY"; }
# stops the script with a message on stderr
die() { echo "error: $*" >&2; exit 2; }

# phase NAME COMMAND...: runs COMMAND (a program or a shell function, in a subshell without pipefail)
# with stdout and stderr in $OUT/NAME.log; its lines that start with "RESULT " go to stdout and the
# summary as they are printed; then its exit status and time (and on failure the log's last lines).
# Returns the command's status.  Call it as a plain command, not after && or || or as an if's
# condition: there bash ignores the set -e of the function it runs.
phase() {
  local name=$1 t0 rc
  shift
  if [ "${PHASE_PRINT_ONLY:-0}" = 1 ]; then note "$name: would run: $*"; return 0; fi
  t0=$(date +%s)
  note "phase $name (log $OUT/$name.log)"
  ( set +o pipefail; "$@" ) 2>&1 | tee "$OUT/$name.log" | sed -un 's/^RESULT /  /p' | tee -a "$SUMMARY"
  rc=${PIPESTATUS[0]}
  note "  $name: exit $rc in $(( $(date +%s) - t0 )) s"
  if [ "$rc" != 0 ]; then
    BENCH_FAILED=1
    tail -5 "$OUT/$name.log" | sed 's/^/  | /' | tee -a "$SUMMARY"
  fi
  return "$rc"
}

# the last line of the summary: how long the script ran and where its files are
finish_summary() {
  note "== bench/$(basename "$(dirname "$0")")/$(basename "$0") ${phases[*]}: $( [ "$BENCH_FAILED" = 0 ] && echo 'every phase exited 0' || echo 'A PHASE FAILED (see its log)'), $(( $(date +%s) - BENCH_START )) s; summary and logs in $OUT"
}

# arithmetic on numbers, printed: calc "1.3 * $x + 50"
calc() { awk "BEGIN {print $*}"; }
# goal "A <= B" -> MET / NOT MET
goal() { awk "BEGIN {print ($*) ? \"MET\" : \"NOT MET\"}"; }
# the median of the numbers on stdin (nan when none)
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# pct P: the P-th percentile (nearest rank) of the numbers on stdin
pct() { sort -g | awk -v p="$1" '{a[NR]=$1} END {if (NR==0) {print "nan"; exit} i=int(p/100*NR+0.999999); if (i<1) i=1; print a[i]}'; }

# the number of GPUs CUDA programs started from here see: the devices CUDA_VISIBLE_DEVICES names when
# it is set, else those nvidia-smi lists; 0 without nvidia-smi or with NO_GPU=1
gpu_count() {
  if [ "${NO_GPU:-0}" = 1 ]; then echo 0; return; fi
  if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
    echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c '[^[:space:]]' || true
    return
  fi
  nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true
}
# one line about the GPUs: name, memory, driver of each (nvidia-smi), or "no GPU"
gpu_describe() {
  if [ "$(gpu_count)" -eq 0 ]; then echo "no GPU"; return; fi
  nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader 2>/dev/null | paste -sd';'
}

#!/bin/bash
# bench/gpu/device_run.sh — the one script run on the GPU machine: builds cuda/ and the bench with
# nvcc there, runs the planner unit tests, calibrates the performance model (when asked), and runs
# the checked benchmarks.  Logs go to $OUT (or ./bench-out); a short table is printed last.
#   usage: bench/gpu/device_run.sh [build] [calibrate|calibrate-small] [slashdot] [rmat20] [rmat22] [rmat24] [er24]
#   (RMAT24_ONLY / ER24_ONLY: comma lists of the kernels to run on the big graphs)
#   (no argument: everything)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/bench-out}
mkdir -p "$OUT"
phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(build calibrate slashdot rmat20 rmat22 rmat24 er24)
has() { local p; for p in "${phases[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
model=cuda/model_h100.tsv
[ -s "$OUT/model_h100.tsv" ] && model=$OUT/model_h100.tsv
BENCH=bench/gpu/build/pr_bench

{
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  nproc
  make -C cuda -j16 2>&1 | tail -3 && make -C bench/gpu -j16 2>&1 | tail -2 && make -C test/plan 2>&1 | tail -2
} > "$OUT/build_test.log" 2>&1
tail -4 "$OUT/build_test.log"
[ -x "$BENCH" ] || { echo "build failed"; cat "$OUT/build_test.log" | tail -40; exit 1; }

if has calibrate-small; then
  # re-measures the fixed costs and adds small gather windows to the stored table
  start=$(date +%s)
  "$BENCH" --calibrate "$OUT/model_small.tsv" --windows 4096,32768 > "$OUT/calibrate.log" 2>&1 || { echo "calibration failed"; tail "$OUT/calibrate.log"; }
  if [ -s "$OUT/model_small.tsv" ]; then
    { grep -v '^[lrwEV] ' cuda/model_h100.tsv; grep -E '^[lrwEVevb] ' "$OUT/model_small.tsv"; } > "$OUT/model_h100.tsv"
    rm -f "$OUT/model_small.tsv"
    model=$OUT/model_h100.tsv
  fi
  echo "calibration (small windows): $(( $(date +%s) - start )) s"
fi
if has calibrate; then
  start=$(date +%s)
  "$BENCH" --calibrate "$OUT/model_h100.tsv" > "$OUT/calibrate.log" 2>&1 || { echo "calibration failed"; tail "$OUT/calibrate.log"; }
  echo "calibration: $(( $(date +%s) - start )) s"
  [ -s "$OUT/model_h100.tsv" ] && model=$OUT/model_h100.tsv
fi

run_bench() {  # name, args...
  local name=$1; shift
  local start=$(date +%s)
  "$BENCH" --model "$model" --label "$name" "$@" > "$OUT/bench_$name.log" 2>&1
  echo "$name: exit $? in $(( $(date +%s) - start )) s"
}
data=test/data/soc-slashdot0902.tsv.gz
[ -f "$data" ] || data=.carry/soc-slashdot0902.tsv.gz
has slashdot && run_bench slashdot --file "$data"
has rmat20 && run_bench rmat20 --rmat 20
has rmat22 && run_bench rmat22 --rmat 22 --only "cusparse-natural,cusparse-sorted,binned,tiled-L2,tiled-s1,tiled-s2,tiled-s4,tiled-s8,auto,auto-fp64"
has er24 && run_bench er24 --er 24 --reps 20 --only "${ER24_ONLY:-cusparse-natural,cusparse-sorted,binned,tiled-L2,auto}"
has rmat24 && run_bench rmat24 --rmat 24 --reps 20 --only "${RMAT24_ONLY:-cusparse-natural,cusparse-sorted,binned,tiled-L2,tiled-s4,tiled-s4-l2persist,tiled-s8,auto}"

echo
for f in "$OUT"/bench_*.log; do
  [ -f "$f" ] || continue
  grep -E '^### ' "$f"
  grep -E '^\| (kernel|cusparse|binned|tiled|auto)' "$f" | cut -d'|' -f2-4,6-8,10-15
done

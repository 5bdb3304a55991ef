#!/bin/bash
# bench/multi/device_run.sh — the one script for one device call on nvidia-h200-x2 / -x4:
#   build the multi-GPU library and the bench, run the partition and planner unit tests, then
#   check   R-MAT 18 on the GPU counts against a double-precision CPU PageRank (csr, cusparse,
#           tiled: every kernel x GPU count)
#   big     R-MAT 26 (1.07 G edges) on the GPU counts, local kernels BIG_KERNELS
#           (default tiled at every GPU count, then cuSPARSE at 4 GPUs: "cusparse@4"): ms per
#           product, per PageRank iteration, the exposed exchange (iteration - product),
#           the exchange alone, parallel efficiency, L1 to the 1-GPU scores, host preparation steps
# Each phase gets what is left of the budget (timeout); logs are line-buffered into $OUT, so a run
# cut off from outside still brings back what it printed.  The summary comes last.
#
#   usage: bench/multi/device_run.sh [phase ...]   (default: build tests check big)
#   env:   OUT (default ./bench-out), BUDGET (seconds, default 540), BIG_SCALE (default 26),
#          GPUS (default: 1,2,4 with 4 or more GPUs, else 1,2),
#          BIG_KERNELS (default tiled,cusparse@4; "kernel@G" = that kernel at G GPUs only),
#          COMPACT (default 1; "1,0" also runs tiled with the full all-gather),
#          DRY_RUN=1: build here and print each phase's command and time limit instead of running it
#          (the check that the command is right before spending device time)
#
# NCCL: on the lent machines nccl.h and libnccl.so.2 come with the Python package nvidia-nccl-cu13:
#   python3 -c "import nvidia.nccl; print(nvidia.nccl.__path__)"
# prints the folder (it holds include/ and lib/); here (no GPU) they are in /usr/local/cuda.
# NVLink multicast stays off on the lent machines: NCCL_NVLS_ENABLE=0 (exported by nccl_env.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/bench-out}
BUDGET=${BUDGET:-540}
BIG_SCALE=${BIG_SCALE:-26}
if [ -z "${GPUS:-}" ]; then
  n_gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  if [ "$n_gpus" -ge 4 ]; then GPUS=1,2,4; else GPUS=1,2; fi
fi
BIG_KERNELS=${BIG_KERNELS:-tiled,cusparse@4}
COMPACT=${COMPACT:-1}           # big: compact exchange (tiled) on/off list, e.g. "1,0"
DRY_RUN=${DRY_RUN:-0}
mkdir -p "$OUT"
START=$(date +%s)
phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(build tests check big)
PHASE_PRINT_ONLY=$DRY_RUN
. bench/phases.sh   # has, left, note, phase

# where NCCL is: the pip package first, then the CUDA toolkit
. bench/multi/nccl_env.sh
BENCH=bench/multi/build/multi_bench

if has build; then
  {
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    nvidia-smi topo -m 2>/dev/null | head -5
    echo "cpus: $(nproc); NCCL_HOME=$NCCL_HOME"; ls "$NCCL_HOME/include/nccl.h" "$NCCL_HOME"/lib*/libnccl* 2>&1
    make -C cuda -f Makefile.multi -j16 NCCL_HOME="$NCCL_HOME" 2>&1 | tail -3
    make -C bench/multi NCCL_HOME="$NCCL_HOME" 2>&1 | tail -2
  } > "$OUT/build.log" 2>&1
  note "build: $(grep -cE ' error|Error [0-9]' "$OUT/build.log") error line(s); $(head -1 "$OUT/build.log"); NCCL_HOME=$NCCL_HOME"
  [ -x "$BENCH" ] || { note "build failed"; tail -40 "$OUT/build.log"; exit 1; }
  if [ "$DRY_RUN" = 1 ]; then
    "$BENCH" --bad-flag 2>&1 | head -1   # the bench runs (prints its usage)
    # the options of the phases below parse (an unknown kernel stops here, not on the device)
    for k in tiled,csr,cusparse "$BIG_KERNELS"; do
      "$BENCH" --rmat 10 --prep-only --gpus "$GPUS" --kernels "$k" > "$OUT/dry_prep.log" 2>&1 \
        && note "dry run: --kernels $k --gpus $GPUS parse; host preparation at R-MAT 10: $(grep -c '^| [0-9]' "$OUT/dry_prep.log") configuration(s) ok" \
        || { note "dry run: --kernels $k FAILED:"; tail -3 "$OUT/dry_prep.log"; }
    done
  fi
fi
if has tests; then
  phase tests 60 "$OUT/test_partition.log" make -C test/partition
  note "partition unit tests: $(grep -E "passed" "$OUT/test_partition.log" 2>/dev/null | tail -1)"
  phase tests_plan 90 "$OUT/test_plan.log" make -C test/plan
  note "planner unit tests (rectangular parts included): $(grep -E "passed" "$OUT/test_plan.log" 2>/dev/null | tail -1)"
fi
# reserves: what the later phases need at least (big ~300 s)
reserve=300
check_limit=$(( $(left) - reserve )); [ "$check_limit" -gt 120 ] && check_limit=120
has check  && phase check  $check_limit "$OUT/check.log"  "$BENCH" --rmat 18 --gpus "$GPUS" --kernels tiled,csr,cusparse --check-cpu --iters 30 --reps 20
has big    && phase big    $(( $(left) - 5 )) "$OUT/big.log" "$BENCH" --rmat "$BIG_SCALE" --gpus "$GPUS" --kernels "$BIG_KERNELS" --compact "$COMPACT" --reps 20 --iters 20
# a host-only profile of the preparation (no GPU), when asked for by name
has prep   && phase prep   $(( $(left) - 5 )) "$OUT/prep.log" "$BENCH" --rmat "$BIG_SCALE" --prep-only --gpus "$GPUS" --kernels "$BIG_KERNELS"

{
  echo
  echo "===== summary ($(( $(date +%s) - START )) s of $BUDGET) ====="
  cat "$SUMMARY"
  for f in "$OUT"/check.log "$OUT"/big.log "$OUT"/prep.log; do
    [ -f "$f" ] || continue
    echo; echo "--- $(basename "$f" .log)"
    grep -E '^(\||# )' "$f" || tail -8 "$f"
  done
} | tee "$OUT/summary_table.txt"

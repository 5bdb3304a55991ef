#!/bin/bash
# bench/multi/run.sh — PageRank on several GPUs of one machine (multi_bench, NCCL), on the GPUs CUDA
# programs see (CUDA_VISIBLE_DEVICES, else every GPU nvidia-smi lists):
#   build   the multi-GPU library (cuda/Makefile.multi) and the bench
#   tests   the partition and planner unit tests
#   check   R-MAT 18 on each GPU count against a double-precision CPU PageRank (csr, cusparse, tiled:
#           every kernel x GPU count)
#   big     R-MAT 26 (1.07 G edges) on each GPU count, local kernels BIG_KERNELS: ms per product, per
#           PageRank iteration, the exposed exchange (iteration - product), the exchange alone, parallel
#           efficiency, L1 to the 1-GPU scores, host preparation steps
#   prep    (only when named) the host preparation of R-MAT $BIG_SCALE alone, no GPU
# Each phase's output goes to $OUT/PHASE.log; the summary comes last.
#
#   bench/multi/run.sh [phase ...]   (default: build tests check big)
#   env:   OUT (output folder, default bench-out/multi under the project root), BIG_SCALE (26),
#          GPUS (GPU counts, default 1, 2, 4, ... up to the GPUs found, and that count: 1,2 on 2 GPUs),
#          BIG_KERNELS (default tiled,cusparse@N with N the most GPUs; "kernel@G" = that kernel at G
#          GPUs only), COMPACT (default 1; "1,0" also runs tiled with the full all-gather),
#          NCCL_HOME (where nccl.h and libnccl are; found by bench/multi/nccl_env.sh when unset).
#          NCCL's own settings (NCCL_*) come from the environment.
#   Without a GPU (or NO_GPU=1): builds, checks that the phases' options parse (--prep-only at R-MAT
#   10) and prints each phase's command instead of running it.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/bench-out/multi}
phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(build tests check big)
. bench/common/phases.sh   # has, note, phase, gpu_count
n_gpus=$(gpu_count)
most=$(( n_gpus > 1 ? n_gpus : 2 ))   # without a GPU: the commands for 2
if [ -z "${GPUS:-}" ]; then
  GPUS=1
  for (( g = 2; g < most; g *= 2 )); do GPUS=$GPUS,$g; done
  GPUS=$GPUS,$most
fi
BIG_SCALE=${BIG_SCALE:-26}
BIG_KERNELS=${BIG_KERNELS:-tiled,cusparse@$most}
COMPACT=${COMPACT:-1}           # big: compact exchange (tiled) on/off list, e.g. "1,0"
if [ "$n_gpus" = 0 ]; then PHASE_PRINT_ONLY=1; fi
. bench/multi/nccl_env.sh        # NCCL_HOME
[ -n "$NCCL_HOME" ] || die "no nccl.h found: set NCCL_HOME to the folder holding include/nccl.h and lib/libnccl.so"

BENCH=bench/multi/build/multi_bench

if has build; then
  {
    gpu_describe
    nvidia-smi topo -m 2>/dev/null | head -$(( n_gpus + 1 ))
    echo "cpus: $(nproc); NCCL_HOME=$NCCL_HOME"; ls "$NCCL_HOME/include/nccl.h" "$NCCL_HOME"/lib*/libnccl* 2>&1
    make -C cuda -f Makefile.multi -j"$(nproc)" NCCL_HOME="$NCCL_HOME" 2>&1 | tail -3
    make -C bench/multi NCCL_HOME="$NCCL_HOME" 2>&1 | tail -2
  } > "$OUT/build.log" 2>&1
  note "build: $(grep -cE ' error|Error [0-9]' "$OUT/build.log") error line(s); $(head -1 "$OUT/build.log"); GPU counts $GPUS; NCCL_HOME=$NCCL_HOME"
  [ -x "$BENCH" ] || { note "build failed"; tail -40 "$OUT/build.log"; exit 1; }
  if [ "$n_gpus" = 0 ]; then
    "$BENCH" --bad-flag 2>&1 | head -1   # the bench runs (prints its usage)
    # the options of the phases below parse (an unknown kernel stops here, not on the GPUs)
    for k in tiled,csr,cusparse "$BIG_KERNELS"; do
      "$BENCH" --rmat 10 --prep-only --gpus "$GPUS" --kernels "$k" > "$OUT/dry_prep.log" 2>&1 \
        && note "no GPU: --kernels $k --gpus $GPUS parse; host preparation at R-MAT 10: $(grep -c '^| [0-9]' "$OUT/dry_prep.log") configuration(s) ok" \
        || { note "no GPU: --kernels $k FAILED:"; tail -3 "$OUT/dry_prep.log"; }
    done
  fi
fi
if has tests; then
  PHASE_PRINT_ONLY=0 phase test_partition make -C test/partition
  note "partition unit tests: $(grep -E "passed" "$OUT/test_partition.log" 2>/dev/null | tail -1)"
  PHASE_PRINT_ONLY=0 phase test_plan make -C test/plan
  note "planner unit tests (rectangular parts included): $(grep -E "passed" "$OUT/test_plan.log" 2>/dev/null | tail -1)"
fi
has check  && phase check "$BENCH" --rmat 18 --gpus "$GPUS" --kernels tiled,csr,cusparse --check-cpu --iters 30 --reps 20
has big    && phase big "$BENCH" --rmat "$BIG_SCALE" --gpus "$GPUS" --kernels "$BIG_KERNELS" --compact "$COMPACT" --reps 20 --iters 20
# a host-only profile of the preparation (no GPU), when asked for by name
has prep   && PHASE_PRINT_ONLY=0 phase prep "$BENCH" --rmat "$BIG_SCALE" --prep-only --gpus "$GPUS" --kernels "$BIG_KERNELS"

finish_summary > /dev/null
{
  echo
  echo "===== summary ====="
  cat "$SUMMARY"
  for f in "$OUT"/check.log "$OUT"/big.log "$OUT"/prep.log; do
    [ -f "$f" ] || continue
    echo; echo "--- $(basename "$f" .log)"
    grep -E '^(\||# )' "$f" || tail -8 "$f"
  done
} | tee "$OUT/summary_table.txt"
exit "$BENCH_FAILED"

#!/bin/bash
# bench/multi/run.sh — the multi-GPU engine (pr_multi.h: one GPU engine per GPU, products exchanged
# by peer copies and NCCL) on several GPUs of one machine, through the one driver, on the GPUs CUDA programs see
# (CUDA_VISIBLE_DEVICES, else every GPU nvidia-smi lists):
#   build   the GPU and multi-GPU libraries (cuda/Makefile.multi), the device test and multi_bench
#   tests   the device test (make -C cuda -f Makefile.multi check-multi): PageRank, RWR, HITS on 2 .. N
#           GPUs against the CPU engine, in several layouts and both precisions
#   check   multi_bench at R-MAT 18 on each GPU count: PageRank, RWR (k = 8), HITS, fp64 and fp32,
#           prepare time, ms per iteration, the largest difference from the CPU engine (30 iterations)
#   big     multi_bench at R-MAT $BIG_SCALE on each GPU count, the algorithms BIG_ALGOS (20 iterations)
# Each phase's output goes to $OUT/PHASE.log; the summary comes last.
#
#   bench/multi/run.sh [phase ...]   (default: build tests check big)
#   env:   OUT (output folder, default bench-out/multi under the project root), BIG_SCALE (24),
#          BIG_ALGOS (pagerank,rwr,hits), GPUS (GPU counts, default 1, 2, 4, ... up to the GPUs found,
#          and that count: 1,2 on 2 GPUs), NCCL_HOME (where nccl.h and libnccl are; found by
#          bench/multi/nccl_env.sh when unset).  NCCL's own settings (NCCL_*) come from the environment.
#   Without a GPU (or NO_GPU=1): builds, runs the bench's CPU rows at R-MAT 10 (--cpu-only: the
#   program and its options work) and prints each phase's command instead of running it.
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
BIG_SCALE=${BIG_SCALE:-24}
BIG_ALGOS=${BIG_ALGOS:-pagerank,rwr,hits}
if [ "$n_gpus" = 0 ]; then PHASE_PRINT_ONLY=1; fi
. bench/multi/nccl_env.sh        # NCCL_HOME
[ -n "$NCCL_HOME" ] || die "no nccl.h found: set NCCL_HOME to the folder holding include/nccl.h and lib/libnccl.so"

BENCH=bench/multi/build/multi_bench

if has build; then
  {
    gpu_describe
    nvidia-smi topo -m 2>/dev/null | head -$(( n_gpus + 1 ))
    echo "cpus: $(nproc); NCCL_HOME=$NCCL_HOME"; ls "$NCCL_HOME/include/nccl.h" "$NCCL_HOME"/lib*/libnccl* 2>&1
    make -C cuda -f Makefile.multi -j"$(nproc)" NCCL_HOME="$NCCL_HOME" multi build/test_multi 2>&1 | tail -3
    make -C bench/multi NCCL_HOME="$NCCL_HOME" 2>&1 | tail -2
  } > "$OUT/build.log" 2>&1
  note "build: $(grep -cE ' error|Error [0-9]' "$OUT/build.log") error line(s); $(head -1 "$OUT/build.log"); GPU counts $GPUS; NCCL_HOME=$NCCL_HOME"
  [ -x "$BENCH" ] || { note "build failed"; tail -40 "$OUT/build.log"; exit 1; }
  if [ "$n_gpus" = 0 ]; then
    "$BENCH" --bad-flag 2>&1 | head -1   # the bench runs (prints its usage)
    "$BENCH" --rmat 10 --cpu-only --gpus "$GPUS" --iters 5 > "$OUT/dry_cpu.log" 2>&1 \
      && note "no GPU: --cpu-only at R-MAT 10: $(grep -c '^| rmat' "$OUT/dry_cpu.log") CPU row(s) ok" \
      || { note "no GPU: multi_bench --cpu-only FAILED:"; tail -3 "$OUT/dry_cpu.log"; }
  fi
fi
has tests  && phase tests make -C cuda -f Makefile.multi NCCL_HOME="$NCCL_HOME" check-multi
has tests  && [ "$n_gpus" != 0 ] && note "device test: $(grep -E 'passed' "$OUT/tests.log" 2>/dev/null | tail -1)"
has check  && phase check "$BENCH" --rmat 18 --gpus "$GPUS" --iters 30
has big    && phase big "$BENCH" --rmat "$BIG_SCALE" --gpus "$GPUS" --algos "$BIG_ALGOS" --iters 20

finish_summary > /dev/null
{
  echo
  echo "===== summary ====="
  cat "$SUMMARY"
  for f in "$OUT"/check.log "$OUT"/big.log; do
    [ -f "$f" ] || continue
    echo; echo "--- $(basename "$f" .log)"
    grep -E '^(\||# )' "$f" || tail -8 "$f"
  done
} | tee "$OUT/summary_table.txt"
exit "$BENCH_FAILED"

#!/bin/bash
# bench/gpu/run.sh — the GPU engine alone (pr_bench) against cuSPARSE, on the GPU CUDA programs see
# first (CUDA_VISIBLE_DEVICES): build cuda/ and the bench with nvcc, run the planner unit tests, measure
# the model's fixed costs (launch, row writes, the compact-partials merge: a few seconds), then the
# checked benchmarks: R-MAT 24 (incl. compact partials), Erdős–Rényi 24, R-MAT 22, R-MAT 20,
# soc-slashdot0902.  Each phase's output goes to $OUT/PHASE.log; the summary (every phase's exit and
# each graph's table) is printed at the end and kept in $OUT/summary_table.txt.
#
#   bench/gpu/run.sh [phase ...]     (no phase: build tests fixed rmat24 er24 rmat22 rmat20 slashdot)
#   phases: build tests fixed calibrate er24 rmat24 rmat22 rmat20 slashdot gpucheck zoo zoo-large
#           zoo-untuned spmm streamed profile
#           (calibrate: the model's full calibration into $OUT/model_full.tsv, which later phases use)
#           (gpucheck: make -C cuda check-spmm check-topk check-build)
#           (zoo, zoo-large, zoo-untuned: the graph zoo's three sets — see below; ZOO / ZOO_ONLY override)
#           (spmm: make -C cuda check-spmm, then pr_bench --k 8,16 on R-MAT 24 and R-MAT 22: the
#           k-column product vs cusparseSpMM and k SpMVs; SPMM24_KS / SPMM22_KS: other column counts,
#           SPMM_VARIANTS=1: chunk / L2 variants on 24)
#           (streamed: pr_bench --streamed on R-MAT 24, then R-MAT 25 when the host has 64 GB available:
#           PageRank on the streamed engine, registered and staged, ms per iteration against the
#           pinned host -> device bandwidth measured in the same run)
#           (profile: Nsight Compute counters of the RWR kernels in a pr_bench run; PROFILE_KERNELS,
#           PROFILE_SCALE (24), PROFILE_COUNT (2 launches each))
#   env:    OUT (output folder, default bench-out/gpu under the project root),
#           RMAT24_ONLY / ER24_ONLY / RMAT22_ONLY / RMAT20_ONLY / SLASHDOT_ONLY (kernel lists).
#   Without a GPU (or NO_GPU=1) only the host parts run: the planner unit tests, and plan_bench on
#   graphs 8 scales smaller standing in for each benchmark (a check of this script, not a measurement).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/bench-out/gpu}
phases=("$@")
[ ${#phases[@]} -eq 0 ] && phases=(build tests fixed rmat24 er24 rmat22 rmat20 slashdot)
. bench/common/phases.sh   # has, note, phase, gpu_count
GPUS=$(gpu_count)
CORES=$(nproc)
benches=()   # the benchmark phases run, for the summary

BENCH=bench/gpu/build/pr_bench
PLAN=bench/gpu/build/plan_bench
model=cuda/plan/model_h100.tsv

if has build; then
  {
    gpu_describe
    echo "cpus: $CORES"
    if [ "$GPUS" = 0 ]; then make -C bench/gpu plan 2>&1 | tail -2
    else make -C cuda -j"$CORES" 2>&1 | tail -3 && make -C bench/gpu -j"$CORES" 2>&1 | tail -3; fi
  } > "$OUT/build.log" 2>&1
  note "build: $(grep -cE ' error|Error [0-9]' "$OUT/build.log") error line(s); $(head -2 "$OUT/build.log" | tr '\n' ' ')"
  if [ "$GPUS" = 0 ]; then [ -x "$PLAN" ] || { note "build failed"; tail -30 "$OUT/build.log"; exit 1; }
  else [ -x "$BENCH" ] || { note "build failed"; tail -40 "$OUT/build.log"; exit 1; }; fi
fi

if has tests; then
  phase test_plan make -C test/plan
  note "planner unit tests: $(grep -E '^[0-9]+ passed' "$OUT/test_plan.log" | tail -1)"
  grep -E '^  ' "$OUT/test_plan.log" | tee -a "$SUMMARY" > /dev/null
fi

if has fixed && [ "$GPUS" -gt 0 ]; then
  # re-measure the fixed costs (incl. the merge cost m, which lets auto weigh compact partials)
  phase calibrate_fixed "$BENCH" --calibrate-fixed "$OUT/model_fixed.tsv"
  if grep -q '^m ' "$OUT/model_fixed.tsv" 2>/dev/null; then
    { grep -v '^[Wmp] ' cuda/plan/model_h100.tsv; grep -E '^[Wmp] ' "$OUT/model_fixed.tsv"; } > "$OUT/model_h100.tsv"
    model=$OUT/model_h100.tsv
    note "model: merge cost and gather latency measured: $(grep -E '^[lrwWmp] ' "$OUT/model_fixed.tsv" | tr '\n' ' ')"
  fi
fi
if has calibrate && [ "$GPUS" -gt 0 ]; then
  phase calibrate "$BENCH" --calibrate "$OUT/model_full.tsv" --windows 4096,32768,262144,4194304,16777216
  [ -s "$OUT/model_full.tsv" ] && model=$OUT/model_full.tsv
fi

# run_bench name args...: pr_bench on the graph the arguments name, into $OUT/bench_NAME.log
run_bench() {
  local name=$1
  shift
  benches+=("bench_$name")
  if [ "$GPUS" = 0 ]; then
    # host stand-in: the same graph kind, 8 scales smaller, planned by plan_bench with the model
    local args=()
    while [ $# -gt 0 ]; do
      case $1 in
        --only|--reps) shift 2 ;;
        --skip-extra|--streamed) shift ;;
        --stream-blocks) shift 2 ;;
        --rmat|--er) args+=("$1" $(( $2 - 8 ))); shift 2 ;;
        *) args+=("$1"); shift ;;
      esac
    done
    phase "bench_$name" "$PLAN" --model "$model" --auto --label "$name" "${args[@]}"
  else
    phase "bench_$name" "$BENCH" --model "$model" --label "$name" "$@"
  fi
}
data=test/data/soc-slashdot0902.tsv.gz
# the HITS/RWR checks run on rmat20 and slashdot only (they take half a minute at scale 22)
C="tiled-s4-compact,tiled-s8-compact,tiled-s12-compact,tiled-s16-compact"
has rmat24 && run_bench rmat24 --rmat 24 --reps 20 --only "${RMAT24_ONLY:-cusparse-natural,cusparse-sorted,tiled-s4,tiled-s8,$C,tiled-s8-compact-v16,tiled-s8-compact-v64,auto}"
has er24 && run_bench er24 --er 24 --reps 20 --skip-extra --only "${ER24_ONLY:-cusparse-natural,cusparse-sorted,binned,tiled-L2,auto}"
has rmat22 && run_bench rmat22 --rmat 22 --skip-extra --only "${RMAT22_ONLY:-cusparse-natural,cusparse-sorted,tiled-L2,tiled-s2,tiled-s2-compact,tiled-s4-compact,auto}"
has rmat20 && run_bench rmat20 --rmat 20 --only "${RMAT20_ONLY:-cusparse-natural,cusparse-sorted,tiled-L2,tiled-s1,tiled-s2-compact,auto}"
has slashdot && run_bench slashdot --file "$data" --only "${SLASHDOT_ONLY:-cusparse-natural,cusparse-sorted,binned,tiled-L2,tiled-s1,auto,auto-fp64}"
# the engine's device tests: the products of every layout against a host CSR, top-k, the GPU build
if has gpucheck && [ "$GPUS" -gt 0 ]; then
  for t in check-spmm check-topk check-build; do
    phase "$t" make -C cuda "$t"
    note "$t: $(grep -E '^[0-9]+ passed' "$OUT/$t.log" | tail -1)"
    grep -E '^FAIL' "$OUT/$t.log" | head -20 | tee -a "$SUMMARY" > /dev/null
  done
fi
# the graph zoo, in three sets (each about 5 to 10 minutes on an H100):
#   zoo          R-MAT 22 (random ids, and in breadth-first order), Erdos-Renyi 22, power-law graphs whose
#                ids carry locality (three strengths), the SNAP graphs in file order, a symmetrised graph,
#                and graphs whose ids were shuffled (hashed ids: the locality is in the edges, not the ids)
#   zoo-large    R-MAT 24, Erdos-Renyi 24, a locality graph at scale 23
#   zoo-untuned  kinds none of the layouts were developed with: dense rows, wide windows, weak locality,
#                R-MAT in crawl order and with 4 edges a node, Erdos-Renyi 23, SNAP graphs reordered
# every row: both cuSPARSE orders, the project's layouts in their orders, and auto (timed).
# ZOO: space-separated "label=pr_bench arguments" (commas for spaces) instead of a set; ZOO_ONLY: the kernels.
enron=${data%soc-slashdot0902.tsv.gz}email-enron.tsv.gz
ZOO_DEFAULT="rmat22=--rmat,22 rmat22-bfs=--rmat,22,--order,bfs er22=--er,22 local22-p50=--graph,local:22:16:0.5:256
local22-p80=--graph,local:22:16:0.8:64 local22-p95=--graph,local:22:16:0.95:16 slashdot=--file,$data
enron=--file,$enron slashdot-undirected=--file,$data,--undirected
local22-p90-shuf=--graph,local:22:16:0.9:64,--order,shuffled local21-ef64-shuf=--graph,local:21:64:0.9:64,--order,shuffled
local22-p50-shuf=--graph,local:22:16:0.5:256,--order,shuffled slashdot-shuf=--file,$data,--order,shuffled
enron-shuf=--file,$enron,--order,shuffled"
ZOO_LARGE="rmat24=--rmat,24 er24=--er,24 local23-p90=--graph,local:23:16:0.9:64"
ZOO_UNTUNED="local21-ef64=--graph,local:21:64:0.9:64 local22-p70-w4096=--graph,local:22:16:0.7:4096
local22-p30-w1024=--graph,local:22:16:0.3:1024 local23-p99-ef8=--graph,local:23:8:0.99:16 rmat23-bfs=--rmat,23,--order,bfs
rmat22-ef4=--graph,rmat:22:4 er23=--er,23 slashdot-bfs=--file,$data,--order,bfs enron-undirected=--file,$enron,--undirected"
zoo_only=${ZOO_ONLY:-cusparse-natural,cusparse-sorted,rowblocks-natural,rowblocks-locality,tiled-hubs,acoo-natural,auto}
for set in zoo zoo-large zoo-untuned; do
  has $set || continue
  case $set in zoo) graphs=${ZOO:-$ZOO_DEFAULT} ;; zoo-large) graphs=${ZOO:-$ZOO_LARGE} ;; *) graphs=${ZOO:-$ZOO_UNTUNED} ;; esac
  for entry in $graphs; do
    label=${entry%%=*}
    run_bench "zoo-$label" $(echo "${entry#*=}" | tr ',' ' ') --skip-extra --reps 10 --only "$zoo_only"
  done
done
# the k-column product (SpMM, cuda/kernels/pr_gpu_spmm.cuh): device correctness test, then the benchmark
if has spmm && [ "$GPUS" -gt 0 ]; then
  phase check-spmm make -C cuda check-spmm
  note "check-spmm: $(grep -E '^[0-9]+ passed' "$OUT/check-spmm.log" | tail -1)"
  grep -E '^FAIL' "$OUT/check-spmm.log" | head -20 | tee -a "$SUMMARY" > /dev/null
  run_bench spmm24 --rmat 24 --reps 20 --k "${SPMM24_KS:-8,16}" ${SPMM_VARIANTS:+--spmm-variants}
  run_bench spmm22 --rmat 22 --reps 20 --k "${SPMM22_KS:-8,16}"
fi
# the streamed engine (cuda/engine/pr_gpu_streamed.cu): the matrix copied from host memory every
# iteration; R-MAT 25 (~4.3 GB a product, ~40 GB of host memory with the build) when memory allows
if has streamed; then
  run_bench streamed24 --rmat 24 --reps 10 --streamed ${STREAM_BLOCKS:+--stream-blocks $STREAM_BLOCKS}
  if [ "$GPUS" -gt 0 ] && [ "$(awk '/MemAvailable/ {print int($2 / 1048576)}' /proc/meminfo)" -ge 64 ]; then
    run_bench streamed25 --rmat 25 --reps 5 --streamed ${STREAM_BLOCKS:+--stream-blocks $STREAM_BLOCKS}
  else
    note "streamed25: skipped (no GPU, or less than 64 GB of host memory available)"
  fi
fi

# hardware counters (Nsight Compute) of the RWR kernels: the k-column product, the update, the local
# step (the warm start's pass over the pull CSR), each profiled PROFILE_COUNT times in a pr_bench run
# at PROFILE_SCALE (pr_bench stops once they are profiled)
if has profile && [ "$GPUS" -gt 0 ]; then
  NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors.sum,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__t_sector_hit_rate.pct,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
  for kern in ${PROFILE_KERNELS:-k_spmm_binned k_pagerank_update_vec k_local_step}; do
    phase "profile_$kern" "$NCU" --clock-control none --kill on \
      -k "regex:^$kern" --launch-count "${PROFILE_COUNT:-2}" --metrics "$metrics" --csv \
      "$BENCH" --label profile --rmat "${PROFILE_SCALE:-24}" --reps 3 --k 8
    note "profile $kern: $(grep -c '^"' "$OUT/profile_$kern.log") csv lines"
    grep '^"' "$OUT/profile_$kern.log" | awk -F'","' '{print substr($5,1,40) " | " $(NF-2) " | " $(NF-1) " | " $NF}' | tr -d '"' | tee -a "$SUMMARY" > /dev/null
  done
fi

# the summary: every phase's exit, then each graph's table (or its last lines when cut off)
finish_summary > /dev/null
{
  echo
  echo "===== summary ====="
  cat "$SUMMARY"
  for b in "${benches[@]}"; do
    f=$OUT/$b.log
    [ -f "$f" ] || continue
    echo
    echo "--- $(basename "$f" .log)"
    if grep -qE '^### SpMM' "$f"; then
      grep -E '^(### SpMM|\| [0-9k])' "$f"
      grep -E '^# (k=|SpMV)' "$f" | cut -c1-260
    elif grep -qE '^\| (config|streamed)' "$f"; then
      grep -E '^(### |# pinned)' "$f"
      grep -E '^\| (config|streamed)' "$f"
      grep -E '^# streamed[^ ]*: ' "$f" | cut -c1-300
    elif grep -qE '^\| (kernel|cusparse|binned|tiled|acoo|auto)' "$f"; then
      grep -E '^### ' "$f"
      grep -E '^\| (kernel|cusparse|binned|tiled|acoo|auto)' "$f" | cut -d'|' -f2-4,6-8,10-12,15
      grep -E '^# auto measured choice' "$f" | cut -c1-400
      grep -E '^# (auto|tiled|binned)[^ ]* .*plan ' "$f" | sed -E 's/^# ([^ ]+) .*plan ([0-9.]+ s).*run.*\| (.*)$/  plan \2 \1 \3/' | cut -c1-220
    else
      echo "(no pr_bench table: no GPU, or the run failed) last lines:"
      tail -6 "$f"
    fi
  done
} | tee "$OUT/summary_table.txt"
exit "$BENCH_FAILED"

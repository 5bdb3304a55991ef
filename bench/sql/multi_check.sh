#!/bin/bash
# bench/sql/multi_check.sh — "the GPU service uses every visible GPU", checked inside PostgreSQL on a
# machine with two or more GPUs (those CUDA_VISIBLE_DEVICES names, else every GPU nvidia-smi lists).
#
#   [PG_CONFIG=/path/to/bin/pg_config] bench/sql/multi_check.sh
#
# 1. build   the extension, the GPU library (make -C cuda) and the multi-GPU library (cuda/Makefile.multi,
#            NCCL found by bench/multi/nccl_env.sh), installed (powerrank_gpu.so, powerrank_multi.so);
#            a throwaway cluster with the service (service_engine gpu, gpu_precision fp64, gpu_devices 0
#            = every GPU)
# 2. load    R-MAT $SCALE (default 20) into table edges by parallel binary COPY, cached
# 3. checks  PASS / FAIL lines, with N the GPUs found:
#            - powerrank_service shows "N x NAME" as its device
#            - pagerank(top_k 100) on device 'gpu' ran as gpu-multi(N); same top-100 nodes in the same
#              order as device 'cpu', max |score diff| <= 1e-9
#            - full pagerank (no top_k): same nodes, L1 <= 1e-9
#            - warm calls timed (gpu x5, cpu x3: median ms, iterate_ms)
#            - rwr(top_k 10) runs on the single-GPU engine (gpu-*, not gpu-multi) and agrees with the CPU
#            - non-convergence: damping 0.999999 on a 3-node graph where PageRank oscillates:
#              gpu-multi(N), 10 iterations, not converged, residual ~2/3
#            - cancel: statement_timeout stops that run (max_iterations 2e9) between iterations; the
#              engine process survives (restarts unchanged) and serves the next call
#            - with more than 2 GPUs, powerrank.gpu_devices = 2 (reload): PageRank on 2 of them
#            - powerrank.gpu_devices = 1 (reload): PageRank on one GPU again
# 4. summary PASS / FAIL counts; exit 1 on any FAIL (2 when it cannot run: one GPU only, no PostgreSQL).
#
# Environment (besides bench/common/cluster.sh's PG_CONFIG, PGBIN, PGUSER_OS, PORT, TMPDIR, KEEP):
# OUT (output folder, default bench-out/multi-check: summary.txt, the logs, server_log_tail.txt),
# SCALE (20; no GPU 14), NCCL_HOME (where nccl.h and libnccl are; found when unset).  NCCL's own
# settings (NCCL_*) pass from the environment to the server.
#
# Without a GPU (or NO_GPU=1): the service's cpu-test engine, R-MAT 14, the multi-GPU assertions (engine
# names, device) skipped and every other statement and comparison run — a check of the script.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/bench-out/multi-check}
phases=(multi_check)
. bench/common/phases.sh
. bench/common/cluster.sh
pg_init
GPUS=$(gpu_count)
passes=0; fails=0
pass() { passes=$((passes + 1)); note "PASS: $*"; }
failed() { fails=$((fails + 1)); note "FAIL: $*"; }
skipped() { note "SKIP (no GPU): $*"; }
check() {  # condition-as-awk-expression message
  if awk "BEGIN {exit !($1)}"; then pass "$2"; else failed "$2"; fi
}
finish() {
  note "SUMMARY: $passes passed, $fails failed in $(( $(date +%s) - BENCH_START )) s (R-MAT $SCALE, engine $ENGINE, $GPUS GPUs); logs in $OUT"
  [ "$fails" = 0 ]
  exit $?
}

if [ "$GPUS" -gt 0 ]; then
  [ "$GPUS" -ge 2 ] || die "$GPUS GPU visible: the multi-GPU checks need two or more"
  . bench/multi/nccl_env.sh
  [ -n "$NCCL_HOME" ] || die "no nccl.h found: set NCCL_HOME to the folder holding include/nccl.h and lib/libnccl.so"
  ENGINE=gpu; SCALE=${SCALE:-20}; SHBUF=8GB; CACHE=8GB
  multi_engine="gpu-multi($GPUS)"
else
  ENGINE=cpu-test; SCALE=${SCALE:-14}; SHBUF=256MB; CACHE=1GB
  multi_engine=cpu-test_via_service
fi
PARTS=$(( $(nproc) < 8 ? $(nproc) : 8 ))
note "== bench/sql/multi_check.sh on $(hostname), $(date -u +%FT%TZ): $(gpu_describe); $("$PG_CONFIG" --version); server as OS user $PGOS; engine $ENGINE${NCCL_HOME:+; NCCL_HOME=$NCCL_HOME}"

# ---- 1. build, install, server ---------------------------------------------------------------------
t0=$(date +%s)
if [ "$GPUS" -gt 0 ]; then multi=1; else multi=0; fi
pg_build_install "$multi" "$multi" > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; failed "build (see $OUT/build.log)"; finish; }
note "build + install: $(( $(date +%s) - t0 )) s; $(grep -h '^installing' "$OUT/build.log" | tr '\n' ' ')"
settings="-c shared_preload_libraries=powerrank -c shared_buffers=$SHBUF -c powerrank.cache_size=$CACHE
  -c powerrank.service_engine=$ENGINE -c powerrank.gpu_precision=fp64
  -c max_worker_processes=32 -c max_parallel_workers=16 -c max_parallel_workers_per_gather=8
  -c max_wal_size=16GB -c fsync=off -c synchronous_commit=off -c full_page_writes=off
  -c maintenance_work_mem=1GB -c max_connections=40"
shm_gb=$(df -BG --output=size /dev/shm 2> /dev/null | tail -1 | tr -dc 0-9)
if [ "$GPUS" -gt 0 ] && [ "${shm_gb:-0}" -lt 16 ]; then   # a small /dev/shm: cache segments as files
  settings="$settings -c dynamic_shared_memory_type=mmap"; note "/dev/shm ${shm_gb}G: mmap DSM"
fi
cluster_start "$settings" > "$OUT/server.log" 2>&1 || { cat "$OUT/server.log"; failed "server start"; finish; }
sql -c "CREATE EXTENSION powerrank"
wait_ready 600 || { failed "service ready: $(sql -c 'SELECT concat_ws(chr(32), state, last_error) FROM powerrank_service')"; finish; }
device=$(sql -c "SELECT device FROM powerrank_service")
note "service: $(sql -c "SELECT concat_ws(' | ', state, engine, device) FROM powerrank_service")"
if [ "$GPUS" = 0 ]; then skipped "device shows N x NAME"
else case "$device" in "$GPUS x "*) pass "service device is '$device'" ;; *) failed "service device '$device' is not '$GPUS x NAME'" ;; esac; fi

# ---- 2. load ---------------------------------------------------------------------------------------
load_edges "$SCALE" edges "$PARTS" > "$OUT/load.log" 2>&1 || { cat "$OUT/load.log"; failed "load"; finish; }
note "$(sed -n 's/^RESULT //p' "$OUT/load.log")"

# ---- 3. checks -------------------------------------------------------------------------------------
# top 100 on the service (cold: prepares the graph on every GPU) and on the CPU, in call order
out=$(sql -c "CREATE TABLE g_top AS SELECT node, score, ord FROM pagerank('edges', top_k => 100, device => 'gpu') WITH ORDINALITY AS t(node, score, ord)" \
          -c "SELECT concat_ws(' ', replace(engine, ' ', '_'), iterations, converged, round(total_ms::numeric, 1)) FROM powerrank_last_run()" \
          -c "CREATE TABLE c_top AS SELECT node, score, ord FROM pagerank('edges', top_k => 100, device => 'cpu') WITH ORDINALITY AS t(node, score, ord)" \
          -c "SELECT concat_ws(' ', replace(engine, ' ', '_'), iterations, converged) FROM powerrank_last_run()" 2>&1) \
  || { failed "top-100 calls: $out"; finish; }
read -r g_engine g_iter g_conv g_ms c_engine c_iter c_conv <<< "$(echo $out)"
note "cold top-100 on the service: engine $g_engine, $g_iter iterations, converged $g_conv, $g_ms ms; cpu: $c_engine, $c_iter iterations"
if [ "$GPUS" = 0 ]; then skipped "engine gpu-multi(N) (got '$g_engine')"
elif [ "$g_engine" = "$multi_engine" ]; then pass "pagerank(top_k 100, device gpu) ran as $g_engine"
else failed "engine '$g_engine', expected $multi_engine"; fi
if [ "$g_iter" = "$c_iter" ]; then pass "same iterations as the CPU ($g_iter)"; else failed "iterations: service $g_iter, cpu $c_iter"; fi
read -r n_g n_c same_order maxd <<< "$(sql -F ' ' -c "SELECT (SELECT count(*) FROM g_top), (SELECT count(*) FROM c_top),
    (SELECT count(*) FROM g_top g JOIN c_top c ON g.ord = c.ord AND g.node = c.node),
    (SELECT max(abs(g.score - c.score)) FROM g_top g JOIN c_top c USING (node))")"
if [ "$n_g" = 100 ] && [ "$n_c" = 100 ] && [ "$same_order" = 100 ]; then pass "top-100: same nodes in the same order (100/100)"
else failed "top-100: $n_g / $n_c rows, $same_order at the same rank"; fi
check "\"$maxd\" != \"\" && $maxd <= 1e-9" "top-100 max |score diff| = $maxd (<= 1e-9)"

# full vectors
read -r f_engine n_full l1 missing <<< "$(sql -F ' ' \
    -c "CREATE TABLE g_all AS SELECT * FROM pagerank('edges', device => 'gpu')" \
    -c "SELECT replace(engine, ' ', '_') FROM powerrank_last_run()" \
    -c "CREATE TABLE c_all AS SELECT * FROM pagerank('edges', device => 'cpu')" \
    -c "SELECT count(*), sum(abs(g.score - c.score)), count(*) FILTER (WHERE g.node IS NULL OR c.node IS NULL)
        FROM g_all g FULL JOIN c_all c USING (node)" | tr '\n' ' ')"
note "full pagerank on the service: engine $f_engine, $n_full nodes"
if [ "$GPUS" -gt 0 ]; then
  if [ "$f_engine" = "$multi_engine" ]; then pass "full pagerank ran as $f_engine"; else failed "full pagerank engine '$f_engine'"; fi
fi
if [ "$missing" = 0 ]; then pass "full pagerank: same $n_full nodes"; else failed "full pagerank: $missing nodes on one side only"; fi
check "\"$l1\" != \"\" && $l1 <= 1e-9" "full pagerank L1 = $l1 (<= 1e-9)"

# warm timings (timed_calls: ms engine iterations build_ms iterate_ms ...)
gw=$(timed_calls 5 "SELECT * FROM pagerank('edges', top_k => 100, device => 'gpu')")
cw=$(timed_calls 3 "SELECT * FROM pagerank('edges', top_k => 100, device => 'cpu')")
note "warm gpu calls (ms engine iterations build_ms iterate_ms total_ms cache_hit fallback read_ms prepare_ms):"
echo "$gw" | sed 's/^/  /' | tee -a "$SUMMARY"
note "RESULT warm pagerank(top_k 100) R-MAT $SCALE: service median $(echo "$gw" | awk '{print $1}' | median) ms (iterate $(echo "$gw" | awk '{print $5}' | median) ms, $(echo "$gw" | awk 'NR==1 {print $2}')), cpu median $(echo "$cw" | awk '{print $1}' | median) ms (iterate $(echo "$cw" | awk '{print $5}' | median) ms)"
if [ "$GPUS" -gt 0 ]; then
  engines=$(echo "$gw" | awk '{print $2}' | sort -u | tr '\n' ' ')
  if [ "$engines" = "$multi_engine " ]; then pass "warm calls all ran as $multi_engine"; else failed "warm engines: $engines"; fi
fi

# RWR stays on the single-GPU engine
src=$(sql -c "SELECT src FROM edges ORDER BY src LIMIT 1 OFFSET 1000")
read -r r_engine r_n r_max <<< "$(sql -F ' ' \
    -c "CREATE TABLE g_rwr AS SELECT * FROM rwr('edges', source => $src, top_k => 10, device => 'gpu')" \
    -c "SELECT replace(engine, ' ', '_') FROM powerrank_last_run()" \
    -c "CREATE TABLE c_rwr AS SELECT * FROM rwr('edges', source => $src, top_k => 10, device => 'cpu')" \
    -c "SELECT count(*), max(abs(g.score - c.score)) FROM g_rwr g JOIN c_rwr c USING (node)" | tr '\n' ' ')"
if [ "$GPUS" = 0 ]; then skipped "rwr engine gpu-* (got '$r_engine')"
else case "$r_engine" in gpu-multi*|"") failed "rwr engine '$r_engine' (expected the single-GPU engine)" ;;
       gpu-*) pass "rwr(top_k 10) ran on the single-GPU engine ($r_engine)" ;; *) failed "rwr engine '$r_engine'" ;; esac; fi
if [ "$r_n" = 10 ]; then pass "rwr top-10: same 10 nodes as the CPU"; else failed "rwr top-10: $r_n common nodes"; fi
check "\"$r_max\" != \"\" && $r_max <= 1e-9" "rwr top-10 max |score diff| = $r_max (<= 1e-9)"

# cancel: PageRank with damping 0.999999 on a graph where it oscillates (1->2, 2->1, 3->1: the mass
# swings between nodes 1 and 2, the L1 change ~2/3 shrinks by 1e-6 an iteration: ~4e7 iterations to
# converge), cached so that it runs on every GPU; statement_timeout must stop it between iterations
sql -c "CREATE TABLE cyc(src bigint, dst bigint)" -c "INSERT INTO cyc VALUES (1, 2), (2, 1), (3, 1)" \
    -c "SELECT powerrank_cache_enable('cyc')" > /dev/null
osc=$(sql -c "SELECT count(*) FROM pagerank('cyc', damping => 0.999999, max_iterations => 10, device => 'gpu')" \
          -c "SELECT concat_ws(' ', replace(engine, ' ', '_'), iterations, converged, round(residual::numeric, 6)) FROM powerrank_last_run()" 2> /dev/null | tr '\n' ' ')
read -r o_n o_engine o_iter o_conv o_res <<< "$osc"
if [ "$GPUS" -gt 0 ]; then
  if [ "$o_engine" = "$multi_engine" ]; then pass "the oscillating graph runs as $o_engine"; else failed "oscillating graph engine '$o_engine'"; fi
fi
if [ "$o_n" = 3 ] && [ "$o_iter" = 10 ] && [ "$o_conv" = f ] && awk "BEGIN {exit !(${o_res:-0} > 0.666 && ${o_res:-0} < 0.667)}"; then
  pass "damping 0.999999 on the 3-node graph: 10 iterations, not converged, residual $o_res"
else failed "damping 0.999999 on the 3-node graph: '$osc' (expected 3 rows, 10 iterations, f, residual ~2/3)"; fi
restarts0=$(sql -c "SELECT restarts FROM powerrank_service")
t0=$(date +%s.%N)
cancel_out=$(sql -c "SET statement_timeout = '2s'" \
    -c "SELECT count(*) FROM pagerank('cyc', damping => 0.999999, max_iterations => 2000000000, device => 'gpu')" 2>&1)
t1=$(date +%s.%N)
secs=$(calc "$t1 - $t0")
if echo "$cancel_out" | grep -q "statement timeout"; then check "$secs < 10" "statement_timeout stopped the run after $secs s"
else failed "statement_timeout: '$cancel_out' after $secs s"; fi
after=$(sql -c "SELECT count(*) FROM pagerank('edges', top_k => 100, device => 'gpu')" -c "SELECT replace(engine, ' ', '_') FROM powerrank_last_run()" | tr '\n' ' ')
restarts1=$(sql -c "SELECT restarts FROM powerrank_service")
if [ "$restarts1" = "$restarts0" ] && [ "${after%% *}" = 100 ]; then pass "after the cancel the same engine process serves ($after; restarts $restarts1)"
else failed "after the cancel: '$after', restarts $restarts0 -> $restarts1"; fi

# powerrank.gpu_devices = D (reload): PageRank on D GPUs (gpu-multi(D)), or on one (D = 1)
devices_check() {
  local d=$1 call
  reload_setting powerrank.gpu_devices "$d"
  call=$(sql -c "SELECT count(*) FROM pagerank('edges', top_k => 100, device => 'gpu')" -c "SELECT replace(engine, ' ', '_') FROM powerrank_last_run()" | tr '\n' ' ')
  note "gpu_devices = $d: device '$(sql -c "SELECT device FROM powerrank_service")', call: $call"
  if [ "$GPUS" = 0 ]; then skipped "gpu_devices = $d engine"; return; fi
  case "$d:$call" in
    1:"100 gpu-multi"*) failed "gpu_devices = 1 still multi: $call" ;;
    1:"100 gpu-"*) pass "gpu_devices = 1: one GPU ($call)" ;;
    *:"100 gpu-multi($d) ") pass "gpu_devices = $d: $d GPUs ($call)" ;;
    *) failed "gpu_devices = $d: $call" ;;
  esac
}
if [ "$GPUS" -gt 2 ]; then devices_check 2; fi
devices_check 1
reset_settings powerrank.gpu_devices

grep -i "multi-GPU" "$PGLOG" | tail -5 | sed 's/^/log: /' | tee -a "$SUMMARY"
finish

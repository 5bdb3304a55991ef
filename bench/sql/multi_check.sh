#!/bin/bash
# bench/sql/multi_check.sh — "the GPU service uses every visible GPU" checked inside
# PostgreSQL, in ONE device call on nvidia-h200-x2 (runs as root there, from the project root, with
# .carry carried), in well under 300 s.
#
#   bench/sql/multi_check.sh
#
# 1. setup   builds the extension, the GPU library (make -C cuda) and the multi-GPU library
#            (cuda/Makefile.multi, NCCL_HOME found as bench/multi/device_run.sh finds it), installs
#            them (powerrank_gpu.so, powerrank_multi.so), starts the portable PostgreSQL from .carry
#            with the service (service_engine gpu, gpu_precision fp64, gpu_devices 0 = every GPU)
# 2. load    R-MAT $SCALE (default 20) into table edges (bench/sql/rmat_copy.c), cached
# 3. checks  PASS/FAIL lines:
#            - powerrank_service shows "2 x NAME" as its device
#            - pagerank(top_k 100) on device 'gpu' ran as gpu-multi(2); same top-100 nodes in the same
#              order as device 'cpu', max |score diff| <= 1e-9
#            - full pagerank (no top_k): same nodes, L1 <= 1e-9
#            - warm calls timed (gpu x5, cpu x3: median ms, iterate_ms)
#            - rwr(top_k 10) still runs on the single-GPU engine (gpu-*, not gpu-multi) and agrees
#              with the CPU (max diff <= 1e-9)
#            - non-convergence: damping 0.999999 on a 3-node graph where PageRank oscillates:
#              gpu-multi(2), 10 iterations, not converged, residual ~2/3
#            - cancel: statement_timeout stops that run (max_iterations 2e9) between iterations;
#              the engine process survives (restarts unchanged) and serves the next call
#            - powerrank.gpu_devices = 1 (reload): PageRank runs on one GPU again
# 4. summary PASS/FAIL counts (exit 1 on any FAIL).
#
# env: OUT (default ./bench-multi-out: summary.txt, pg_log_tail.txt), SCALE (20), DRY_RUN=1 (below)
#
# DRY_RUN=1: this machine, no GPU — a throwaway cluster of /usr/lib/postgresql/15 in a temp dir as the
# OS user postgres, service_engine 'cpu-test', R-MAT 14; the multi-GPU assertions (engine names,
# device) are skipped, every other statement and comparison runs.  (make && make install first is
# done by the script itself.)
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
DRY_RUN=${DRY_RUN:-0}
FINAL_OUT=${OUT:-$ROOT/bench-multi-out}
mkdir -p "$FINAL_OUT"
SUMMARY=$FINAL_OUT/summary.txt
: > "$SUMMARY"
START=$(date +%s)
passes=0; fails=0
note() { echo "$*" | tee -a "$SUMMARY"; }
pass() { passes=$((passes + 1)); note "PASS: $*"; }
failed() { fails=$((fails + 1)); note "FAIL: $*"; }
check() {  # condition-as-awk-expression message
  if awk "BEGIN {exit !($1)}"; then pass "$2"; else failed "$2"; fi
}

if [ "$DRY_RUN" = 1 ]; then
  PGBIN=/usr/lib/postgresql/15/bin; PGOS=postgres
  WORK=${WORK:-/tmp/prmulti-dry}; rm -rf "$WORK"; mkdir -p "$WORK"; chmod 755 "$WORK"; chown "$PGOS" "$WORK"
  PGDATA=$WORK/data; PGLOG=$WORK/pg.log; SOCK=$WORK; PORT=54331
  SCALE=${SCALE:-14}; PARTS=2; ENGINE=cpu-test; SHBUF=256MB; CACHE=1GB
else
  PGBIN=/opt/pg15/bin; PGOS=pg
  WORK=/tmp/prmulti; mkdir -p "$WORK"; chmod 755 "$WORK"
  PGDATA=/tmp/pgdata; PGLOG=/tmp/pg.log; SOCK=/tmp; PORT=5432
  SCALE=${SCALE:-20}; PARTS=8; ENGINE=gpu; SHBUF=8GB; CACHE=8GB
  export PATH=/opt/pg15/bin:/usr/local/cuda/bin:$PATH
  export LD_LIBRARY_PATH=/opt/pg15/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
  # NCCL: the pip package nvidia-nccl-cu13 on the lent machines, else the CUDA toolkit
  . bench/multi/nccl_env.sh
  # NVLink multicast off: the lent machines require it; the server (and its GPU service) inherits it
  export NCCL_NVLS_ENABLE=0
fi
PGCONF=$PGBIN/pg_config
export PGHOST=$SOCK PGPORT=$PORT PGUSER=postgres PGDATABASE=bench

as_pg() { runuser -u "$PGOS" -- env PATH="$PGBIN:$PATH" LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" PGHOST="$PGHOST" \
            PGPORT="$PGPORT" PGUSER=postgres PGDATABASE="${PGDATABASE}" "$@"; }
sql() { as_pg psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
wait_ready() { for _ in $(seq 600); do [ "$(sql -c 'SELECT state FROM powerrank_service')" = ready ] && return 0; sleep 0.1; done; return 1; }
finish() {
  local rc=0
  [ "$fails" -gt 0 ] && rc=1
  note "SUMMARY: $passes passed, $fails failed in $(( $(date +%s) - START )) s (scale $SCALE, engine $ENGINE)"
  tail -60 "$PGLOG" > "$FINAL_OUT/pg_log_tail.txt" 2>/dev/null
  if [ "$DRY_RUN" = 1 ]; then as_pg "$PGBIN/pg_ctl" -D "$PGDATA" stop -m fast > /dev/null 2>&1; fi
  exit $rc
}

# ---- 1. setup ----------------------------------------------------------------------------------------
t0=$(date +%s)
if [ "$DRY_RUN" = 1 ]; then
  note "DRY RUN on $(hostname): no GPU, service_engine cpu-test, R-MAT $SCALE"
  make -s -j2 > "$WORK/build.log" 2>&1 && make -s install >> "$WORK/build.log" 2>&1 || { tail -20 "$WORK/build.log"; failed "build"; finish; }
  as_pg "$PGBIN/initdb" -D "$PGDATA" -A trust -U postgres > "$WORK/initdb.log" 2>&1 || { cat "$WORK/initdb.log"; failed "initdb"; finish; }
else
  note "$(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tr '\n' ';') NCCL_HOME=$NCCL_HOME"
  [ -x /opt/pg15/bin/postgres ] || { mkdir -p /opt && tar xzf .carry/pg15.tar.gz -C /opt; }
  make -C cuda -j16 > "$WORK/build_cuda.log" 2>&1 & c1=$!
  make -C cuda -f Makefile.multi -j16 NCCL_HOME="$NCCL_HOME" > "$WORK/build_multi.log" 2>&1 & c2=$!
  make -s -j16 PG_CONFIG=$PGCONF > "$WORK/build_ext.log" 2>&1; e=$?
  wait $c1 || { tail -20 "$WORK/build_cuda.log"; e=1; }
  wait $c2 || { tail -20 "$WORK/build_multi.log"; e=1; }
  [ $e -eq 0 ] && make -s PG_CONFIG=$PGCONF install >> "$WORK/build_ext.log" 2>&1 || e=1
  grep -h "installing" "$WORK/build_ext.log"
  [ $e -eq 0 ] || { tail -20 "$WORK/build_ext.log"; failed "build"; finish; }
  if [ -f /tmp/pgdata/postmaster.pid ]; then   # a warm machine: stop an earlier call's server
    runuser -u pg -- env LD_LIBRARY_PATH=/opt/pg15/lib /opt/pg15/bin/pg_ctl -D /tmp/pgdata stop -m immediate || true
  fi
  rm -rf /tmp/pgdata
fi
note "build + install: $(( $(date +%s) - t0 )) s"
settings="-c shared_preload_libraries=powerrank -c shared_buffers=$SHBUF -c powerrank.cache_size=$CACHE
  -c powerrank.service_engine=$ENGINE -c powerrank.gpu_precision=fp64
  -c max_wal_size=16GB -c fsync=off -c synchronous_commit=off -c full_page_writes=off
  -c maintenance_work_mem=1GB -c max_connections=40"
shm_gb=$(df -BG --output=size /dev/shm 2>/dev/null | tail -1 | tr -dc 0-9)
if [ "$DRY_RUN" != 1 ] && [ "${shm_gb:-0}" -lt 16 ]; then   # a small /dev/shm: cache segments as files
  settings="$settings -c dynamic_shared_memory_type=mmap"; note "/dev/shm ${shm_gb}G: mmap DSM"
fi
if [ "$DRY_RUN" = 1 ]; then
  as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PGLOG" -w -o "-k $SOCK -p $PORT -c listen_addresses='' $(echo $settings)" start > /dev/null \
    || { tail -20 "$PGLOG"; failed "server start"; finish; }
else
  PGDATABASE=postgres bash .carry/device/pg-up.sh .carry/pg15.tar.gz $(echo $settings) || { failed "server start"; finish; }
  chown pg "$WORK"
fi
PGDATABASE=postgres sql -c "CREATE DATABASE bench"
sql -c "CREATE EXTENSION powerrank"
wait_ready || { failed "service ready: $(sql -c 'SELECT concat_ws(chr(32), state, last_error) FROM powerrank_service')"; finish; }
device=$(sql -c "SELECT device FROM powerrank_service")
note "service: $(sql -c "SELECT concat_ws(' | ', state, engine, device) FROM powerrank_service")"
if [ "$DRY_RUN" = 1 ]; then note "SKIP (dry run): device shows 2 x NAME"
else case "$device" in "2 x "*) pass "service device is '$device'" ;; *) failed "service device '$device' is not '2 x NAME'" ;; esac; fi

# ---- 2. load -----------------------------------------------------------------------------------------
t0=$(date +%s)
gcc -O2 -std=gnu11 -pthread -Itest/common -o "$WORK/rmat_copy" bench/sql/rmat_copy.c test/common/graph_gen.c || { failed "rmat_copy build"; finish; }
rows=$("$WORK/rmat_copy" "$SCALE" 16 "$((20261121 + SCALE))" "$PARTS" "$WORK/edges") || { failed "R-MAT generation"; finish; }
chmod 644 "$WORK"/edges.*.bin
sql -c "CREATE UNLOGGED TABLE edges(src bigint, dst bigint)"
for p in $(seq 0 $((PARTS - 1))); do sql -c "COPY edges FROM '$WORK/edges.$p.bin' WITH (FORMAT binary)" & done; wait
rm -f "$WORK"/edges.*.bin
sql -c "VACUUM ANALYZE edges" -c "SELECT powerrank_cache_enable('edges')" > /dev/null
note "load: R-MAT $SCALE, $rows edges in $(( $(date +%s) - t0 )) s"

# ---- 3. checks ---------------------------------------------------------------------------------------
if [ "$DRY_RUN" = 1 ]; then multi_engine="cpu-test_via_service"; else multi_engine="gpu-multi(2)"; fi

# top 100 on the service (cold: prepares the graph on both GPUs) and on the CPU, in call order
out=$(sql -c "CREATE TABLE g_top AS SELECT node, score, ord FROM pagerank('edges', top_k => 100, device => 'gpu') WITH ORDINALITY AS t(node, score, ord)" \
          -c "SELECT concat_ws(' ', replace(engine, ' ', '_'), iterations, converged, round(total_ms::numeric, 1)) FROM powerrank_last_run()" \
          -c "CREATE TABLE c_top AS SELECT node, score, ord FROM pagerank('edges', top_k => 100, device => 'cpu') WITH ORDINALITY AS t(node, score, ord)" \
          -c "SELECT concat_ws(' ', replace(engine, ' ', '_'), iterations, converged) FROM powerrank_last_run()") || { failed "top-100 calls: $out"; finish; }
read -r g_engine g_iter g_conv g_ms c_engine c_iter c_conv <<< "$(echo $out)"
note "cold top-100 on the service: engine $g_engine, $g_iter iterations, converged $g_conv, $g_ms ms; cpu: $c_engine, $c_iter iterations"
if [ "$DRY_RUN" = 1 ]; then note "SKIP (dry run): engine gpu-multi(2) (got '$g_engine')"
else [ "$g_engine" = "$multi_engine" ] && pass "pagerank(top_k 100, device gpu) ran as $g_engine" || failed "engine '$g_engine', expected $multi_engine"; fi
[ "$g_iter" = "$c_iter" ] && pass "same iterations as the CPU ($g_iter)" || failed "iterations: service $g_iter, cpu $c_iter"
read -r n_g n_c same_order maxd <<< "$(sql -F ' ' -c "SELECT (SELECT count(*) FROM g_top), (SELECT count(*) FROM c_top),
    (SELECT count(*) FROM g_top g JOIN c_top c ON g.ord = c.ord AND g.node = c.node),
    (SELECT max(abs(g.score - c.score)) FROM g_top g JOIN c_top c USING (node))")"
[ "$n_g" = 100 ] && [ "$n_c" = 100 ] && [ "$same_order" = 100 ] \
  && pass "top-100: same nodes in the same order (100/100)" || failed "top-100: $n_g / $n_c rows, $same_order at the same rank"
check "\"$maxd\" != \"\" && $maxd <= 1e-9" "top-100 max |score diff| = $maxd (<= 1e-9)"

# full vectors
read -r f_engine n_full l1 missing <<< "$(sql -F ' ' \
    -c "CREATE TABLE g_all AS SELECT * FROM pagerank('edges', device => 'gpu')" \
    -c "SELECT replace(engine, ' ', '_') FROM powerrank_last_run()" \
    -c "CREATE TABLE c_all AS SELECT * FROM pagerank('edges', device => 'cpu')" \
    -c "SELECT count(*), sum(abs(g.score - c.score)), count(*) FILTER (WHERE g.node IS NULL OR c.node IS NULL)
        FROM g_all g FULL JOIN c_all c USING (node)" | tr '\n' ' ')"
note "full pagerank on the service: engine $f_engine, $n_full nodes"
[ "$DRY_RUN" = 1 ] || { [ "$f_engine" = "$multi_engine" ] && pass "full pagerank ran as $f_engine" || failed "full pagerank engine '$f_engine'"; }
[ "$missing" = 0 ] && pass "full pagerank: same $n_full nodes" || failed "full pagerank: $missing nodes on one side only"
check "\"$l1\" != \"\" && $l1 <= 1e-9" "full pagerank L1 = $l1 (<= 1e-9)"

# warm timings: "ms engine iterate_ms" per call
timed() {  # reps query
  local f=$WORK/timed.sql
  { for _ in $(seq "$1"); do echo '\timing on'; echo "${2%;} \\g /dev/null"; echo '\timing off'
      echo "SELECT concat_ws(' ', 'STATS', replace(engine, ' ', '_'), round(iterate_ms::numeric, 2), iterations) FROM powerrank_last_run();"; done; } > "$f"
  chmod 644 "$f"; sql -f "$f" | awk '/^Time:/ {t=$2} /^STATS/ {$1=""; print t $0}'
}
gw=$(timed 5 "SELECT * FROM pagerank('edges', top_k => 100, device => 'gpu')")
cw=$(timed 3 "SELECT * FROM pagerank('edges', top_k => 100, device => 'cpu')")
note "warm gpu calls (ms engine iterate_ms iterations):"; echo "$gw" | sed 's/^/  /' | tee -a "$SUMMARY"
note "RESULT warm pagerank(top_k 100) R-MAT $SCALE: service median $(echo "$gw" | awk '{print $1}' | median) ms (iterate $(echo "$gw" | awk '{print $3}' | median) ms, $(echo "$gw" | awk 'NR==1 {print $2}')), cpu median $(echo "$cw" | awk '{print $1}' | median) ms (iterate $(echo "$cw" | awk '{print $3}' | median) ms)"
[ "$DRY_RUN" = 1 ] || { [ "$(echo "$gw" | awk '{print $2}' | sort -u)" = "$multi_engine" ] && pass "warm calls all ran as $multi_engine" || failed "warm engines: $(echo "$gw" | awk '{print $2}' | sort -u | tr '\n' ' ')"; }

# RWR stays on the single-GPU engine
src=$(sql -c "SELECT src FROM edges ORDER BY src LIMIT 1 OFFSET 1000")
read -r r_engine r_n r_max <<< "$(sql -F ' ' \
    -c "CREATE TABLE g_rwr AS SELECT * FROM rwr('edges', source => $src, top_k => 10, device => 'gpu')" \
    -c "SELECT replace(engine, ' ', '_') FROM powerrank_last_run()" \
    -c "CREATE TABLE c_rwr AS SELECT * FROM rwr('edges', source => $src, top_k => 10, device => 'cpu')" \
    -c "SELECT count(*), max(abs(g.score - c.score)) FROM g_rwr g JOIN c_rwr c USING (node)" | tr '\n' ' ')"
if [ "$DRY_RUN" = 1 ]; then note "SKIP (dry run): rwr engine gpu-* (got '$r_engine')"
else case "$r_engine" in gpu-multi*|"") failed "rwr engine '$r_engine' (expected the single-GPU engine)" ;;
       gpu-*) pass "rwr(top_k 10) ran on the single-GPU engine ($r_engine)" ;; *) failed "rwr engine '$r_engine'" ;; esac; fi
[ "$r_n" = 10 ] && pass "rwr top-10: same 10 nodes as the CPU" || failed "rwr top-10: $r_n common nodes"
check "\"$r_max\" != \"\" && $r_max <= 1e-9" "rwr top-10 max |score diff| = $r_max (<= 1e-9)"

# cancel: PageRank with damping 0.999999 on a graph where it oscillates (1->2, 2->1, 3->1: the mass
# swings between nodes 1 and 2, the L1 change ~2/3 shrinks by 1e-6 an iteration: ~4e7 iterations to
# converge), cached so that it runs on every GPU; statement_timeout must stop it between iterations
sql -c "CREATE TABLE cyc(src bigint, dst bigint)" -c "INSERT INTO cyc VALUES (1, 2), (2, 1), (3, 1)" \
    -c "SELECT powerrank_cache_enable('cyc')" > /dev/null
osc=$(sql -c "SELECT count(*) FROM pagerank('cyc', damping => 0.999999, max_iterations => 10, device => 'gpu')" \
          -c "SELECT concat_ws(' ', replace(engine, ' ', '_'), iterations, converged, round(residual::numeric, 6)) FROM powerrank_last_run()" 2>/dev/null | tr '\n' ' ')
read -r o_n o_engine o_iter o_conv o_res <<< "$osc"
[ "$DRY_RUN" = 1 ] || { [ "$o_engine" = "$multi_engine" ] && pass "the oscillating graph runs as $o_engine" || failed "oscillating graph engine '$o_engine'"; }
[ "$o_n" = 3 ] && [ "$o_iter" = 10 ] && [ "$o_conv" = f ] && awk "BEGIN {exit !(${o_res:-0} > 0.666 && ${o_res:-0} < 0.667)}" \
  && pass "damping 0.999999 on the 3-node graph: 10 iterations, not converged, residual $o_res" \
  || failed "damping 0.999999 on the 3-node graph: '$osc' (expected 3 rows, 10 iterations, f, residual ~2/3)"
restarts0=$(sql -c "SELECT restarts FROM powerrank_service")
t0=$(date +%s.%N)
cancel_out=$(sql -c "SET statement_timeout = '2s'" \
    -c "SELECT count(*) FROM pagerank('cyc', damping => 0.999999, max_iterations => 2000000000, device => 'gpu')" 2>&1)
t1=$(date +%s.%N)
secs=$(awk "BEGIN {printf \"%.2f\", $t1 - $t0}")
echo "$cancel_out" | grep -q "statement timeout" && check "$secs < 10" "statement_timeout stopped the run after $secs s" \
  || failed "statement_timeout: '$cancel_out' after $secs s"
after=$(sql -c "SELECT count(*) FROM pagerank('edges', top_k => 100, device => 'gpu')" -c "SELECT replace(engine, ' ', '_') FROM powerrank_last_run()" | tr '\n' ' ')
restarts1=$(sql -c "SELECT restarts FROM powerrank_service")
[ "$restarts1" = "$restarts0" ] && [ "${after%% *}" = 100 ] \
  && pass "after the cancel the same engine process serves ($after; restarts $restarts1)" \
  || failed "after the cancel: '$after', restarts $restarts0 -> $restarts1"

# powerrank.gpu_devices = 1: back to one GPU
sql -c "ALTER SYSTEM SET powerrank.gpu_devices = 1" -c "SELECT pg_reload_conf()" > /dev/null
sleep 2; wait_ready
one=$(sql -c "SELECT count(*) FROM pagerank('edges', top_k => 100, device => 'gpu')" -c "SELECT replace(engine, ' ', '_') FROM powerrank_last_run()" | tr '\n' ' ')
note "gpu_devices = 1: device '$(sql -c "SELECT device FROM powerrank_service")', call: $one"
if [ "$DRY_RUN" = 1 ]; then note "SKIP (dry run): gpu_devices = 1 engine"
else case "$one" in "100 gpu-multi"*) failed "gpu_devices = 1 still multi: $one" ;; "100 gpu-"*) pass "gpu_devices = 1: one GPU ($one)" ;; *) failed "gpu_devices = 1: $one" ;; esac; fi
sql -c "ALTER SYSTEM RESET powerrank.gpu_devices" -c "SELECT pg_reload_conf()" > /dev/null

grep -i "multi-GPU" "$PGLOG" | tail -5 | sed 's/^/log: /' | tee -a "$SUMMARY"
finish

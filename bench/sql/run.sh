#!/bin/bash
# bench/sql/run.sh — the GPU service measured inside PostgreSQL: build and install, a throwaway cluster
# with the service, a graph loaded by parallel binary COPY, cold and warm calls, RWR latency under
# pgbench, the auto threshold, the standalone engine, the mixed load, the streamed engine, and the
# regression suite with the service preloaded plus the GPU checks.  bench/README.md says what each phase
# measures, prints and takes.
#
#   [PG_CONFIG=/path/to/bin/pg_config] bench/sql/run.sh [GROUP | PHASE] ...
#     figures (the default) = build load cold rwr auto standalone
#     checks                = build suite gpucheck
#     all                   = build suite gpucheck load cold rwr auto standalone streamed mixed
#   Phases run in that order, whatever the order named.  cold and rwr load the table edges first when
#   load is not named.  gpucheck, load, cold, rwr, auto, streamed and mixed run on one throwaway cluster
#   started for the run (the service preloaded) and removed at the end; build, suite and standalone
#   need none.  Every phase's output goes to $OUT/PHASE.log; its RESULT lines and the summary to stdout
#   and $OUT/summary.txt.  Exit status 1 when a phase failed.
#
# Without a GPU (nvidia-smi lists none, CUDA_VISIBLE_DEVICES is empty, or NO_GPU=1) the service runs
# its cpu-test engine on small graphs with powerrank.gpu_min_edges = 0: a check of every statement,
# pgbench script and aggregation, not a measurement; the CUDA build, check-topk, check-build, standalone
# and streamed are skipped.
#
# Environment (besides bench/common/cluster.sh's PG_CONFIG, PGBIN, PGUSER_OS, PORT, TMPDIR, KEEP):
#   OUT          output folder (default bench-out/sql under the project root)
#   SCALE        R-MAT scale of the table edges (24; no GPU 17)
#   GRAPH        another graph for edges: a graph_gen.h name (local:23:16:0.9:64), slashdot, enron, or
#                a .tsv(.gz) file (bench/common/cluster.sh, load_edges)
#   PARTS        parallel COPYs of a load (the machine's cores, at most 16)
#   PRECISION    powerrank.gpu_precision of the figures (fp32; the suite's checks run fp64)
#   COMPARE_KERNEL  cold: the warm calls again with this powerrank.gpu_kernel (e.g. cusparse)
#   RWR_SECS (30; no GPU 10), RWR_BATCHES (service_batch_size values, "8 1"), RWR_WARM (warm_start
#                values, "on"), RWR_NORMS (rwr stopping norms, "l1"; e.g. "l1 linf"), RWR_CERTIFIED
#                (powerrank.stop_when_certified values, "off"; e.g. "off on")
#   AUTO_SCALES  R-MAT scales of the auto phase ("15 17 19 21"; no GPU "11 12 13 14")
#   MIX_SECS (300; no GPU 20), MIX_SCALE (22; no GPU 15), BOUND (2e-5: the mixed checks' score bound)
#   STREAM_SCALE (24), STREAM_GPU_MB (512): the streamed phase's table and powerrank.gpu_memory
#   SHARED_BUFFERS (32GB; no GPU 512MB), CACHE_SIZE (powerrank.cache_size, 16GB; no GPU 2GB),
#   EXTRA_SETTINGS ("-c name=value ..." added to the server's settings), THREADS (pr_bench and the
#   CPU engine's threads in streamed: the machine's cores), PYTHON (a python3 with networkx for the
#   suite's reference results: the first of /usr/bin/python3 and python3 on PATH that has it)
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/bench-out/sql}

phases=()
for arg in "${@:-figures}"; do
  case $arg in
    figures) phases+=(build load cold rwr auto standalone) ;;
    checks) phases+=(build suite gpucheck) ;;
    all) phases+=(build suite gpucheck load cold rwr auto standalone streamed mixed) ;;
    build|suite|gpucheck|load|cold|rwr|auto|standalone|streamed|mixed) phases+=("$arg") ;;
    *) echo "unknown phase or group '$arg' (figures, checks, all; build suite gpucheck load cold rwr auto standalone streamed mixed)" >&2; exit 2 ;;
  esac
done
. bench/common/phases.sh
. bench/common/cluster.sh
if { has cold || has rwr; } && ! has load; then phases+=(load); fi
pg_init

GPUS=$(gpu_count)
CORES=$(nproc)
THREADS=${THREADS:-$CORES}
PARTS=${PARTS:-$(( CORES < 16 ? CORES : 16 ))}
PRECISION=${PRECISION:-fp32}   # the standalone figures (bench/gpu) are fp32; the default tolerance (L1 1e-6) is in its range
BOUND=${BOUND:-2e-5}           # per-node |service - cpu| of the mixed checks (two runs each to L1 1e-6)
RWR_BATCHES=${RWR_BATCHES:-"8 1"}
# the suite's NetworkX reference: PYTHON, else the first of /usr/bin/python3 and python3 that has networkx
for py in ${PYTHON:-/usr/bin/python3 $(command -v python3)}; do
  PYTHON=$py
  "$py" -c 'import networkx' 2> /dev/null && break
done
if [ "$GPUS" -gt 0 ]; then
  ENGINE=gpu
  SCALE=${SCALE:-24}; MIX_SECS=${MIX_SECS:-300}; MIX_SCALE=${MIX_SCALE:-22}; RWR_SECS=${RWR_SECS:-30}
  AUTO_SCALES=${AUTO_SCALES:-"15 17 19 21"}; SAMPLE_SECS=${SAMPLE_SECS:-30}
  SHARED_BUFFERS=${SHARED_BUFFERS:-32GB}; CACHE_SIZE=${CACHE_SIZE:-16GB}
  MODE_SETTINGS=""
else
  ENGINE=cpu-test
  SCALE=${SCALE:-17}; MIX_SECS=${MIX_SECS:-20}; MIX_SCALE=${MIX_SCALE:-15}; RWR_SECS=${RWR_SECS:-10}
  AUTO_SCALES=${AUTO_SCALES:-"11 12 13 14"}; SAMPLE_SECS=${SAMPLE_SECS:-5}
  SHARED_BUFFERS=${SHARED_BUFFERS:-512MB}; CACHE_SIZE=${CACHE_SIZE:-2GB}
  MODE_SETTINGS="-c powerrank.gpu_min_edges=0"   # 'auto' sends these small graphs to the service too
fi

# ---------------------------------------------------------------------------------------------------
phase_build() {
  set -e
  local t0=$SECONDS
  if [ "$GPUS" -gt 0 ]; then nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; fi
  pg_build_install "$( [ "$GPUS" -gt 0 ] && echo 1 || echo 0)"
  echo "RESULT build $( [ "$GPUS" -gt 0 ] && echo '(extension + GPU library)' || echo '(extension)') and install into $PG_PKGLIBDIR: $(( SECONDS - t0 )) s"
}

# starts the cluster with the service, creates the extension and bench/sql/helpers.sql in database bench
phase_server() {
  set -e
  local dsm="" shm_gb
  pg_require_installed "$( [ "$GPUS" -gt 0 ] && echo gpu)"
  echo "cpus $CORES; $(free -g | awk '/Mem/ {print $2 " GiB"}'); /dev/shm $(df -h /dev/shm | awk 'NR==2 {print $2}')"
  # the cached graphs and request segments are dynamic shared memory: files when /dev/shm is small
  shm_gb=$(df -BG --output=size /dev/shm 2> /dev/null | tail -1 | tr -dc 0-9)
  if [ "$GPUS" -gt 0 ] && [ "${shm_gb:-0}" -lt 48 ]; then dsm="-c dynamic_shared_memory_type=mmap"; echo "/dev/shm ${shm_gb}G: mmap DSM"; fi
  cluster_start "-c shared_preload_libraries=powerrank -c shared_buffers=$SHARED_BUFFERS -c powerrank.cache_size=$CACHE_SIZE
    -c powerrank.service_engine=$ENGINE -c max_worker_processes=32 -c max_parallel_workers=16 -c max_parallel_workers_per_gather=8
    -c max_wal_size=64GB -c checkpoint_timeout=1h -c fsync=off -c synchronous_commit=off -c full_page_writes=off
    -c maintenance_work_mem=2GB -c work_mem=256MB -c max_connections=60 $dsm $MODE_SETTINGS ${EXTRA_SETTINGS:-}"
  # the precision by ALTER SYSTEM, not on the command line (which would override the phases' ALTER SYSTEM)
  sql -c "ALTER SYSTEM SET powerrank.gpu_precision = 'fp64'" -c "SELECT pg_reload_conf()" > /dev/null
  sql -c "CREATE EXTENSION powerrank"
  sql < bench/sql/helpers.sql
  wait_ready 600 || true
  echo "RESULT service $(sql -c "SELECT concat_ws(' | ', state, engine, device, last_error) FROM powerrank_service")"
  [ "$(sql -c 'SELECT state FROM powerrank_service')" = ready ]
}

# a copy of the working tree in $WORK/tree, owned by the server's OS user (the suite runs there)
copy_tree() {
  [ -d "$WORK/tree" ] && return 0
  mkdir -p "$WORK/tree"
  tar -C "$ROOT" --exclude=./.git --exclude=./bench-out --exclude="./${OUT#"$ROOT"/}" -cf - . | tar -C "$WORK/tree" -xf -
  own "$WORK/tree"
}

phase_suite() {
  set -e
  local extra=() rc cron_tests
  pg_require_installed
  echo "== make installcheck (temporary instances: test/regress.conf, powerrank + pg_cron preloaded, cpu-test service)"
  copy_tree
  if [ ! -f "$PG_PKGLIBDIR/pg_cron.so" ]; then   # no pg_cron: the suite without the tests that use it
    grep -v pg_cron "$WORK/tree/test/regress.conf" | sed '/^cron\./d' > "$WORK/tree/test/regress_nocron.conf"
    echo "shared_preload_libraries = 'powerrank'" >> "$WORK/tree/test/regress_nocron.conf"
    cron_tests=$(cd "$WORK/tree/sql" && grep -l pg_cron ./*.sql | sed 's|^\./||; s|\.sql$||')
    extra=(REGRESS="$(make -s -C "$WORK/tree" print-tests PG_CONFIG="$PG_CONFIG" | sed -n 's/^pg_regress://p' | grep -vxF "$cron_tests" | tr '\n' ' ')"
           REGRESS_OPTS="--inputdir=. --temp-instance=./tmp_check --temp-config=test/regress_nocron.conf --load-extension=powerrank")
    echo "RESULT WARNING: pg_cron is not installed in $PG_PKGLIBDIR: the suite runs without the tests that use it:" $cron_tests
  fi
  # the NetworkX reference results by this user (PYTHON may be one the server's OS user cannot run)
  make -s -C "$WORK/tree" PG_CONFIG="$PG_CONFIG" PYTHON="$PYTHON" reference
  own "$WORK/tree"
  set +e
  (cd "$WORK/tree" && as_pg make -s PG_CONFIG="$PG_CONFIG" PYTHON="$PYTHON" installcheck "${extra[@]}") 2>&1 | tee "$WORK/suite.txt"
  rc=${PIPESTATUS[0]}
  cp "$WORK/tree/regression.diffs" "$OUT/regression.diffs" 2> /dev/null
  cp "$WORK/tree/output_iso/regression.diffs" "$OUT/regression_isolation.diffs" 2> /dev/null
  echo "RESULT installcheck: exit $rc ($(grep -E 'tests (passed|failed)|All [0-9]+ tests passed|of [0-9]+ tests failed' "$WORK/suite.txt" | tr '\n' ';'))"
  return "$rc"
}

# test/gpu/service_gpu.sql on the running server in database svcgpu: prints PASS / FAIL lines into $1
service_gpu_sql() {
  local prefix=gpu
  [ "$GPUS" -gt 0 ] || prefix=cpu-test
  PGDATABASE=postgres sql -c "DROP DATABASE IF EXISTS svcgpu" -c "CREATE DATABASE svcgpu"
  (cd "$WORK/tree" && PGDATABASE=svcgpu as_pg env PWD="$WORK/tree" psql -X -At -v engine_prefix=$prefix -f test/gpu/service_gpu.sql) > "$1" 2>&1
  PGDATABASE=postgres sql -c "DROP DATABASE svcgpu"
}

# the device top-k and graph build checks, then test/gpu/service_gpu.sql (GPU service against the CPU
# engine, faults) on the running server, twice: as configured, and with every graph's first PageRank on
# the quick layout (natural ids, the graph's own in-CSR read in place) while the tuned one is planned
phase_gpucheck() {
  set -e
  local t rc=0
  if [ "$GPUS" -gt 0 ]; then
    for t in check-topk check-build; do
      make -s -C cuda "$t" > "$OUT/$t.txt" 2>&1 || rc=1
      grep -E '^(FAIL|time:)' "$OUT/$t.txt" | head -20
      echo "RESULT $t: $(tail -1 "$OUT/$t.txt")"
    done
  else
    echo "RESULT check-topk, check-build: skipped (no GPU)"
  fi
  copy_tree
  service_gpu_sql "$OUT/service_gpu.txt"
  grep -E '^(PASS|FAIL)' "$OUT/service_gpu.txt" | head -40
  echo "RESULT service_gpu.sql ($ENGINE, fp64): $(grep -c '^PASS' "$OUT/service_gpu.txt") PASS, $(grep -c '^FAIL' "$OUT/service_gpu.txt") FAIL; last: $(tail -1 "$OUT/service_gpu.txt")"
  reload_setting powerrank.gpu_quick_layout_edges 0
  service_gpu_sql "$OUT/service_gpu_quick.txt"
  grep -E '^FAIL' "$OUT/service_gpu_quick.txt" | head -20
  echo "RESULT service_gpu.sql, quick layout first (gpu_quick_layout_edges = 0): $(grep -c '^PASS' "$OUT/service_gpu_quick.txt") PASS, $(grep -c '^FAIL' "$OUT/service_gpu_quick.txt") FAIL; quick-layout lines in the log: $(grep -c 'gpu-binned' "$PGLOG")"
  reset_settings powerrank.gpu_quick_layout_edges
  ! grep -q '^FAIL' "$OUT/service_gpu.txt" "$OUT/service_gpu_quick.txt" && [ "$rc" = 0 ] \
    && grep -q '^PASS' "$OUT/service_gpu.txt"
}

phase_load() {
  set -e
  local n
  load_edges "${GRAPH:-$SCALE}" edges "$PARTS"
  n=$(sql -c "SELECT bench_fill_sources('edges', 0.2)")
  echo "RESULT rwr sources: $n existing node ids sampled"
}

phase_cold() {
  set -e
  local cnt cold eng t_tuned i warm c w wi it cms ceng cit cb ci ct chit cfb cread cprep cmp cw cwi plain pw pwi
  reload_setting powerrank.gpu_precision "'$PRECISION'"
  sql -c "EXPLAIN SELECT count(*) FROM edges" | grep -i workers
  cnt=$(timed_calls 3 "SELECT count(*) FROM edges" "SET max_parallel_workers_per_gather = 8;" | awk '{print $1}')
  echo "count(*) ms: $(echo $cnt)"
  echo "evicted before the cold call: $(sql -c "SELECT powerrank_cache_drop(NULL)")"
  # client_min_messages = debug1: the read and build steps' times come to the log (stderr)
  cold=$(timed_calls 1 "SELECT * FROM pagerank('edges', top_k => 100);" "SET client_min_messages = debug1;" 2> "$WORK/cold_debug.txt")
  echo "cold: $cold"
  grep -h "powerrank:" "$WORK/cold_debug.txt" | sed 's/^/RESULT cold steps (backend): /'
  grep -h "on the device (" "$PGLOG" | tail -1 | sed 's/^.*engine process: /RESULT cold steps (engine): /'
  grep -h "built from" "$PGLOG" | tail -1 | sed 's/^.*engine process: /RESULT cold build (engine): /'
  df -h /dev/shm | tail -1 | sed 's/^/shm: /'
  # the cold call ran on the quick layout while the tuned one is planned in the engine process's
  # thread (powerrank.gpu_quick_layout_edges): a call every 2 s until the tuned kernel answers
  t_tuned=0
  for i in $(seq 30); do
    eng=$(timed_calls 1 "SELECT * FROM pagerank('edges', top_k => 100);" | awk '{print $2}')
    echo "after $((i * 2 - 2)) s: engine $eng"
    case "$eng" in gpu-binned*) sleep 2 ;; *) t_tuned=$((i * 2 - 2)); break ;; esac
  done
  echo "RESULT tuned layout adopted within $t_tuned s after the cold call (engine $eng)"
  warm=$(timed_calls 5 "SELECT * FROM pagerank('edges', top_k => 100);")
  echo "warm:"; echo "$warm"
  sql -c "SELECT 'cache: ' || concat_ws(' ', nodes, edges, pg_size_pretty(bytes), hits, gpu) FROM powerrank_cache"
  sql -c "SELECT 'service: ' || concat_ws(' ', engine, device, resident_graphs, device_bytes, uploads, reuses) FROM powerrank_service"
  c=$(echo "$cnt" | median); w=$(echo "$warm" | awk '{print $1}' | median); wi=$(echo "$warm" | awk '{print $5}' | median)
  it=$(echo "$warm" | awk 'NR==1 {print $3}')
  echo "$w $wi $it" > "$WORK/warm.txt"
  read -r cms ceng cit cb ci ct chit cfb cread cprep <<< "$cold"
  echo "RESULT parallel count(*) median of 3: $c ms"
  echo "RESULT cold pagerank(top_k 100): $cms ms (engine $ceng, $cit iterations, build $cb ms of which read $cread ms, iterate $ci ms of which GPU prepare $cprep ms, total $ct ms, cache_hit $chit, fallback $cfb) — goal <= 2 x count(*) = $(calc "2 * $c") ms: $(goal "$cms <= 2 * $c")"
  echo "RESULT warm pagerank median of 5: $w ms (iterate_ms $wi, $it iterations; engine $(echo "$warm" | awk 'NR==1 {print $2}'), cache_hit $(echo "$warm" | awk '{print $7}' | sort -u | tr '\n' ' ')) — goal <= 1.3 x engine + 50 ms = $(calc "1.3 * $wi + 50") ms (engine = service iterate_ms; standalone pr_bench below): $(goal "$w <= 1.3 * $wi + 50")"
  # the same warm call with plain power iterations (powerrank.mixing_depth = 0; the first call
  # prepares the engine's fewer slots, so the median of 5 after one more)
  timed_calls 1 "SELECT * FROM pagerank('edges', top_k => 100);" "SET powerrank.mixing_depth = 0;" > /dev/null
  plain=$(timed_calls 5 "SELECT * FROM pagerank('edges', top_k => 100);" "SET powerrank.mixing_depth = 0;")
  echo "warm with powerrank.mixing_depth = 0:"; echo "$plain"
  pw=$(echo "$plain" | awk '{print $1}' | median); pwi=$(echo "$plain" | awk '{print $5}' | median)
  echo "RESULT warm pagerank, plain iterations (mixing_depth 0): median $pw ms (iterate_ms $pwi, $(echo "$plain" | awk 'NR==1 {print $3}') iterations) against mixed (the default) $w ms (iterate_ms $wi, $it iterations): iterate ratio $(calc "$wi / $pwi")"
  if [ -n "${COMPARE_KERNEL:-}" ]; then
    # the same warm call with another kernel (the graph is prepared again after the reload)
    reload_setting powerrank.gpu_kernel "'$COMPARE_KERNEL'"
    timed_calls 1 "SELECT * FROM pagerank('edges', top_k => 100);" > /dev/null
    cmp=$(timed_calls 5 "SELECT * FROM pagerank('edges', top_k => 100);")
    echo "warm with gpu_kernel = $COMPARE_KERNEL:"; echo "$cmp"
    cw=$(echo "$cmp" | awk '{print $1}' | median); cwi=$(echo "$cmp" | awk '{print $5}' | median)
    echo "RESULT warm pagerank, gpu_kernel = $COMPARE_KERNEL: median $cw ms (iterate_ms $cwi; engine $(echo "$cmp" | awk 'NR==1 {print $2}')) against auto $w ms (iterate_ms $wi) — goal auto <= $COMPARE_KERNEL: $(goal "$wi <= $cwi")"
    reset_settings powerrank.gpu_kernel
  fi
}

phase_rwr() {
  set -e
  local n nm arg one w b c0 c1 b0 r0 i0 m0 b1 r1 i1 m1 lat
  reload_setting powerrank.gpu_precision "'$PRECISION'"
  n=$(sql -c "SELECT count(*) FROM bench_sources WHERE tbl = 'edges'")
  for nm in ${RWR_NORMS:-l1}; do
    # the stopping norm as rwr's named argument (l1 is the default: the script's call unchanged)
    arg=""; [ "$nm" = l1 ] || arg=", norm => '$nm'"
    sed -e "s/@TABLE@/edges/g" -e "s/top_k => 10)/top_k => 10$arg)/" bench/sql/pgbench/rwr.sql > "$WORK/rwr.sql"; chmod 644 "$WORK/rwr.sql"
    one="SELECT * FROM rwr('edges', source => (SELECT node FROM bench_sources WHERE tbl = 'edges' AND i = 1), top_k => 10$arg);"
    # each batch size: the engine restarts on the reload (graph prepared again by the warm-up calls),
    # a 5 s pgbench warm-up prepares the batch engine, then the measured pgbench run
    for w in ${RWR_WARM:-on}; do
      reload_setting powerrank.warm_start "$w"
      for cert in ${RWR_CERTIFIED:-off}; do
      reload_setting powerrank.stop_when_certified "$cert"
      for b in $RWR_BATCHES; do
        reload_setting powerrank.service_batch_size "$b"
        echo "batch_size $b: one call alone (ms engine iterations build iterate total hit fallback read prepare):"
        timed_calls 3 "$one"
        rm -rf "$WORK/pgb_rwr"; mkdir -p "$WORK/pgb_rwr"; own "$WORK/pgb_rwr"
        (cd "$WORK/pgb_rwr" && as_pg pgbench -n -c 8 -j 8 -T 5 -D nsrc="$n" -f "$WORK/rwr.sql" bench > /dev/null)
        c0=$(sql -c "SELECT concat_ws(' ', batches, batched_requests, batch_iterations, batch_ms) FROM powerrank_service")
        (cd "$WORK/pgb_rwr" && as_pg pgbench -n -c 8 -j 8 -T "$RWR_SECS" -D nsrc="$n" -f "$WORK/rwr.sql" --log --log-prefix=rwr bench)
        c1=$(sql -c "SELECT concat_ws(' ', batches, batched_requests, batch_iterations, batch_ms) FROM powerrank_service")
        lat=$WORK/rwr_lat_$b.txt
        cat "$WORK"/pgb_rwr/rwr* | awk '{print $3 / 1000}' > "$lat"
        read -r b0 r0 i0 m0 <<< "$c0"; read -r b1 r1 i1 m1 <<< "$c1"
        echo "RESULT rwr 8 clients ${RWR_SECS} s, service_batch_size $b, warm_start $w, stop_when_certified $cert, norm $nm: $(wc -l < "$lat") calls, p50 $(pct 50 < "$lat") ms, p99 $(pct 99 < "$lat") ms, max $(pct 100 < "$lat") ms; $((b1 - b0)) batches answered $((r1 - r0)) requests (mean $(calc "($r1 - $r0) / ($b1 - $b0 + 1e-9)")); a batch's engine time $(calc "($m1 - $m0) / ($b1 - $b0 + 1e-9)") ms for $(calc "($i1 - $i0) / ($b1 - $b0 + 1e-9)") iterations (mean) — goal p50 <= 20 ms: $(goal "$(pct 50 < "$lat") <= 20")"
      done
      done
    done
  done
  reset_settings powerrank.service_batch_size powerrank.warm_start powerrank.stop_when_certified
}

phase_auto() {
  set -e
  local cross="" s t m src pr rw pc pg rc rg
  printf 'RESULT auto: %-10s %-11s %-11s %-11s %-11s\n' edges pr_cpu_ms pr_gpu_ms rwr_cpu_ms rwr_gpu_ms
  for s in $AUTO_SCALES; do
    t=auto_s$s
    load_edges "$s" "$t" 4 | sed 's/^RESULT //'
    m=$(sql -c "SELECT count(*) FROM $t"); src=$(sql -c "SELECT src FROM $t LIMIT 1")
    pr="SELECT * FROM pagerank('$t', top_k => 10, device => 'DEV');"
    rw="SELECT * FROM rwr('$t', source => $src, top_k => 10, device => 'DEV');"
    timed_calls 1 "${pr/DEV/cpu}" > /dev/null; timed_calls 1 "${pr/DEV/gpu}" > /dev/null   # build the cache, upload
    pc=$(timed_calls 3 "${pr/DEV/cpu}" | tee -a "$WORK/auto_raw.txt" | awk '{print $1}' | median)
    pg=$(timed_calls 3 "${pr/DEV/gpu}" | tee -a "$WORK/auto_raw.txt" | awk '{print $1}' | median)
    rc=$(timed_calls 3 "${rw/DEV/cpu}" | tee -a "$WORK/auto_raw.txt" | awk '{print $1}' | median)
    rg=$(timed_calls 3 "${rw/DEV/gpu}" | tee -a "$WORK/auto_raw.txt" | awk '{print $1}' | median)
    printf 'RESULT auto: %-10s %-11s %-11s %-11s %-11s\n' "$m" "$pc" "$pg" "$rc" "$rg"
    if [ -z "$cross" ] && [ "$(goal "$pg < $pc && $rg < $rc")" = MET ]; then cross=$m; fi
    sql -c "DROP TABLE $t" > /dev/null
  done
  cat "$WORK/auto_raw.txt"
  echo "RESULT auto: smallest graph where the service beats the backend (pagerank and rwr): ${cross:-none} edges -> powerrank.gpu_min_edges ~ ${cross:-(above the largest tried)}"
}

# builds bench/gpu's pr_bench (and cuda/ when not built)
build_pr_bench() {
  make -C bench/gpu -j"$CORES" build/pr_bench > "$OUT/build_pr_bench.txt" 2>&1
}

# the streamed engine through SQL: R-MAT $STREAM_SCALE as table edges_stream, powerrank.gpu_memory under
# the graph's resident size ($STREAM_GPU_MB MB): warm pagerank per iteration against the bytes streamed
# per iteration (the service's log line) over the pinned host -> device bandwidth measured in the same
# run (pr_bench --h2d-bandwidth), and against the CPU engine in the backend (device => 'cpu')
phase_streamed() {
  if [ "$GPUS" = 0 ]; then echo "RESULT streamed: skipped (no GPU)"; return 0; fi
  set -e
  local bw q warm res line mb wi it per link cpu cmp ci cit cper
  build_pr_bench
  bench/gpu/build/pr_bench --h2d-bandwidth 1024 | tee "$WORK/h2d.txt"
  bw=$(awk '/bandwidth/ {print $7}' "$WORK/h2d.txt")
  load_edges "${STREAM_SCALE:-24}" edges_stream "$PARTS"
  reload_setting powerrank.gpu_precision "'$PRECISION'"
  q="SELECT * FROM pagerank('edges_stream', top_k => 100);"
  echo "first call (reads the table, builds the cached graph): $(timed_calls 1 "$q")"
  reload_setting powerrank.gpu_memory "'${STREAM_GPU_MB:-512}MB'"
  echo "first call under the budget (prepares the streamed engine): $(timed_calls 1 "$q")"
  warm=$(timed_calls 5 "$q")
  echo "warm:"; echo "$warm"
  res=$(sql -c "SELECT * FROM pagerank('edges_stream', top_k => 1)" -c "SELECT concat_ws(' ', engine, residency) FROM powerrank_last_run()" | tail -1)
  line=$(grep -h "streamed from" "$PGLOG" | tail -1)
  echo "service log: ${line#*engine process: }"
  mb=$(echo "$line" | sed -n 's/.* blocks, \([0-9.]*\) MB a product.*/\1/p')
  [ -n "$mb" ] || { echo "RESULT streamed: NOT streamed ($res): no streamed graph in the service log"; return 1; }
  wi=$(echo "$warm" | awk '{print $5}' | median); it=$(echo "$warm" | awk 'NR==1 {print $3}')
  per=$(calc "$wi / $it"); link=$(calc "$mb / $bw")
  cpu=$(timed_calls 2 "SELECT * FROM pagerank('edges_stream', top_k => 100, device => 'cpu');" "SET powerrank.cpu_threads = $THREADS;")
  # the streamed answer against the CPU engine's: the same top 100, scores within the run's precision
  cmp=$(sql -c "DROP TABLE IF EXISTS s_gpu, s_cpu" -c "CREATE TABLE s_gpu AS SELECT * FROM pagerank('edges_stream', top_k => 100)" \
    -c "CREATE TABLE s_cpu AS SELECT * FROM pagerank('edges_stream', top_k => 100, device => 'cpu')" \
    -c "SELECT concat_ws(' ', count(*) FILTER (WHERE c.node IS NULL), max(abs(g.score - c.score))) FROM s_gpu g LEFT JOIN s_cpu c USING (node)" | tail -1)
  echo "RESULT streamed vs CPU engine, top 100: $(echo "$cmp" | awk '{print $1}') nodes not in the CPU top 100, largest score difference $(echo "$cmp" | awk '{print $2}')"
  echo "cpu:"; echo "$cpu"
  ci=$(echo "$cpu" | awk '{print $5}' | median); cit=$(echo "$cpu" | awk 'NR==1 {print $3}')
  cper=$(calc "$ci / $cit")
  echo "RESULT streamed pagerank ($res): $per ms/iteration ($wi ms, $it iterations) for $mb MB a product; link $link ms at $bw GB/s pinned — goal <= 1.25 x link = $(calc "1.25 * $link") ms: $(goal "$per <= 1.25 * $link") ($(calc "100 * $link / $per")% of the link)"
  echo "RESULT streamed vs CPU engine ($THREADS threads): $cper ms/iteration ($ci ms, $cit iterations), $(calc "$cper / $per")x — goal >= 5x: $(goal "$cper >= 5 * $per")"
  reset_settings powerrank.gpu_memory
}

# the standalone engine: pr_bench on its own R-MAT $SCALE (same model and scale as the table), ms per
# iteration; with the cold phase in the same run, against the warm call's iterations
phase_standalone() {
  if [ "$GPUS" = 0 ]; then echo "RESULT standalone: skipped (no GPU)"; return 0; fi
  set -e
  local w="" wi it="" ms sa
  build_pr_bench
  bench/gpu/build/pr_bench --rmat "$SCALE" --only auto --reps 10 --skip-extra --threads "$THREADS" | tee "$WORK/pr_bench.txt"
  ms=$(awk -F'|' '$2 ~ /^ auto $/ {gsub(/ /, "", $4); print $4}' "$WORK/pr_bench.txt")
  if [ -f "$WORK/warm.txt" ]; then
    read -r w wi it < "$WORK/warm.txt"
    sa=$(calc "$ms * $it")
    echo "RESULT standalone pr_bench auto, R-MAT $SCALE: $ms ms/iteration x $it iterations = $sa ms; warm call $w ms — goal <= 1.3 x $sa + 50 = $(calc "1.3 * $sa + 50") ms: $(goal "$w <= 1.3 * $sa + 50")"
  else
    echo "RESULT standalone pr_bench auto, R-MAT $SCALE: $ms ms/iteration (run the cold phase with it for the warm call's goal)"
  fi
}

# one line: time total_rss_MB max_rss_MB engine_rss_MB gpu_used_MB device_bytes request_segments cache_bytes shm_used_MB builds
mem_sample() {
  local eng gpu
  eng=$(sql -c "SELECT engine_pid FROM powerrank_service")
  if [ "$GPUS" = 0 ]; then gpu=-; else gpu=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1); fi
  echo "$(date +%s) $(ps -u "$PGOS" -o rss= | awk '{s+=$1} END {print int(s/1024)}') $(ps -u "$PGOS" -o rss= | sort -n | tail -1 | awk '{print int($1/1024)}') $(ps -o rss= -p "${eng:-1}" 2>/dev/null | awk '{print int($1/1024)}') $gpu $(sql -c "SELECT concat_ws(' ', device_bytes, request_segments, (SELECT coalesce(sum(bytes), 0) FROM powerrank_cache)) FROM powerrank_service") $(df -BM --output=used /dev/shm | tail -1 | tr -dc 0-9) $(sql -c "SELECT builds FROM powerrank_service")"
}

# $MIX_SECS s of 8 ranking clients, 2 writers and 1 checker on table edges_mix: wrong answers, crashes, memory
phase_mixed() {
  set -e
  local n f start_pm log0 before after same_pm crashes p1 p2 p3 r1 r2 r3 end
  reload_setting powerrank.gpu_precision "'$PRECISION'"
  load_edges "$MIX_SCALE" edges_mix 8
  n=$(sql -c "SELECT bench_fill_sources('edges_mix', 2)")
  for f in rwr pagerank writer check; do
    sed -e "s/@TABLE@/edges_mix/g" -e "s/@DEVICE@/gpu/g" -e "s/@BOUND@/$BOUND/g" bench/sql/pgbench/$f.sql > "$WORK/mix_$f.sql"
  done
  chmod 644 "$WORK"/mix_*.sql
  timed_calls 1 "SELECT * FROM pagerank('edges_mix', top_k => 100);"   # cache + upload before the clock
  start_pm=$(sql -c "SELECT pg_postmaster_start_time()"); log0=$(wc -l < "$PGLOG")
  before=$(sql -c "SELECT concat_ws(' ', restarts, failures) FROM powerrank_service")
  sql -c "TRUNCATE bench_checks"
  rm -rf "$WORK/pgb_mix"; mkdir -p "$WORK/pgb_mix"; own "$WORK/pgb_mix"
  cd "$WORK/pgb_mix"
  echo "# time total_rss_MB max_rss_MB engine_rss_MB gpu_used_MB device_bytes request_segments cache_bytes shm_used_MB builds" > "$OUT/mix_mem.txt"
  mem_sample >> "$OUT/mix_mem.txt"
  as_pg pgbench -n -c 8 -j 8 -T "$MIX_SECS" -D nsrc="$n" -f "$WORK/mix_rwr.sql@3" -f "$WORK/mix_pagerank.sql@1" --log --log-prefix=rank bench > rank.out 2>&1 & p1=$!
  as_pg pgbench -n -c 2 -j 2 -T "$MIX_SECS" -R 4 -D nsrc="$n" -f "$WORK/mix_writer.sql" --log --log-prefix=write bench > write.out 2>&1 & p2=$!
  as_pg pgbench -n -c 1 -j 1 -T "$MIX_SECS" -f "$WORK/mix_check.sql" bench > check.out 2>&1 & p3=$!
  end=$(( $(date +%s) + MIX_SECS ))
  while [ "$(date +%s)" -lt "$end" ]; do sleep "$SAMPLE_SECS"; mem_sample >> "$OUT/mix_mem.txt"; done
  set +e; wait $p1; r1=$?; wait $p2; r2=$?; wait $p3; r3=$?; set -e
  mem_sample >> "$OUT/mix_mem.txt"
  cat rank.out write.out check.out | grep -E 'aborted|error|ERROR|transactions actually|latency average|tps' || true
  cat rank.[0-9]* 2> /dev/null | awk 'NF>=6 {print $3 / 1000}' > "$WORK/mix_lat.txt"
  after=$(sql -c "SELECT concat_ws(' ', restarts, failures) FROM powerrank_service")
  same_pm=$(sql -c "SELECT pg_postmaster_start_time() = '$start_pm'::timestamptz")
  crashes=$(tail -n +"$((log0 + 1))" "$PGLOG" | grep -cE 'PANIC|terminated by signal|was terminated' || true)
  sql -c "SELECT concat_ws(' ', at, call, ok, engine, edges_dev, edges_cpu, edges_table, max_diff, missing) FROM bench_checks WHERE NOT ok" | head -20
  echo "RESULT mixed ${MIX_SECS} s: pgbench exit ranking $r1 writers $r2 checker $r3; aborted clients: $(cat rank.out write.out check.out | grep -c 'aborted' || true)"
  echo "RESULT mixed ranking calls $(wc -l < "$WORK/mix_lat.txt"), p50 $(pct 50 < "$WORK/mix_lat.txt") ms, p99 $(pct 99 < "$WORK/mix_lat.txt") ms; writer transactions $(cat write.[0-9]* 2> /dev/null | grep -vc '^[a-z]' || true); final edges $(sql -c "SELECT count(*) FROM edges_mix")"
  echo "RESULT mixed checks (RR snapshot, gpu vs cpu, bound $BOUND): $(sql -c "SELECT count(*) || ' sampled, ' || count(*) FILTER (WHERE NOT ok) || ' wrong; engines ' || coalesce(string_agg(DISTINCT engine, ','), '-') || '; max diff ' || coalesce(max(max_diff)::text, '-') FROM bench_checks")"
  echo "RESULT mixed crashes: postmaster start time unchanged $same_pm; service restarts/failures before $before after $after; crash lines in server log $crashes"
  echo "RESULT mixed memory (first -> last sample): $(awk '!/^#/ {if (!f) f=$0; l=$0} END {split(f,a," "); split(l,b," "); printf "total RSS %s -> %s MB, max proc RSS %s -> %s MB, engine RSS %s -> %s MB, GPU used %s -> %s MB, device_bytes %s -> %s, request segments %s -> %s, cache bytes %s -> %s, /dev/shm used %s -> %s MB, service builds %s -> %s", a[2],b[2],a[3],b[3],a[4],b[4],a[5],b[5],a[6],b[6],a[7],b[7],a[8],b[8],a[9],b[9],a[10],b[10]}' "$OUT/mix_mem.txt")"
}

# ---------------------------------------------------------------------------------------------------
note "== bench/sql/run.sh ${phases[*]} on $(hostname), $(date -u +%FT%TZ): $(gpu_describe); $CORES cpus;" \
     "$("$PG_CONFIG" --version) ($PG_CONFIG), server as OS user $PGOS; service engine $ENGINE"
if [ "$GPUS" = 0 ]; then
  note "no GPU: the service's cpu-test engine on small graphs — a check of the scripts, not a measurement"
fi
if has build; then
  phase build phase_build
  if [ $? != 0 ]; then finish_summary; exit 1; fi
fi
if has suite; then phase suite phase_suite; fi
if has gpucheck || has load || has auto || has streamed || has mixed; then
  phase server phase_server
  if [ $? = 0 ]; then
    if has gpucheck; then phase gpucheck phase_gpucheck; fi
    loaded=1
    if has load; then phase load phase_load; loaded=$((1 - $?)); fi
    if has cold; then
      if [ "$loaded" = 1 ]; then phase cold phase_cold; else note "cold: skipped (the load failed)"; fi
    fi
    if has rwr; then
      if [ "$loaded" = 1 ]; then phase rwr phase_rwr; else note "rwr: skipped (the load failed)"; fi
    fi
    if has auto; then phase auto phase_auto; fi
    if has standalone; then phase standalone phase_standalone; fi
    if has streamed; then phase streamed phase_streamed; fi
    if has mixed; then phase mixed phase_mixed; fi
  else
    BENCH_FAILED=1
    note "the server with the GPU service is not ready: the phases that need it did not run (see $OUT/server.log)"
  fi
elif has standalone; then
  phase standalone phase_standalone
fi
finish_summary
exit "$BENCH_FAILED"

#!/bin/bash
# bench/sql/device_run.sh — the measurements of the GPU service inside PostgreSQL, on the lent GPU
# machine (runs as root there, from the project root, with .carry carried), in at most ~560 s a call.
#
#   bench/sql/device_run.sh [figures | checks | all | PHASE ...]
#     figures (default) = setup load cold rwr auto standalone     (call 1: the issue's numbers)
#     checks            = setup suite gpucheck                    (call 2: the suite preloaded + GPU checks)
#     setup mixed                                                 (call 3: the 5-minute mixed load)
#   phases: setup  build + install (+ GPU library), start the server with the service, wait until ready
#           suite  make installcheck (temp instance, powerrank + pg_cron preloaded)
#           gpucheck  make -C cuda check-topk check-build, test/gpu/service_gpu.sql twice (GPU service vs CPU
#                  engine, faults; then with the quick layout first)
#           load   R-MAT $SCALE (or $GRAPH) into table edges (parallel binary COPY into an UNLOGGED table), VACUUM ANALYZE
#           cold   parallel count(*) x3, cold pagerank(top_k 100), warm x5 (powerrank_last_run per call)
#           rwr    pgbench: 8 clients, random-source rwr(top_k 10) on the cached graph, p50/p99 from --log,
#                  for each powerrank.service_batch_size in RWR_BATCHES ("8 1": batched, then one at a time)
#           auto   device 'cpu' vs 'gpu' (warm) on R-MAT graphs of ~0.5/2/8/32 M edges: gpu_min_edges
#           standalone  bench/gpu pr_bench --rmat $SCALE --only auto: the engine's ms per iteration
#           mixed  $MIX_SECS s: 8 ranking clients + 2 writers + 1 checker (REPEATABLE READ, GPU vs CPU)
#           streamed  R-MAT $STREAM_SCALE (24) with powerrank.gpu_memory = $STREAM_GPU_MB (512) MB: the streamed
#                  engine's warm pagerank per iteration vs the pinned link, and vs the CPU engine (16 threads)
#   env: OUT (default ./bench-sql-out), BUDGET (s, 560), PRECISION (fp32), SCALE (24), GRAPH (a graph_gen.h
#        name loaded instead of R-MAT $SCALE, e.g. local:23:16:0.9:64), COMPARE_KERNEL (cold: the warm call
#        again with this powerrank.gpu_kernel, e.g. cusparse), MIX_SECS (300),
#        MIX_SCALE (22), RWR_SECS (30), RWR_BATCHES ("8 1"), RWR_WARM (powerrank.warm_start values: "on"),
#        RWR_NORMS (rwr's stopping norms measured, "l1" = the default; e.g. "l1 linf"), AUTO_SCALES ("15 17 19 21"), DRY_RUN=1 (below)
#
# DRY_RUN=1: this machine, no GPU — a throwaway cluster of /usr/lib/postgresql/15 in a temp dir as the
# OS user postgres, powerrank.service_engine = 'cpu-test', R-MAT 17, short durations; exercises every
# statement, script, aggregation and check.  (The extension must be installed: make && make install.)
#
# Every phase runs under `timeout` with what is left of BUDGET, logs line-buffered into $OUT; the
# summary ($OUT/summary.txt) is printed last; the server log tail is copied to $OUT/pg_log_tail.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
DRY_RUN=${DRY_RUN:-0}
FINAL_OUT=${OUT:-$ROOT/bench-sql-out}   # gets summary.txt, pg_log_tail.txt, logs.tar.gz (device: <= 8 files)
BUDGET=${BUDGET:-560}
START=$(date +%s)
mkdir -p "$FINAL_OUT"
note() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $(( BUDGET - ($(date +%s) - START) )); }

if [ "$DRY_RUN" = 1 ]; then
  PGBIN=/usr/lib/postgresql/15/bin; PGOS=postgres
  WORK=${WORK:-/tmp/prbench-dry}; rm -rf "$WORK"; mkdir -p "$WORK"; chmod 755 "$WORK"; chown "$PGOS" "$WORK"
  PGDATA=$WORK/data; PGLOG=$WORK/pg.log; SOCK=$WORK; PORT=54329
  SCALE=${SCALE:-17}; PARTS=${PARTS:-2}; MIX_SECS=${MIX_SECS:-20}; MIX_SCALE=${MIX_SCALE:-15}
  RWR_SECS=${RWR_SECS:-10}; AUTO_SCALES=${AUTO_SCALES:-"11 12 13 14"}; SAMPLE_SECS=${SAMPLE_SECS:-5}
  ENGINE=cpu-test; PY=/usr/bin/python3; SHBUF=512MB; CACHE=2GB
  EXTRA_SETTINGS="-c powerrank.gpu_min_edges=0"   # 'auto' sends these small graphs to the service too
else
  PGBIN=/opt/pg15/bin; PGOS=pg
  WORK=/tmp/prbench; mkdir -p "$WORK"; chmod 755 "$WORK"
  PGDATA=/tmp/pgdata; PGLOG=/tmp/pg.log; SOCK=/tmp; PORT=5432
  SCALE=${SCALE:-24}; PARTS=${PARTS:-16}; MIX_SECS=${MIX_SECS:-300}; MIX_SCALE=${MIX_SCALE:-22}
  RWR_SECS=${RWR_SECS:-30}; AUTO_SCALES=${AUTO_SCALES:-"15 17 19 21"}; SAMPLE_SECS=${SAMPLE_SECS:-30}
  ENGINE=gpu; PY=python3; SHBUF=32GB; CACHE=16GB
  export PATH=/opt/pg15/bin:/usr/local/cuda/bin:$PATH
  export LD_LIBRARY_PATH=/opt/pg15/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
fi
# fp32: the issue's standalone figures (bench/gpu) are fp32 and the default tolerance (1e-6, L1) is in
# fp32's range (>= ~1e-7); test/gpu/service_gpu.sql's 1e-12 checks run under fp64 first (phase suite).
PRECISION=${PRECISION:-fp32}
BOUND=${BOUND:-2e-5}   # per-node |score(service) - score(cpu)| of the mixed-load checks (2 runs to L1 1e-6)
DEV_CHECK=gpu
PGCONF=$PGBIN/pg_config
OUT=$WORK/out; mkdir -p "$OUT"; chmod 755 "$OUT"   # every log; bundled into $FINAL_OUT at the end
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"
export PGHOST=$SOCK PGPORT=$PORT PGUSER=postgres PGDATABASE=bench

phases=("$@")
[ ${#phases[@]} -eq 0 ] && { [ "$DRY_RUN" = 1 ] && phases=(all) || phases=(figures); }
case "${phases[0]}" in
  figures) phases=(setup load cold rwr auto standalone) ;;
  checks) phases=(setup suite gpucheck) ;;
  all) phases=(setup suite gpucheck load cold rwr auto standalone mixed) ;;
esac
has() { local p; for p in "${phases[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }

as_pg() { runuser -u "$PGOS" -- env PATH="$PGBIN:$PATH" LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" PGHOST="$PGHOST" \
            PGPORT="$PGPORT" PGUSER=postgres PGDATABASE="${PGDATABASE}" "$@"; }
sql() { as_pg psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
calc() { awk "BEGIN {print $*}"; }
# goal A OP B -> MET / NOT MET
goal() { awk "BEGIN {print ($*) ? \"MET\" : \"NOT MET\"}"; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# pct P: the P-th percentile (nearest rank) of numbers on stdin
pct() { sort -g | awk -v p="$1" '{a[NR]=$1} END {if (NR==0) {print "nan"; exit} i=int(p/100*NR+0.999999); if (i<1) i=1; print a[i]}'; }
# run a phase's function under timeout with what is left (at most its own limit), line-buffered log
phase() {  # name limit_s
  local name=$1 limit=$2 t0 rc avail
  avail=$(( $(left) - 5 ))
  [ "$avail" -lt "$limit" ] && limit=$avail
  if [ "$limit" -lt 10 ]; then note "phase $name: SKIPPED (budget spent)"; return 0; fi
  t0=$(date +%s)
  timeout --kill-after=5 "$limit" stdbuf -oL -eL bash -c "phase_$name" > "$OUT/$name.log" 2>&1
  rc=$?
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then note "phase $name: CUT OFF after $(( $(date +%s) - t0 )) s (limit $limit)"
  else note "phase $name: exit $rc in $(( $(date +%s) - t0 )) s"; fi
  grep '^RESULT ' "$OUT/$name.log" | sed 's/^RESULT /  /' | tee -a "$SUMMARY"
}
export EXTRA_SETTINGS=${EXTRA_SETTINGS:-}
RWR_BATCHES=${RWR_BATCHES:-"8 1"}   # phase rwr: service_batch_size values measured, in order
export DRY_RUN RWR_BATCHES OUT WORK PGBIN PGOS PGDATA PGLOG SOCK PORT SCALE PARTS MIX_SECS MIX_SCALE RWR_SECS AUTO_SCALES \
  SAMPLE_SECS ENGINE PY SHBUF CACHE PRECISION BOUND DEV_CHECK PGCONF ROOT
export -f as_pg sql median pct calc goal

# timed SQL calls in ONE session: prints "ms engine iterations build_ms iterate_ms total_ms cache_hit fallback"
# then "read_ms prepare_ms", for each repetition of QUERY (after PRE, untimed)
timed_calls() {  # reps query [pre]
  local reps=$1 q=${2%;} pre=${3:-} f=$WORK/timed.$$.sql   # no ';': "\g" alone runs the query (once)
  { echo "$pre"; for _ in $(seq "$reps"); do
      echo '\timing on'; echo "$q \\g /dev/null"; echo '\timing off'
      echo "SELECT concat_ws(' ', 'STATS', replace(engine, ' ', '_'), iterations, round(build_ms::numeric, 1), round(iterate_ms::numeric, 1), round(total_ms::numeric, 1), cache_hit, coalesce(fallback, '-'), round(read_ms::numeric, 1), round(prepare_ms::numeric, 1)) FROM (SELECT 1) one LEFT JOIN powerrank_last_run() ON true;"
    done; } > "$f"; chmod 644 "$f"
  sql -f "$f" | awk '/^Time:/ {t=$2} /^STATS/ {$1=""; print t $0}'
}
export -f timed_calls

# waits until the service is ready, polling every 0.1 s at most $1 times (default 300)
wait_ready() { for _ in $(seq "${1:-300}"); do [ "$(sql -c 'SELECT state FROM powerrank_service')" = ready ] && return 0; sleep 0.1; done; return 0; }
# ALTER SYSTEM SET $1 = $2 (an SQL literal), reload, and wait for the engine process the reload restarts
reload_setting() { sql -c "ALTER SYSTEM SET $1 = $2" -c "SELECT pg_reload_conf()" >/dev/null; sleep 1; wait_ready; }
export -f wait_ready reload_setting

# a copy of the working tree in $WORK/tree, owned by the PostgreSQL OS user (the suite runs there)
copy_tree() {
  mkdir -p "$WORK/tree"
  tar -C "$ROOT" --exclude=./.carry --exclude=./.git --exclude=./bench-sql-out -cf - . | tar -C "$WORK/tree" -xf -
  chown -R "$PGOS" "$WORK/tree"
}
export -f copy_tree

# ---------------------------------------------------------------------------------------------------
phase_setup() {
  set -e
  if [ "$DRY_RUN" = 1 ]; then
    echo "DRY RUN on $(hostname): no GPU, service_engine cpu-test"
    make -s -j2 >/dev/null && make -s install >/dev/null
    as_pg initdb -D "$PGDATA" -A trust -U postgres > "$WORK/initdb.log"
    opts="-k $SOCK -p $PORT -c listen_addresses='' -c max_worker_processes=32 -c max_parallel_workers=16 -c max_parallel_workers_per_gather=8"
  else
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    echo "cpus $(nproc); $(free -g | awk '/Mem/ {print $2 " GiB"}'); /dev/shm $(df -h /dev/shm | awk 'NR==2 {print $2}')"
    [ -x /opt/pg15/bin/postgres ] || { mkdir -p /opt && tar xzf .carry/pg15.tar.gz -C /opt; }
    t0=$(date +%s)
    make -C cuda -j16 > "$OUT/build_cuda.txt" 2>&1 & cpid=$!
    make -s -j16 PG_CONFIG=$PGCONF > "$OUT/build_ext.txt" 2>&1
    wait $cpid || { tail -20 "$OUT/build_cuda.txt"; exit 1; }
    make -s PG_CONFIG=$PGCONF install >> "$OUT/build_ext.txt" 2>&1
    echo "RESULT build (extension + GPU library) $(( $(date +%s) - t0 )) s"
    if [ -d .carry/pg_cron ]; then   # pg_cron for the suite's cron test (built on Debian 12, needs only libpq)
      cp .carry/pg_cron/pg_cron.so "$($PGCONF --pkglibdir)/"; cp .carry/pg_cron/extension/* "$($PGCONF --sharedir)/extension/"
    fi
    opts=""
  fi
  dsm=""
  shm_gb=$(df -BG --output=size /dev/shm 2>/dev/null | tail -1 | tr -dc 0-9)
  if [ "$DRY_RUN" != 1 ] && [ "${shm_gb:-0}" -lt 48 ]; then dsm="-c dynamic_shared_memory_type=mmap"; echo "/dev/shm ${shm_gb}G: mmap DSM"; fi
  settings="-c shared_preload_libraries=powerrank -c shared_buffers=$SHBUF -c powerrank.cache_size=$CACHE
    -c powerrank.service_engine=$ENGINE -c max_parallel_workers_per_gather=8
    -c max_wal_size=64GB -c checkpoint_timeout=1h -c fsync=off -c synchronous_commit=off -c full_page_writes=off
    -c maintenance_work_mem=2GB -c work_mem=256MB -c max_connections=60 $dsm ${EXTRA_SETTINGS:-}"
  if [ "$DRY_RUN" = 1 ]; then
    as_pg pg_ctl -D "$PGDATA" -l "$PGLOG" -w -o "$opts $(echo $settings)" start > /dev/null
  else
    # a warm machine may still run the server of an earlier call: stop it, start from a fresh cluster
    if [ -f /tmp/pgdata/postmaster.pid ]; then
      runuser -u pg -- env LD_LIBRARY_PATH=/opt/pg15/lib /opt/pg15/bin/pg_ctl -D /tmp/pgdata stop -m immediate || true
    fi
    rm -rf /tmp/pgdata
    # pg-up.sh connects without -d: it must not inherit PGDATABASE=bench (not created yet)
    PGDATABASE=postgres bash .carry/device/pg-up.sh .carry/pg15.tar.gz $(echo $settings)
    chown pg "$WORK"
  fi
  as_pg createdb bench
  # the precision is set with ALTER SYSTEM, not on the command line: a command-line setting would
  # override the later ALTER SYSTEM of phase cold (fp32), as it did in the first runs
  sql -c "ALTER SYSTEM SET powerrank.gpu_precision = 'fp64'" -c "SELECT pg_reload_conf()" >/dev/null
  sql -c "CREATE EXTENSION powerrank" -f bench/sql/helpers.sql
  wait_ready 600
  sql -c "SELECT 'service: ' || concat_ws(' | ', state, engine, device, last_error) FROM powerrank_service"
  echo "RESULT service $(sql -c "SELECT concat_ws(' | ', state, engine, device, last_error) FROM powerrank_service")"
  sql -c "SELECT 'postmaster started ' || pg_postmaster_start_time()"
}

phase_suite() {
  set -e
  echo "== make installcheck (temp instance: test/regress.conf, powerrank + pg_cron preloaded, cpu-test service)"
  rm -rf "$WORK/tree"; copy_tree
  extra=()
  if [ ! -f "$($PGCONF --pkglibdir)/pg_cron.so" ]; then   # no pg_cron: the suite without sql/cron.sql
    grep -v pg_cron "$WORK/tree/test/regress.conf" | sed '/^cron\./d' > "$WORK/tree/test/regress_nocron.conf"
    echo "shared_preload_libraries = 'powerrank'" >> "$WORK/tree/test/regress_nocron.conf"
    extra=(REGRESS="$(make -s -C "$WORK/tree" print-tests PG_CONFIG=$PGCONF | sed -n 's/^pg_regress://p' | grep -vx cron | tr '\n' ' ')"
           REGRESS_OPTS="--inputdir=. --temp-instance=./tmp_check --temp-config=test/regress_nocron.conf --load-extension=powerrank")
    echo "WARNING: pg_cron not installed: the suite runs without the cron test"
  fi
  set +e
  (cd "$WORK/tree" && as_pg make -s PG_CONFIG=$PGCONF PYTHON=$PY installcheck "${extra[@]}"); rc=$?
  cp "$WORK/tree/regression.diffs" "$OUT/regression.diffs" 2>/dev/null
  echo "RESULT installcheck: exit $rc ($(grep -E 'tests (passed|failed)|All [0-9]+ tests passed|of [0-9]+ tests failed' "$OUT/suite.log" | tr '\n' ';'))"
}

# the device top-k and graph build checks, then test/gpu/service_gpu.sql (GPU service vs CPU engine, faults) on the
# running server, twice
phase_gpucheck() {
  set -e
  [ -d "$WORK/tree" ] || copy_tree
  if [ "$DRY_RUN" != 1 ]; then   # the device top-k (candidate filter + radix sort) against host rankings
    make -s -C cuda check-topk > "$OUT/check_topk.txt" 2>&1 || true
    grep -E '^(FAIL|time:)' "$OUT/check_topk.txt" | head -20
    echo "RESULT check-topk: $(tail -1 "$OUT/check_topk.txt")"
    # the GPU graph build against the CPU build, byte for byte, and timed at R-MAT 22
    make -s -C cuda check-build > "$OUT/check_build.txt" 2>&1 || true
    echo "RESULT check-build: $(tail -1 "$OUT/check_build.txt")"
  fi
  echo "== test/gpu/service_gpu.sql on the running server (engine $ENGINE, fp64)"
  as_pg createdb svcgpu
  if [ "$DRY_RUN" = 1 ]; then prefix=cpu-test; else prefix=gpu; fi
  (cd "$WORK/tree" && PGDATABASE=svcgpu as_pg env PWD="$WORK/tree" psql -X -At -v engine_prefix=$prefix -f test/gpu/service_gpu.sql) > "$OUT/service_gpu.txt" 2>&1
  grep -E '^(PASS|FAIL)' "$OUT/service_gpu.txt" | head -40
  echo "RESULT service_gpu.sql: $(grep -c '^PASS' "$OUT/service_gpu.txt") PASS, $(grep -c '^FAIL' "$OUT/service_gpu.txt") FAIL; last: $(tail -1 "$OUT/service_gpu.txt")"
  # again with every graph's first PageRank on the quick layout (natural ids, the graph's own
  # in-CSR read in place) while the tuned layout is planned in the engine's thread
  reload_setting powerrank.gpu_quick_layout_edges 0
  as_pg dropdb svcgpu; as_pg createdb svcgpu
  (cd "$WORK/tree" && PGDATABASE=svcgpu as_pg env PWD="$WORK/tree" psql -X -At -v engine_prefix=$prefix -f test/gpu/service_gpu.sql) > "$OUT/service_gpu_quick.txt" 2>&1
  grep -E '^FAIL' "$OUT/service_gpu_quick.txt" | head -20
  echo "RESULT service_gpu.sql, quick layout first (gpu_quick_layout_edges = 0): $(grep -c '^PASS' "$OUT/service_gpu_quick.txt") PASS, $(grep -c '^FAIL' "$OUT/service_gpu_quick.txt") FAIL; quick-layout lines in the log: $(grep -c 'gpu-binned' "$PGLOG")"
  sql -c "ALTER SYSTEM RESET powerrank.gpu_quick_layout_edges" -c "SELECT pg_reload_conf()" >/dev/null; sleep 1; wait_ready
  as_pg dropdb svcgpu
}

# loads an R-MAT table: scale, table, parts
load_rmat() {
  local scale=$1 t=$2 parts=$3 rows t0
  gcc -O2 -std=gnu11 -pthread -Itest/common -o "$WORK/rmat_copy" bench/sql/rmat_copy.c test/common/graph_gen.c
  t0=$(date +%s.%N)
  local seed=20261121
  case $scale in *:*) ;; *) seed=$((20261121 + scale)) ;; esac
  rows=$("$WORK/rmat_copy" "$scale" 16 "$seed" "$parts" "$WORK/$t") || return 1
  chmod 644 "$WORK/$t".*.bin
  local t1=$(date +%s.%N)
  sql -c "DROP TABLE IF EXISTS $t; CREATE UNLOGGED TABLE $t(src bigint, dst bigint)"
  for p in $(seq 0 $((parts - 1))); do sql -c "COPY $t FROM '$WORK/$t.$p.bin' WITH (FORMAT binary)" & done; wait
  local t2=$(date +%s.%N)
  sql -c "VACUUM ANALYZE $t"
  local t3=$(date +%s.%N)
  rm -f "$WORK/$t".*.bin
  sql -c "SELECT powerrank_cache_enable('$t')" >/dev/null
  echo "RESULT load $t: $(case $scale in *:*) echo "$scale" ;; *) echo "R-MAT $scale" ;; esac), $rows edges; generate $(calc "$t1 - $t0") s, $parts parallel COPY $(calc "$t2 - $t1") s ($(calc "$rows / ($t2 - $t1) / 1000000") M rows/s), VACUUM ANALYZE $(calc "$t3 - $t2") s; $(sql -c "SELECT pg_size_pretty(pg_table_size('$t'))")"
}
export -f load_rmat

phase_load() {
  set -e
  load_rmat "${GRAPH:-$SCALE}" edges "$PARTS"
  n=$(sql -c "SELECT bench_fill_sources('edges', 0.2)")
  echo "RESULT rwr sources: $n existing node ids sampled"
}

phase_cold() {
  set -e
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
  # thread (powerrank.gpu_quick_layout_edges): call every 2 s until the tuned kernel answers
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
  echo "RESULT cold pagerank(top_k 100): $cms ms (engine $ceng, $cit iterations, build $cb ms of which read $cread ms, iterate $ci ms of which GPU prepare $cprep ms, cache_hit $chit, fallback $cfb) — goal <= 2 x count(*) = $(calc "2 * $c") ms: $(goal "$cms <= 2 * $c")"
  echo "RESULT warm pagerank median of 5: $w ms (iterate_ms $wi, $it iterations; engine $(echo "$warm" | awk 'NR==1 {print $2}'), cache_hit $(echo "$warm" | awk '{print $7}' | sort -u | tr '\n' ' ')) — goal <= 1.3 x engine + 50 ms = $(calc "1.3 * $wi + 50") ms (engine = service iterate_ms; standalone pr_bench below): $(goal "$w <= 1.3 * $wi + 50")"
  if [ -n "${COMPARE_KERNEL:-}" ]; then
    # the same warm call with another kernel (the graph is prepared again after the reload)
    reload_setting powerrank.gpu_kernel "'$COMPARE_KERNEL'"
    timed_calls 1 "SELECT * FROM pagerank('edges', top_k => 100);" > /dev/null
    cmp=$(timed_calls 5 "SELECT * FROM pagerank('edges', top_k => 100);")
    echo "warm with gpu_kernel = $COMPARE_KERNEL:"; echo "$cmp"
    cw=$(echo "$cmp" | awk '{print $1}' | median); cwi=$(echo "$cmp" | awk '{print $5}' | median)
    echo "RESULT warm pagerank, gpu_kernel = $COMPARE_KERNEL: median $cw ms (iterate_ms $cwi; engine $(echo "$cmp" | awk 'NR==1 {print $2}')) against auto $w ms (iterate_ms $wi) — goal auto <= $COMPARE_KERNEL: $(goal "$wi <= $cwi")"
    sql -c "ALTER SYSTEM RESET powerrank.gpu_kernel" -c "SELECT pg_reload_conf()" > /dev/null
  fi
}

phase_rwr() {
  set -e
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
  for b in $RWR_BATCHES; do
    reload_setting powerrank.service_batch_size "$b"
    echo "batch_size $b: one call alone (ms engine iterations build iterate total hit fallback read prepare):"
    timed_calls 3 "$one"
    rm -rf "$WORK/pgb_rwr"; mkdir -p "$WORK/pgb_rwr"; chown "$PGOS" "$WORK/pgb_rwr"
    (cd "$WORK/pgb_rwr" && as_pg pgbench -n -c 8 -j 8 -T 5 -D nsrc="$n" -f "$WORK/rwr.sql" bench > /dev/null)
    c0=$(sql -c "SELECT concat_ws(' ', batches, batched_requests, batch_iterations, batch_ms) FROM powerrank_service")
    (cd "$WORK/pgb_rwr" && as_pg pgbench -n -c 8 -j 8 -T "$RWR_SECS" -D nsrc="$n" -f "$WORK/rwr.sql" --log --log-prefix=rwr bench)
    c1=$(sql -c "SELECT concat_ws(' ', batches, batched_requests, batch_iterations, batch_ms) FROM powerrank_service")
    cat "$WORK"/pgb_rwr/rwr* | awk '{print $3 / 1000}' > "$WORK/rwr_lat_$b.txt"
    read -r b0 r0 i0 m0 <<< "$c0"; read -r b1 r1 i1 m1 <<< "$c1"
    lat=$WORK/rwr_lat_$b.txt
    echo "RESULT rwr 8 clients ${RWR_SECS} s, service_batch_size $b, warm_start $w, norm $nm: $(wc -l < "$lat") calls, p50 $(pct 50 < "$lat") ms, p99 $(pct 99 < "$lat") ms, max $(pct 100 < "$lat") ms; $((b1 - b0)) batches answered $((r1 - r0)) requests (mean $(calc "($r1 - $r0) / ($b1 - $b0 + 1e-9)")); a batch's engine time $(calc "($m1 - $m0) / ($b1 - $b0 + 1e-9)") ms for $(calc "($i1 - $i0) / ($b1 - $b0 + 1e-9)") iterations (mean) — goal p50 <= 20 ms: $(goal "$(pct 50 < "$lat") <= 20")"
  done
  done
  done
  sql -c "ALTER SYSTEM RESET powerrank.service_batch_size" -c "ALTER SYSTEM RESET powerrank.warm_start" -c "SELECT pg_reload_conf()" >/dev/null
}

phase_auto() {
  set -e
  sql -c "SET max_parallel_workers_per_gather = 8" >/dev/null
  printf 'RESULT auto: %-10s %-11s %-11s %-11s %-11s\n' edges pr_cpu_ms pr_gpu_ms rwr_cpu_ms rwr_gpu_ms
  cross=""
  for s in $AUTO_SCALES; do
    t=auto_s$s
    load_rmat "$s" "$t" 4 | sed 's/^RESULT //'
    m=$(sql -c "SELECT count(*) FROM $t"); src=$(sql -c "SELECT src FROM $t LIMIT 1")
    pr="SELECT * FROM pagerank('$t', top_k => 10, device => 'DEV');"
    rw="SELECT * FROM rwr('$t', source => $src, top_k => 10, device => 'DEV');"
    timed_calls 1 "${pr/DEV/cpu}" >/dev/null; timed_calls 1 "${pr/DEV/gpu}" >/dev/null   # build the cache, upload
    pc=$(timed_calls 3 "${pr/DEV/cpu}" | tee -a "$WORK/auto_raw.txt" | awk '{print $1}' | median)
    pg=$(timed_calls 3 "${pr/DEV/gpu}" | tee -a "$WORK/auto_raw.txt" | awk '{print $1}' | median)
    rc=$(timed_calls 3 "${rw/DEV/cpu}" | tee -a "$WORK/auto_raw.txt" | awk '{print $1}' | median)
    rg=$(timed_calls 3 "${rw/DEV/gpu}" | tee -a "$WORK/auto_raw.txt" | awk '{print $1}' | median)
    printf 'RESULT auto: %-10s %-11s %-11s %-11s %-11s\n' "$m" "$pc" "$pg" "$rc" "$rg"
    if [ -z "$cross" ] && [ "$(goal "$pg < $pc && $rg < $rc")" = MET ]; then cross=$m; fi
    sql -c "DROP TABLE $t" >/dev/null
  done
  cat "$WORK/auto_raw.txt"
  echo "RESULT auto: smallest graph where the service beats the backend (pagerank and rwr): ${cross:-none} edges -> powerrank.gpu_min_edges ~ ${cross:-(above the largest tried)}"
}

# the streamed engine through SQL: R-MAT $STREAM_SCALE as table edges_stream, powerrank.gpu_memory under the
# graph's resident size ($STREAM_GPU_MB MB): warm pagerank per iteration against the bytes streamed per
# iteration (the service's log line) over the pinned host -> device bandwidth measured in the same run
# (pr_bench --h2d-bandwidth), and against the CPU engine in the backend (device => 'cpu', 16 threads)
phase_streamed() {
  if [ "$DRY_RUN" = 1 ]; then echo "RESULT streamed: skipped (dry run, no GPU)"; return 0; fi
  set -e
  make -C bench/gpu -j16 build/pr_bench > "$OUT/build_bench.txt" 2>&1 || make -C bench/gpu -j16 >> "$OUT/build_bench.txt" 2>&1
  bench/gpu/build/pr_bench --h2d-bandwidth 1024 | tee "$WORK/h2d.txt"
  bw=$(awk '/bandwidth/ {print $7}' "$WORK/h2d.txt")
  load_rmat "${STREAM_SCALE:-24}" edges_stream "$PARTS"
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
  cpu=$(timed_calls 2 "SELECT * FROM pagerank('edges_stream', top_k => 100, device => 'cpu');" "SET powerrank.cpu_threads = 16;")
  # the streamed answer against the CPU engine's: the same top 100, scores within the run's precision
  cmp=$(sql -c "DROP TABLE IF EXISTS s_gpu, s_cpu" -c "CREATE TABLE s_gpu AS SELECT * FROM pagerank('edges_stream', top_k => 100)" \
    -c "CREATE TABLE s_cpu AS SELECT * FROM pagerank('edges_stream', top_k => 100, device => 'cpu')" \
    -c "SELECT concat_ws(' ', count(*) FILTER (WHERE c.node IS NULL), max(abs(g.score - c.score))) FROM s_gpu g LEFT JOIN s_cpu c USING (node)" | tail -1)
  echo "RESULT streamed vs CPU engine, top 100: $(echo "$cmp" | awk '{print $1}') nodes not in the CPU top 100, largest score difference $(echo "$cmp" | awk '{print $2}')"
  echo "cpu:"; echo "$cpu"
  ci=$(echo "$cpu" | awk '{print $5}' | median); cit=$(echo "$cpu" | awk 'NR==1 {print $3}')
  cper=$(calc "$ci / $cit")
  echo "RESULT streamed pagerank ($res): $per ms/iteration ($wi ms, $it iterations) for $mb MB a product; link $link ms at $bw GB/s pinned — goal <= 1.25 x link = $(calc "1.25 * $link") ms: $(goal "$per <= 1.25 * $link") ($(calc "100 * $link / $per")% of the link)"
  echo "RESULT streamed vs CPU engine (16 threads): $cper ms/iteration ($ci ms, $cit iterations), $(calc "$cper / $per")x — goal >= 5x: $(goal "$cper >= 5 * $per")"
  sql -c "ALTER SYSTEM RESET powerrank.gpu_memory" -c "SELECT pg_reload_conf()" > /dev/null; sleep 1; wait_ready
}

phase_standalone() {
  if [ "$DRY_RUN" = 1 ]; then echo "RESULT standalone: skipped (dry run, no GPU)"; return 0; fi
  set -e
  make -C bench/gpu -j16 build/pr_bench > "$OUT/build_bench.txt" 2>&1 || make -C bench/gpu -j16 >> "$OUT/build_bench.txt" 2>&1
  bench/gpu/build/pr_bench --rmat "$SCALE" --only auto --reps 10 --skip-extra --threads 16 | tee "$WORK/pr_bench.txt"
  read -r w wi it < "$WORK/warm.txt" || true
  ms=$(awk -F'|' '$2 ~ /^ auto $/ {gsub(/ /, "", $4); print $4}' "$WORK/pr_bench.txt")
  sa=$(calc "$ms * ${it:-0}")
  echo "RESULT standalone pr_bench auto: $ms ms/iteration x $it iterations = $sa ms; warm call $w ms — goal <= 1.3 x $sa + 50 = $(calc "1.3 * $sa + 50") ms: $(goal "$w <= 1.3 * $sa + 50")"
}

mem_sample() {  # one line: time total_rss_MB max_rss_MB engine_rss_MB gpu_used_MB device_bytes request_segments cache_bytes shm_used_MB builds
  local eng gpu
  eng=$(sql -c "SELECT engine_pid FROM powerrank_service")
  if [ "$DRY_RUN" = 1 ]; then gpu=-; else gpu=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1); fi
  echo "$(date +%s) $(ps -u "$PGOS" -o rss= | awk '{s+=$1} END {print int(s/1024)}') $(ps -u "$PGOS" -o rss= | sort -n | tail -1 | awk '{print int($1/1024)}') $(ps -o rss= -p "${eng:-1}" 2>/dev/null | awk '{print int($1/1024)}') $gpu $(sql -c "SELECT concat_ws(' ', device_bytes, request_segments, (SELECT coalesce(sum(bytes), 0) FROM powerrank_cache)) FROM powerrank_service") $(df -BM --output=used /dev/shm | tail -1 | tr -dc 0-9) $(sql -c "SELECT builds FROM powerrank_service")"
}
export -f mem_sample

phase_mixed() {
  set -e
  reload_setting powerrank.gpu_precision "'$PRECISION'"
  load_rmat "$MIX_SCALE" edges_mix 8
  n=$(sql -c "SELECT bench_fill_sources('edges_mix', 2)")
  for f in rwr pagerank writer check; do
    sed -e "s/@TABLE@/edges_mix/g" -e "s/@DEVICE@/$DEV_CHECK/g" -e "s/@BOUND@/$BOUND/g" bench/sql/pgbench/$f.sql > "$WORK/mix_$f.sql"
  done
  chmod 644 "$WORK"/mix_*.sql
  timed_calls 1 "SELECT * FROM pagerank('edges_mix', top_k => 100);"   # cache + upload before the clock
  start_pm=$(sql -c "SELECT pg_postmaster_start_time()"); log0=$(wc -l < "$PGLOG")
  before=$(sql -c "SELECT concat_ws(' ', restarts, failures) FROM powerrank_service")
  sql -c "TRUNCATE bench_checks"
  rm -rf "$WORK/pgb_mix"; mkdir -p "$WORK/pgb_mix"; chown "$PGOS" "$WORK/pgb_mix"
  cd "$WORK/pgb_mix"
  : > "$OUT/mix_mem.txt"
  echo "# time total_rss_MB max_rss_MB engine_rss_MB gpu_used_MB device_bytes request_segments cache_bytes shm_used_MB builds" >> "$OUT/mix_mem.txt"
  mem_sample >> "$OUT/mix_mem.txt"
  as_pg pgbench -n -c 8 -j 8 -T "$MIX_SECS" -D nsrc="$n" -f "$WORK/mix_rwr.sql@3" -f "$WORK/mix_pagerank.sql@1" --log --log-prefix=rank bench > rank.out 2>&1 & p1=$!
  as_pg pgbench -n -c 2 -j 2 -T "$MIX_SECS" -R 4 -D nsrc="$n" -f "$WORK/mix_writer.sql" --log --log-prefix=write bench > write.out 2>&1 & p2=$!
  as_pg pgbench -n -c 1 -j 1 -T "$MIX_SECS" -f "$WORK/mix_check.sql" bench > check.out 2>&1 & p3=$!
  end=$(( $(date +%s) + MIX_SECS ))
  while [ "$(date +%s)" -lt "$end" ]; do sleep "$SAMPLE_SECS"; mem_sample >> "$OUT/mix_mem.txt"; done
  set +e; wait $p1; r1=$?; wait $p2; r2=$?; wait $p3; r3=$?; set -e
  mem_sample >> "$OUT/mix_mem.txt"
  cat rank.out write.out check.out | grep -E 'aborted|error|ERROR|transactions actually|latency average|tps' || true
  cat rank.[0-9]* 2>/dev/null | awk 'NF>=6 {print $3 / 1000}' > "$WORK/mix_lat.txt"
  after=$(sql -c "SELECT concat_ws(' ', restarts, failures) FROM powerrank_service")
  same_pm=$(sql -c "SELECT pg_postmaster_start_time() = '$start_pm'::timestamptz")
  crashes=$(tail -n +"$((log0 + 1))" "$PGLOG" | grep -cE 'PANIC|terminated by signal|was terminated' || true)
  sql -c "SELECT concat_ws(' ', at, call, ok, engine, edges_dev, edges_cpu, edges_table, max_diff, missing) FROM bench_checks WHERE NOT ok" | head -20
  echo "RESULT mixed ${MIX_SECS} s: pgbench exit ranking $r1 writers $r2 checker $r3; aborted clients: $(cat rank.out write.out check.out | grep -c 'aborted' || true)"
  echo "RESULT mixed ranking calls $(wc -l < "$WORK/mix_lat.txt"), p50 $(pct 50 < "$WORK/mix_lat.txt") ms, p99 $(pct 99 < "$WORK/mix_lat.txt") ms; writer transactions $(cat write.[0-9]* 2>/dev/null | grep -vc '^[a-z]' || true); final edges $(sql -c "SELECT count(*) FROM edges_mix")"
  echo "RESULT mixed checks (RR snapshot, $DEV_CHECK vs cpu, bound $BOUND): $(sql -c "SELECT count(*) || ' sampled, ' || count(*) FILTER (WHERE NOT ok) || ' wrong; engines ' || string_agg(DISTINCT engine, ',') || '; max diff ' || coalesce(max(max_diff)::text, '-') FROM bench_checks")"
  echo "RESULT mixed crashes: postmaster start time unchanged $same_pm; service restarts/failures before $before after $after; crash lines in server log $crashes"
  echo "RESULT mixed memory (first -> last sample): $(awk '!/^#/ {if (!f) f=$0; l=$0} END {split(f,a," "); split(l,b," "); printf "total RSS %s -> %s MB, max proc RSS %s -> %s MB, engine RSS %s -> %s MB, GPU used %s -> %s MB, device_bytes %s -> %s, request segments %s -> %s, cache bytes %s -> %s, /dev/shm used %s -> %s MB, service builds %s -> %s", a[2],b[2],a[3],b[3],a[4],b[4],a[5],b[5],a[6],b[6],a[7],b[7],a[8],b[8],a[9],b[9],a[10],b[10]}' "$OUT/mix_mem.txt")"
}

export -f phase_setup phase_suite phase_gpucheck phase_load phase_cold phase_rwr phase_auto phase_standalone phase_mixed phase_streamed

# per-phase limits (each also capped by what is left of BUDGET)
has setup && phase setup 240
if ! has setup || [ "$(grep -c '^RESULT service ready' "$OUT/setup.log" 2>/dev/null)" = 1 ]; then
  has suite && phase suite 200
  has gpucheck && phase gpucheck 180
  has load && phase load 150
  has cold && phase cold 150
  has rwr && phase rwr $(( (RWR_SECS + 45) * $(echo $RWR_BATCHES | wc -w) * $(echo ${RWR_WARM:-on} | wc -w) * $(echo ${RWR_NORMS:-l1} | wc -w) ))
  has auto && phase auto 120
  has standalone && phase standalone 200
  has streamed && phase streamed 300
  has mixed && phase mixed $(( MIX_SECS + 120 ))
else
  note "setup failed: service not ready — see setup.log"; tail -30 "$OUT/setup.log"
fi

tail -200 "$PGLOG" > "$OUT/pg_log_tail.txt" 2>/dev/null
cp "$SUMMARY" "$OUT/pg_log_tail.txt" "$FINAL_OUT/" 2>/dev/null
tar czf "$FINAL_OUT/logs.tar.gz" -C "$OUT" . 2>/dev/null
if [ "$DRY_RUN" = 1 ] && [ "${KEEP:-0}" != 1 ]; then as_pg pg_ctl -D "$PGDATA" -m fast stop > /dev/null 2>&1; fi
echo
echo "================ summary ($(date -u +%FT%TZ), $(( $(date +%s) - START )) s, DRY_RUN=$DRY_RUN) ================"
cat "$SUMMARY"

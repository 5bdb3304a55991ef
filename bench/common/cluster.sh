# bench/common/cluster.sh — sourced by the SQL benchmarks (bench/sql/*.sh) after bench/common/phases.sh:
# the PostgreSQL they run on, building and installing powerrank into it, one throwaway cluster, psql as
# the cluster's OS user, timed calls with powerrank_last_run(), and edge tables loaded from the graph
# generator or test/data.  The script sets ROOT (the project root) and OUT, calls pg_init in its own
# shell (not in a phase: the exit trap that stops the cluster belongs to the script), then
# cluster_start.
#
# Environment:
#   PG_CONFIG   the pg_config of the PostgreSQL to use; else PGBIN/pg_config; else pg_config on PATH
#   PGBIN       that PostgreSQL's bin directory (instead of PG_CONFIG)
#   PGUSER_OS   started as root: the OS user the server and its clients run as (PostgreSQL refuses to
#               run as root), default postgres, created when missing; started as another user: that user
#   PORT        the cluster's port (default 55432); it listens on a Unix socket in its scratch folder only
#   TMPDIR      where the scratch folder (cluster, generated COPY files, pgbench logs) is made, default
#               /tmp; removed at the end.  R-MAT 24 needs about 25 GB there.
#   KEEP=1      leave the cluster (and the scratch folder) at the end; the script prints how to reach it
#   CUDA_HOME   the CUDA toolkit (default /usr/local/cuda): its lib64 goes on the server's library path

# resolves the PostgreSQL, the OS user and the scratch folder; exports what psql and the server need
pg_init() {
  if [ -z "${PG_CONFIG:-}" ]; then
    if [ -n "${PGBIN:-}" ]; then PG_CONFIG=$PGBIN/pg_config
    else PG_CONFIG=$(command -v pg_config) || die "no pg_config on PATH: set PG_CONFIG=/path/to/bin/pg_config (or PGBIN=/path/to/bin)"; fi
  fi
  [ -x "$PG_CONFIG" ] || die "PG_CONFIG=$PG_CONFIG is not an executable pg_config"
  PGBIN=$("$PG_CONFIG" --bindir) && PG_LIBDIR=$("$PG_CONFIG" --libdir) && PG_PKGLIBDIR=$("$PG_CONFIG" --pkglibdir) \
    || die "$PG_CONFIG does not run"
  [ -x "$PGBIN/postgres" ] && [ -x "$PGBIN/initdb" ] && [ -x "$PGBIN/pgbench" ] \
    || die "$PGBIN (pg_config --bindir) lacks postgres, initdb or pgbench: point PG_CONFIG at a server installation"
  export PG_CONFIG PGBIN
  export PATH="$PGBIN:$PATH"
  export LD_LIBRARY_PATH="$PG_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
  if [ -d "$CUDA_HOME/lib64" ]; then LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$CUDA_HOME/lib64; fi
  if [ "$(id -u)" = 0 ]; then
    PGOS=${PGUSER_OS:-postgres}
    id "$PGOS" > /dev/null 2>&1 || useradd --system --create-home --shell /bin/bash "$PGOS" \
      || die "cannot create the OS user $PGOS (PGUSER_OS)"
  else
    PGOS=$(id -un)
    [ -z "${PGUSER_OS:-}" ] || [ "$PGUSER_OS" = "$PGOS" ] || die "PGUSER_OS=$PGUSER_OS needs root (started as $PGOS)"
  fi
  PORT=${PORT:-55432}
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/powerrank-bench.XXXXXX") || die "cannot make a scratch folder in ${TMPDIR:-/tmp}"
  chmod 755 "$WORK"
  own "$WORK"
  PGDATA=$WORK/data
  PGLOG=$WORK/server.log
  export PGHOST=$WORK PGPORT=$PORT PGUSER=postgres PGDATABASE=bench
  trap cluster_stop EXIT
  trap 'exit 143' TERM INT HUP   # stopped from outside (timeout, ^C): the exit trap still stops the cluster
}

# gives files to the server's OS user (when started as root)
own() { if [ "$(id -u)" = 0 ]; then chown -R "$PGOS" "$@"; fi; }

# runs a command as the server's OS user, in the current folder when that user may enter it, else in
# the scratch folder
as_pg() {
  if [ "$(id -u)" != 0 ]; then "$@"; return; fi
  runuser -u "$PGOS" -- env PATH="$PATH" LD_LIBRARY_PATH="$LD_LIBRARY_PATH" \
    sh -c 'cd "$0" 2>/dev/null || cd "$1"; shift; exec "$@"' "$PWD" "$WORK" "$@"
}
# psql on the cluster (database bench unless PGDATABASE says otherwise), unaligned, stops at the first error
sql() { as_pg psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

# builds powerrank against PG_CONFIG from clean (objects built for another PostgreSQL would not load)
# and installs it there; $1 = 1: also the GPU library (cuda/), $2 = 1: also the multi-GPU library
# (cuda/Makefile.multi, NCCL from NCCL_HOME).  Prints the install lines.
pg_build_install() {
  local jobs
  jobs=$(nproc)
  make -s clean PG_CONFIG="$PG_CONFIG" > /dev/null
  make -s -j"$jobs" PG_CONFIG="$PG_CONFIG" || return 1
  if [ "${1:-0}" = 1 ]; then make -s -C cuda -j"$jobs" || return 1; fi
  if [ "${2:-0}" = 1 ]; then make -s -C cuda -f Makefile.multi -j"$jobs" NCCL_HOME="$NCCL_HOME" || return 1; fi
  if [ -w "$PG_PKGLIBDIR" ]; then make PG_CONFIG="$PG_CONFIG" install > "$WORK/install.log" 2>&1
  else sudo make PG_CONFIG="$PG_CONFIG" install > "$WORK/install.log" 2>&1; fi || { cat "$WORK/install.log"; return 1; }
  grep -E '^installing|skipped' "$WORK/install.log" || true
}

# stops with a message unless powerrank (and with $1 = gpu its GPU library) is installed
pg_require_installed() {
  [ -f "$PG_PKGLIBDIR/powerrank.so" ] || die "powerrank is not installed in $PG_PKGLIBDIR: run the build phase first"
  if [ "${1:-}" = gpu ] && [ ! -f "$PG_PKGLIBDIR/powerrank_gpu.so" ]; then
    die "$PG_PKGLIBDIR/powerrank_gpu.so is missing: run the build phase first (it builds cuda/ where nvcc is)"
  fi
}

# initdb's and starts the throwaway cluster; $1: the server's settings ("-c name=value ...")
cluster_start() {
  as_pg initdb -D "$PGDATA" -A trust -U postgres --no-sync > "$WORK/initdb.log" 2>&1 || { cat "$WORK/initdb.log"; return 1; }
  # pg_ctl hands the options to a shell: one line
  as_pg pg_ctl -D "$PGDATA" -l "$PGLOG" -w -t 600 -o "-k $WORK -p $PORT -c listen_addresses='' $(echo "$1" | tr '\n' ' ')" start > /dev/null \
    || { tail -30 "$PGLOG"; return 1; }
  PGDATABASE=postgres sql -c "CREATE DATABASE bench"
}

# starts the throwaway cluster of a script that needs no GPU: powerrank preloaded without its GPU service,
# 40 connections, plus $1 (more "-c name=value" settings); the server's output in $OUT/server.log, printed
# when it does not start
cluster_start_without_gpu() {
  cluster_start "-c shared_preload_libraries=powerrank -c max_connections=40 -c powerrank.service_engine=off
    ${1:-}" > "$OUT/server.log" 2>&1 || { cat "$OUT/server.log"; return 1; }
}

# at exit: the server log's tail into OUT, then the cluster stopped and the scratch folder removed
# (KEEP=1: both left, with how to reach them)
cluster_stop() {
  [ -n "${WORK:-}" ] && [ -d "$WORK" ] || return 0
  tail -200 "$PGLOG" > "$OUT/server_log_tail.txt" 2> /dev/null
  if [ "${KEEP:-0}" = 1 ]; then
    echo "KEEP=1: the cluster runs on: PGHOST=$WORK PGPORT=$PORT PGUSER=postgres psql -d bench (as $PGOS);" \
         "stop it with: $PGBIN/pg_ctl -D $PGDATA stop; then rm -rf $WORK"
    return 0
  fi
  if [ -f "$PGDATA/postmaster.pid" ]; then
    as_pg pg_ctl -D "$PGDATA" -m fast -t 120 stop > /dev/null 2>&1 || as_pg pg_ctl -D "$PGDATA" -m immediate stop > /dev/null 2>&1
  fi
  rm -rf "$WORK"
}

# waits until the GPU service is ready, polling every 0.1 s at most $1 times (default 300)
wait_ready() {
  for _ in $(seq "${1:-300}"); do
    [ "$(sql -c 'SELECT state FROM powerrank_service')" = ready ] && return 0
    sleep 0.1
  done
  return 1
}
# ALTER SYSTEM SET $1 = $2 (an SQL literal), reload, and wait for the engine process the reload restarts
reload_setting() {
  sql -c "ALTER SYSTEM SET $1 = $2" -c "SELECT pg_reload_conf()" > /dev/null
  sleep 1
  wait_ready || true
}
# ALTER SYSTEM RESET of each setting named, reload, wait for the service
reset_settings() {
  local s args=()
  for s in "$@"; do args+=(-c "ALTER SYSTEM RESET $s"); done
  sql "${args[@]}" -c "SELECT pg_reload_conf()" > /dev/null
  sleep 1
  wait_ready || true
}

# timed SQL calls in ONE session: for each of REPS runs of QUERY (after PRE, untimed) one line
# "ms engine iterations build_ms iterate_ms total_ms cache_hit fallback read_ms prepare_ms residency"
# (ms: psql's \timing; the rest: powerrank_last_run(), spaces in the engine's name as _, - for NULL)
timed_calls() {  # reps query [pre]
  local reps=$1 q=${2%;} pre=${3:-} f
  f=$(mktemp "$WORK/timed.XXXXXX.sql")
  { echo "$pre"
    for _ in $(seq "$reps"); do
      echo '\timing on'; echo "$q \\g /dev/null"; echo '\timing off'   # no ';': "\g" alone runs the query once
      echo "SELECT concat_ws(' ', 'STATS', replace(engine, ' ', '_'), iterations, round(build_ms::numeric, 1), round(iterate_ms::numeric, 1), round(total_ms::numeric, 1), cache_hit, coalesce(fallback, '-'), round(read_ms::numeric, 1), round(prepare_ms::numeric, 1), coalesce(residency, '-')) FROM (SELECT 1) one LEFT JOIN powerrank_last_run() ON true;"
    done; } > "$f"
  chmod 644 "$f"
  sql -f "$f" | awk '/^Time:/ {t=$2} /^STATS/ {$1=""; print t $0}'
  rm -f "$f"
}

# loads GRAPH into a new UNLOGGED table TABLE(src bigint, dst bigint), VACUUM ANALYZE, and enables the
# graph cache for it; prints a "RESULT load" line.  GRAPH: an R-MAT scale (24: Graph500 a = .57,
# b = .19, c = .19, edge factor 16, random ids, duplicates removed), a graph_gen.h name
# (local:23:16:0.9:64, bip:22, rmat:22:4, er:22, ...): both written by bench/sql/rmat_copy.c as PARTS files of
# binary COPY, loaded by PARTS parallel COPYs; or slashdot, enron (test/data), or a .tsv / .tsv.gz
# file of "src<TAB>dst" lines (absolute, or relative to the project root), loaded by one COPY.
load_edges() {  # graph table parts
  local graph=$1 t=$2 parts=$3 rows what file seed t0 t1 t2 t3 p pids failed
  t0=$(date +%s.%N)
  sql -c "DROP TABLE IF EXISTS $t" -c "CREATE UNLOGGED TABLE $t(src bigint, dst bigint)" || return 1
  case $graph in
    slashdot|enron|*.tsv|*.tsv.gz)
      case $graph in
        slashdot) file=$ROOT/test/data/soc-slashdot0902.tsv.gz ;;
        enron) file=$ROOT/test/data/email-enron.tsv.gz ;;
        /*) file=$graph ;;
        *) file=$ROOT/$graph ;;
      esac
      [ -r "$file" ] || { echo "cannot read $file"; return 1; }
      what=$(basename "$file")
      cp "$file" "$WORK/$t.input" && chmod 644 "$WORK/$t.input"
      t1=$(date +%s.%N)
      sql -c "COPY $t FROM PROGRAM 'zcat -f $WORK/$t.input'" || return 1
      rm -f "$WORK/$t.input"
      parts=1
      rows=$(sql -c "SELECT count(*) FROM $t")
      ;;
    *)
      [ -x "$WORK/rmat_copy" ] || gcc -O2 -std=gnu11 -pthread -Itest/common -o "$WORK/rmat_copy" \
        bench/sql/rmat_copy.c test/common/graph_gen.c -lm || return 1
      seed=20261121
      case $graph in *:*) what=$graph ;; *) what="R-MAT $graph"; seed=$((20261121 + graph)) ;; esac
      rows=$("$WORK/rmat_copy" "$graph" 16 "$seed" "$parts" "$WORK/$t") || return 1
      chmod 644 "$WORK/$t".*.bin
      t1=$(date +%s.%N)
      pids=()
      for p in $(seq 0 $((parts - 1))); do sql -c "COPY $t FROM '$WORK/$t.$p.bin' WITH (FORMAT binary)" & pids+=($!); done
      failed=0
      for p in "${pids[@]}"; do wait "$p" || failed=1; done
      rm -f "$WORK/$t".*.bin
      [ "$failed" = 0 ] || return 1
      ;;
  esac
  t2=$(date +%s.%N)
  sql -c "VACUUM ANALYZE $t" || return 1
  t3=$(date +%s.%N)
  sql -c "SELECT powerrank_cache_enable('$t')" > /dev/null || return 1
  echo "RESULT load $t: $what, $rows edges; generate $(calc "$t1 - $t0") s, $parts parallel COPY $(calc "$t2 - $t1") s ($(calc "$rows / ($t2 - $t1) / 1000000") M rows/s), VACUUM ANALYZE $(calc "$t3 - $t2") s; $(sql -c "SELECT pg_size_pretty(pg_table_size('$t'))")"
}

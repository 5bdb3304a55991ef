#!/bin/bash
# bench/sql/live_patch.sh — live tables (powerrank_cache_live): what the change capture costs
# writers, and what a patched cached graph costs a reader after 0.1% of the edges changed, against
# a cold read and build (no GPU needed; any PostgreSQL 15).
#
#   [PG_CONFIG=/path/to/bin/pg_config | PGBIN=/path/to/bin] bench/sql/live_patch.sh [SECONDS] [CLIENTS] [ROUNDS]
#   (defaults 20, 2 and 5; PHASES="writers patch" by default, or one of them)
#
# Starts a throwaway cluster (bench/common/cluster.sh; powerrank preloaded, built and installed from
# this tree beforehand: make && make install), wal_level = logical for the whole run, and
# EXTRA_SETTINGS ("-c name=value ..." added to the server's settings, e.g. "-c huge_pages=on -c
# min_dynamic_shared_memory=1GB": the cached graphs then live in the main shared memory).
#
# writers   four identical tables of 200,000 weighted edges with an index on src: untracked,
#           tracked (powerrank_cache_enable: one change log row per writing transaction), live
#           (powerrank_cache_live: also the changed rows, statement triggers with transition
#           tables) and, for logical decoding, REPLICA IDENTITY FULL with a test_decoding slot
#           created just before its run; pgbench with CLIENTS clients of pgbench/live_writer.sql
#           (insert, weight update, delete) for SECONDS against each, twice in opposite orders.  Prints
#           the mean TPS of each and its ratio to the untracked one, and the time to decode the changes
#           (the slot exists from the first run on).
# patch     GRAPH (soc-Slashdot0902 from test/data by default, or an R-MAT scale / graph_gen.h name)
#           with a weight column, live.  Cold: the graph's read and build with the cache off (the median
#           of ROUNDS calls).  Then ROUNDS times: 0.1% of the edges changed in one transaction (at least
#           1,000 rows: a third inserts, a third deletes, a third weight updates; CHANGE_NODES=new: the
#           inserts from new source nodes, =existing: between nodes the graph has), then one PageRank
#           on DEVICE (cpu: the backend's engine; gpu: the GPU service, started and waited for), whose
#           graph is the cached one patched with the changed rows (powerrank_last_run: graph_source
#           'delta', build_ms = reading the change log and the changed rows, patching and caching the
#           graph); the ratio of the patched graph's median to the cold one, and of the whole patched
#           call to the whole cold call; and the largest score difference between the last patched run
#           and a fresh build (tolerance 1e-10).
#
# Environment (besides bench/common/cluster.sh's): PHASES, EXTRA_SETTINGS, GRAPH (slashdot),
# DEVICE (cpu), CHANGE_NODES (new), CHANGES (the kinds of change made, "insert delete update"; a
# delete may leave a node without an edge, which changes the node set), PARTS (parallel COPYs of an
# R-MAT load: the cores, at most 16).
set -u
SECONDS_RUN=${1:-20}
CLIENTS=${2:-2}
ROUNDS=${3:-5}
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/bench-out/live_patch}
phases=(${PHASES:-writers patch})
GRAPH=${GRAPH:-slashdot}
DEVICE=${DEVICE:-cpu}
CHANGE_NODES=${CHANGE_NODES:-new}
CHANGES=${CHANGES:-insert delete update}
. bench/common/phases.sh
. bench/common/cluster.sh
case $DEVICE in cpu|gpu) ;; *) die "DEVICE=$DEVICE: cpu or gpu" ;; esac
case $CHANGE_NODES in new|existing) ;; *) die "CHANGE_NODES=$CHANGE_NODES: new or existing" ;; esac
PARTS=${PARTS:-$(( $(nproc) < 16 ? $(nproc) : 16 ))}
pg_init
pg_require_installed "$( [ "$DEVICE" = cpu ] || echo gpu)"
cp bench/sql/pgbench/live_writer.sql "$WORK"/
own "$WORK"
SETTINGS="-c wal_level=logical -c max_replication_slots=4 -c max_wal_size=16GB ${EXTRA_SETTINGS:-}"
if [ "$DEVICE" = cpu ]; then
  cluster_start_without_gpu "$SETTINGS" || exit 1
else
  cluster_start "-c shared_preload_libraries=powerrank -c max_connections=40 $SETTINGS" > "$OUT/server.log" 2>&1 \
    || { cat "$OUT/server.log"; exit 1; }
fi
PSQL=(psql -X -q -d postgres -v ON_ERROR_STOP=1)
sql -d postgres -c "CREATE EXTENSION powerrank" > /dev/null || exit 1
sql -c "CREATE EXTENSION powerrank" > /dev/null || exit 1
if [ "$DEVICE" != cpu ]; then wait_ready 600 || die "the GPU service is not ready: $(sql -c 'SELECT last_error FROM powerrank_service')"; fi

writers() {
  as_pg "${PSQL[@]}" <<'SQL' || return 1
CREATE TABLE edges_untracked(src bigint, dst bigint, w float8);
INSERT INTO edges_untracked SELECT (g % 8 + 1) * 1000000 + g % 20000 + 1, g % 20000 + 1, 1
FROM generate_series(1, 200000) g;
CREATE TABLE edges_tracked AS SELECT * FROM edges_untracked;
CREATE TABLE edges_live AS SELECT * FROM edges_untracked;
CREATE TABLE edges_logical AS SELECT * FROM edges_untracked;
CREATE INDEX ON edges_untracked(src);
CREATE INDEX ON edges_tracked(src);
CREATE INDEX ON edges_live(src);
CREATE INDEX ON edges_logical(src);
SELECT powerrank_cache_enable('edges_tracked');
SELECT powerrank_cache_enable('edges_live');
SELECT powerrank_cache_live('edges_live');
ALTER TABLE edges_logical REPLICA IDENTITY FULL;
VACUUM ANALYZE;
SQL
  # two passes in opposite orders (the host's load drifts): each table's TPS is the mean of its two runs
  local t tps pass
  declare -A sum
  sql -d postgres -c "SELECT pg_create_logical_replication_slot('live_patch', 'test_decoding')" > /dev/null || return 1
  for pass in 1 2; do
    for t in $( [ "$pass" = 1 ] && echo untracked tracked live logical || echo logical live tracked untracked ); do
      as_pg pgbench -n -M simple -c "$CLIENTS" -j "$CLIENTS" -T "$SECONDS_RUN" -D tbl="edges_$t" \
        -f "$WORK/live_writer.sql" postgres > "$WORK/$t.$pass.log" 2>&1 || { cat "$WORK/$t.$pass.log"; return 1; }
      tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$WORK/$t.$pass.log")
      echo "writers pass $pass $t: $tps tps"
      sum[$t]=$(calc "${sum[$t]:-0} + $tps")
    done
  done
  for t in untracked tracked live logical; do
    echo "RESULT writers $t: $(calc "${sum[$t]} / 2") tps (mean of 2 runs; $(calc "${sum[$t]} / ${sum[untracked]}") of untracked)"
  done
  local t0 t1 n
  t0=$(date +%s.%N)
  n=$(sql -d postgres -c "SELECT count(*) FROM pg_logical_slot_get_changes('live_patch', NULL, NULL)")
  t1=$(date +%s.%N)
  echo "RESULT writers logical: decoding the $n changes of all the runs (the slot was made before the first) took $(calc "$t1 - $t0") s"
  sql -d postgres -c "SELECT pg_drop_replication_slot('live_patch')" > /dev/null
  echo "RESULT writers: $CLIENTS clients, $SECONDS_RUN s each, $(nproc) cores, $("$PGBIN/postgres" --version)"
}

patch() {
  load_edges "$GRAPH" sd "$PARTS" || return 1
  as_pg "${PSQL[@]}" -d bench -v device="$DEVICE" -v change_nodes="$CHANGE_NODES" -v changes="$CHANGES" <<'SQL' || return 1
ALTER TABLE sd ADD COLUMN w float8 NOT NULL DEFAULT 1;
SELECT powerrank_cache_live('sd');
CREATE TABLE bench_settings AS SELECT :'device' AS device, :'change_nodes' = 'new' AS new_nodes,
  string_to_array(:'changes', ' ') AS changes;
-- one PageRank call: how it got its graph, the graph's part of it (build_ms) and the whole call
CREATE FUNCTION bench_call(OUT graph_source text, OUT delta_rows bigint, OUT build_ms float8,
                           OUT iterations int, OUT call_ms float8, OUT engine text, OUT prepare_ms float8,
                           OUT residency text)
LANGUAGE plpgsql AS $$
DECLARE
  t0 timestamptz := clock_timestamp();
  dev text := (SELECT device FROM bench_settings);
BEGIN
  PERFORM count(*) FROM pagerank('sd', weight_column => 'w', top_k => 10, device => dev);
  call_ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
  SELECT r.graph_source, r.delta_rows, r.build_ms, r.iterations, r.engine, r.prepare_ms, r.residency
  INTO graph_source, delta_rows, build_ms, iterations, engine, prepare_ms, residency FROM powerrank_last_run() r;
END $$;
-- nodes the graph has (the endpoints of its first 2,000,000 rows), numbered for the inserts to draw
CREATE TABLE bench_nodes AS
  SELECT row_number() OVER () AS i, node
  FROM (SELECT src AS node FROM (SELECT src, dst FROM sd LIMIT 2000000) f
        UNION SELECT dst FROM (SELECT src, dst FROM sd LIMIT 2000000) f) n;
CREATE INDEX ON bench_nodes(i);
-- 0.1% of the edges (at least 1,000 rows) changed in one transaction: inserts (from new source
-- nodes, or between nodes the graph has), deletes and weight updates of random rows
CREATE FUNCTION bench_change(round int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  per bigint := greatest(333, (SELECT reltuples FROM pg_class WHERE oid = 'sd'::regclass)::bigint / 3000);
  nodes bigint := (SELECT count(*) FROM bench_nodes);
  pct float8 := least(100, 3000.0 * per / greatest(1, (SELECT reltuples FROM pg_class WHERE oid = 'sd'::regclass)));
  kinds text[] := (SELECT changes FROM bench_settings);
BEGIN
  IF 'insert' = ANY (kinds) AND (SELECT new_nodes FROM bench_settings) THEN
    INSERT INTO sd SELECT 100000000000 * round + i, i * 37 % 80000, 1 + i % 3 FROM generate_series(1, per + 1) i;
  ELSIF 'insert' = ANY (kinds) THEN
    INSERT INTO sd SELECT a.node, b.node, 1 + g.k % 3
    FROM generate_series(1, per + 1) g(k)
    JOIN bench_nodes a ON a.i = 1 + (g.k * 7919 + round * 104729) % nodes
    JOIN bench_nodes b ON b.i = 1 + (g.k * 15485863 + round * 32452843) % nodes;
  END IF;
  IF 'delete' = ANY (kinds) THEN
    DELETE FROM sd WHERE ctid IN (SELECT ctid FROM sd TABLESAMPLE SYSTEM (pct) WHERE src < 100000000000 LIMIT per);
  END IF;
  IF 'update' = ANY (kinds) THEN
    UPDATE sd SET w = w + 0.5 WHERE ctid IN (SELECT ctid FROM sd TABLESAMPLE SYSTEM (pct) WHERE src < 100000000000 LIMIT per);
  END IF;
END $$;
CREATE TABLE bench_results(phase text, round int, graph_source text, delta_rows bigint, build_ms float8,
                           iterations int, call_ms float8, engine text, prepare_ms float8, residency text);
SQL
  local r
  for r in $(seq "$ROUNDS"); do
    sql -c "SET powerrank.cache_size = 0" -c "INSERT INTO bench_results SELECT 'cold', $r, c.* FROM bench_call() c" || return 1
  done
  sql -c "INSERT INTO bench_results SELECT 'first cached', 0, c.* FROM bench_call() c" || return 1
  for r in $(seq "$ROUNDS"); do
    sql -c "SELECT bench_change($r)" > /dev/null || return 1
    sql -c "SET client_min_messages = debug1" \
        -c "INSERT INTO bench_results SELECT 'patched', $r, c.* FROM bench_call() c" \
        -c "RESET client_min_messages" \
        -c "INSERT INTO bench_results SELECT 'hit', $r, c.* FROM bench_call() c" 2> "$WORK/patched.$r.log" || { cat "$WORK/patched.$r.log"; return 1; }
    # where the patched call's graph time went (DEBUG1 lines of the patch and the cache publish)
    grep -E 'patched with|patched graph:|changed since' "$WORK/patched.$r.log" | sed 's/^DEBUG: */RESULT patch round '"$r"': /' 
  done
  sql <<'SQL' | sed 's/^/RESULT patch /'
SELECT format('%s: graph %s (median of %s; min %s, max %s), whole call %s ms (median), prepare %s ms, graph_source %s, delta_rows %s, iterations %s, engine %s, residency %s',
              phase, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY build_ms)::numeric, 1) || ' ms',
              count(*), round(min(build_ms)::numeric, 1), round(max(build_ms)::numeric, 1),
              round(percentile_cont(0.5) WITHIN GROUP (ORDER BY call_ms)::numeric, 1),
              round(percentile_cont(0.5) WITHIN GROUP (ORDER BY prepare_ms)::numeric, 1),
              string_agg(DISTINCT graph_source, '/'), coalesce(string_agg(DISTINCT delta_rows::text, '/'), '-'),
              string_agg(DISTINCT iterations::text, '/'), string_agg(DISTINCT engine, '/'),
              coalesce(string_agg(DISTINCT residency, '/'), '-'))
FROM bench_results GROUP BY phase ORDER BY min(round), phase;
SELECT format('patched / cold: graph %s, whole call %s', round((p.m / c.m)::numeric, 3), round((p.call / c.call)::numeric, 3))
FROM (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY build_ms) m,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY call_ms) call FROM bench_results WHERE phase = 'patched') p,
     (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY build_ms) m,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY call_ms) call FROM bench_results WHERE phase = 'cold') c;
SELECT format('patched round %s: graph %s ms, whole call %s ms; / cold: graph %s, whole call %s', p.round,
              round(p.build_ms::numeric, 1), round(p.call_ms::numeric, 1),
              round((p.build_ms / c.m)::numeric, 3), round((p.call_ms / c.call)::numeric, 3))
FROM bench_results p,
     (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY build_ms) m,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY call_ms) call FROM bench_results WHERE phase = 'cold') c
WHERE p.phase = 'patched' ORDER BY p.round;
SQL
  # the last patched graph (cached; on DEVICE) against a fresh build on the CPU, to the bit of the tolerance
  sql <<'SQL' | sed 's/^/RESULT patch /'
CREATE TEMP TABLE a AS SELECT * FROM pagerank('sd', weight_column => 'w', tolerance => 1e-10,
                                              device => (SELECT device FROM bench_settings));
SELECT 'scores of the cached graph: ' || graph_source || ', ' || engine || ', ' || coalesce(residency, '-') FROM powerrank_last_run();
SET powerrank.cache_size = 0;
CREATE TEMP TABLE b AS SELECT * FROM pagerank('sd', weight_column => 'w', tolerance => 1e-10, device => 'cpu');
SELECT format('against a fresh build (%s): %s nodes, largest score difference %s', graph_source,
              (SELECT count(*) FROM a FULL JOIN b USING (node) WHERE a.node IS NOT NULL AND b.node IS NOT NULL),
              (SELECT max(abs(a.score - b.score)) FROM a JOIN b USING (node)))
FROM powerrank_last_run();
SQL
  echo "RESULT patch: $(sql -c "SELECT count(*) FROM sd") edges, $(nproc) cores: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), $(date -u +%F)"
}

has writers && phase writers writers
has patch && phase patch patch
exit "$BENCH_FAILED"

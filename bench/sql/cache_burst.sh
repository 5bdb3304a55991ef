#!/bin/bash
# bench/sql/cache_burst.sh — latency of a graph cache hit right after a burst of writes to the
# tracked table, against the same hit once the change log is quiet.
#
#   bench/sql/cache_burst.sh [SECONDS] [CLIENTS] [HITS]        (defaults 60, 8 and 25)
#
# The PostgreSQL 15 to use: PG_CONFIG=/path/to/pg_config, or PGBIN=/path/to/bin (default: the
# pg_config on PATH; see bench/common/cluster.sh).  powerrank must be built and installed into it (make && make install).  Run
# it as a user that may run initdb; as root the cluster runs as postgres.
#
# Starts a throwaway cluster in a temporary directory (powerrank preloaded, autovacuum off for
# the change log so that its dead rows stay until the script vacuums it), tracks a table of a
# 1,001-node graph (10,010 edges), then measures HITS cache hits of pagerank(top_k => 10) in each
# phase:
#   quiet       before any burst;
#   (burst)     a session opens a REPEATABLE READ transaction and keeps it, as a long report
#               would; CLIENTS pgbench clients insert single edges between the graph's nodes for
#               SECONDS, one transaction (one change log row) each, while the compaction worker
#               keeps the log short;
#   after, old snapshot held
#               powerrank_cache_compact() (the burst's last rows) and one call that rebuilds the
#               graph, then the hits, while the old transaction keeps every row the compactions
#               deleted from vacuum (and from being marked dead in the log's index);
#   after       the old transaction ended, before any vacuum;
#   vacuumed    after VACUUM of the change log, on the same graph.
# Prints, for each, the median, minimum and maximum latency of the hits (measured in the server,
# each a pagerank call that powerrank_last_run() reports as a cache hit), the first hit, the median
# number of change log index entries a hit read (its two reads of the log; from
# pg_stat_get_xact_tuples_returned), and the change log's live and dead rows; then the ratios of
# the median hit after the burst to the one once the log is vacuumed.
set -u
SECONDS_RUN=${1:-60}
CLIENTS=${2:-8}
HITS=${3:-25}
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/bench-out/cache_burst}
phases=(cache_burst)
. bench/common/phases.sh
. bench/common/cluster.sh
pg_init
pg_require_installed
cluster_start_without_gpu || exit 1
PSQL=(psql -X -q -d postgres -v ON_ERROR_STOP=1)
as_pg "${PSQL[@]}" <<'SQL' >/dev/null || exit 1
CREATE EXTENSION powerrank;
ALTER TABLE powerrank_change_log SET (autovacuum_enabled = off);
CREATE TABLE edges(src bigint, dst bigint);
INSERT INTO edges SELECT i % 1001 + 1, (i * 7 + i / 1001) % 1001 + 1 FROM generate_series(0, 10009) i;
SELECT powerrank_cache_enable('edges');
-- the hits' latencies in ms (a run that is not a cache hit is an error): their median, minimum,
-- maximum and the first; and the median of the change log index entries each hit read
CREATE FUNCTION bench_hits(n int, OUT median_ms float8, OUT min_ms float8, OUT max_ms float8,
                           OUT first_ms float8, OUT log_entries_read float8)
LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz;
  entries_before bigint;
  ms float8[] := '{}';
  entries bigint[] := '{}';
BEGIN
  PERFORM count(*) FROM pagerank('edges', top_k => 10);  -- builds the graph when it changed
  FOR i IN 1 .. n LOOP
    entries_before := pg_stat_get_xact_tuples_returned('powerrank_change_log_pkey'::regclass);
    started := clock_timestamp();
    PERFORM count(*) FROM pagerank('edges', top_k => 10);
    ms := ms || extract(epoch FROM clock_timestamp() - started)::float8 * 1000;
    entries := entries ||
      (pg_stat_get_xact_tuples_returned('powerrank_change_log_pkey'::regclass) - entries_before);
    IF NOT (SELECT cache_hit FROM powerrank_last_run()) THEN
      RAISE EXCEPTION 'call % was not a cache hit', i;
    END IF;
  END LOOP;
  SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY m), min(m), max(m) INTO median_ms, min_ms, max_ms
  FROM unnest(ms) m;
  first_ms := ms[1];
  SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY e) INTO log_entries_read FROM unnest(entries) e;
END $$;
CREATE TABLE bench_results(measured serial, phase text, median_ms float8, min_ms float8, max_ms float8,
                           first_ms float8, log_entries_read float8, log_rows bigint,
                           dead_rows bigint);
-- one phase: its hits and the change log's rows then
CREATE FUNCTION bench_phase(phase text, n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_stat_force_next_flush();
  INSERT INTO bench_results(phase, median_ms, min_ms, max_ms, first_ms, log_entries_read, log_rows,
                            dead_rows)
  SELECT phase, h.*, (SELECT count(*) FROM powerrank_change_log),
         (SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = 'powerrank_change_log'::regclass)
  FROM bench_hits(n) h;
END $$;
VACUUM ANALYZE;
SQL
measure() { as_pg "${PSQL[@]}" -c "SELECT bench_phase('$1', $HITS)" >/dev/null || exit 1; }
measure quiet
# a transaction that keeps the snapshot it took before the burst (as a long report would)
PGAPPNAME=bench_old_snapshot as_pg "${PSQL[@]}" <<'SQL' >/dev/null 2>&1 &
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM edges;
SELECT pg_sleep(86400);
SQL
sleep 1
cat > "$WORK/writer.sql" <<'SQL'
\set src random(1, 1001)
\set dst random(1, 1001)
INSERT INTO edges VALUES (:src, :dst);
SQL
chmod a+r "$WORK/writer.sql"
as_pg pgbench -n -M prepared -c "$CLIENTS" -j 2 -T "$SECONDS_RUN" -f "$WORK/writer.sql" postgres \
	> "$WORK/pgbench.log" 2>&1 || { cat "$WORK/pgbench.log"; exit 1; }
TRANSACTIONS=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$WORK/pgbench.log")
TPS=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$WORK/pgbench.log")
as_pg "${PSQL[@]}" -c 'SELECT powerrank_cache_compact()' -c 'SELECT pg_sleep(1)' >/dev/null || exit 1
measure 'after, old snapshot held'
as_pg "${PSQL[@]}" -c "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE application_name = 'bench_old_snapshot'" >/dev/null
wait
measure after
as_pg "${PSQL[@]}" -c 'VACUUM powerrank_change_log' >/dev/null || exit 1
measure vacuumed
echo "cache hit latency after a burst of writes: $CLIENTS clients, $SECONDS_RUN s, $TRANSACTIONS transactions ($TPS tps), $HITS hits per phase"
echo "($("$PGBIN/postgres" --version), $(nproc) cores: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1))"
as_pg "${PSQL[@]}" -P footer=off <<'SQL'
SELECT phase, round(median_ms::numeric, 2) AS median_ms, round(min_ms::numeric, 2) AS min_ms,
       round(max_ms::numeric, 2) AS max_ms, round(first_ms::numeric, 2) AS first_ms,
       log_entries_read AS "log entries read", log_rows, dead_rows
FROM bench_results ORDER BY measured;
SELECT round((a.median_ms / v.median_ms)::numeric, 2) AS "after, old snapshot held / vacuumed",
       round((b.median_ms / v.median_ms)::numeric, 2) AS "after / vacuumed"
FROM bench_results a, bench_results b, bench_results v
WHERE a.phase = 'after, old snapshot held' AND b.phase = 'after' AND v.phase = 'vacuumed';
SQL

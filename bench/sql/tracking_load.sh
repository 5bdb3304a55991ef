#!/bin/bash
# bench/sql/tracking_load.sh — writers on a table tracked for the graph cache against the same
# table untracked (no GPU needed; any PostgreSQL 15).
#
#   [PG_CONFIG=/path/to/bin/pg_config] bench/sql/tracking_load.sh [SECONDS] [CLIENTS]   (defaults 60 and 8)
#
# Starts a throwaway cluster (bench/common/cluster.sh; powerrank preloaded, built and installed from
# this tree beforehand: bench/sql/run.sh build, or make && make install), loads two identical edge
# tables of 200,000 rows with an index on src, tracks one of them (powerrank_cache_enable), and runs
# pgbench with CLIENTS clients of pgbench/tracking_writer.sql for SECONDS against each table in turn,
# under REPEATABLE READ.  A third run repeats the tracked one while one more client ranks the tracked
# table again and again (pgbench/tracking_check.sql: the cached ranking against a fresh build in the
# same snapshot).  Prints the TPS of the runs and the ratio of the first two, the failed transactions
# (serialization failures), the checks and how many found a stale ranking, and the change log's rows
# at the end.  Environment: bench/common/cluster.sh's (PG_CONFIG, PGBIN, PGUSER_OS, PORT, TMPDIR,
# KEEP); OUT (default bench-out/tracking: the server log's tail).
set -u
SECONDS_RUN=${1:-60}
CLIENTS=${2:-8}
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/bench-out/tracking}
phases=(tracking_load)
. bench/common/phases.sh
. bench/common/cluster.sh
pg_init
pg_require_installed
cp bench/sql/pgbench/tracking_*.sql "$WORK"/
own "$WORK"
# the check compares bit for bit: a rebuilt graph's run must not start from the previous graph's
# scores (powerrank.warm_start_auto), which gives the same ranking to the tolerance, not to the bit
cluster_start_without_gpu "-c powerrank.warm_start_auto=off -c default_transaction_isolation='repeatable read'" \
  || exit 1
PSQL=(psql -X -q -d postgres -v ON_ERROR_STOP=1)
as_pg "${PSQL[@]}" <<'SQL' || exit 1
CREATE EXTENSION powerrank;
CREATE TABLE edges_tracked(src bigint, dst bigint);
CREATE TABLE edges_plain(src bigint, dst bigint);
INSERT INTO edges_tracked SELECT (g % 8 + 1) * 1000000 + g % 20000 + 1, g % 20000 + 1
FROM generate_series(1, 200000) g;
INSERT INTO edges_plain SELECT * FROM edges_tracked;
CREATE INDEX ON edges_tracked(src);
CREATE INDEX ON edges_plain(src);
SELECT powerrank_cache_enable('edges_tracked');
CREATE TABLE checks(stale boolean);
CREATE FUNCTION tracking_check() RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE n1 bigint[]; s1 float8[]; n2 bigint[]; s2 float8[]; same boolean;
BEGIN
  SELECT array_agg(node ORDER BY node), array_agg(score ORDER BY node) INTO n1, s1
  FROM pagerank('edges_tracked', top_k => NULL);
  SELECT array_agg(node ORDER BY node), array_agg(score ORDER BY node) INTO n2, s2
  FROM pagerank((SELECT powerrank_graph(src, dst) FROM edges_tracked));
  same := n1 IS NOT DISTINCT FROM n2 AND s1 IS NOT DISTINCT FROM s2;
  INSERT INTO checks VALUES (NOT same);
  RETURN same;
END $$;
VACUUM ANALYZE;
SQL
PGBENCH=(pgbench -n -M simple --max-tries=1 --failures-detailed)
run() {  # table label
  as_pg "${PGBENCH[@]}" -c "$CLIENTS" -j 2 -T "$SECONDS_RUN" -D tbl="$1" -f "$WORK/tracking_writer.sql" postgres > "$WORK/$2.log" 2>&1
  local tps failed
  tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$WORK/$2.log")
  failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$WORK/$2.log")
  echo "$2: tps $tps, failed transactions ${failed:-?}" >&2
  echo "$tps ${failed:-?}"
}
read -r plain_tps plain_failed < <(run edges_plain untracked)
read -r tracked_tps tracked_failed < <(run edges_tracked tracked)
as_pg "${PGBENCH[@]}" -c 1 -T "$SECONDS_RUN" -f "$WORK/tracking_check.sql" postgres > "$WORK/check.log" 2>&1 &
checker=$!
read -r checked_tps checked_failed < <(run edges_tracked tracked_checked)
wait $checker
as_pg "${PSQL[@]}" -At <<'SQL' > "$WORK/summary.txt"
SELECT 'checks ' || count(*) || ', stale ' || count(*) FILTER (WHERE stale) FROM checks;
SELECT 'change log rows ' || count(*) FROM powerrank_change_log;
SQL
echo "== $CLIENTS writers, $SECONDS_RUN s each, REPEATABLE READ, $(nproc) cores, $(date -u +%F)"
echo "untracked: $plain_tps tps, $plain_failed failed"
echo "tracked:   $tracked_tps tps, $tracked_failed failed"
echo "tracked while a client checks rankings: $checked_tps tps, $checked_failed failed"
awk -v a="$tracked_tps" -v b="$plain_tps" 'BEGIN { printf "tracked / untracked: %.2f\n", a / b }'
cat "$WORK/summary.txt"

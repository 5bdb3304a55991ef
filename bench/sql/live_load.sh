#!/bin/bash
# bench/sql/live_load.sh — a live table (powerrank_cache_live) under steady writes while a ranking call
# runs every CALL_EVERY seconds and a checker compares the cached answer with a fresh build: the
# calls' latency against the warm call without writes, how each call got its graph, the checks, and
# the writers' throughput on the live table against an untracked copy.
#
#   [PG_CONFIG=/path/to/bin/pg_config | PGBIN=/path/to/bin] [SCALE=22 WRITERS=8 RATE=1000 DURATION=300 ...] \
#     bench/sql/live_load.sh
#
# Starts a throwaway cluster (bench/common/cluster.sh; powerrank preloaded, built and installed from this
# tree beforehand: make && make install; with DEVICE gpu or auto also the GPU library, make cuda).
#
# load        R-MAT SCALE (load_edges) as table edges with a weight column w (1) and an index on src,
#             made logged; an untracked copy edges_plain (same rows, same index); edges tracked and live
#             (powerrank_cache_enable, powerrank_cache_live); bench_sources (bench/sql/helpers.sql): the
#             existing source nodes the writers draw from.
# baseline    the first call (read and build) and then 5 calls without writes: the warm call is their
#             median.  A call is pagerank('edges', weight_column => 'w', top_k => 100, device => DEVICE),
#             timed in the server, with powerrank_last_run()'s graph_source, delta_rows, iterations and
#             error_bound.
# untracked   WRITERS pgbench clients of pgbench/live_load_writer.sql (each transaction inserts BATCH
#             edges, updates the weight of BATCH edges and deletes BATCH edges: 3 x BATCH row changes) at
#             RATE row changes a second in total, for UNTRACKED_SECS s, on edges_plain, alone.
# live        the same writers on edges for DURATION s, while one session calls the ranking every
#             CALL_EVERY s (a fixed schedule; a call that ends late starts the next at once) and a
#             checker runs every CHECK_EVERY s, in one REPEATABLE READ transaction, the call with
#             top_k => NULL (from the cache: hit, patched or built) and the same call with the cache
#             off (powerrank.cache_size = 0: read and built from the table in that snapshot), and
#             compares every node's score: a difference beyond the bound (the two runs' error_bound
#             added, plus ROUNDING), a node only one of them returned, or different edge counts is a
#             difference.
# capacity    the writers without a rate for CAPACITY_SECS s against edges_plain and edges (no ranking),
#             twice in opposite orders (0: skipped): the throughput the capture costs when the writers
#             are the limit.
# report      a markdown table of the above: call p50 / p95 / p99 and their ratio to the warm call, how
#             many calls hit, patched or rebuilt, the checks, TPS and row changes a second tracked and
#             untracked (and their ratios), with the goals (p50 <= 3 x warm, 0 differences, tracked TPS
#             >= 0.75 x untracked) marked MET or NOT MET; every call and check in $OUT/calls.csv and
#             $OUT/checks.csv.
#
# Environment (besides bench/common/cluster.sh's PG_CONFIG, PGBIN, PGUSER_OS, PORT, TMPDIR, KEEP):
#   SCALE (22), WRITERS (8), RATE (1000 row changes a second, all writers together), BATCH (1),
#   DURATION (300 s), UNTRACKED_SECS (DURATION), CALL_EVERY (1 s), CHECK_EVERY (30 s), CAPACITY_SECS (30), DEVICE (cpu: the
#   backend's engine and no GPU service; gpu or auto: the service started and waited for),
#   ROUNDING (1e-12), PARTS (parallel COPYs of the load: the cores, at most 16), CACHE_SIZE
#   (powerrank.cache_size, 16GB), SHARED_BUFFERS (4GB), EXTRA_SETTINGS ("-c name=value ..." for the
#   server), OUT (bench-out/live_load).
set -u
SCALE=${SCALE:-22}
WRITERS=${WRITERS:-8}
RATE=${RATE:-1000}
BATCH=${BATCH:-1}
DURATION=${DURATION:-300}
UNTRACKED_SECS=${UNTRACKED_SECS:-$DURATION}
CALL_EVERY=${CALL_EVERY:-1}
CHECK_EVERY=${CHECK_EVERY:-30}
CAPACITY_SECS=${CAPACITY_SECS:-30}
DEVICE=${DEVICE:-cpu}
ROUNDING=${ROUNDING:-1e-12}
CACHE_SIZE=${CACHE_SIZE:-16GB}
SHARED_BUFFERS=${SHARED_BUFFERS:-4GB}
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/bench-out/live_load}
phases=(load baseline untracked live capacity report)
. bench/common/phases.sh
. bench/common/cluster.sh
case $DEVICE in cpu|gpu|auto) ;; *) die "DEVICE=$DEVICE: cpu, gpu or auto" ;; esac
PARTS=${PARTS:-$(( $(nproc) < 16 ? $(nproc) : 16 ))}
TX_RATE=$(calc "$RATE / (3 * $BATCH)")   # pgbench's --rate: transactions a second, all clients together
pg_init
pg_require_installed "$( [ "$DEVICE" = cpu ] || echo gpu)"
cp bench/sql/pgbench/live_load_writer.sql "$WORK"/
own "$WORK"
SETTINGS="-c powerrank.cache_size=$CACHE_SIZE -c shared_buffers=$SHARED_BUFFERS -c max_wal_size=16GB
  ${EXTRA_SETTINGS:-}"
if [ "$DEVICE" = cpu ]; then
  cluster_start_without_gpu "$SETTINGS" || exit 1
else
  cluster_start "-c shared_preload_libraries=powerrank -c max_connections=40 $SETTINGS" > "$OUT/server.log" 2>&1 \
    || { cat "$OUT/server.log"; exit 1; }
fi
sql -c "CREATE EXTENSION powerrank" > /dev/null || exit 1
if [ "$DEVICE" != cpu ]; then wait_ready 600 || die "the GPU service is not ready: $(sql -c 'SELECT last_error FROM powerrank_service')"; fi
PSQL=(psql -X -q -At)   # the ranking and checker sessions: an error is recorded, not the end of the loop

load() {
  set -e
  load_edges "$SCALE" edges "$PARTS"
  sql < bench/sql/helpers.sql > /dev/null
  sql <<'SQL'
ALTER TABLE edges ADD COLUMN w float8 NOT NULL DEFAULT 1;
ALTER TABLE edges SET LOGGED;
CREATE INDEX ON edges(src);
CREATE TABLE edges_plain AS SELECT * FROM edges;
CREATE INDEX ON edges_plain(src);
VACUUM ANALYZE edges;
VACUUM ANALYZE edges_plain;
SELECT powerrank_cache_live('edges');
-- one ranking call, timed in the server, with how it got its graph; nothing after the deadline
CREATE TABLE live_calls(phase text, at timestamptz, ms float8, graph_source text, delta_rows bigint,
                        iterations int, error_bound float8, edges bigint, build_ms float8,
                        iterate_ms float8, warm_start text);
CREATE FUNCTION live_call(phase text, dev text, deadline timestamptz) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE started timestamptz;
BEGIN
  IF clock_timestamp() > deadline THEN RETURN; END IF;
  started := clock_timestamp();
  PERFORM count(*) FROM pagerank('edges', weight_column => 'w', top_k => 100, device => dev);
  INSERT INTO live_calls
  SELECT phase, started, extract(epoch FROM clock_timestamp() - started)::float8 * 1000, r.graph_source,
         r.delta_rows, r.iterations, r.error_bound, r.edges, r.build_ms, r.iterate_ms, r.warm_start
  FROM powerrank_last_run() r;
END $$;
-- the cached call against a fresh build of the same snapshot (REPEATABLE READ): every node's score
CREATE TABLE live_checks(at timestamptz, cached_source text, fresh_source text, nodes bigint,
                         only_cached bigint, only_fresh bigint, edges_cached bigint, edges_fresh bigint,
                         bound float8, max_diff float8, l1_diff float8, beyond bigint, ms float8,
                         differences bigint);
CREATE FUNCTION live_check(dev text, rounding float8) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz := clock_timestamp();
  c record;
  f record;
  d record;
  bound float8;
  differences bigint;
BEGIN
  IF current_setting('transaction_isolation') <> 'repeatable read' THEN
    RAISE EXCEPTION 'live_check must run in a REPEATABLE READ transaction';
  END IF;
  CREATE TEMP TABLE lc_cached ON COMMIT DROP AS
    SELECT node, score FROM pagerank('edges', weight_column => 'w', top_k => NULL, device => dev);
  SELECT graph_source, error_bound, edges INTO c FROM powerrank_last_run();
  PERFORM set_config('powerrank.cache_size', '0', true);
  CREATE TEMP TABLE lc_fresh ON COMMIT DROP AS
    SELECT node, score FROM pagerank('edges', weight_column => 'w', top_k => NULL, device => dev);
  SELECT graph_source, error_bound, edges INTO f FROM powerrank_last_run();
  bound := c.error_bound + f.error_bound + rounding;
  SELECT count(*) AS nodes, count(*) FILTER (WHERE a.node IS NULL) AS only_fresh,
         count(*) FILTER (WHERE b.node IS NULL) AS only_cached,
         max(abs(a.score - b.score)) AS max_diff, sum(abs(a.score - b.score)) AS l1_diff,
         count(*) FILTER (WHERE abs(a.score - b.score) > bound) AS beyond
  INTO d FROM lc_cached a FULL JOIN lc_fresh b USING (node);
  differences := d.beyond + d.only_cached + d.only_fresh
                 + CASE WHEN c.edges IS DISTINCT FROM f.edges OR f.graph_source <> 'read'
                             OR bound IS NULL THEN 1 ELSE 0 END;
  INSERT INTO live_checks VALUES (started, c.graph_source, f.graph_source, d.nodes, d.only_cached,
    d.only_fresh, c.edges, f.edges, bound, d.max_diff, d.l1_diff, d.beyond,
    extract(epoch FROM clock_timestamp() - started)::float8 * 1000, differences);
  RETURN differences;
END $$;
SQL
  echo "RESULT load: edges $(sql -c "SELECT count(*) FROM edges") rows, $(sql -c "SELECT pg_size_pretty(pg_table_size('edges') + pg_indexes_size('edges'))") with its index; sources drawn from: $(sql -c "SELECT bench_fill_sources('edges', 2)")"
}

baseline() {
  set -e
  local i
  sql -c "SELECT live_call('first', '$DEVICE', 'infinity')" > /dev/null
  for i in 1 2 3 4 5; do sql -c "SELECT live_call('warm', '$DEVICE', 'infinity')" > /dev/null; done
  sql -c "SELECT phase, round(ms::numeric, 1), graph_source, iterations, error_bound FROM live_calls ORDER BY at" | sed 's/^/RESULT baseline call: /'
  echo "RESULT baseline warm call (median of 5): $(sql -c "SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2) FROM live_calls WHERE phase = 'warm'") ms"
}

# the rows inserted, updated and deleted in $1 so far (the statistics, after their flush)
row_changes() { sql -c "SELECT n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_user_tables WHERE relid = '$1'::regclass"; }

# pgbench's writers on table $1 for $2 s, at the rate ($3 = 1) or as fast as they go; log $WORK/$4.log;
# prints "tps failed latency_ms lag_ms row_changes_per_s"
writers() {  # table seconds rated label
  local before after rate=() tps failed lat lag
  [ "$3" = 1 ] && rate=(-R "$TX_RATE")
  sleep 1; before=$(row_changes "$1")
  as_pg pgbench -n -M simple --max-tries=10 -c "$WRITERS" -j "$WRITERS" "${rate[@]}" -T "$2" -D tbl="$1" -D nodes=edges \
    -D nsrc="$(sql -c "SELECT count(*) FROM bench_sources WHERE tbl = 'edges'")" -D k="$BATCH" \
    -f "$WORK/live_load_writer.sql" bench > "$WORK/$4.log" 2>&1 || { cat "$WORK/$4.log" >&2; return 1; }
  sleep 1; after=$(row_changes "$1")
  tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$WORK/$4.log")
  failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$WORK/$4.log")
  lat=$(sed -n 's/^latency average = \([0-9.]*\).*/\1/p' "$WORK/$4.log")
  lag=$(sed -n 's/^rate limit schedule lag: avg \([0-9.]*\).*/\1/p' "$WORK/$4.log")
  printf '%.1f %s %s %s %.1f\n' "$tps" "${failed:-0}" "${lat:--}" "${lag:--}" "$(calc "($after - $before) / $2")"
}

untracked() {
  set -e
  local r
  r=$(writers edges_plain "$UNTRACKED_SECS" 1 untracked)
  echo "$r" > "$WORK/untracked.txt"
  echo "RESULT untracked writers (tps failed latency_ms lag_ms row_changes/s): $r"
}

# the ranking session: a call every CALL_EVERY s until the deadline $1 (epoch seconds)
ranking_loop() {
  local start k=0 wait
  start=$(date +%s.%N)
  while [ "$(calc "($start + $k * $CALL_EVERY < $1)")" = 1 ]; do
    wait=$(calc "$start + $k * $CALL_EVERY - $(date +%s.%N)")
    if [ "$(calc "($wait > 0)")" = 1 ]; then sleep "$wait"; fi
    echo "SELECT live_call('live', '$DEVICE', to_timestamp($1));"
    k=$((k + 1))
  done | as_pg "${PSQL[@]}" > "$WORK/ranking.log" 2>&1
}

# the checker: one check every CHECK_EVERY s until the deadline $1
checker_loop() {
  local left
  while left=$(( $1 - $(date +%s) )) && [ "$left" -gt 0 ]; do
    sleep "$(( CHECK_EVERY < left ? CHECK_EVERY : left ))"
    [ "$(date +%s)" -lt "$1" ] || break
    as_pg "${PSQL[@]}" -c "BEGIN ISOLATION LEVEL REPEATABLE READ" -c "SELECT live_check('$DEVICE', $ROUNDING)" \
      -c "COMMIT" >> "$WORK/checker.log" 2>&1
  done
}

live() {
  set -e
  local deadline rank check r
  deadline=$(( $(date +%s) + DURATION ))
  ranking_loop "$deadline" & rank=$!
  checker_loop "$deadline" & check=$!
  r=$(writers edges "$DURATION" 1 live)
  wait "$rank" "$check"
  echo "$r" > "$WORK/live.txt"
  echo "RESULT live writers (tps failed latency_ms lag_ms row_changes/s): $r"
  echo "RESULT live ranking session errors: $(grep -c ERROR "$WORK/ranking.log" || true); checker errors: $(grep -c ERROR "$WORK/checker.log" || true)"
  grep -m5 ERROR "$WORK/ranking.log" "$WORK/checker.log" | sed 's/^/RESULT live error: /' || true
}

capacity() {
  set -e
  local pass t r
  declare -A sum
  for pass in 1 2; do
    for t in $( [ "$pass" = 1 ] && echo edges_plain edges || echo edges edges_plain ); do
      r=$(writers "$t" "$CAPACITY_SECS" 0 "capacity_$t.$pass")
      echo "RESULT capacity pass $pass $t (tps failed latency_ms lag_ms row_changes/s): $r"
      sum[$t]=$(calc "${sum[$t]:-0} + $(echo "$r" | cut -d' ' -f1)")
    done
  done
  printf '%.1f %.1f\n' "$(calc "${sum[edges_plain]} / 2")" "$(calc "${sum[edges]} / 2")" > "$WORK/capacity.txt"
}

report() {
  set -e
  local warm u l ut lt
  warm=$(sql -c "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FROM live_calls WHERE phase = 'warm'")
  read -r ut _ _ _ _ < "$WORK/untracked.txt"
  read -r lt _ _ _ _ < "$WORK/live.txt"
  echo "RESULT | R-MAT $SCALE live, $WRITERS writers at $RATE row changes/s, ranking every $CALL_EVERY s, $DURATION s, device $DEVICE | value | goal |"
  echo "RESULT |---|---|---|"
  echo "RESULT | warm call without writes (median of 5) | $(printf %.2f "$warm") ms | |"
  sql -v warm="$warm" <<'SQL' | sed 's/^/RESULT /'
SELECT line FROM (
  SELECT ARRAY[format('| ranking calls: p50 / p95 / p99 (max) | %s / %s / %s (%s) ms | |', round(p[1]::numeric, 1),
                      round(p[2]::numeric, 1), round(p[3]::numeric, 1), round(mx::numeric, 1)),
               format('| p50 / p95 / p99 against the warm call | %s / %s / %s | p50 <= 3: %s |',
                      round((p[1] / :warm)::numeric, 2), round((p[2] / :warm)::numeric, 2),
                      round((p[3] / :warm)::numeric, 2),
                      CASE WHEN p[1] <= 3 * :warm THEN 'MET' ELSE 'NOT MET' END)] lines
FROM (SELECT percentile_disc(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY ms) p, max(ms) mx
      FROM live_calls WHERE phase = 'live') s) l, unnest(lines) line;
SELECT format('| calls by graph source (of %s) | %s | |', sum(n),
              string_agg(format('%s %s (p50 %s ms)', graph_source, n, round(p50::numeric, 1)), ', ' ORDER BY n DESC))
FROM (SELECT coalesce(graph_source, '-') graph_source, count(*) n,
             percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) p50
      FROM live_calls WHERE phase = 'live' GROUP BY 1) g;
SELECT format('| patched calls: changed rows applied (median, max); iterations (median) | %s, %s; %s | |',
              percentile_disc(0.5) WITHIN GROUP (ORDER BY delta_rows), max(delta_rows),
              percentile_disc(0.5) WITHIN GROUP (ORDER BY iterations))
FROM live_calls WHERE phase = 'live' AND graph_source = 'delta';
SELECT format('| checks (cached call vs fresh build, one snapshot): differences beyond the bound | %s checks (%s), %s differences; largest diff %s, L1 %s, bound %s..%s | 0: %s |',
              count(*), coalesce(string_agg(DISTINCT cached_source, '/'), '-'), coalesce(sum(differences), 0),
              coalesce(to_char(max(max_diff), '9.9EEEE'), '-'), coalesce(to_char(max(l1_diff), '9.9EEEE'), '-'),
              coalesce(to_char(min(bound), '9.9EEEE'), '-'), coalesce(to_char(max(bound), '9.9EEEE'), '-'),
              CASE WHEN count(*) > 0 AND coalesce(sum(differences), 0) = 0 THEN 'MET' ELSE 'NOT MET' END)
FROM live_checks;
SQL
  u=$(cut -d' ' -f5 "$WORK/untracked.txt"); l=$(cut -d' ' -f5 "$WORK/live.txt")
  echo "RESULT | writers at the rate: TPS untracked / live (row changes/s) | $ut ($u) / $lt ($l); ratio $(printf %.2f "$(calc "$lt / $ut")") | >= 0.75: $(goal "$lt >= 0.75 * $ut") |"
  echo "RESULT | writers' latency untracked / live (schedule lag) | $(cut -d' ' -f3 "$WORK/untracked.txt") ($(cut -d' ' -f4 "$WORK/untracked.txt")) / $(cut -d' ' -f3 "$WORK/live.txt") ($(cut -d' ' -f4 "$WORK/live.txt")) ms | |"
  if [ -s "$WORK/capacity.txt" ]; then
    read -r u l < "$WORK/capacity.txt"
    echo "RESULT | writers without a rate ($CAPACITY_SECS s, mean of 2): TPS untracked / live | $u / $l; ratio $(printf %.2f "$(calc "$l / $u")") | >= 0.75: $(goal "$l >= 0.75 * $u") |"
  fi
  sql -c "COPY (SELECT * FROM live_calls ORDER BY at) TO STDOUT WITH (FORMAT csv, HEADER)" > "$OUT/calls.csv"
  sql -c "COPY (SELECT * FROM live_checks ORDER BY at) TO STDOUT WITH (FORMAT csv, HEADER)" > "$OUT/checks.csv"
  echo "RESULT ($WRITERS writers, batch $BATCH, $(nproc) cores: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), $("$PGBIN/postgres" --version), $(date -u +%F))"
}

phase load load; [ $? = 0 ] || exit 1
phase baseline baseline; [ $? = 0 ] || exit 1
phase untracked untracked
phase live live
if [ "$CAPACITY_SECS" -gt 0 ]; then phase capacity capacity; fi
phase report report
finish_summary
exit "$BENCH_FAILED"

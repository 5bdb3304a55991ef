#!/bin/bash
# bench/sql/distributed.sh — an R-MAT edge table spread over three shard servers by
# PARTITION BY HASH (dst) and postgres_fdw, ranked four ways: the same table on one server (local),
# the partitioned table ranked where its partitions live (distributed, powerrank.distributed = auto:
# the shards exchange the halos with each other through Gloo; relay: the same with
# powerrank.distributed_exchange = relay, the halos through the coordinator), and the partitioned
# table read through the coordinator as today (pull, powerrank.distributed = off).
# Prints one table (doc/RESULTS.md, "Distributed ranking") and the largest score difference of the
# distributed and pull top-k against local.
#
#   [PG_CONFIG=/path/to/pg_config | PGBIN=/path/to/bin] bench/sql/distributed.sh
#
# powerrank must be installed in that PostgreSQL (make install), postgres_fdw too (contrib).  Four
# throwaway clusters (a coordinator, three shards; ports PORT..PORT+3) in a scratch folder under
# TMPDIR, removed at the end (KEEP=1 keeps them).  Started as root, the servers run as PGUSER_OS
# (default postgres).
#
# Environment:
#   SCALE, EDGE_FACTOR  R-MAT of test/common/graph_gen.h through bench/sql/rmat_copy.c (21 and 10:
#                       about 20 M edges after duplicates are removed)
#   ALGORITHM (pagerank, or hits: its top-k by authority), TOP_K (10), CALLS (2: the first one cold, the others with the graphs cached where a table is
#   tracked; a way's calls run in one session, so the distributed calls after the first take the
#   parts the session keeps), NEW_SESSIONS (3: distributed calls after those, each in a new
#   session, then as many local calls, each in a new session), WAYS ("local distributed relay pull";
#   the new sessions' calls run with distributed and local), PORT (55480), TMPDIR (/tmp), THREADS
#   (powerrank.cpu_threads, default 0: one per core), SHARD_THREADS (powerrank.cpu_threads of the three
#   shard servers, default THREADS: on one machine, the cores / 3 stand for three hosts' own cores),
#   BREAKDOWN (1 prints where the new sessions' distributed calls spend their build: the DEBUG1 lines of
#   the coordinator and the shards)
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
SCALE=${SCALE:-21}
EDGE_FACTOR=${EDGE_FACTOR:-10}
TOP_K=${TOP_K:-10}
CALLS=${CALLS:-2}
NEW_SESSIONS=${NEW_SESSIONS:-3}
WAYS=${WAYS:-local distributed relay pull}
PORT=${PORT:-55480}
THREADS=${THREADS:-0}
SHARD_THREADS=${SHARD_THREADS:-$THREADS}
BREAKDOWN=${BREAKDOWN:-0}
ALGORITHM=${ALGORITHM:-pagerank}
case $ALGORITHM in
pagerank) ranked="node, score FROM pagerank" ;;
hits) ranked="node, authority AS score FROM hits" ;;
*) echo "distributed.sh: ALGORITHM is pagerank or hits, not $ALGORITHM" >&2; exit 1 ;;
esac

die() {
	echo "distributed.sh: $*" >&2
	exit 1
}

if [ -z "${PG_CONFIG:-}" ]; then
	if [ -n "${PGBIN:-}" ]; then PG_CONFIG=$PGBIN/pg_config; else PG_CONFIG=$(command -v pg_config) || die "set PG_CONFIG or PGBIN"; fi
fi
PGBIN=$("$PG_CONFIG" --bindir) || die "$PG_CONFIG does not run"
[ -f "$("$PG_CONFIG" --sharedir)/extension/powerrank.control" ] || die "powerrank is not installed in $PGBIN's server (make install)"
[ -f "$("$PG_CONFIG" --sharedir)/extension/postgres_fdw.control" ] || die "postgres_fdw is not installed in $PGBIN's server"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/powerrank-dist-bench.XXXXXX")
RUNAS=()
if [ "$(id -u)" = 0 ]; then
	PGOS=${PGUSER_OS:-postgres}
	chown "$PGOS" "$WORK"
	RUNAS=(su "$PGOS" -s /bin/bash -c)
fi
# Runs a command line as the servers' OS user.
as_os() {
	if [ ${#RUNAS[@]} -gt 0 ]; then "${RUNAS[@]}" "$1"; else bash -c "$1"; fi
}
cleanup() {
	for c in coord s0 s1 s2; do
		[ -f "$WORK/$c/postmaster.pid" ] && as_os "'$PGBIN/pg_ctl' -D '$WORK/$c' -m fast stop" >/dev/null 2>&1
	done
	if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# psql on a port: quiet, unaligned, stops at the first error.
q() {
	local port=$1
	shift
	as_os "'$PGBIN/psql' -X -q -A -t -v ON_ERROR_STOP=1 -h 127.0.0.1 -p $port -d postgres $*"
}

echo "== R-MAT scale $SCALE, edge factor $EDGE_FACTOR (bench/sql/rmat_copy.c)"
gcc -O2 -std=gnu11 -pthread -Itest/common -o "$WORK/rmat_copy" bench/sql/rmat_copy.c \
	test/common/graph_gen.c -lm || die "cannot build rmat_copy"
ROWS=$("$WORK/rmat_copy" "$SCALE" "$EDGE_FACTOR" 1 2 "$WORK/rmat") || die "rmat_copy failed"
chmod a+r "$WORK"/rmat.*.bin
echo "rows: $ROWS"

SETTINGS="-c listen_addresses=127.0.0.1 -c shared_preload_libraries=powerrank -c powerrank.cache_size=4GB -c shared_buffers=512MB -c max_wal_size=8GB -c checkpoint_timeout=30min -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
i=0
for c in coord s0 s1 s2; do
	as_os "'$PGBIN/initdb' -D '$WORK/$c' -A trust --no-sync" >"$WORK/$c.initdb.log" 2>&1 || die "initdb $c failed"
	extra=
	[ "$BREAKDOWN" = 1 ] && [ $c != coord ] && extra="-c log_min_messages=debug1"
	if [ $c = coord ]; then extra="$extra -c powerrank.cpu_threads=$THREADS"; else extra="$extra -c powerrank.cpu_threads=$SHARD_THREADS"; fi
	as_os "'$PGBIN/pg_ctl' -D '$WORK/$c' -l '$WORK/$c.log' -w -o \"-p $((PORT + i)) -k '$WORK' $SETTINGS $extra\" start" >/dev/null ||
		die "cluster $c did not start ($WORK/$c.log)"
	q $((PORT + i)) -c "'CREATE EXTENSION powerrank'" || die "CREATE EXTENSION powerrank failed on $c"
	i=$((i + 1))
done

# Loads the rows into a table: COPY of the generated binary files.
load() {
	local port=$1 table=$2
	for f in "$WORK"/rmat.*.bin; do
		q "$port" -c "\"COPY $table (src, dst) FROM '$f' (FORMAT binary)\"" || die "COPY into $table failed"
	done
}

echo "== loading: the table on the coordinator, and each shard's partition"
q $PORT -c "'CREATE TABLE edges (src bigint, dst bigint)'"
load $PORT edges
q $PORT -c "\"SELECT powerrank_cache_enable('edges')\"" >/dev/null
for s in 0 1 2; do
	port=$((PORT + 1 + s))
	# the same hash partitioning as the coordinator's: the rows of remainder s stay
	q $port -c "'CREATE TABLE route (src bigint, dst bigint) PARTITION BY HASH (dst)'" \
		-c "'CREATE TABLE part PARTITION OF route FOR VALUES WITH (MODULUS 3, REMAINDER $s)'" \
		-c "'CREATE TABLE other_a PARTITION OF route FOR VALUES WITH (MODULUS 3, REMAINDER $(((s + 1) % 3)))'" \
		-c "'CREATE TABLE other_b PARTITION OF route FOR VALUES WITH (MODULUS 3, REMAINDER $(((s + 2) % 3)))'"
	load $port route
	q $port -c "'ALTER TABLE route DETACH PARTITION part'" -c "'DROP TABLE route'" \
		-c "'VACUUM ANALYZE part'" -c "\"SELECT powerrank_cache_enable('part')\"" >/dev/null
done
q $PORT -c "'VACUUM ANALYZE edges'" -c "'CREATE EXTENSION postgres_fdw'" \
	-c "'CREATE TABLE edges_dist (src bigint, dst bigint) PARTITION BY HASH (dst)'"
for s in 0 1 2; do
	q $PORT -c "\"CREATE SERVER s$s FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '$((PORT + 1 + s))', dbname 'postgres', fetch_size '10000')\"" \
		-c "'CREATE USER MAPPING FOR CURRENT_USER SERVER s$s'" \
		-c "\"CREATE FOREIGN TABLE edges_dist_$s PARTITION OF edges_dist FOR VALUES WITH (MODULUS 3, REMAINDER $s) SERVER s$s OPTIONS (table_name 'part')\""
done
q $PORT -c "'SELECT count(*) FROM edges_dist'" | sed 's/^/rows on the shards: /'

echo "== calls ($ALGORITHM top_k $TOP_K; the first call of each way is cold)"
q $PORT -c "'CREATE TABLE runs (way text, call int, engine text, total_ms float8, build_ms float8, iterate_ms float8, iterations int, cache_hit boolean, exchange_mb float8, peer_mb float8, exchange_ms float8)'" \
	-c "'CREATE TABLE tops (way text, rank int, node bigint, score float8)'"
# Runs one way's calls in one session: way, table, setting, first call's number, calls, and
# powerrank.distributed_exchange (auto when not given).
calls() {
	local way=$1 table=$2 setting=$3 first=$4 count=$5 exchange=${6:-auto} args=() call
	for call in $(seq "$first" $((first + count - 1))); do
		args+=(-c "\"CREATE TEMP TABLE t AS SELECT row_number() OVER () AS rank, $ranked('$table', top_k => $TOP_K)\""
			-c "\"INSERT INTO runs SELECT '$way', $call, engine, total_ms, build_ms, iterate_ms, iterations, cache_hit, exchange_bytes / 1048576.0, peer_bytes / 1048576.0, exchange_ms FROM powerrank_last_run()\""
			-c "\"INSERT INTO tops SELECT '$way', rank, node, score FROM t WHERE $call = $first\""
			-c "'DROP TABLE t'")
	done
	if [ "$BREAKDOWN" = 1 ] && [ "$way" = "distributed, new session" ]; then
		as_os "'$PGBIN/psql' -X -q -A -t -v ON_ERROR_STOP=1 -h 127.0.0.1 -p $PORT -d postgres -c 'SET client_min_messages = debug1' -c 'SET powerrank.distributed = $setting' ${args[*]}" 2>&1 >/dev/null |
			grep 'powerrank: ' | sed 's/^/  coordinator: /'
		return
	fi
	q $PORT -c "'SET powerrank.distributed = $setting'" -c "'SET powerrank.distributed_exchange = $exchange'" \
		"${args[@]}" || die "the $way calls failed"
}
for way in $WAYS; do
	case $way in
	local) table=edges setting=auto exchange=auto ;;
	distributed) table=edges_dist setting=on exchange=auto ;;
	relay) table=edges_dist setting=on exchange=relay ;;
	pull) table=edges_dist setting=off exchange=auto ;;
	esac
	calls $way $table $setting 1 "$CALLS" $exchange
done
# distributed calls in new sessions: every part from its shard's graph cache, nothing in the session
case " $WAYS " in *" distributed "*)
	for s in $(seq 1 "$NEW_SESSIONS"); do
		[ "$BREAKDOWN" = 1 ] && echo "== breakdown of new session $s"
		calls "distributed, new session" edges_dist on $((CALLS + s)) 1
		if [ "$BREAKDOWN" = 1 ]; then
			for c in s0 s1 s2; do
				grep -h 'powerrank: shard part' "$WORK/$c.log" | tail -2 | sed "s/^.*DEBUG: */  $c: /"
			done
		fi
	done ;;
esac
# local calls in new sessions, the like for like of the distributed ones: the graph from the cache
case " $WAYS " in *" local "*)
	for s in $(seq 1 "$NEW_SESSIONS"); do
		calls "local, new session" edges auto $((CALLS + s)) 1
	done ;;
esac

echo "== results (machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo), $(date -u +%Y-%m-%d))"
as_os "'$PGBIN/psql' -X -q -P footer=off -h 127.0.0.1 -p $PORT -d postgres -c \"SELECT way, call, engine, round(total_ms::numeric) AS total_ms, round(build_ms::numeric) AS build_ms, round(iterate_ms::numeric) AS iterate_ms, iterations, cache_hit, round(exchange_mb::numeric, 1) AS exchange_mb, round(peer_mb::numeric, 1) AS peer_mb, round(exchange_ms::numeric) AS exchange_ms FROM runs ORDER BY CASE way WHEN 'local' THEN 0 WHEN 'local, new session' THEN 1 WHEN 'distributed' THEN 2 WHEN 'relay' THEN 4 WHEN 'pull' THEN 5 ELSE 3 END, call\""
q $PORT -c "\"SELECT 'top-' || $TOP_K || ' of ' || o.way || ' = local: ' || bool_and(o.node = l.node) || ', max |score difference|: ' || max(abs(o.score - l.score)) FROM tops o JOIN tops l ON l.way = 'local' AND l.rank = o.rank WHERE o.way <> 'local' GROUP BY o.way ORDER BY o.way\""

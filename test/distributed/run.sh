#!/bin/sh
# test/distributed/run.sh — distributed ranking (a partitioned edge table over postgres_fdw shards)
# against four throwaway clusters on loopback: a coordinator and three shard servers.
#
#   sh test/distributed/run.sh [BINDIR [WORKDIR [PORT]]]
#
# BINDIR: the PostgreSQL programs (default: pg_config --bindir, or /usr/lib/postgresql/15/bin);
# WORKDIR: where the clusters go (default: a new /tmp/powerrank-dist.XXXXXX, removed at the end
# unless KEEP=1); PORT: the coordinator's port, the shards' the three after it (default 55460).
# Runs as a user initdb accepts (not root), with powerrank and postgres_fdw installed in BINDIR's
# server.  Compares what the tests print (test/distributed/out) with test/distributed/expected.out
# and exits non-zero when they differ.
#
# What it checks: every algorithm (PageRank plain, weighted, personalized, with a dangling
# distribution, a start vector, top_k; RWR from one and from many sources; HITS) gives the same
# top-k and scores within 1e-12 of the same table ranked on one server, over 2 and 3 shards, over a
# mix of local and foreign partitions and over a table partitioned by source (no part owns rows),
# with the engine distributed(S) in powerrank_last_run; the parts owning their rows moving fewer
# bytes per iteration than the whole relay; the shards exchanging the halos with each other through
# Gloo by default (engine distributed(S, gloo), peer_bytes) and through the coordinator under
# powerrank.distributed_exchange = relay, with the same results, HITS too (its partial sums shard to
# shard, the coordinator carrying scalars an iteration); shards that cannot connect to each
# other (one reached over IPv6: the host needs IPv6 loopback) falling back to the relay with a
# NOTICE; statement_timeout and a shard
# killed while another waits in that exchange; powerrank.distributed
# = off and auto's choice for a table that does not qualify; a non-superuser without a password in
# the user mapping; a shard user without SELECT; row-level security on a shard; statement_timeout
# stopping the shards; a shard stopped and a shard backend killed in a run; statement_timeout and
# connect_timeout stopping the connect to a server that takes connections but never answers; a
# shard without the
# extension, and one whose powerrank lacks the shard functions; an empty partition; the shards' graph
# cache; the parts a session keeps between calls (fewer bytes on the next call, a write on a shard
# seen by the next call, a kept shard session that ended); a new session's call after a write on
# one shard (ids far apart, a weight that is no whole number) and with every part cached, and a
# shard restarted between two calls of a session; new sessions taking the node set the coordinator
# kept in its graph cache, and the fresh graph after a write on a shard between two new sessions;
# a new session reading that set in place through the relay (PageRank; HITS, whose relayed products
# read the parts' role lists in it);
# a shard's renumbered rows kept with its cached graph (a new session's scores the same bits as the
# session's before; a write on that shard, or one on another that changes the rows it owns, makes
# it renumber); the shards' lists of rows for their group kept with their cached graphs (a new
# session sends none, the same bits; a write on a shard makes them sent again); a shard's out-edges
# of its cached graph for HITS kept with its entry (a new session maps them, the same bits);
# the kept node set as an entry of the coordinator's cache (a row of powerrank_cache, its bytes
# counted, evicting the least recently used entry under a small powerrank.cache_size, not kept
# under a smaller one, gone with DROP TABLE, TRUNCATE, DETACH and ATTACH PARTITION and a partition
# dropped); no connection left open on any shard after the sessions; a coordinator without
# powerrank preloaded.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${1:-$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)}
WORK=${2:-$(mktemp -d /tmp/powerrank-dist.XXXXXX)}
PORT=${3:-55460}
OUT="$HERE/out"
cd "$HERE" || exit 1		# psql names the files as given (-f setup.sql) in its messages
export LC_ALL=C PGHOST=127.0.0.1 PGUSER=$(id -un)

mkdir -p "$WORK"
cleanup() {
	for c in coord s1 s2 s3; do
		[ -f "$WORK/$c/postmaster.pid" ] && "$BIN/pg_ctl" -D "$WORK/$c" -m immediate stop >/dev/null 2>&1
	done
	[ "${KEEP:-0}" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Starts (initdb first when new) the cluster named $1 on port $2, with the server options $3.
start_cluster() {
	if [ ! -d "$WORK/$1" ]; then
		"$BIN/initdb" -D "$WORK/$1" -A trust --no-sync >"$WORK/$1.initdb.log" 2>&1 || {
			cat "$WORK/$1.initdb.log"
			exit 1
		}
	fi
	"$BIN/pg_ctl" -D "$WORK/$1" -l "$WORK/$1.log" -w \
		-o "-p $2 -c listen_addresses=127.0.0.1 -k '$WORK' -c max_connections=40 ${3:-}" start >/dev/null || {
		cat "$WORK/$1.log"
		exit 1
	}
}

# psql on a port, quiet, unaligned; the rest of the arguments are psql's.
sql() {
	port=$1
	shift
	"$BIN/psql" -X -q -A -t -v ON_ERROR_STOP=0 -v VERBOSITY=terse -p "$port" -d postgres "$@" 2>&1
}

C=$PORT
S1=$((PORT + 1))
S2=$((PORT + 2))
S3=$((PORT + 3))
# the coordinator preloads powerrank: the node sets it keeps for new sessions live in its graph
# cache; s1 and s2 preload it: their graph cache serves the tables they track
start_cluster coord $C "-c shared_preload_libraries=powerrank"
start_cluster s1 $S1 "-c shared_preload_libraries=powerrank"
start_cluster s2 $S2 "-c shared_preload_libraries=powerrank"
# s3 also listens on IPv6 loopback: the coordinator reaches it there for edges_v6
start_cluster s3 $S3 "-c listen_addresses=127.0.0.1,::1"

: >"$OUT"
# Prints a heading into the output.
say() {
	echo "== $*" >>"$OUT"
}

for p in $S1 $S2 $S3; do
	sql $p -f shard.sql >>"$OUT"
done
for p in $S1 $S2; do
	sql $p -c "CREATE EXTENSION powerrank" >>"$OUT"
done
sql $C -v s1=$S1 -v s2=$S2 -v s3=$S3 -f setup.sql >>"$OUT"

say "a shard without the extension"
sql $C -c "SELECT count(*) FROM pagerank('edges_three')" >>"$OUT"
sql $S3 -c "CREATE EXTENSION powerrank" >>"$OUT"

say "correctness against the same table on one server"
sql $C -f compare.sql >>"$OUT"

say "the shards exchange the halos with each other (Gloo), or through the coordinator when told"
sql $C <<EOF >>"$OUT"
SET client_min_messages = error;
SET powerrank.mixing_depth = 0;
-- from 1/N, as the single server (compare.sql)
SET powerrank.warm_start = off;
SELECT count(*) FROM pagerank('edges_three', tolerance => 1e-10);
CREATE TEMP TABLE gloo_call AS
	SELECT engine, exchange_bytes, peer_bytes, iterations FROM powerrank_last_run();
SET powerrank.distributed_exchange = relay;
SELECT q.name, same_as_local('edges_three', q.q) FROM queries q
WHERE q.name IN ('pagerank', 'personalized', 'rwr many sources top_k') ORDER BY q.name;
SELECT count(*) FROM pagerank('edges_three', tolerance => 1e-10);
CREATE TEMP TABLE relay_call AS
	SELECT engine, exchange_bytes, peer_bytes, iterations FROM powerrank_last_run();
RESET powerrank.distributed_exchange;
-- the same iterations; the relay carried through the coordinator at least the halos the shards
-- sent each other
SELECT g.engine, r.engine, g.iterations = r.iterations AS same_iterations,
	g.peer_bytes > 0 AS shards_exchanged, r.peer_bytes IS NULL AS relay_no_peer_bytes,
	r.exchange_bytes - g.exchange_bytes >= g.peer_bytes AS coordinator_carried_no_halo
FROM gloo_call g, relay_call r;
-- HITS on the parts: the halos of its pull product and the partial sums of its push product go
-- shard to shard, and the coordinator carries scalars an iteration (10 iterations more move less
-- than 256 bytes an iteration more through it); through the coordinator, the same scores, and at
-- least what the shards sent each other
SELECT count(*) FROM hits('edges_three', max_iterations => 5);
SELECT count(*) FROM hits('edges_three', max_iterations => 5);
CREATE TEMP TABLE hits_gloo AS
	SELECT engine, exchange_bytes, peer_bytes, iterations FROM powerrank_last_run();
SELECT count(*) FROM hits('edges_three', max_iterations => 15);
INSERT INTO hits_gloo SELECT engine, exchange_bytes, peer_bytes, iterations FROM powerrank_last_run();
SET powerrank.distributed_exchange = relay;
SELECT q.name, same_as_local('edges_three', q.q) FROM queries q
WHERE q.name IN ('hits', 'hits weighted top_k') ORDER BY q.name;
SELECT count(*) FROM hits('edges_three', max_iterations => 15);
CREATE TEMP TABLE hits_relay AS
	SELECT engine, exchange_bytes, peer_bytes, iterations FROM powerrank_last_run();
RESET powerrank.distributed_exchange;
SELECT g.engine, r.engine, g.iterations = r.iterations AS same_iterations,
	g.peer_bytes > 0 AS shards_exchanged,
	(g.exchange_bytes - f.exchange_bytes) / (g.iterations - f.iterations) < 256
		AS coordinator_carried_scalars,
	r.exchange_bytes - g.exchange_bytes >= g.peer_bytes AS relay_carried_the_rows
FROM hits_gloo f, hits_gloo g, hits_relay r WHERE f.iterations = 5 AND g.iterations = 15;
-- a start vector goes to each part as its owned rows, once: a run from it carries at most one
-- vector (8 bytes a node) more through the coordinator than a run from 1/N, and its iterations
-- scalars
CREATE TEMP TABLE start_calls (name text, exchange_bytes bigint, nodes bigint);
SELECT count(*) FROM pagerank('edges_three', tolerance => 1e-300, max_iterations => 1);
INSERT INTO start_calls SELECT 'uniform', exchange_bytes, nodes FROM powerrank_last_run();
SELECT count(*) FROM pagerank('edges_three', tolerance => 1e-300, max_iterations => 1,
	start_nodes => '{1,2,1700}', start_scores => '{0.5,0.25,0.25}');
INSERT INTO start_calls SELECT 'start 1', exchange_bytes, nodes FROM powerrank_last_run();
SELECT count(*) FROM pagerank('edges_three', tolerance => 1e-300, max_iterations => 11,
	start_nodes => '{1,2,1700}', start_scores => '{0.5,0.25,0.25}');
INSERT INTO start_calls SELECT 'start 11', exchange_bytes, nodes FROM powerrank_last_run();
-- the warm start of RWR on the parts: its restart, column sums and combinations there, the far
-- field gathered once (one vector), and nothing whole an iteration
SELECT count(*) FROM rwr('edges_three', 42, tolerance => 1e-300, max_iterations => 1);
INSERT INTO start_calls SELECT 'rwr', exchange_bytes, nodes FROM powerrank_last_run();
SET powerrank.warm_start = on;
SELECT count(*) FROM rwr('edges_three', 42, tolerance => 1e-300, max_iterations => 1);
INSERT INTO start_calls SELECT 'rwr warm 1', exchange_bytes, nodes FROM powerrank_last_run();
SELECT count(*) FROM rwr('edges_three', 42, tolerance => 1e-300, max_iterations => 11);
INSERT INTO start_calls SELECT 'rwr warm 11', exchange_bytes, nodes FROM powerrank_last_run();
SELECT s1.exchange_bytes - u.exchange_bytes <= 8 * u.nodes + 256 AS start_vector_once,
	(s11.exchange_bytes - s1.exchange_bytes) / 10 < 256 AS start_iterations_scalars,
	w1.exchange_bytes - r.exchange_bytes <= 8 * r.nodes + 4096 AS warm_start_one_vector,
	(w11.exchange_bytes - w1.exchange_bytes) / 10 < 256 AS warm_iterations_scalars
FROM start_calls u, start_calls s1, start_calls s11, start_calls r, start_calls w1, start_calls w11
WHERE u.name = 'uniform' AND s1.name = 'start 1' AND s11.name = 'start 11' AND r.name = 'rwr'
	AND w1.name = 'rwr warm 1' AND w11.name = 'rwr warm 11';
EOF

say "shards that cannot connect to each other: the relay, with a NOTICE"
# s1 reached over IPv4, s3 over IPv6: their pairs cannot connect, the halos go through the coordinator
sql $C -c "SELECT same_as_local('edges_v6', q) FROM queries WHERE name = 'pagerank'" \
	-c "SELECT peer_bytes IS NULL AS relayed FROM powerrank_last_run()" >>"$OUT"

say "a shard's NOTICE reaches the caller"
sql $C -c "SET powerrank.distributed = on" -c "SELECT count(*) FROM pagerank('edges_gap')" >>"$OUT"

say "the shards' graph cache"
sql $S1 -c "SELECT powerrank_cache_enable('two_0')" >>"$OUT"
sql $S2 -c "SELECT powerrank_cache_enable('two_1')" >>"$OUT"
sql $C -c "SELECT count(*) FROM pagerank('edges_two')" -c "SELECT cache_hit FROM powerrank_last_run()" \
	-c "SELECT count(*) FROM pagerank('edges_two')" -c "SELECT cache_hit FROM powerrank_last_run()" \
	-c "SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'pagerank weighted'" >>"$OUT"

say "kept parts: the next call of a session takes them again, sees a write, connects again"
sql $C <<EOF >>"$OUT"
CREATE TEMP TABLE calls (call int, cache_hit boolean, exchange_bytes bigint);
SELECT count(*) FROM pagerank('edges_two', weight_column => 'w');
INSERT INTO calls SELECT 1, cache_hit, exchange_bytes FROM powerrank_last_run();
SELECT count(*) FROM pagerank('edges_two', weight_column => 'w');
INSERT INTO calls SELECT 2, cache_hit, exchange_bytes FROM powerrank_last_run();
-- the second call: neither node ids nor out-strengths travel again, only the products
SELECT b.cache_hit, b.exchange_bytes < a.exchange_bytes AS fewer_bytes
FROM calls a, calls b WHERE a.call = 1 AND b.call = 2;
-- the session keeps one connection to each shard
\! "$BIN/psql" -X -q -A -t -p $S1 -d postgres -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'powerrank'"
-- a kept part says at every call that rows were skipped
\! "$BIN/psql" -X -q -A -t -p $S2 -d postgres -c "SELECT powerrank_cache_enable('gap_1')" >/dev/null
SET powerrank.distributed = on;
SELECT count(*) FROM pagerank('edges_gap');
SELECT count(*) FROM pagerank('edges_gap');
RESET powerrank.distributed;
-- a write on a shard (a new source): the next call reads that shard's part again
INSERT INTO edges_two VALUES (1999, 1998, 5);
INSERT INTO edges_local VALUES (1999, 1998, 5);
SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'pagerank weighted';
DELETE FROM edges_two WHERE src = 1999;
DELETE FROM edges_local WHERE src = 1999;
SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'pagerank weighted';
-- the session of a kept part ended on its shard: the next call connects again
\! "$BIN/psql" -X -q -A -t -p $S2 -d postgres -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'powerrank'"
SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'pagerank weighted';
-- the server's options changed: a new connection, the kept one closed
ALTER SERVER s1 OPTIONS (ADD connect_timeout '10');
SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'pagerank weighted';
ALTER SERVER s1 OPTIONS (DROP connect_timeout);
\! sleep 1
\! "$BIN/psql" -X -q -A -t -p $S1 -d postgres -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'powerrank'"
-- the kept parts for other algorithms: out-edges added (HITS), several columns (RWR), back to one
-- (HITS stops at max_iterations here: plain iterations and no WARNING, as in compare.sql)
SET client_min_messages = error;
SET powerrank.mixing_depth = 0;
SET powerrank.warm_start = off;
SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'pagerank';
SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'hits';
SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'pagerank';
SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'rwr many sources top_k';
SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'pagerank weighted';
-- the warm start's far field is kept with the session's node set: the next warm start takes it
-- (the same scores, and none of its products' halos between the shards); a write on a shard
-- makes it again
SET powerrank.warm_start = on;
CREATE TEMP TABLE far_calls (call int, peer_bytes bigint, iterations int, scores float8[]);
INSERT INTO far_calls SELECT 1, NULL, NULL, array_agg(score ORDER BY node)
	FROM rwr('edges_two', 42, tolerance => 1e-300, max_iterations => 2);
UPDATE far_calls SET (peer_bytes, iterations) = (SELECT peer_bytes, iterations FROM powerrank_last_run()) WHERE call = 1;
INSERT INTO far_calls SELECT 2, NULL, NULL, array_agg(score ORDER BY node)
	FROM rwr('edges_two', 42, tolerance => 1e-300, max_iterations => 2);
UPDATE far_calls SET (peer_bytes, iterations) = (SELECT peer_bytes, iterations FROM powerrank_last_run()) WHERE call = 2;
-- many sources from the kept far field (one column sent for all): the single server's scores
SELECT same_as_local('edges_two', \$q\$SELECT source || ':' || node AS k, score AS v FROM rwr(%1\$L, '{1,2,3,1000}'::bigint[], tolerance => 1e-15)\$q\$);
INSERT INTO edges_two VALUES (1999, 1998, 5);
INSERT INTO far_calls SELECT 3, NULL, NULL, array_agg(score ORDER BY node)
	FROM rwr('edges_two', 42, tolerance => 1e-300, max_iterations => 2);
UPDATE far_calls SET (peer_bytes, iterations) = (SELECT peer_bytes, iterations FROM powerrank_last_run()) WHERE call = 3;
DELETE FROM edges_two WHERE src = 1999;
SELECT a.iterations = b.iterations AS same_iterations, a.scores = b.scores AS same_scores,
	b.peer_bytes < a.peer_bytes AS far_field_kept, w.peer_bytes > b.peer_bytes AS far_field_made_again
FROM far_calls a, far_calls b, far_calls w WHERE a.call = 1 AND b.call = 2 AND w.call = 3;
SET powerrank.warm_start = off;
EOF
# a new session: the part of gap_1 from s2's graph cache, its skipped rows counted there
sql $C -c "SET powerrank.distributed = on" -c "SELECT count(*) FROM pagerank('edges_gap')" >>"$OUT"

say "a new session: after a write on one shard, every part cached, a shard restarted between calls"
# a row with ids far apart (one negative) and a weight that is no whole number, on one shard
sql $C -c "INSERT INTO edges_two VALUES (-4000000000000000000, 4000000000000000000, 0.25)" \
	-c "INSERT INTO edges_local VALUES (-4000000000000000000, 4000000000000000000, 0.25)" >>"$OUT"
sql $C -c "SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'pagerank weighted'" >>"$OUT"
sql $C -c "SELECT count(*) FROM pagerank('edges_two', weight_column => 'w')" \
	-c "SELECT cache_hit FROM powerrank_last_run()" \
	-c "SELECT same_as_local('edges_two', q) FROM queries WHERE name IN ('pagerank', 'pagerank weighted') ORDER BY name" >>"$OUT"
sql $C -c "DELETE FROM edges_two WHERE src < 0" -c "DELETE FROM edges_local WHERE src < 0" >>"$OUT"
sql $C <<EOF >>"$OUT"
SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'pagerank weighted';
\! "$BIN/pg_ctl" -D "$WORK/s1" -l "$WORK/s1.log" -m fast -w restart >/dev/null
SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'pagerank weighted';
SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'pagerank';
EOF

say "new sessions: the node set a session before kept, a write on a shard between sessions"
sql $C -c "CREATE TABLE session_calls (call int, exchange_bytes bigint)" >>"$OUT"
# One new session's call on edges_two: its bytes noted as call $1, then its scores against one server's.
new_session_call() {
	sql $C -c "SELECT count(*) > 0 FROM pagerank('edges_two', weight_column => 'w')" \
		-c "INSERT INTO session_calls SELECT $1, exchange_bytes FROM powerrank_last_run()" \
		-c "SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'pagerank weighted'" >>"$OUT"
}
sql $C -c "INSERT INTO edges_two VALUES (-4000000000000000000, 4000000000000000000, 0.25)" \
	-c "INSERT INTO edges_local VALUES (-4000000000000000000, 4000000000000000000, 0.25)" >>"$OUT"
# after a write on one shard: that part's nodes travel, the node set is merged and kept
new_session_call 1
# nothing changed: every shard's graph is the kept set's, so no node id travels
new_session_call 2
# a write on that shard again: the kept set is not its graph's any more, the fresh one is read
sql $C -c "DELETE FROM edges_two WHERE src < 0" -c "DELETE FROM edges_local WHERE src < 0" >>"$OUT"
new_session_call 3
new_session_call 4
# a new session reading the kept set in place, twice, through the relay
sql $C -c "SET powerrank.distributed_exchange = relay" \
	-c "SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'pagerank weighted'" \
	-c "SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'pagerank weighted'" >>"$OUT"
# the calls on one graph: the second one without node ids (calls 3 and 4: the fresh graph's nodes
# travelled once)
sql $C -c "SELECT b.exchange_bytes < a.exchange_bytes AS kept_fewer_bytes, d.exchange_bytes < c.exchange_bytes AS fresh_then_kept FROM session_calls a, session_calls b, session_calls c, session_calls d WHERE a.call = 1 AND b.call = 2 AND c.call = 3 AND d.call = 4" >>"$OUT"

say "new sessions: a shard's renumbered rows kept with its graph for the rows it owns"
sql $S1 -c "SELECT powerrank_cache_enable('num_0')" >>"$OUT"
sql $S2 -c "SELECT powerrank_cache_enable('num_1')" >>"$OUT"
# s1 logs where its parts' numberings and peer lists come from (made or received, or kept with
# the cache entry)
sql $S1 -c "ALTER DATABASE postgres SET log_min_messages = debug1" >>"$OUT"
# One new session's call on edges_num: its scores kept as table num_$1, then how many shards the
# coordinator sent lists of rows to (its group line), s1's numberings and peer lists in it and its
# scores against one server's.
num_session() {
	seen=$(grep -c 'shard part numbering\|shard peer lists' "$WORK/s1.log")
	"$BIN/psql" -X -q -A -t -v VERBOSITY=terse -p $C -d postgres -c "SET client_min_messages = debug1" \
		-c "CREATE TABLE num_$1 AS SELECT node, score FROM pagerank('edges_num', tolerance => 1e-10)" \
		-c "SET client_min_messages = notice" \
		-c "SELECT same_as_local('edges_num', q, 'edges_num_local') FROM queries WHERE name = 'pagerank'" \
		2>"$WORK/num_session.err" >"$WORK/num_session.out"
	sed -n -e 's/^DEBUG:  powerrank: the 2 shards exchange halos .*(.*lists for \([0-9]*\) shards of.*$/coordinator: lists sent to \1 shards/p' \
		-e '/^[A-Z]*:  /{/^DEBUG:/!p}' "$WORK/num_session.err" >>"$OUT"
	cat "$WORK/num_session.out" >>"$OUT"
	grep 'shard part numbering\|shard peer lists' "$WORK/s1.log" | tail -n +$((seen + 1)) | sed 's/^.*powerrank: /s1: /' >>"$OUT"
}
# Two new sessions' calls ($1, $2), then whether they gave the same scores, bit for bit.
two_sessions() {
	num_session $1
	num_session $2
	sql $C -c "SELECT count(*) = (SELECT count(*) FROM num_$1) AND bool_and(a.score = b.score) AS same_bits_$1_$2 FROM num_$1 a JOIN num_$2 b USING (node)" >>"$OUT"
}
# The first node from $1 to $2 that edges_num keeps in its partition of remainder $3.
node_in() {
	sql $C -c "SELECT v FROM generate_series($1::bigint, $2) v WHERE satisfies_hash_partition('edges_num'::regclass, 2, $3, v) LIMIT 1"
}
# Adds the row ($1) to edges_num (and edges_num_local), then prints the rows $2 counts.
num_write() {
	sql $C -c "INSERT INTO edges_num VALUES ($1)" -c "INSERT INTO edges_num_local VALUES ($1)" \
		-c "$2" >>"$OUT"
}
# the first session reads the parts and makes s1's numbering, and the coordinator sends both
# shards their lists of rows, which they keep; the next one takes them: no lists sent
two_sessions a b
# a write on s1: a new source (its node x hashes to s2's partition, which has no x) owned by s1; a
# new graph, a new numbering, taken by the session after; new lists for both shards (the name of
# s2's lists names s1's graph too), taken by the session after
x=$(node_in 20000 20100 1)
num_write "$x, $(node_in 0 100 0), 1" "SELECT count(*) AS on_s1 FROM edges_num_0 WHERE src = $x"
two_sessions c d
# a write on s2 only: an in-edge of x, so s2 owns x and s1 reads it (a halo row): s1's graph is
# the same, its owned rows are not, so its kept numbering does not serve and a new one replaces it
num_write "5, $x, 1" "SELECT count(*) AS on_s2 FROM edges_num_1 WHERE dst = $x"
two_sessions e f
# a write on s2 only: a node s1 owns (y, no source before) becomes a source there, so s1 exports
# it: its owned and halo rows are the same, so its kept numbering serves, its lists are its own
y=$(node_in 8000 9999 0)
num_write "$y, $(node_in 0 100 1), 1" "SELECT count(*) AS on_s2 FROM edges_num_1 WHERE src = $y"
two_sessions g h
# One new session's HITS on edges_num: its scores kept as table hits_$1, then s1's lines on the
# out-edges of its part's cached graph in it.
hits_session() {
	seen=$(grep -c 'out-edges of the cached graph' "$WORK/s1.log")
	sql $C -c "SET client_min_messages = error" -c "CREATE TABLE hits_$1 AS SELECT node, hub, authority FROM hits('edges_num', max_iterations => 20)" >>"$OUT"
	grep 'out-edges of the cached graph' "$WORK/s1.log" | tail -n +$((seen + 1)) | sed 's/^.*powerrank: /s1: /' >>"$OUT"
}
# two new sessions' HITS: s1's part is its cached graph, whose out-edges the first makes and keeps
# with the entry and the second maps; the same scores, bit for bit
hits_session a
hits_session b
sql $C -c "SELECT count(*) = (SELECT count(*) FROM hits_a) AND bool_and(a.hub = b.hub AND a.authority = b.authority) AS same_bits_hits_a_b FROM hits_a a JOIN hits_b b USING (node)" >>"$OUT"
sql $S1 -c "ALTER DATABASE postgres RESET log_min_messages" >>"$OUT"
# a new session's HITS through the relay, twice: every part's graph is the kept set's, so the
# coordinator reads the set in place (its DEBUG1 line says "merged nodes shared", then "kept"), and
# the relay's products read the parts' role lists in it
sql $C -c "SET powerrank.distributed_exchange = relay" -c "SET powerrank.mixing_depth = 0" -c "SET client_min_messages = debug1" \
	-c "SELECT count(*) > 0 FROM hits('edges_num', tolerance => 1e-8)" \
	-c "SELECT count(*) > 0 FROM hits('edges_num', tolerance => 1e-8)" |
	sed -n 's/^DEBUG:  powerrank: 2 parts .*, \(merged nodes [a-z]*\) .*$/hits: \1/p' >>"$OUT"
sql $C -c "SET powerrank.distributed_exchange = relay" -c "SET powerrank.mixing_depth = 0" -c "SET client_min_messages = error" \
	-c "SELECT same_as_local('edges_num', q, 'edges_num_local') FROM queries WHERE name IN ('hits', 'hits weighted top_k') ORDER BY name" \
	-c "SELECT same_as_local('edges_num', q, 'edges_num_local') FROM queries WHERE name = 'hits'" >>"$OUT"

# a shard's prepare refuses out-strengths that are not one for each node of its part, and owner
# bits that are not one byte a node; a part that owns no rows runs no product or update of them
sql $S1 -c "SELECT length(powerrank_shard_open('two_0', 'src', 'dst', NULL, false, 0)) > 0" \
	-c "SELECT powerrank_shard_prepare('\\x01'::bytea, 1, 1, NULL)" \
	-c "SELECT powerrank_shard_prepare('\\x0080'::bytea, 1, 1, NULL)" \
	-c "SELECT powerrank_shard_prepare('\\x0080'::bytea, 1, 1, '\\x01'::bytea)" \
	-c "SELECT powerrank_shard_owned_product(0, 0, 1, 0, ''::bytea)" \
	-c "SELECT powerrank_shard_update(1, 0, 0.85, ''::bytea, ''::bytea, true)" >>"$OUT"

say "the coordinator's graph cache keeps the merged node sets: listed, counted, evicted, dropped"
sql $S1 -c "SELECT powerrank_cache_enable('big_0')" -c "SELECT powerrank_cache_enable('ns_0')" >>"$OUT"
sql $S2 -c "SELECT powerrank_cache_enable('big_1')" -c "SELECT powerrank_cache_enable('ns_1')" >>"$OUT"
# a local graph of several megabytes in the coordinator's cache; the cache's bytes after it
sql $C -c "SELECT powerrank_cache_enable('edges_filler')" -c "SELECT count(*) FROM pagerank('edges_filler')" \
	-c "CREATE TABLE cache_before AS SELECT bytes FROM powerrank_cache_status()" >>"$OUT"
big_call="SELECT same_as_local('edges_big', q, 'edges_big_local') FROM queries WHERE name = 'pagerank'"
big_row="SELECT count(*) AS node_set FROM powerrank_cache WHERE source = 'edges_big'::regclass"
# a new session merges the node set of edges_big and keeps it: a row of powerrank_cache (tracking
# 'shards'), its bytes in the cache's; the next new session takes it (a hit)
sql $C -c "$big_call" >>"$OUT"
sql $C <<EOF >>"$OUT"
SELECT source, tracking, columns, directed, nodes, edges, base IS NULL AS no_base,
	changes IS NULL AS no_changes, hits, in_use
FROM powerrank_cache WHERE source = 'edges_big'::regclass;
SELECT s.bytes - b.bytes = c.bytes AS counted
FROM powerrank_cache_status() s, cache_before b, powerrank_cache c
WHERE c.source = 'edges_big'::regclass;
EOF
sql $C -c "$big_call" -c "SELECT hits FROM powerrank_cache WHERE source = 'edges_big'::regclass" >>"$OUT"
# the whole megabytes around the set's size: the next one holds it, the one below does not
up=$(sql $C -c "SELECT ceil(bytes / 1048576.0)::int FROM powerrank_cache WHERE source = 'edges_big'::regclass")
down=$(sql $C -c "SELECT floor(bytes / 1048576.0)::int FROM powerrank_cache WHERE source = 'edges_big'::regclass")
sql $C -c "SELECT $down >= 1 AND $up = $down + 1 AS limits_around_the_set" >>"$OUT"
# a powerrank.cache_size that holds the set but not the filler's graph besides: the new set evicts
# the least recently used entries, as a graph does, and the cache stays within the limit
sql $C -c "SELECT powerrank_cache_drop('edges_big')" >>"$OUT"
PGOPTIONS="-c powerrank.cache_size=$up" sql $C -c "$big_call" >>"$OUT"
sql $C -c "SELECT count(*) FILTER (WHERE source = 'edges_filler'::regclass) AS filler, count(*) FILTER (WHERE source = 'edges_big'::regclass) AS node_set FROM powerrank_cache" \
	-c "SELECT bytes <= $up * 1048576 AS within_limit FROM powerrank_cache_status()" >>"$OUT"
# a write on a shard: the next new session merges anew, and its set takes the place of the stale one
# under the same limit (which does not hold both: the stale set's room is given back first)
sql $C -c "INSERT INTO edges_big VALUES (-1, -2, 1)" -c "INSERT INTO edges_big_local VALUES (-1, -2, 1)" >>"$OUT"
PGOPTIONS="-c powerrank.cache_size=$up" sql $C -c "$big_call" \
	-c "SELECT nodes FROM powerrank_cache WHERE source = 'edges_big'::regclass" >>"$OUT"
sql $C -c "DELETE FROM edges_big WHERE src < 0" -c "DELETE FROM edges_big_local WHERE src < 0" >>"$OUT"
# a powerrank.cache_size below the set's size: not kept, every new session merges, the same answer
sql $C -c "SELECT powerrank_cache_drop('edges_big')" >>"$OUT"
PGOPTIONS="-c powerrank.cache_size=$down" sql $C -c "$big_call" -c "$big_row" >>"$OUT"
PGOPTIONS="-c powerrank.cache_size=$down" sql $C -c "$big_call" -c "$big_row" >>"$OUT"
# DROP TABLE frees the set's room
sql $C <<EOF >>"$OUT"
SELECT count(*) > 0 AS ranked FROM pagerank('edges_big');
SELECT c.source::oid AS big_oid, c.bytes AS set_bytes, s.bytes AS cache_bytes
FROM powerrank_cache c, powerrank_cache_status() s WHERE c.source = 'edges_big'::regclass \gset
DROP TABLE edges_big;
SELECT count(*) AS left_behind FROM powerrank_cache WHERE source = :big_oid;
SELECT :cache_bytes - bytes = :set_bytes AS freed FROM powerrank_cache_status();
EOF
# TRUNCATE, DETACH and ATTACH PARTITION and a partition dropped take the set with them too
ns_call="SELECT same_as_local('edges_ns', q) FROM queries WHERE name = 'pagerank'"
ns_row="SELECT count(*) AS node_set FROM powerrank_cache WHERE source = 'edges_ns'::regclass"
sql $C -c "$ns_call" -c "$ns_row" >>"$OUT"
sql $C -c "TRUNCATE edges_ns" -c "$ns_row" >>"$OUT"
sql $C -c "INSERT INTO edges_ns SELECT * FROM edges_local" >>"$OUT"
sql $C -c "$ns_call" -c "$ns_row" >>"$OUT"
sql $C -c "ALTER TABLE edges_ns DETACH PARTITION edges_ns_1" -c "$ns_row" >>"$OUT"
sql $C -c "SELECT count(*) FROM pagerank('edges_ns')" -c "$ns_row" >>"$OUT"
sql $C -c "ALTER TABLE edges_ns ATTACH PARTITION edges_ns_1 FOR VALUES WITH (MODULUS 2, REMAINDER 1)" \
	-c "$ns_row" >>"$OUT"
sql $C -c "$ns_call" -c "$ns_row" >>"$OUT"
sql $C -c "DROP FOREIGN TABLE edges_ns_1" -c "$ns_row" >>"$OUT"

say "no connection left on the shards"
sleep 0.5
for p in $S1 $S2 $S3; do
	sql $p -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'powerrank'" >>"$OUT"
done

say "privileges: a non-superuser, a shard user without SELECT, row-level security on a shard"
sql $C -f privileges.sql >>"$OUT"

say "statement_timeout stops every shard"
sql $C -c "SET statement_timeout = '1s'" -c "SELECT count(*) FROM pagerank('edges_slow')" >>"$OUT"
sleep 1
for p in $S1 $S2 $S3; do
	sql $p -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'powerrank' AND state = 'active'" >>"$OUT"
done

say "a shard backend killed during a run"
sql $C -c "SELECT count(*) FROM pagerank('edges_slow')" >"$WORK/killed.out" &
killed=$!
sleep 1
sql $S2 -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'powerrank'" >>"$OUT"
wait $killed
cat "$WORK/killed.out" >>"$OUT"

say "a shard waiting in the exchange with another: statement_timeout, a killed shard"
# a long run through the exchange: from one node of a cycle, at a damping that converges slowly
long_run="SELECT count(*) FROM pagerank('edges_cycle', damping => 0.999999, tolerance => 1e-15, max_iterations => 100000000, start_nodes => '{1}', start_scores => '{1}')"
# Stops s2's shard backend ($stopped) until s1's waits in the exchange with it (its product or
# step call still active with s2 stopped: it cannot end without s2's halo); prints whether it got
# there.
stop_in_exchange() {
	for try in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		stopped=$(sql $S2 -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'powerrank' AND backend_type = 'client backend' LIMIT 1")
		if [ -n "$stopped" ]; then
			kill -STOP "$stopped"
			sleep 0.3
			waiting=$(sql $S1 -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'powerrank' AND state = 'active' AND (query LIKE '%powerrank_shard_owned_product%' OR query LIKE '%powerrank_shard_step%')")
			if [ "$waiting" = 1 ]; then
				echo "s1 waits in the exchange"
				return 0
			fi
			kill -CONT "$stopped"
		fi
		sleep 0.1
	done
	echo "s1 never waited in the exchange"
}
# Prints the shard backends of port $1 still active a second later.
active_after_a_second() {
	sleep 1
	sql $1 -c "SELECT count(*) AS active FROM pg_stat_activity WHERE application_name = 'powerrank' AND state = 'active'"
}
sql $C -c "SET statement_timeout = '8s'" -c "SET powerrank.mixing_depth = 0" -c "$long_run" >"$WORK/exchange_timeout.out" &
run=$!
sleep 1
stop_in_exchange >>"$OUT"
# the timeout cancels both shards: s1 wakes from its wait in the exchange
wait $run
cat "$WORK/exchange_timeout.out" >>"$OUT"
active_after_a_second $S1 >>"$OUT"
kill -CONT "$stopped"
active_after_a_second $S2 >>"$OUT"
# s2's backend killed while s1 waits for it: the ERROR names s2, s1's exchange fails and it idles
sql $C -c "SET powerrank.mixing_depth = 0" -c "$long_run" >"$WORK/exchange_killed.out" &
run=$!
sleep 1
stop_in_exchange >>"$OUT"
kill -KILL "$stopped"
wait $run
cat "$WORK/exchange_killed.out" >>"$OUT"
active_after_a_second $S1 >>"$OUT"
# s2 restarts after its backend's crash
for try in $(seq 1 60); do
	"$BIN/pg_isready" -q -h 127.0.0.1 -p $S2 && break
	sleep 0.5
done
sql $C -c "SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'pagerank'" >>"$OUT"

say "a shard server that takes connections but never answers: statement_timeout, connect_timeout"
# s3's postmaster stopped: the kernel still completes a TCP connect to its port (the listen
# backlog), and nothing answers; a new session's connects wait on every socket at once, so the
# timeout stops the call (s1's and s2's connections made meanwhile are closed)
s3_postmaster=$(head -1 "$WORK/s3/postmaster.pid")
kill -STOP "$s3_postmaster"
started=$(date +%s%N)
sql $C -c "SET statement_timeout = '1s'" -c "SELECT count(*) FROM pagerank('edges_three')" >>"$OUT"
elapsed_ms=$((($(date +%s%N) - started) / 1000000))
[ $elapsed_ms -lt 2500 ] && echo "stopped within 1.5 s of the timeout" >>"$OUT" || echo "stopped after $elapsed_ms ms" >>"$OUT"
sql $C -c "ALTER SERVER s3 OPTIONS (ADD connect_timeout '2')" >>"$OUT"
sql $C -c "SELECT count(*) FROM pagerank('edges_three')" >>"$OUT"
sql $C -c "ALTER SERVER s3 OPTIONS (DROP connect_timeout)" >>"$OUT"
kill -CONT "$s3_postmaster"
sql $C -c "SELECT count(*) > 0 FROM pagerank('edges_three')" >>"$OUT"

say "a shard whose powerrank lacks the shard functions"
sql $S3 -c "ALTER EXTENSION powerrank DROP FUNCTION powerrank_shard_product(int, bytea)" \
	-c "DROP FUNCTION powerrank_shard_product(int, bytea)" >>"$OUT"
sql $C -c "SELECT count(*) FROM pagerank('edges_three')" >>"$OUT"

say "a shard server stopped"
"$BIN/pg_ctl" -D "$WORK/s3" -m immediate stop >/dev/null
sql $C -c "SELECT count(*) FROM pagerank('edges_three')" >>"$OUT"
sql $C -c "SELECT count(*) FROM pagerank('edges_two')" >>"$OUT"

say "a coordinator without powerrank preloaded: every new session merges, the same answers"
"$BIN/pg_ctl" -D "$WORK/coord" -m fast -w stop >/dev/null
start_cluster coord $C
for s in 1 2; do
	sql $C -c "SELECT same_as_local('edges_two', q) FROM queries WHERE name = 'pagerank weighted'" >>"$OUT"
done
sql $C -c "SELECT enabled, entries FROM powerrank_cache_status()" >>"$OUT"

if diff -u expected.out "$OUT" >"$WORK/diff"; then
	echo "distributed: ok"
	exit 0
fi
cat "$WORK/diff"
echo "distributed: FAILED (the output differs from test/distributed/expected.out)"
exit 1

#!/bin/bash
# The one-command demo: installs what is missing, builds and installs powerrank, starts a throwaway
# PostgreSQL 15 cluster, loads the Slashdot social graph (82k nodes, 948k edges) and ranks it.
#   usage: tools/demo.sh            (as root, or as a user with sudo)
# Nothing is configured on the machine: the cluster lives in a temporary directory, listens only on a
# Unix socket there, and is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

tools/install-deps.sh
make -s PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
"${sudo_cmd[@]}" make -s PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config install

# PostgreSQL refuses to run as root: the throwaway cluster belongs to the 'postgres' OS user
# (created by Debian's postgresql package) when we are root, to the caller otherwise.
run_as=()
[ "$(id -u)" -eq 0 ] && run_as=(runuser -u postgres --)
work=$(mktemp -d /tmp/powerrank-demo.XXXXXX)
chmod 755 "$work"
[ "$(id -u)" -eq 0 ] && chown postgres "$work"
bin=/usr/lib/postgresql/15/bin
cleanup() { "${run_as[@]}" "$bin/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
"${run_as[@]}" "$bin/initdb" -D "$work/data" -A trust -U postgres >/dev/null
"${run_as[@]}" "$bin/pg_ctl" -D "$work/data" -l "$work/log" -w \
    -o "-k $work -c listen_addresses='' -c port=5499" start >/dev/null
cp test/data/soc-slashdot0902.tsv.gz "$work/" && chmod 644 "$work/soc-slashdot0902.tsv.gz"
psql=("${run_as[@]}" psql -X -q -h "$work" -p 5499 -U postgres -d postgres -v ON_ERROR_STOP=1)
"${psql[@]}" <<SQL
CREATE EXTENSION powerrank;
CREATE TABLE edges (src bigint, dst bigint);
COPY edges FROM PROGRAM 'zcat $work/soc-slashdot0902.tsv.gz';
\echo 'Slashdot social network (SNAP soc-Slashdot0902):'
SELECT count(*) AS edges FROM edges;
\echo 'The 10 most central users by PageRank (damping 0.85):'
SELECT * FROM pagerank('edges', 0.85, top_k => 10);
\echo 'How the run went:'
\x on
SELECT * FROM powerrank_last_run();
\x off
\echo 'Users most related to user 1 (random walk with restart), and HITS authorities:'
SELECT * FROM rwr('edges', source => 1, top_k => 5);
SELECT * FROM hits('edges', top_k => 5);
SQL
echo "demo finished; the throwaway cluster in $work is removed"

#!/bin/sh
# test/run_all.sh — the whole powerrank test suite, from a fresh Debian 12 machine.
#
#   sudo test/run_all.sh        (or, as root, test/run_all.sh)
#   sudo test/run_all.sh --skip-cuda    (or POWERRANK_SKIP_CUDA=1): everything but the CUDA compile,
#                                       which takes most of the time on a small machine without a GPU;
#                                       CI (.ci/run) always compiles it
#
# 1. installs the Debian packages it needs when missing (apt-get);
# 2. copies the tree (with its sample graphs, test/data) to a temporary directory owned by the postgres user,
#    because initdb refuses to run as root;
# 3. builds the extension with -Wall -Wextra -Werror; runs `make check-core` (C unit tests of the
#    core and the GPU planners); compiles the CPU benchmarks and the planner bench (so they cannot
#    rot); compiles the CUDA engine when nvcc and cuda/Makefile exist;
# 4. installs the extension; runs pg_regress and the isolation tests (two sessions, specs/) in
#    temporary instances that preload powerrank (`make installcheck`, which first computes the
#    NetworkX reference results) and the pgTAP suites with pg_prove against a throwaway cluster,
#    without and then with powerrank preloaded; runs the distributed suite (test/distributed: a
#    coordinator and three shard clusters on loopback);
# 5. prints one PASS/FAIL line per step and test (a failing step's log tail and a failing test's
#    diff, nothing else) and "N passed, N failed" (build steps, each pg_regress and isolation test,
#    each pgTAP file in each pass), and exits non-zero on any failure.  Every step's full output
#    is in the temporary directory's logs/ (KEEP=1 keeps it).
#
# Environment: KEEP=1 keeps the temporary directory; PG_CONFIG overrides the pg_config used;
# POWERRANK_SKIP_CUDA=1 is --skip-cuda.
set -u

SKIP_CUDA=${POWERRANK_SKIP_CUDA:-0}
for arg in "$@"; do
	case "$arg" in
	--skip-cuda) SKIP_CUDA=1 ;;
	*)
		echo "run_all.sh: unknown option \"$arg\" (the only option is --skip-cuda)" >&2
		exit 2
		;;
	esac
done

PACKAGES="postgresql-15 postgresql-server-dev-15 postgresql-15-pgtap pgtap postgresql-15-cron
python3-networkx python3-igraph python3-scipy libigraph-dev zlib1g-dev make gcc g++ libgloo-dev"
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PG_BIN=/usr/lib/postgresql/15/bin
export LC_ALL=C

ROOT=$(cd "$(dirname "$0")/.." && pwd)
passed=0
failed=0
failures=""

# Records the outcome of one step or test.
record() {
	if [ "$1" = ok ]; then
		passed=$((passed + 1))
		echo "PASS: $2"
	else
		failed=$((failed + 1))
		failures="$failures
  $2"
		echo "FAIL: $2"
	fi
}

# Runs a command as the postgres user in the copied tree.
as_postgres() {
	su postgres -s /bin/sh -c "cd '$WORK/main' && $1"
}

# Runs one step as the postgres user with its output in $WORK/logs/NAME.log, printed (its last 80
# lines) only when the step fails; records the outcome under LABEL.
step() {
	name=$1
	label=$2
	shift 2
	if as_postgres "$*" >"$WORK/logs/$name.log" 2>&1; then
		record ok "$label"
	else
		echo "---- $label: last 80 lines of $WORK/logs/$name.log"
		tail -n 80 "$WORK/logs/$name.log"
		record fail "$label"
	fi
}

if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		exec sudo -E "$0" "$@"
	fi
	echo "run_all.sh: run as root (it installs packages and the extension)" >&2
	exit 2
fi

# ---- 1. packages ---------------------------------------------------------------------------
missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
if [ -n "$missing" ]; then
	echo "== installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q && apt-get install -y -q --no-install-recommends $missing || {
		echo "run_all.sh: apt-get failed" >&2
		exit 2
	}
fi

# ---- 2. a copy of the tree the postgres user owns ---------------------------------------------
WORK=$(mktemp -d /tmp/powerrank-test.XXXXXX)
PGTAP_DATA="$WORK/pgtap_data"
cleanup() {
	if [ -f "$PGTAP_DATA/postmaster.pid" ]; then
		su postgres -s /bin/sh -c "$PG_BIN/pg_ctl -D '$PGTAP_DATA' -m immediate stop" >/dev/null 2>&1
	fi
	if [ "${KEEP:-0}" = 1 ]; then
		echo "kept $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$WORK/main" "$WORK/logs"
(cd "$ROOT" && tar --exclude=./.git --exclude=./tmp_check --exclude=./results -cf - .) |
	(cd "$WORK/main" && tar xf -)
chown -R postgres:postgres "$WORK"
chmod 755 "$WORK"

# ---- 3. build, unit tests, CUDA --------------------------------------------------------------
echo "== build (-Wall -Wextra -Werror), make check-core (C unit tests), benchmarks (compile)"
step build "build" "make clean PG_CONFIG=$PG_CONFIG && make PG_CONFIG=$PG_CONFIG"
step check-core "check-core (C unit tests)" "make check-core PG_CONFIG=$PG_CONFIG"
step benchmarks "benchmarks (compile)" "make -C bench/cpu && make -C bench/gpu plan"

NVCC=$(command -v nvcc || true)
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
if [ "$SKIP_CUDA" = 1 ]; then
	echo "== make cuda: skipped (--skip-cuda or POWERRANK_SKIP_CUDA=1; not counted as passed or failed)"
elif [ -n "$NVCC" ] && [ -f "$WORK/main/cuda/Makefile" ]; then
	echo "== make cuda ($NVCC)"
	step cuda "cuda (compile)" "PATH=$(dirname "$NVCC"):\$PATH make cuda PG_CONFIG=$PG_CONFIG"
else
	echo "== make cuda: skipped (no nvcc or no cuda/Makefile)"
fi

# ---- 4. install, pg_regress, pgTAP -----------------------------------------------------------
echo "== make install"
if (cd "$WORK/main" && make install PG_CONFIG="$PG_CONFIG") >"$WORK/logs/install.log" 2>&1; then
	record ok "install"
else
	tail -n 80 "$WORK/logs/install.log"
	record fail "install"
fi

echo "== pg_regress and isolation (make installcheck: NetworkX reference, then temporary instances)"
# pg_regress stops the make before the isolation suite when a test fails: run that one anyway.
as_postgres "make installcheck PG_CONFIG=$PG_CONFIG" >"$WORK/installcheck.log" 2>&1 ||
	as_postgres "make installcheck REGRESS= PG_CONFIG=$PG_CONFIG" >>"$WORK/installcheck.log" 2>&1
# pg_regress and pg_isolation_regress print one line per test: "test <name> ... ok|FAILED <time>".
# Every test the Makefile lists must appear: a missing one counts as failed.
tests=$(grep -E '^test [A-Za-z0-9_]+ +\.\.\. ' "$WORK/installcheck.log" || true)
regress_list=$(as_postgres "make -s print-tests PG_CONFIG=$PG_CONFIG" 2>/dev/null)
if [ -z "$regress_list" ]; then
	tail -n 80 "$WORK/installcheck.log"
	record fail "pg_regress (no test list from make print-tests)"
fi
for entry in $regress_list; do
	kind=${entry%%:*}
	name=${entry#*:}
	if echo "$tests" | grep -E "^test $name +\.\.\. +ok( |$)" >/dev/null; then
		record ok "$kind $name"
	elif echo "$tests" | grep -E "^test $name +\.\.\. " >/dev/null; then
		record fail "$kind $name"
	else
		record fail "$kind $name (did not run)"
	fi
done
for diffs in "$WORK/main/regression.diffs" "$WORK/main/output_iso/regression.diffs"; do
	if [ -f "$diffs" ] && [ -s "$diffs" ]; then
		echo "== $diffs"
		cat "$diffs"
	fi
done
if [ -f "$WORK/main/results/networkx_agreement.tsv" ]; then
	sh "$WORK/main/test/reference/report.sh" "$WORK/main/results" >"$WORK/logs/networkx_agreement.txt"
	echo "== NetworkX agreement: $(($(wc -l <"$WORK/logs/networkx_agreement.txt") - 1)) figures, $(grep -c FAIL "$WORK/logs/networkx_agreement.txt") over their bound (the sql/networkx test checks each)"
	grep FAIL "$WORK/logs/networkx_agreement.txt"
fi

# pgTAP: the same files against a throwaway cluster without powerrank preloaded, then with it
# preloaded (its GPU service finds no GPU library here: the files test the server as it is).
PORT=$((54000 + $$ % 900))
# Runs every pgTAP file with pg_prove against the throwaway cluster; MODE names the pass.
pgtap_pass() {
	mode=$1
	as_postgres "pg_prove -h '$WORK' -p $PORT -d powerrank_tap test/pgtap/*.sql" \
		>"$WORK/logs/pg_prove-$mode.log" 2>&1
	for f in "$WORK"/main/test/pgtap/*.sql; do
		name="test/pgtap/$(basename "$f")"
		if grep -E "^$name \.+ ok" "$WORK/logs/pg_prove-$mode.log" >/dev/null; then
			record ok "pgTAP $(basename "$f") ($mode)"
		else
			grep -A 12 -E "^$name " "$WORK/logs/pg_prove-$mode.log"
			record fail "pgTAP $(basename "$f") ($mode)"
		fi
	done
}
echo "== pgTAP (pg_prove against a throwaway cluster, without and with powerrank preloaded)"
PGTAP_OPTS="-p $PORT -k '$WORK' -c listen_addresses=''"
if as_postgres "$PG_BIN/initdb -D '$PGTAP_DATA' -A trust --no-sync >'$WORK/logs/initdb.log' 2>&1 &&
		$PG_BIN/pg_ctl -D '$PGTAP_DATA' -l '$WORK/logs/pgtap_server.log' -w -o \"$PGTAP_OPTS\" start >/dev/null &&
		$PG_BIN/createdb -h '$WORK' -p $PORT powerrank_tap &&
		$PG_BIN/psql -X -q -h '$WORK' -p $PORT -d powerrank_tap \
			-c 'CREATE EXTENSION pgtap' -c 'CREATE EXTENSION powerrank'"; then
	pgtap_pass "not preloaded"
	if as_postgres "$PG_BIN/pg_ctl -D '$PGTAP_DATA' -l '$WORK/logs/pgtap_server.log' -w -m fast \
			-o \"$PGTAP_OPTS -c shared_preload_libraries=powerrank\" restart >/dev/null"; then
		pgtap_pass "preloaded"
	else
		tail -n 40 "$WORK/logs/pgtap_server.log"
		record fail "pgTAP (cluster did not restart with powerrank preloaded)"
	fi
else
	cat "$WORK/logs/initdb.log" "$WORK/logs/pgtap_server.log" 2>/dev/null
	record fail "pgTAP (cluster did not start)"
fi

# A partitioned edge table over postgres_fdw shards, ranked where its partitions live: a
# coordinator and three shard clusters of its own on loopback (test/distributed/run.sh).
echo "== distributed ranking (a coordinator and three shard clusters on loopback)"
step distributed "distributed (test/distributed/run.sh)" \
	"sh test/distributed/run.sh $PG_BIN '$WORK/distributed' $((55460 + $$ % 100 * 4))"

# ---- 5. summary ------------------------------------------------------------------------------
if [ "$failed" -gt 0 ]; then
	echo "failed:$failures"
fi
if [ "$SKIP_CUDA" = 1 ]; then
	echo "$passed passed, $failed failed (CUDA compile skipped)"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]

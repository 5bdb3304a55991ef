# bench/sql/cluster.sh — sourced by the benchmark scripts of this folder: a throwaway PostgreSQL
# cluster in a temporary directory, powerrank preloaded, stopped and removed when the script exits.
#
#   PG_BIN=/path/to/bin; . "$HERE/cluster.sh"; cluster_start NAME ["more postgresql.conf lines"]
#
# Sets WORK (the directory: data/, server.log, the socket) and PORT; as_pg COMMAND runs a shell
# command as the cluster's owner (postgres when the script runs as root, else the caller).

# Runs a shell command as the owner of the cluster.
as_pg() {
	if [ "$(id -u)" = 0 ]; then
		su postgres -s /bin/bash -c "$1"
	else
		bash -c "$1"
	fi
}

# Stops the cluster and removes its directory.
cluster_stop() {
	as_pg "'$PG_BIN/pg_ctl' -D '$WORK/data' -m fast stop" >/dev/null 2>&1
	rm -rf "$WORK"
}

# Creates and starts the cluster (initdb in /tmp/NAME.XXXXXX); returns non-zero on failure.
cluster_start() {
	WORK=$(mktemp -d "/tmp/$1.XXXXXX") || return 1
	PORT=$((55000 + $$ % 900))
	[ "$(id -u)" = 0 ] && chown postgres "$WORK"
	trap cluster_stop EXIT
	as_pg "'$PG_BIN/initdb' -D '$WORK/data' -A trust --no-sync >/dev/null" || return 1
	cat >> "$WORK/data/postgresql.conf" <<CONF
shared_preload_libraries = 'powerrank'
listen_addresses = ''
unix_socket_directories = '$WORK'
port = $PORT
max_connections = 40
powerrank.service_engine = 'off'
${2:-}
CONF
	as_pg "'$PG_BIN/pg_ctl' -D '$WORK/data' -l '$WORK/server.log' -w start >/dev/null" ||
		{ cat "$WORK/server.log"; return 1; }
}

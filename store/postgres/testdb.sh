#!/usr/bin/env bash
# testdb.sh starts (or finds already running) a throwaway PostgreSQL server
# for the store/postgres tests and prints its DSN on the last line:
#
#   export WORLDID_TEST_POSTGRES="$(store/postgres/testdb.sh | tail -n 1)"
#   go test ./store/postgres/
#
# It installs Debian's postgresql package when no server binaries are found,
# keeps everything in one directory (WORLDID_TESTDB_DIR, default
# ${TMPDIR:-/tmp}/worldid-testdb), listens on 127.0.0.1 only, on the first
# free port from 55432 up, and authenticates with a random password
# (scram-sha-256). Running it again reuses the server; `testdb.sh stop`
# stops it. As root it runs the server as the postgres user.
set -euo pipefail

dir="${WORLDID_TESTDB_DIR:-${TMPDIR:-/tmp}/worldid-testdb}"
data="$dir/data"

pg_bindir() {
	ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

if [[ -z "$(pg_bindir)" ]]; then
	if [[ "$(id -u)" != 0 ]]; then
		echo "testdb.sh: PostgreSQL is not installed; run as root to install it" >&2
		exit 1
	fi
	echo "testdb.sh: installing postgresql" >&2
	apt-get update >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql >&2
fi
bin="$(pg_bindir)"

# as_owner runs a command as the user owning the server: postgres when we are
# root (initdb refuses root), else ourselves.
as_owner() {
	if [[ "$(id -u)" == 0 ]]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

port_free() {
	! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

if [[ "${1:-}" == stop ]]; then
	if [[ -f "$data/postmaster.pid" ]]; then
		as_owner "$bin/pg_ctl" -D "$data" -m fast -w stop >&2
	fi
	exit 0
fi

mkdir -p "$dir"
if [[ "$(id -u)" == 0 ]]; then
	chown postgres: "$dir"
fi
chmod 0700 "$dir"

if [[ ! -f "$data/PG_VERSION" ]]; then
	rm -rf "$data"
	head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$dir/password"
	chmod 0600 "$dir/password"
	if [[ "$(id -u)" == 0 ]]; then
		chown postgres: "$dir/password"
	fi
	as_owner "$bin/initdb" -D "$data" -U worldid --auth=scram-sha-256 \
		--pwfile="$dir/password" -E UTF8 --locale=C.UTF-8 >&2
	rm -f "$dir/port"
fi
password="$(cat "$dir/password")"

if ! as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
	port=55432
	while ! port_free "$port"; do
		port=$((port + 1))
	done
	echo "$port" >"$dir/port"
	as_owner "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -w \
		-o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200" start >&2
fi
port="$(cat "$dir/port")"

export PGPASSWORD="$password"
if ! "$bin/psql" -h 127.0.0.1 -p "$port" -U worldid -d postgres -tAc \
	"SELECT 1 FROM pg_database WHERE datname = 'worldid'" | grep -q 1; then
	"$bin/createdb" -h 127.0.0.1 -p "$port" -U worldid worldid >&2
fi

echo "postgres://worldid:$password@127.0.0.1:$port/worldid?sslmode=disable"

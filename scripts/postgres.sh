#!/usr/bin/env bash
# Prints an admin PostgreSQL URL for `make run` / `make test` (one line on
# stdout; every progress or error message goes to stderr so callers can do
# URL="$(scripts/postgres.sh)").
#
#   scripts/postgres.sh        print a URL, starting a private cluster if needed
#   scripts/postgres.sh stop   stop the private cluster if this script started one
#
# Resolution order:
#   1. $DATABASE_URL, unchanged (CI or a developer's own server wins).
#   2. postgres://postgres@127.0.0.1:5432/postgres if a server answers there.
#   3. A private cluster in <repo>/.data/pg on 127.0.0.1:$PG_PRIVATE_PORT
#      (default 55432), so a machine with only the PostgreSQL binaries works.
#
# Knobs: PG_FORCE_PRIVATE=1 skips step 2 (to exercise step 3);
#        PG_PRIVATE_PORT overrides the private cluster's port;
#        PG_DATA_DIR puts the private cluster's files there instead of
#        <repo>/.data (the chaos run keeps a cluster of its own to restart);
#        PG_SETTINGS, space-separated name=value pairs, are the private
#        cluster's settings at its start (make bench loads
#        pg_stat_statements in a cluster of its own this way).
set -euo pipefail

# The repo root is the parent of this script's directory, so the script works
# from any cwd (make, CI, a developer's shell) and in any clone location.
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data_root="${PG_DATA_DIR:-$repo_root/.data}"
pgdata="$data_root/pg"
pglog="$data_root/pg.log"
# A socket directory of our own: the default (/var/run/postgresql) may not
# exist or be writable, and the server user must be able to write here.
pgsock="$data_root/pgsock"
private_port="${PG_PRIVATE_PORT:-55432}"

default_url='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'
private_url="postgres://postgres@127.0.0.1:${private_port}/postgres?sslmode=disable"

log() { printf 'postgres.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# --- probing the conventional local server ----------------------------------

# port_answers HOST PORT: true if a PostgreSQL server accepts connections.
# pg_isready is the cheapest real check; psql and a raw TCP probe are fallbacks
# for machines that have only part of the client tools.
port_answers() {
	local host="$1" port="$2"
	if command -v pg_isready >/dev/null 2>&1; then
		pg_isready -q -t 3 -h "$host" -p "$port" >/dev/null 2>&1
	elif command -v psql >/dev/null 2>&1; then
		PGCONNECT_TIMEOUT=3 psql "postgres://postgres@${host}:${port}/postgres?sslmode=disable" \
			-Atqc 'select 1' >/dev/null 2>&1
	elif command -v timeout >/dev/null 2>&1; then
		# The probe runs in a child bash so a hanging connect can be timed out.
		timeout 3 bash -c "exec 3<>/dev/tcp/${host}/${port}" >/dev/null 2>&1
	else
		(exec 3<>"/dev/tcp/${host}/${port}") >/dev/null 2>&1
	fi
}

# login_works URL: pg_isready says nothing about authentication, and a stock
# Debian server asks for a password on 127.0.0.1, so when psql exists make
# sure the password-less URL really logs in before handing it out.
login_works() {
	if ! command -v psql >/dev/null 2>&1; then
		return 0 # cannot tell; trust the port probe
	fi
	PGCONNECT_TIMEOUT=3 psql "$1" -Atqc 'select 1' >/dev/null 2>&1
}

# --- the private cluster -------------------------------------------------------

# find_pg_bin: sets pg_bindir to a directory holding both initdb and pg_ctl.
# PATH first (a developer's choice wins), then Debian/Ubuntu's versioned
# layout, which keeps these tools off PATH; the highest version is used.
pg_bindir=''
find_pg_bin() {
	local initdb_path pg_ctl_path dir
	initdb_path="$(command -v initdb 2>/dev/null || true)"
	pg_ctl_path="$(command -v pg_ctl 2>/dev/null || true)"
	if [[ -n "$initdb_path" && -n "$pg_ctl_path" ]]; then
		# Resolve symlinks so both tools surely come from the same install.
		initdb_path="$(readlink -f "$initdb_path" 2>/dev/null || printf '%s' "$initdb_path")"
		dir="$(dirname "$initdb_path")"
		if [[ -x "$dir/pg_ctl" ]]; then
			pg_bindir="$dir"
			return 0
		fi
	fi
	while IFS= read -r dir; do
		if [[ -x "$dir/initdb" && -x "$dir/pg_ctl" ]]; then
			pg_bindir="$dir"
			return 0
		fi
	done < <(compgen -G '/usr/lib/postgresql/*/bin' | sort -rV)
	return 1
}

# shell_quote ARGS...: POSIX-sh-safe quoting, for `su -c` (no bash there).
shell_quote() {
	local arg out=''
	for arg in "$@"; do
		out+="'${arg//\'/\'\\\'\'}' "
	done
	printf '%s' "$out"
}

# as_pg_user CMD ARGS...: initdb and pg_ctl refuse to run as root, so as root
# they run as the `postgres` OS user; otherwise as the current user. The cwd
# is the data root, because the postgres user may not be allowed into the
# caller's cwd (e.g. root's home).
as_pg_user() {
	if [[ "$(id -u)" -ne 0 ]]; then
		(cd "$data_root" && "$@")
	elif command -v runuser >/dev/null 2>&1; then
		(cd "$data_root" && runuser -u postgres -- "$@")
	else
		(cd "$data_root" && su postgres -s /bin/sh -c "$(shell_quote "$@")")
	fi
}

cluster_running() {
	[[ -f "$pgdata/PG_VERSION" ]] || return 1
	as_pg_user "$pg_bindir/pg_ctl" status -D "$pgdata" >/dev/null 2>&1
}

start_private() {
	find_pg_bin || die "no PostgreSQL server binaries (initdb, pg_ctl) found on PATH or under /usr/lib/postgresql/*/bin.
  Install PostgreSQL (e.g. 'apt-get install postgresql') or set DATABASE_URL to a server you have."

	mkdir -p "$data_root" "$pgdata" "$pgsock"
	touch "$pglog"
	if [[ "$(id -u)" -eq 0 ]]; then
		id postgres >/dev/null 2>&1 || die "running as root, and initdb refuses to run as root, but there is no 'postgres' OS user to run it as.
  Install PostgreSQL from the distribution (it creates that user), run as a normal user, or set DATABASE_URL."
		# The server user must own its data dir and write its log and socket.
		chown postgres: "$pgdata" "$pgsock" "$pglog"
		as_pg_user test -w "$pgdata" || die "the 'postgres' OS user cannot reach $pgdata (a parent directory is not traversable).
  Clone the repo somewhere world-readable, or set DATABASE_URL."
	fi
	chmod 700 "$pgdata"

	if [[ ! -f "$pgdata/PG_VERSION" ]]; then
		log "initialising a private cluster in $pgdata (once) using $pg_bindir"
		# initdb is chatty; keep its output for when it fails.
		if ! as_pg_user "$pg_bindir/initdb" -U postgres --auth=trust -E UTF8 -D "$pgdata" \
			>"$data_root/initdb.log" 2>&1; then
			cat "$data_root/initdb.log" >&2
			die "initdb failed (see above)"
		fi
	fi

	if cluster_running; then
		return 0
	fi

	# A socket path is limited to ~107 bytes; a deep clone gets none (the URL
	# is TCP anyway, and pg_ctl -w waits on postmaster.pid, not the socket).
	local sock_opt="-k '$pgsock'"
	if ((${#pgsock} > 90)); then
		sock_opt="-k ''"
	fi
	local settings="" kv pairs
	# Split on spaces only: no glob expands a value.
	read -r -a pairs <<<"${PG_SETTINGS:-}"
	for kv in "${pairs[@]}"; do
		settings+=" -c $kv"
	done
	log "starting the private cluster on 127.0.0.1:$private_port (log: $pglog)"
	if ! as_pg_user "$pg_bindir/pg_ctl" -D "$pgdata" \
		-o "-p $private_port $sock_opt -c listen_addresses=127.0.0.1$settings" \
		-l "$pglog" -w -t 60 start >&2; then
		tail -n 20 "$pglog" >&2 || true
		die "the private cluster did not start (is port $private_port taken? set PG_PRIVATE_PORT)"
	fi
}

stop_private() {
	# Only a cluster this script made is touched; without one, nothing to do.
	[[ -f "$pgdata/PG_VERSION" ]] || return 0
	find_pg_bin || return 0
	if cluster_running; then
		log "stopping the private cluster in $pgdata"
		as_pg_user "$pg_bindir/pg_ctl" -D "$pgdata" -m fast -w stop >&2
	fi
}

# --- main ------------------------------------------------------------------------

case "${1:-}" in
stop)
	stop_private
	exit 0
	;;
'') ;;
*)
	die "usage: $0 [stop]"
	;;
esac

if [[ -n "${DATABASE_URL:-}" ]]; then
	printf '%s\n' "$DATABASE_URL"
	exit 0
fi

if [[ "${PG_FORCE_PRIVATE:-}" != 1 ]] && port_answers 127.0.0.1 5432; then
	if login_works "$default_url"; then
		printf '%s\n' "$default_url"
		exit 0
	fi
	log "a server answers on 127.0.0.1:5432 but refuses password-less login as 'postgres'; using a private cluster instead"
fi

start_private
printf '%s\n' "$private_url"

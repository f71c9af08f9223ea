#!/usr/bin/env bash
# Temporal for `make run` / `make test` on a fresh machine.
#
#   scripts/temporal.sh bin    ensure the Temporal CLI v1.5.1 exists; print its path
#   scripts/temporal.sh start  ensure a dev server runs; print its HOST:PORT
#   scripts/temporal.sh stop   stop the dev server that `start` launched
#
# Only the requested value goes to stdout (one line), so callers can do
# ADDR="$(scripts/temporal.sh start)"; progress and errors go to stderr.
#
# Knobs: TEMPORAL_ADDRESS (use that server, start nothing), TEMPORAL_PORT
# (default 7233), TEMPORAL_UI_PORT (default TEMPORAL_PORT+1000, i.e. 8233),
# TEMPORAL_DATA_DIR (state, log and pid files; default <repo>/.data).
set -euo pipefail

readonly cli_module='github.com/temporalio/cli'
readonly cli_version='v1.5.1'

# The repo root is the parent of this script's directory, so the script works
# from any cwd and any clone location; runtime state lives in <repo>/.data.
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data_root="${TEMPORAL_DATA_DIR:-$repo_root/.data}"
pid_file="$data_root/temporal.pid"
addr_file="$data_root/temporal.addr"
log_file="$data_root/temporal.log"
db_file="$data_root/temporal.db"

log() { printf 'temporal.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# --- bin -------------------------------------------------------------------------

# has_wanted_version BIN: a `go install` build reports "0.0.0-DEV" from
# --version (the release number is only stamped by release builds), so the
# module version recorded in the binary is the reliable check; --version is
# kept for a release binary someone dropped in place.
has_wanted_version() {
	local bin="$1"
	[[ -x "$bin" ]] || return 1
	if go version -m "$bin" 2>/dev/null |
		grep -Eq "^[[:space:]]+mod[[:space:]]+${cli_module}[[:space:]]+${cli_version}([[:space:]]|$)"; then
		return 0
	fi
	"$bin" --version 2>/dev/null | grep -q "${cli_version#v}"
}

# ensure_bin: prints the CLI's path, building it once if needed. It lives in
# GOPATH/bin, outside the clone, so CI runs and later clones reuse the build.
ensure_bin() {
	command -v go >/dev/null 2>&1 || die "the Go toolchain is needed to build the Temporal CLI (or set TEMPORAL_ADDRESS)"
	local gopath bindir bin
	gopath="$(go env GOPATH)"
	bindir="${gopath%%:*}/bin" # the first GOPATH entry, as go install uses
	bin="$bindir/temporal"
	if ! has_wanted_version "$bin"; then
		log "building the Temporal CLI ${cli_version} into $bindir (first time only; takes a few minutes)"
		# GOBIN is pinned so a developer's own GOBIN cannot put it elsewhere.
		# Concurrent identical installs are safe: go install is idempotent.
		GOBIN="$bindir" go install "${cli_module}/cmd/temporal@${cli_version}" >&2
		has_wanted_version "$bin" || die "built $bin but it does not report ${cli_version}"
	fi
	printf '%s\n' "$bin"
}

# --- start / stop -------------------------------------------------------------

# recorded_pid: the dev server's pid if the pid file names a live process
# that is a Temporal dev server (guards against a recycled pid).
recorded_pid() {
	local pid args
	[[ -f "$pid_file" ]] || return 1
	pid="$(<"$pid_file")"
	[[ "$pid" =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	if command -v ps >/dev/null 2>&1; then
		args="$(ps -o args= -p "$pid" 2>/dev/null || true)"
		[[ "$args" == *start-dev* ]] || return 1
	fi
	printf '%s\n' "$pid"
}

# healthy BIN ADDR: a developer's CLI profile or TEMPORAL_* env (TLS, API key,
# another address) must not redirect the probe, hence --disable-config-*.
healthy() {
	"$1" operator cluster health --address "$2" --command-timeout 3s \
		--disable-config-file --disable-config-env >/dev/null 2>&1
}

# wait_healthy BIN ADDR PID: polls up to ~60s; fails early if the server died.
wait_healthy() {
	local bin="$1" addr="$2" pid="$3" i
	for ((i = 0; i < 120; i++)); do
		if healthy "$bin" "$addr"; then
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.5
	done
	return 1
}

stop_server() {
	local pid i
	if pid="$(recorded_pid)"; then
		log "stopping the Temporal dev server (pid $pid)"
		kill "$pid" 2>/dev/null || true
		# Give it time to flush its SQLite file, then insist.
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			kill -9 "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$pid_file" "$addr_file"
}

start_server() {
	if [[ -n "${TEMPORAL_ADDRESS:-}" ]]; then
		printf '%s\n' "$TEMPORAL_ADDRESS"
		return 0
	fi

	local port ui_port addr bin pid
	port="${TEMPORAL_PORT:-7233}"
	ui_port="${TEMPORAL_UI_PORT:-$((port + 1000))}"
	addr="127.0.0.1:$port"
	bin="$(ensure_bin)"
	mkdir -p "$data_root"

	# Reuse our own server if it is serving the requested address; one left
	# on another port is stopped so the caller gets what it asked for.
	if pid="$(recorded_pid)"; then
		if [[ "$(cat "$addr_file" 2>/dev/null || true)" == "$addr" ]] && wait_healthy "$bin" "$addr" "$pid"; then
			printf '%s\n' "$addr"
			return 0
		fi
		log "the recorded dev server (pid $pid) does not serve $addr; restarting it"
		stop_server
	fi
	rm -f "$pid_file" "$addr_file"

	# Starting on a port someone else holds would only fail with a bind error.
	if healthy "$bin" "$addr"; then
		die "a Temporal server not started by this script already answers on $addr.
  Use it with TEMPORAL_ADDRESS=$addr, or pick another port with TEMPORAL_PORT."
	fi

	log "starting the Temporal dev server on $addr (UI port $ui_port, log: $log_file)"
	# All three standard streams are redirected so the server never holds the
	# caller's pipe (ADDR="$(...)" would otherwise wait for it forever); setsid
	# detaches it from the caller's process group so Ctrl-C on `make run` or
	# the end of the make process does not take it down; `stop` does that.
	# TEMPORAL_IN_MEMORY=1 (make test, make bench) keeps the state in memory:
	# a run's server starts fresh anyway, and SQLite on disk slows every start.
	local -a store=(--db-filename "$db_file")
	[[ -n "${TEMPORAL_IN_MEMORY:-}" ]] && store=()
	local -a cmd=("$bin" server start-dev
		--ip 127.0.0.1 --port "$port" --ui-port "$ui_port"
		"${store[@]}" --log-level warn
		--search-attribute CompanyId=Int
		--search-attribute EventId=Int
		--search-attribute OrderStatus=Keyword
		--search-attribute IsTest=Bool)
	if command -v setsid >/dev/null 2>&1; then
		setsid "${cmd[@]}" </dev/null >>"$log_file" 2>&1 &
	else
		nohup "${cmd[@]}" </dev/null >>"$log_file" 2>&1 &
	fi
	pid=$!
	printf '%s\n' "$pid" >"$pid_file"
	printf '%s\n' "$addr" >"$addr_file"

	if ! wait_healthy "$bin" "$addr" "$pid"; then
		tail -n 30 "$log_file" >&2 || true
		stop_server
		die "the Temporal dev server did not come up on $addr within 60s (log above)"
	fi
	printf '%s\n' "$addr"
}

case "${1:-}" in
bin) ensure_bin ;;
start) start_server ;;
stop) stop_server ;;
*) die "usage: $0 bin|start|stop" ;;
esac

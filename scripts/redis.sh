#!/usr/bin/env bash
# Redis for `make test` (the shared rate-limit and failure-budget tests): prints a REDIS_URL.
#
#   scripts/redis.sh        REDIS_URL if set; else the server on 127.0.0.1:6379
#                           if it answers; else a private redis-server on port
#                           16379 (installed from Debian's packages when root);
#                           REDIS_FORCE_PRIVATE=1 skips the 6379 probe
#   scripts/redis.sh stop   stop the private server if this script started one
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data_dir="$repo_root/.data"
pid_file="$data_dir/redis.pid"
port="${REDIS_PRIVATE_PORT:-16379}"

log() { printf 'redis.sh: %s\n' "$*" >&2; }

answers() { # host port
	if command -v redis-cli >/dev/null 2>&1; then
		[[ "$(redis-cli -h "$1" -p "$2" ping 2>/dev/null)" == "PONG" ]]
	else
		(exec 3<>"/dev/tcp/$1/$2" && printf 'PING\r\n' >&3 && head -c 5 <&3 | grep -q PONG) 2>/dev/null
	fi
}

if [[ "${1:-}" == "stop" ]]; then
	if [[ -f "$pid_file" ]]; then
		kill "$(cat "$pid_file")" 2>/dev/null || true
		rm -f "$pid_file"
	fi
	exit 0
fi

if [[ -n "${REDIS_URL:-}" ]]; then
	echo "$REDIS_URL"
	exit 0
fi
if [[ -z "${REDIS_FORCE_PRIVATE:-}" ]] && answers 127.0.0.1 6379; then
	echo "redis://127.0.0.1:6379/0"
	exit 0
fi
if ! answers 127.0.0.1 "$port"; then
	if ! command -v redis-server >/dev/null 2>&1; then
		if [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
			log "installing redis-server with apt-get"
			apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
		else
			log "error: no Redis on 127.0.0.1:6379 and no redis-server to start: install Redis or set REDIS_URL"
			exit 1
		fi
	fi
	mkdir -p "$data_dir"
	log "starting a private redis-server on 127.0.0.1:$port"
	redis-server --daemonize yes --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
		--pidfile "$pid_file" --dir "$data_dir" --logfile "$data_dir/redis.log" >&2
	for _ in $(seq 1 50); do
		answers 127.0.0.1 "$port" && break
		sleep 0.1
	done
	answers 127.0.0.1 "$port" || { log "error: redis-server did not start (see $data_dir/redis.log)"; exit 1; }
fi
echo "redis://127.0.0.1:$port/0"

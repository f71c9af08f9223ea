#!/usr/bin/env bash
# `make run`: Postgres, the Temporal dev server, migrations, the demo catalog,
# then the API in the foreground. Ctrl-C stops everything this script started.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

if [[ -z "${DATABASE_URL:-}" ]]; then
	# The service's own database on the server postgres.sh found or started.
	admin_url="$(scripts/postgres.sh)"
	base="${admin_url%%\?*}"
	export DATABASE_URL="${base%/*}/ticketsales?sslmode=disable"
fi
# The Temporal UI is the dev server's when this script starts one; with a
# TEMPORAL_ADDRESS of your own, TEMPORAL_UI_URL says where its UI is.
if [[ -z "${TEMPORAL_ADDRESS:-}" ]]; then
	export TEMPORAL_UI_URL="${TEMPORAL_UI_URL:-http://127.0.0.1:${TEMPORAL_UI_PORT:-8233}}"
fi
export TEMPORAL_ADDRESS="$(scripts/temporal.sh start)"
temporal_ui="${TEMPORAL_UI_URL:-(set TEMPORAL_UI_URL to your Temporal UI to link it)}"
export HTTP_ADDR="${HTTP_ADDR:-127.0.0.1:8080}"
export PUBLIC_BASE_URL="${PUBLIC_BASE_URL:-http://$HTTP_ADDR}"
# A laptop: built-in secrets, and production keys may pay on the test gateway.
export APP_ENV="${APP_ENV:-development}"

pids=()
stop_all() {
	trap - INT TERM EXIT
	echo >&2
	echo "stopping…" >&2
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	scripts/temporal.sh stop >&2 || true
	scripts/postgres.sh stop >&2 || true
	exit 0
}
trap stop_all INT TERM EXIT

bin/ticketctl migrate
seed="$(bin/ticketctl seed-demo --json)"
key="$(sed -n 's/^ *"key": "\(tk_[^"]*\)".*/\1/p' <<<"$seed" | head -n1)"
# A fresh one-time link for the demo organizer's cabinet on every run.
signin="$(sed -n 's/^ *"signin_url": "\([^"]*\)".*/\1/p' <<<"$seed" | head -n1)"
organizer="$(sed -n 's/^ *"email": "\([^"]*\)".*/\1/p' <<<"$seed" | head -n1)"

if [[ -x bin/worker ]]; then
	bin/worker &
	pids+=($!)
fi
bin/api &
pids+=($!)

for _ in $(seq 1 50); do
	curl -fsS "http://$HTTP_ADDR/healthz" >/dev/null 2>&1 && break
	sleep 0.2
done
cat <<MSG

  Ticket sales service is up.
    API          http://$HTTP_ADDR/v1
    API docs     http://$HTTP_ADDR/docs   (OpenAPI: /openapi.json)
    Temporal UI  $temporal_ui
    Demo sandbox key (shown once):
      $key
    Organizer's cabinet  http://$HTTP_ADDR/cabinet/
      demo organizer $organizer: set a password and sign in with this one-time link:
      $signin

  Try:
    curl -H "Authorization: Bearer $key" http://$HTTP_ADDR/v1/events

  Ctrl-C stops everything.

MSG
wait -n "${pids[@]}"

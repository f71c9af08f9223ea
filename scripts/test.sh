#!/usr/bin/env bash
# `make test`: every test, unit and integration, against a real Postgres
# (found or started by postgres.sh) and a Temporal dev server started for
# this run only and stopped afterwards.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

# The browser test (api/browser_test.go) drives headless Chromium: install
# Debian's package on a fresh machine.
scripts/chromium.sh test.sh

# The chaos run (test/chaos) starts, stops and restarts a Redis of its own.
if ! command -v redis-server >/dev/null 2>&1; then
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "test.sh: redis-server not found, installing redis-server with apt-get" >&2
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
	else
		echo "test.sh: redis-server not found: the chaos run needs it (Debian: sudo apt-get install redis-server)." >&2
		exit 1
	fi
fi

# The TypeScript SDK's tests (test/sdk) build sdk/ts with npm and run it with
# Node.js 20+; they fail, saying so, when either is missing or older.
if ! command -v npm >/dev/null 2>&1; then
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "test.sh: npm not found, installing nodejs and npm with apt-get" >&2
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
	else
		echo "test.sh: npm not found: the TypeScript SDK tests need Node.js 20+ and npm." >&2
		exit 1
	fi
fi

# The cabinet's browser tests check every page with axe-core (WCAG A/AA),
# fetched once into a cache outside the clone.
AXE_CORE_JS="$(scripts/axe.sh)"
export AXE_CORE_JS

DATABASE_URL="$(scripts/postgres.sh)"
export DATABASE_URL
REDIS_URL="$(scripts/redis.sh)"
export REDIS_URL
TEMPORAL_CLI="$(scripts/temporal.sh bin)"
export TEMPORAL_CLI

# The tests' own dev server: its own port and state, fresh every run, so a
# `make run` stack on the default ports is left alone.
export TEMPORAL_DATA_DIR="$repo_root/.data/test-temporal"
rm -rf "$TEMPORAL_DATA_DIR"
cleanup() {
	TEMPORAL_DATA_DIR="$TEMPORAL_DATA_DIR" TEMPORAL_ADDRESS= scripts/temporal.sh stop >/dev/null 2>&1 || true
	scripts/redis.sh stop
}
trap cleanup EXIT
TEMPORAL_ADDRESS="$(TEMPORAL_IN_MEMORY=1 TEMPORAL_ADDRESS= TEMPORAL_PORT="${TEST_TEMPORAL_PORT:-17233}" TEMPORAL_UI_PORT="${TEST_TEMPORAL_UI_PORT:-18233}" scripts/temporal.sh start)"
export TEMPORAL_ADDRESS

go vet ./...
(cd sdk/go && go vet ./...) # the Go SDK, a module of its own: ./... does not enter it
if [[ $# -gt 0 ]]; then
	go test -count=1 "$@" # e.g. make bench: its own packages and flags
	exit 0
fi
go test -count=1 -timeout 45m ./...  # the api package: ~9.5 min quiet on one machine, ~20 on a slower one; the cap only guards a hang
# The Go SDK's own tests (no service needed); its examples run against the
# stack in test/sdk, above.
(cd sdk/go && go test -count=1 ./...)

# The served OpenAPI document passes Spectral (spectral:oas) with no errors
# and Redocly's recommended rules with no error or warning.
scripts/openapi-lint.sh
# The published clients (sdk/: the document, the Go SDK's generated client, the
# TypeScript types) are what the code generates now.
scripts/clients.sh check

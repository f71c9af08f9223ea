#!/usr/bin/env bash
# `make test`: every test, unit and integration, against a real Postgres
# (found or started by postgres.sh) and a Temporal dev server started for
# this run only and stopped afterwards.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

DATABASE_URL="$(scripts/postgres.sh)"
export DATABASE_URL
TEMPORAL_CLI="$(scripts/temporal.sh bin)"
export TEMPORAL_CLI

# The tests' own dev server: its own port and state, fresh every run, so a
# `make run` stack on the default ports is left alone.
export TEMPORAL_DATA_DIR="$repo_root/.data/test-temporal"
rm -rf "$TEMPORAL_DATA_DIR"
cleanup() { TEMPORAL_DATA_DIR="$TEMPORAL_DATA_DIR" TEMPORAL_ADDRESS= scripts/temporal.sh stop >/dev/null 2>&1 || true; }
trap cleanup EXIT
TEMPORAL_ADDRESS="$(TEMPORAL_ADDRESS= TEMPORAL_PORT="${TEST_TEMPORAL_PORT:-17233}" TEMPORAL_UI_PORT="${TEST_TEMPORAL_UI_PORT:-18233}" scripts/temporal.sh start)"
export TEMPORAL_ADDRESS

go vet ./...
go test -count=1 -timeout 12m "$@" ./...

#!/usr/bin/env bash
# `make bench`: the benchmarks (docs/performance.md), writing
# test/bench/results/. It starts only what the benchmarks use, and installs
# only Chromium, and that only when the seat map's part runs:
#   - a Postgres cluster of the bench's own (.data/bench, port
#     BENCH_PG_PORT, default 55433) with pg_stat_statements loaded, for the
#     database's cost per order; the server's defaults otherwise, as on the
#     machine's own server. BENCH_DATABASE_URL uses another server instead
#     (without pg_stat_statements loaded, statements by kind go unmeasured;
#     with it, the sell-out resets its statistics, every database's);
#   - a Temporal dev server in memory, for this run only.
# Arguments are passed to go test (e.g. -cpuprofile); BENCH_ONLY and the
# other knobs are the bench's own (docs/performance.md).
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

only=",${BENCH_ONLY:-},"
if [[ "$only" == ",," || "$only" == *",seatmap,"* ]]; then
	scripts/chromium.sh "bench.sh (the seat map's part)"
fi

bench_pg=(env -u DATABASE_URL PG_FORCE_PRIVATE=1 PG_DATA_DIR="$repo_root/.data/bench" PG_PRIVATE_PORT="${BENCH_PG_PORT:-55433}"
	PG_SETTINGS="shared_preload_libraries=pg_stat_statements pg_stat_statements.track=top pg_stat_statements.track_planning=on")
export TEMPORAL_DATA_DIR="$repo_root/.data/bench-temporal"
cleanup() {
	TEMPORAL_DATA_DIR="$TEMPORAL_DATA_DIR" TEMPORAL_ADDRESS= scripts/temporal.sh stop >/dev/null 2>&1 || true
	if [[ -z "${BENCH_DATABASE_URL:-}" ]]; then
		"${bench_pg[@]}" scripts/postgres.sh stop || true
	fi
}
trap cleanup EXIT
# Whatever an earlier run left running is stopped first: a cluster started
# before would keep its settings, and a dev server its port.
cleanup

if [[ -n "${BENCH_DATABASE_URL:-}" ]]; then
	DATABASE_URL="$BENCH_DATABASE_URL"
else
	DATABASE_URL="$("${bench_pg[@]}" scripts/postgres.sh)"
fi
export DATABASE_URL

rm -rf "$TEMPORAL_DATA_DIR"
TEMPORAL_CLI="$(scripts/temporal.sh bin)"
export TEMPORAL_CLI
TEMPORAL_ADDRESS="$(TEMPORAL_IN_MEMORY=1 TEMPORAL_ADDRESS= TEMPORAL_PORT="${BENCH_TEMPORAL_PORT:-17243}" TEMPORAL_UI_PORT="${BENCH_TEMPORAL_UI_PORT:-18243}" scripts/temporal.sh start)"
export TEMPORAL_ADDRESS

BENCH=1 go test -count=1 -run TestBench -v -timeout 30m "$@" ./test/bench/

#!/usr/bin/env bash
# Lint the served OpenAPI document with Spectral and with Redocly's
# recommended rules (`make test` runs this).
#
#   scripts/openapi-lint.sh   write the document of `ticketctl openapi` to
#                             .data/openapi.json, run `spectral lint` on it with
#                             the ruleset .spectral.yaml (no error) and
#                             `redocly lint --extends=recommended` (no error,
#                             no warning); exits non-zero otherwise
#
# Both CLIs are installed once with npm into a cache directory outside the
# clone (scripts/npm-tool.sh), so later runs and clones reuse them.
set -euo pipefail
readonly spectral_version='6.16.3'
readonly redocly_version='2.77.0'
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

log() { printf 'openapi-lint.sh: %s\n' "$*" >&2; }

bin="$(scripts/npm-tool.sh @stoplight/spectral-cli "$spectral_version" spectral)"

mkdir -p .data
go run ./cmd/ticketctl openapi >.data/openapi.json.tmp
mv .data/openapi.json.tmp .data/openapi.json

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
status=0
"$bin" lint --ruleset .spectral.yaml --fail-severity error .data/openapi.json >"$out" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
	# Errors (or a failure to run): everything Spectral said.
	cat "$out"
	log "spectral lint failed (exit $status): fix the errors above in the api/ operation metadata"
	exit "$status"
fi
# Clean: the count of each remaining warning kind, then Spectral's summary.
awk '$2 ~ /^(warning|info|information|hint)$/ { n[$2 " " $3]++ }
	END { for (k in n) printf "  %4d %s\n", n[k], k }' "$out" | sort -k3
grep -E 'problems? \(' "$out" || echo "spectral: no problems"
echo "spectral: .data/openapi.json passes .spectral.yaml (spectral-cli $spectral_version)"

# Redocly's recommended rules: no error and no warning (a partner's own
# tooling often runs them).
redocly="$(scripts/npm-tool.sh @redocly/cli "$redocly_version" redocly)"
if ! "$redocly" lint --extends=recommended --format=stylish .data/openapi.json >"$out" 2>&1 ||
	! grep -q 'Your API description is valid' "$out"; then
	grep -v '[║╔╚]' "$out"
	log "redocly lint (recommended) failed: fix the problems above in the api/ operation metadata"
	exit 1
fi
echo "redocly: .data/openapi.json passes the recommended rules (@redocly/cli $redocly_version)"

#!/usr/bin/env bash
# Lint the served OpenAPI document with Spectral (`make test` runs this).
#
#   scripts/spectral.sh   write the document of `ticketctl openapi` to
#                         .data/openapi.json and run `spectral lint` on it with
#                         the ruleset .spectral.yaml; exits non-zero on any error
#
# Spectral CLI is installed once with npm into a cache directory outside the
# clone (SPECTRAL_CACHE_DIR, default ${XDG_CACHE_HOME:-~/.cache}/ticketsales/spectral),
# so later runs and clones reuse it. Needs Node.js and npm (Debian: nodejs npm,
# installed with apt-get when missing and running as root).
set -euo pipefail
readonly spectral_version='6.16.3'
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

log() { printf 'spectral.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
		log "node/npm not found, installing nodejs and npm with apt-get"
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
	fi
	command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1 ||
		die "Spectral needs Node.js and npm: install them (Debian: sudo apt-get install nodejs npm)"
fi

cache_root="${SPECTRAL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ticketsales/spectral}"
prefix="$cache_root/$spectral_version"
bin="$prefix/node_modules/.bin/spectral"
if [ ! -x "$bin" ] || [ ! -f "$prefix/.installed" ]; then
	log "installing @stoplight/spectral-cli@$spectral_version into $prefix (first time only)"
	mkdir -p "$cache_root"
	# Installed beside the final place and moved in whole, so an interrupted
	# or concurrent install never leaves a half-built one behind.
	tmp="$(mktemp -d "$cache_root/.install.XXXXXX")"
	trap 'rm -rf "$tmp"' EXIT
	printf '{"private": true}\n' >"$tmp/package.json"
	npm install --prefix "$tmp" --no-audit --no-fund --loglevel=error --save-exact \
		"@stoplight/spectral-cli@$spectral_version" >&2
	touch "$tmp/.installed"
	rm -rf "$prefix"
	mv "$tmp" "$prefix" 2>/dev/null || [ -f "$prefix/.installed" ] || die "could not move the install to $prefix"
fi

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

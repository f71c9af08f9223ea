#!/usr/bin/env bash
# Prints the path of axe-core's axe.min.js, the accessibility engine the
# cabinet's browser tests inject into every page they check (WCAG 2.x A
# and AA rules). It is fetched once with `npm pack` into a cache directory
# outside the clone (AXE_CACHE_DIR, default
# ${XDG_CACHE_HOME:-~/.cache}/ticketsales/axe-core) and reused by later
# runs and clones; it is a test tool only and never served.
set -euo pipefail
readonly axe_version='4.14.1'
log() { printf 'axe.sh: %s\n' "$*" >&2; }

cache_root="${AXE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ticketsales/axe-core}"
dir="$cache_root/$axe_version"
if [ ! -f "$dir/axe.min.js" ]; then
	command -v npm >/dev/null 2>&1 || { log "npm not found: install Node.js and npm (Debian: nodejs npm)"; exit 1; }
	log "fetching axe-core@$axe_version into $dir (first time only)"
	mkdir -p "$cache_root"
	# Unpacked beside the final place and moved in whole, so an interrupted
	# or concurrent fetch never leaves half a file behind.
	tmp="$(mktemp -d "$cache_root/.fetch.XXXXXX")"
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && npm pack --silent "axe-core@$axe_version" >/dev/null && tar xzf ./axe-core-*.tgz)
	mkdir -p "$tmp/out" && cp "$tmp/package/axe.min.js" "$tmp/package/LICENSE" "$tmp/out/"
	rm -rf "$dir"
	mv "$tmp/out" "$dir" 2>/dev/null || [ -f "$dir/axe.min.js" ] || { log "could not move axe-core to $dir"; exit 1; }
fi
printf '%s\n' "$dir/axe.min.js"

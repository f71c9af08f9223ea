#!/usr/bin/env bash
# Prints the path of an npm package's command, installing the package once
# into a cache directory outside the clone, so later runs and clones reuse it:
#
#   scripts/npm-tool.sh PACKAGE VERSION COMMAND
#
# The cache is ${NPM_TOOLS_DIR:-${XDG_CACHE_HOME:-~/.cache}/ticketsales/npm-tools}/PACKAGE/VERSION.
# Needs Node.js and npm (Debian: nodejs npm, installed with apt-get when
# missing and running as root).
set -euo pipefail
package="$1" version="$2" command="$3"
log() { printf 'npm-tool.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
		log "node/npm not found, installing nodejs and npm with apt-get"
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
	fi
	command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1 ||
		die "$package needs Node.js and npm: install them (Debian: sudo apt-get install nodejs npm)"
fi

cache_root="${NPM_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ticketsales/npm-tools}/${package//\//+}"
prefix="$cache_root/$version"
bin="$prefix/node_modules/.bin/$command"
if [ ! -x "$bin" ] || [ ! -f "$prefix/.installed" ]; then
	log "installing $package@$version into $prefix (first time only)"
	mkdir -p "$cache_root"
	# Installed beside the final place and moved in whole, so an interrupted
	# or concurrent install never leaves a half-built one behind.
	tmp="$(mktemp -d "$cache_root/.install.XXXXXX")"
	trap 'rm -rf "$tmp"' EXIT
	printf '{"private": true}\n' >"$tmp/package.json"
	npm install --prefix "$tmp" --no-audit --no-fund --loglevel=error --save-exact "$package@$version" >&2
	touch "$tmp/.installed"
	rm -rf "$prefix"
	mv "$tmp" "$prefix" 2>/dev/null || [ -f "$prefix/.installed" ] || die "could not move the install to $prefix"
fi
printf '%s\n' "$bin"

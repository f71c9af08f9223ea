#!/usr/bin/env bash
# Makes sure headless Chromium is there for the browser tests and the seat
# map's bench (CHROMIUM_PATH, default Debian's /usr/bin/chromium): as root
# with apt-get it installs Debian's package, else it says what to do.
# Usage: scripts/chromium.sh WHO (the caller's name, for its messages).
set -euo pipefail
who="${1:-chromium.sh}"
chromium_path="${CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$chromium_path" ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "$who: $chromium_path not found, installing chromium with apt-get" >&2
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
	echo "$who: $chromium_path not found: install it (Debian: sudo apt-get install chromium) or set CHROMIUM_PATH." >&2
	exit 1
fi
if [ ! -x "$chromium_path" ]; then
	echo "$who: still no $chromium_path after installing chromium: set CHROMIUM_PATH." >&2
	exit 1
fi

#!/usr/bin/env bash
# The published clients in sdk/ — the OpenAPI document (sdk/openapi.json),
# the Go SDK's generated layer (sdk/go/client.gen.go, oapi-codegen) and the
# TypeScript types (sdk/ts/src/schema.d.ts, openapi-typescript) — must be
# what the code generates today.
#   scripts/clients.sh check   regenerate into a temporary directory and diff (make test)
#   scripts/clients.sh write   regenerate in place (same as `go generate` in sdk/go)
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
readonly oapi_codegen='github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2'
readonly openapi_typescript='openapi-typescript@7.13.0'
# Each generated file, relative to the output root (sdk/ or a temporary copy).
readonly files=(openapi.json go/client.gen.go ts/src/schema.d.ts)

generate() { # generate DIR: the three files into DIR, laid out as sdk/
	local dir="$1"
	mkdir -p "$dir/go" "$dir/ts/src"
	go run ./cmd/ticketctl openapi >"$dir/openapi.json"
	(cd "$dir/go" && go run "$oapi_codegen" -config "$repo_root/sdk/go/oapi-codegen.yaml" -o client.gen.go ../openapi.json)
	# A blank line before the package clause: oapi-codegen's header stays
	# (it marks the file generated) but is no longer the package's doc, which
	# is the SDK's own (ticketsales.go).
	awk '!done && /^package / { print ""; done = 1 } { print }' "$dir/go/client.gen.go" >"$dir/go/client.gen.go.tmp"
	mv "$dir/go/client.gen.go.tmp" "$dir/go/client.gen.go"
	npx --yes "$openapi_typescript" "$dir/openapi.json" --default-non-nullable=false --output "$dir/ts/src/schema.d.ts" >/dev/null 2>&1
}

case "${1:-check}" in
write)
	generate sdk
	# The seat map component's one source is api/seatmapjs; the TypeScript SDK
	# ships a copy (api/seatmapjs's test keeps them equal).
	cp api/seatmapjs/seat-map.js sdk/ts/seat-map/seat-map.js
	;;
check)
	tmp="$(mktemp -d)"
	trap 'rm -rf "$tmp"' EXIT
	generate "$tmp"
	stale=0
	for f in "${files[@]}"; do
		if ! diff -q "$tmp/$f" "sdk/$f" >/dev/null; then
			echo "clients.sh: sdk/$f is not what the code generates now; run \`scripts/clients.sh write\` (or \`go generate\` in sdk/go) and commit it:" >&2
			diff -u "sdk/$f" "$tmp/$f" | head -20 >&2 || true
			stale=1
		fi
	done
	if ! cmp -s api/seatmapjs/seat-map.js sdk/ts/seat-map/seat-map.js; then
		echo "clients.sh: sdk/ts/seat-map/seat-map.js is not api/seatmapjs/seat-map.js; run \`scripts/clients.sh write\` and commit it" >&2
		stale=1
	fi
	[ "$stale" -eq 0 ] || exit 1
	echo "clients.sh: sdk/ (document, Go SDK's generated client, TypeScript types) is current"
	;;
*)
	echo "usage: scripts/clients.sh [check|write]" >&2
	exit 2
	;;
esac

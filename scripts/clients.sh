#!/usr/bin/env bash
# The published clients in api/client — the OpenAPI document, the Go client
# (oapi-codegen) and the TypeScript types (openapi-typescript) — must be what
# the code generates today.
#   scripts/clients.sh check   regenerate into a temporary directory and diff (make test)
#   scripts/clients.sh write   regenerate in place (same as go generate ./api/client)
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
readonly oapi_codegen='github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2'
readonly openapi_typescript='openapi-typescript@7.13.0'

generate() { # generate DIR: the three files into DIR
	local dir="$1"
	mkdir -p "$dir/ts"
	go run ./cmd/ticketctl openapi >"$dir/openapi.json"
	(cd "$dir" && go run "$oapi_codegen" -config "$repo_root/api/client/oapi-codegen.yaml" -o client.gen.go openapi.json)
	npx --yes "$openapi_typescript" "$dir/openapi.json" --output "$dir/ts/ticketsales.d.ts" >/dev/null 2>&1
}

case "${1:-check}" in
write)
	generate api/client
	;;
check)
	tmp="$(mktemp -d)"
	trap 'rm -rf "$tmp"' EXIT
	generate "$tmp"
	stale=0
	for f in openapi.json client.gen.go ts/ticketsales.d.ts; do
		if ! diff -q "$tmp/$f" "api/client/$f" >/dev/null; then
			echo "clients.sh: api/client/$f is not what the code generates now; run \`go generate ./api/client\` and commit it:" >&2
			diff -u "api/client/$f" "$tmp/$f" | head -20 >&2 || true
			stale=1
		fi
	done
	[ "$stale" -eq 0 ] || exit 1
	echo "clients.sh: api/client (document, Go client, TypeScript types) is current"
	;;
*)
	echo "usage: scripts/clients.sh [check|write]" >&2
	exit 2
	;;
esac

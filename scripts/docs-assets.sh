#!/usr/bin/env bash
# Refreshes the API reference page's embedded assets (api/reference/assets)
# from the npm registry: Stoplight Elements at the version api/reference
# names, checked against the SHA-384 integrity Huma pins for the same files,
# so the page serves exactly what Huma's CDN page would. Run it when Huma's
# pinned version changes; `make test` only uses the committed copy.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
version="$(sed -n 's/^const Version = "\(.*\)"$/\1/p' api/reference/reference.go)"
huma_dir="$(go list -m -f '{{.Dir}}' github.com/danielgtaylor/huma/v2)"
dest="api/reference/assets/elements-$version"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "@stoplight/elements@$version" >/dev/null && tar xzf ./*.tgz)
for f in web-components.min.js styles.min.css; do
	want="$(grep -o "elements@$version/$f\" crossorigin integrity=\"sha384-[^\"]*" "$huma_dir/api.go" | sed 's/.*integrity="//')"
	got="sha384-$(openssl dgst -sha384 -binary "$work/package/$f" | base64 -w0)"
	if [[ -z "$want" || "$want" != "$got" ]]; then
		echo "docs-assets.sh: $f of Elements $version is $got, Huma pins '${want:-nothing}'" >&2
		exit 1
	fi
done
rm -rf api/reference/assets && mkdir -p "$dest"
cp "$work"/package/{web-components.min.js,web-components.min.js.LICENSE.txt,styles.min.css,LICENSE} "$dest/"
echo "docs-assets.sh: $dest refreshed and verified"

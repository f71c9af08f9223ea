#!/usr/bin/env bash
# A release of the API and its SDKs, one version for all (docs/releasing.md):
# checks that the tree is what is released, then builds into dist/VERSION/
# what a partner installs from a file.
#   scripts/release.sh VERSION          check and build dist/VERSION/
#   scripts/release.sh VERSION --tag    the same, then tag vVERSION and sdk/go/vVERSION
#   scripts/release.sh VERSION --dry-run [--out DIR] [--skip-clients-check]
#       the tests' mode: a dirty tree is a warning, sdk/history is not
#       written, nothing is tagged; the archives go to DIR.
# dist/VERSION/ holds:
#   goproxy/                                  the Go SDK as a module proxy directory
#   ticketsales-sdk-go-VERSION.goproxy.tar.gz that directory, packed
#   ticketsales-sdk-VERSION.tgz               the TypeScript SDK (npm pack)
#   openapi-VERSION.json                      the OpenAPI document
#   RELEASE-NOTES.md                          the version's CHANGELOG section
#   SHA256SUMS                                the files above (but goproxy/)
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
readonly sdk_module='github.com/ticketsales/ticketsales/sdk/go'

usage() {
	echo "usage: scripts/release.sh VERSION [--tag | --dry-run] [--out DIR] [--skip-clients-check]" >&2
	exit 2
}
fail() {
	echo "release.sh: $*" >&2
	exit 1
}

version='' tag=0 dry_run=0 out='' clients_check=1
while [ $# -gt 0 ]; do
	case "$1" in
	--tag) tag=1 ;;
	--dry-run) dry_run=1 ;;
	--out)
		[ $# -ge 2 ] || usage
		out="$2"
		shift
		;;
	--skip-clients-check) clients_check=0 ;;
	-*) usage ;;
	*)
		[ -z "$version" ] || usage
		version="${1#v}"
		;;
	esac
	shift
done
[ -n "$version" ] || usage
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "version $version is not X.Y.Z"
[ "$tag" -eq 0 ] || [ "$dry_run" -eq 0 ] || fail "--tag and --dry-run exclude each other"
[ "$dry_run" -eq 1 ] || [ "$clients_check" -eq 1 ] || fail "--skip-clients-check is for --dry-run only"
out="${out:-dist/$version}"

# 1. The tree is what is released.
if [ -n "$(git status --porcelain)" ]; then
	if [ "$dry_run" -eq 1 ]; then
		echo "release.sh: warning: the tree is not clean (a dry run builds it as it is)" >&2
	else
		git status --short >&2
		fail "the tree is not clean: commit or stash first"
	fi
fi
if [ "$tag" -eq 1 ]; then
	for t in "v$version" "sdk/go/v$version"; do
		if git rev-parse -q --verify "refs/tags/$t" >/dev/null; then
			fail "tag $t exists: a released version never changes"
		fi
	done
fi

# 2. Every version is the release's.
json_field() { # json_field FILE EXPR: EXPR of the file's JSON (j), with Node
	node -e 'const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(eval(process.argv[2]) ?? "")' "$1" "$2"
}
go_const() { # go_const FILE NAME: the string constant NAME of a Go file
	sed -n "s/^[[:space:]]*\(const \)\{0,1\}$2 *= *\"\([^\"]*\)\".*/\2/p" "$1" | head -1
}
declare -A versions=(
	["api/server.go Version (the document's info.version)"]="$(go_const api/server.go Version)"
	["sdk/openapi.json info.version"]="$(json_field sdk/openapi.json j.info.version)"
	["sdk/go/ticketsales.go Version"]="$(go_const sdk/go/ticketsales.go Version)"
	["sdk/go/ticketsales.go APIVersion"]="$(go_const sdk/go/ticketsales.go APIVersion)"
	["sdk/ts/package.json version"]="$(json_field sdk/ts/package.json j.version)"
	["sdk/ts/package-lock.json version"]="$(json_field sdk/ts/package-lock.json 'j.version + (j.packages[""].version === j.version ? "" : " (packages[\"\"]: " + j.packages[""].version + ")")')"
)
disagree=0
for where in "${!versions[@]}"; do
	if [ "${versions[$where]}" != "$version" ]; then
		echo "release.sh: $where is \"${versions[$where]}\", not $version" >&2
		disagree=1
	fi
done
[ "$disagree" -eq 0 ] || fail "the versions disagree: bump them all (docs/releasing.md)"

# 3. CHANGELOG.md has the version's section, dated.
heading="$(grep -E "^## \[${version//./\\.}\] - [0-9]{4}-[0-9]{2}-[0-9]{2}\$" CHANGELOG.md || true)"
[ -n "$heading" ] || fail "CHANGELOG.md has no section \"## [$version] - YYYY-MM-DD\": turn Unreleased into it"

# 4. The clients are what the code generates.
if [ "$clients_check" -eq 1 ]; then
	scripts/clients.sh check
fi

# 5. The released document is frozen in sdk/history, for the old-client test.
frozen="sdk/history/openapi-$version.json"
if [ -f "$frozen" ]; then
	if ! cmp -s "$frozen" sdk/openapi.json; then
		msg="$frozen differs from sdk/openapi.json: a released document never changes (a change is a new version)"
		[ "$dry_run" -eq 1 ] || fail "$msg"
		echo "release.sh: warning: $msg" >&2
	fi
elif [ "$dry_run" -eq 1 ]; then
	echo "release.sh: $frozen is not there yet (a release writes it)" >&2
else
	cp sdk/openapi.json "$frozen"
	fail "wrote $frozen: commit it with the release, then run this again"
fi

# 6. The archives.
rm -rf "$out"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
released_at="$(git log -1 --format=%cI HEAD)"
echo "release.sh: building $version into $out" >&2

go run ./scripts/modproxy -module "$sdk_module" -dir sdk/go -version "v$version" -time "$released_at" -out "$out/goproxy"
tar -C "$out" --sort=name --owner=0 --group=0 --numeric-owner --mtime="$released_at" \
	-czf "$out/ticketsales-sdk-go-$version.goproxy.tar.gz" goproxy

# npm pack builds the package (prepack) in a copy, with its dependencies from
# the lock file, so the checkout gets no node_modules of the release's.
ts_build="$(mktemp -d)"
trap 'rm -rf "$ts_build"' EXIT
tar -C sdk --exclude=ts/node_modules --exclude=ts/dist --exclude=ts/build -cf - ts | tar -C "$ts_build" -xf -
(
	cd "$ts_build/ts"
	npm ci --prefer-offline --no-audit --no-fund --loglevel=error >/dev/null
	npm pack --pack-destination "$out" --loglevel=error >/dev/null
)
[ -f "$out/ticketsales-sdk-$version.tgz" ] || fail "npm pack made no ticketsales-sdk-$version.tgz"

cp sdk/openapi.json "$out/openapi-$version.json"
awk -v h="$heading" '$0 == h { on = 1; print; next } on && /^## / { exit } on { print }' CHANGELOG.md >"$out/RELEASE-NOTES.md"
(cd "$out" && sha256sum "ticketsales-sdk-go-$version.goproxy.tar.gz" "ticketsales-sdk-$version.tgz" \
	"openapi-$version.json" RELEASE-NOTES.md >SHA256SUMS)

# 7. The tags: the service's and the Go module's (it lives in sdk/go, so its
# tags carry that prefix).
if [ "$tag" -eq 1 ]; then
	git tag -a "v$version" -m "Release $version"
	git tag -a "sdk/go/v$version" -m "Go SDK $version"
	echo "release.sh: tagged v$version and sdk/go/v$version; push them: git push origin v$version sdk/go/v$version" >&2
fi
echo "release.sh: $version is in $out:" >&2
cat "$out/SHA256SUMS" >&2

# `make run` brings the whole stack up on this machine; `make test` runs every
# test against a real Postgres and a real Temporal dev server. Both find or
# start what they need (see scripts/).
SHELL := /bin/bash
GO ?= go

.PHONY: run test unit build vet fmt clean bench chaos fuzz release

build:
	$(GO) build -o bin/ ./cmd/...

run: build
	scripts/run.sh

test:
	scripts/test.sh

# The tests that need no service (no Postgres, Temporal or browser): seconds.
# The Go SDK (sdk/go) is a module of its own, which ./... does not enter.
unit:
	$(GO) vet ./...
	cd sdk/go && $(GO) vet ./...
	$(GO) test -short -count=1 ./...
	cd sdk/go && $(GO) test -short -count=1 ./...

vet:
	$(GO) vet ./...
	cd sdk/go && $(GO) vet ./...

fmt:
	gofmt -w .

clean:
	scripts/temporal.sh stop || true
	scripts/postgres.sh stop || true
	rm -rf bin .data

# The benchmarks (docs/performance.md) on a stack of their own (a Postgres
# cluster with pg_stat_statements, a Temporal dev server); writes
# test/bench/results/latest.{md,json} and the parts' own results.
bench:
	scripts/bench.sh

# The long chaos run: 200 sagas while the api and the worker are SIGKILLed
# five times each; `make test` runs a short one (30 sagas, 2 kills each).
chaos:
	CHAOS_SAGAS=200 CHAOS_KILLS=5 scripts/test.sh -run TestChaos -v ./test/chaos/ -timeout 30m

# The long fuzz run of every operation's body and query (api.FuzzOperations;
# `make test` runs its seed corpus). FUZZTIME=10m by default; the go
# command's last lines (inputs tried, new ones kept) go to
# .data/fuzz-operations.log, and a failing input to api/testdata/fuzz/.
FUZZTIME ?= 10m
fuzz:
	mkdir -p .data
	set -o pipefail; scripts/test.sh -run '^$$' -fuzz '^FuzzOperations$$' -fuzztime $(FUZZTIME) -parallel 2 ./api/ 2>&1 | grep -v 'level=' | tee .data/fuzz-operations.log

# A release's checks and archives into dist/$(VERSION)/ (docs/releasing.md);
# TAG=1 then tags vX.Y.Z and sdk/go/vX.Y.Z.
release:
	@test -n "$(VERSION)" || { echo "usage: make release VERSION=x.y.z [TAG=1]" >&2; exit 2; }
	scripts/release.sh $(VERSION) $(if $(TAG),--tag)

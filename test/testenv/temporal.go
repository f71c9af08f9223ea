package testenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/ticketsales/ticketsales/internal/app"
)

// TemporalAddress returns the dev server the tests use: TEMPORAL_ADDRESS
// (`make test` starts one for the run), or else one started for this test
// from the Temporal CLI binary that scripts/temporal.sh builds.
func TemporalAddress(t testing.TB) string {
	t.Helper()
	SkipInUnit(t)
	if addr := os.Getenv("TEMPORAL_ADDRESS"); addr != "" {
		return addr
	}
	bin := os.Getenv("TEMPORAL_CLI")
	if bin == "" {
		out, err := exec.Command("go", "env", "GOPATH").Output()
		if err != nil {
			t.Fatalf("find GOPATH for the Temporal CLI: %v", err)
		}
		bin = filepath.Join(strings.Split(strings.TrimSpace(string(out)), string(os.PathListSeparator))[0], "bin", "temporal")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no Temporal CLI at %s: run `make test` (it builds it) or set TEMPORAL_ADDRESS", bin)
	}
	srv, err := testsuite.StartDevServer(context.Background(), testsuite.DevServerOptions{
		ExistingPath:  bin,
		ClientOptions: &client.Options{Logger: app.TemporalLogger(Log())},
		ExtraArgs: []string{"--search-attribute", "CompanyId=Int", "--search-attribute", "EventId=Int",
			"--search-attribute", "OrderStatus=Keyword", "--search-attribute", "IsTest=Bool"},
	})
	if err != nil {
		t.Fatalf("start Temporal dev server: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	return srv.FrontendHostPort()
}

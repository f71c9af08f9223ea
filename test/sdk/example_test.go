// Package sdk_test runs the Go SDK's examples (sdk/go, a module of its
// own) against the real stack. They live here, in the server's module,
// because the SDK module imports nothing of the server's: not even its test
// stack.
package sdk_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// contractProxy is a reverse proxy to the service at target that checks
// every answer against the document the service serves (testenv's
// independent validator), for programs that bring their own HTTP client: an
// answer the document does not allow fails the test, and the program gets a
// 502.
func contractProxy(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := httputil.NewSingleHostReverseProxy(u)
	p.Transport = testenv.ContractClient().Transport
	p.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		t.Errorf("%s %s: %v", r.Method, r.URL.Path, err)
		w.WriteHeader(http.StatusBadGateway)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL
}

// sandbox is a stack with the demo catalog and a sandbox key of its company.
func sandbox(t *testing.T) (*testenv.Stack, string) {
	t.Helper()
	s := testenv.NewStack(t)
	s.StartWorker(t)
	company := s.Company(t, "A")
	s.Import(t, company, catalogfile.Demo(time.Now()))
	key, _ := s.Key(t, company, apikey.Sandbox)
	return s, key
}

// TestSandboxCheckThroughTheGoSDK builds the SDK's example program
// (sdk/go/example) and runs its sandbox check against the real stack: every
// call goes through the SDK's generated client, every answer is decoded into
// its types, and checked against the served document by the independent
// validator on the way, so a document that does not fit the answers (a null
// the schema forbids, a missing status) fails here as it would for a partner.
func TestSandboxCheckThroughTheGoSDK(t *testing.T) {
	s, key := sandbox(t)
	bin := filepath.Join(t.TempDir(), "example")
	build := exec.Command("go", "build", "-o", bin, "./example")
	build.Dir = "../../sdk/go" // in the SDK's module, with its own go.mod
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the example: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(os.Environ(), "TICKETS_URL="+contractProxy(t, s.URL), "TICKETS_KEY="+key)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the sandbox check failed: %v\n%s", err, out.String())
	}
	t.Logf("%s", out.String())
	if !strings.Contains(out.String(), "refunded order") || !strings.Contains(out.String(), "sandbox check passed") {
		t.Fatalf("the sandbox check did not reach the refund:\n%s", out.String())
	}
}

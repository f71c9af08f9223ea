// Package sdk_test runs the Go SDK's examples (sdk/go, a module of its
// own) against the real stack: the sandbox check in a partner's module that
// gets the SDK through a module proxy (gosdk_test.go), the door example
// through an outage (door_test.go). They live here, in the server's
// module, because the SDK's module imports nothing of the server's, not
// even its test stack.
package sdk_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
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

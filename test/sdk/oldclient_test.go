package sdk_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/test/testenv"
)

// TestOldClientsWork holds the compatibility policy (docs/api.md) to every
// document partners were given: for each release's document in
// sdk/history, a Go client is generated with the oapi-codegen the SDK uses
// (scripts/clients.sh's pinned version, the SDK's settings) into a module
// of its own, and a partner's flow written against it
// (testdata/oldclient: events, scheme, availability, a hold, 409
// seat_taken, an order, its external payment, tickets, a refund, orders by
// page) runs against today's service. The program asserts the decoded
// values; on the way, every answer is checked against that old document
// with its answers opened as the policy allows (openAnswers), so a removed
// required member, a changed type or a renamed member fails here even
// where the program does not read it.
func TestOldClientsWork(t *testing.T) {
	if testing.Short() {
		t.Skip("generates clients and runs the stack")
	}
	docs, err := filepath.Glob(filepath.Join("..", "..", "sdk", "history", "openapi-*.json"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("sdk/history has no published document (%v)", err)
	}
	program, err := os.ReadFile(filepath.Join("testdata", "oldclient", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range docs {
		version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(doc), "openapi-"), ".json")
		t.Run(version, func(t *testing.T) {
			spec, err := os.ReadFile(doc)
			if err != nil {
				t.Fatal(err)
			}
			dir := oldClientModule(t, doc, program)
			s, key := sandbox(t)
			base := documentProxy(t, s.URL, openAnswers(t, spec))
			start := time.Now()
			env := append([]string{"TICKETS_URL=" + base, "TICKETS_KEY=" + key}, partnerGoEnv(t, t.TempDir())...)
			out := tsRun(t, dir, env, 2*time.Minute, "go", "run", ".")
			t.Logf("the %s client's flow in %s:\n%s", version, time.Since(start).Round(time.Millisecond), out)
			if !strings.Contains(out, "old client flow passed") {
				t.Fatalf("the %s client's flow did not finish:\n%s", version, out)
			}
		})
	}
}

// oldClientModule makes a module (example.com/oldpartner) with the
// client generated from the document at doc as its package client and
// program, if any, as its main.go, and returns its directory.
func oldClientModule(t *testing.T, doc string, program []byte) string {
	t.Helper()
	code := oldClient(t, doc)
	// The runtime the generated code needs, at the SDK's version; its sums
	// as the SDK's go.sum has them, so no checksum database is asked.
	gomod, err := os.ReadFile(filepath.Join("..", "..", "sdk", "go", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	runtime := regexp.MustCompile(`github.com/oapi-codegen/runtime (v\S+)`).FindSubmatch(gomod)
	if runtime == nil {
		t.Fatal("sdk/go/go.mod requires no github.com/oapi-codegen/runtime")
	}

	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module example.com/oldpartner\n\ngo 1.24\n\nrequire github.com/oapi-codegen/runtime "+string(runtime[1])+"\n")
	copyFile(t, filepath.Join("..", "..", "sdk", "go", "go.sum"), filepath.Join(dir, "go.sum"))
	if program != nil {
		write(t, filepath.Join(dir, "main.go"), string(program))
	}
	if err := os.Mkdir(filepath.Join(dir, "client"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "client", "client.gen.go"), string(code))
	return dir
}

// oldClients holds each document's generated client (package client) by
// the document's path: the tests that use one (TestOldClientsWork,
// TestGoSDKStaysSourceCompatible) generate it once per run.
var oldClients struct {
	sync.Mutex
	code map[string][]byte
}

// oldClient returns the Go code oapi-codegen generates from the document
// at doc, in package client.
func oldClient(t *testing.T, doc string) []byte {
	t.Helper()
	doc, err := filepath.Abs(doc)
	if err != nil {
		t.Fatal(err)
	}
	oldClients.Lock()
	defer oldClients.Unlock()
	if code, ok := oldClients.code[doc]; ok {
		return code
	}
	// The generator and its settings are the SDK's: the version
	// scripts/clients.sh pins, sdk/go/oapi-codegen.yaml with another package.
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "clients.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^readonly oapi_codegen='([^']+)'$`).FindSubmatch(script)
	if m == nil {
		t.Fatal("scripts/clients.sh pins no oapi-codegen (readonly oapi_codegen='…')")
	}
	cfg, err := os.ReadFile(filepath.Join("..", "..", "sdk", "go", "oapi-codegen.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := regexp.MustCompile(`(?m)^package: .*$`)
	if !pkg.Match(cfg) {
		t.Fatal("sdk/go/oapi-codegen.yaml names no package")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "oapi-codegen.yaml"), string(pkg.ReplaceAll(cfg, []byte("package: client"))))
	if err := os.Mkdir(filepath.Join(dir, "client"), 0o755); err != nil {
		t.Fatal(err)
	}
	// In client/, as clients.sh runs it in sdk/go: the settings' output
	// is relative to it.
	tsRun(t, filepath.Join(dir, "client"), []string{"GOWORK=off"}, 2*time.Minute, "go", "run", string(m[1]),
		"-config", filepath.Join("..", "oapi-codegen.yaml"), "-o", "client.gen.go", doc)
	code, err := os.ReadFile(filepath.Join(dir, "client", "client.gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if oldClients.code == nil {
		oldClients.code = map[string][]byte{}
	}
	oldClients.code[doc] = code
	return code
}

// openAnswers returns the document spec with its answers as open as the
// compatibility policy (docs/api.md) lets them grow: no schema closed
// (additionalProperties: false), since answers gain members, and no enum,
// since a client must not fail on a value it does not know (new statuses,
// problem codes). Everything else stays: required members, types, formats,
// nullability, the statuses and content types of each operation's answers.
// Only answers are checked with it, so its requests' schemas do not matter.
func openAnswers(t *testing.T, spec []byte) []byte {
	t.Helper()
	var doc any
	if err := json.Unmarshal(spec, &doc); err != nil {
		t.Fatalf("the document: %v", err)
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			// Keyed by value type, so a member named "enum" in a schema's
			// properties (an object) is left alone.
			if b, ok := v["additionalProperties"].(bool); ok && !b {
				delete(v, "additionalProperties")
			}
			if _, ok := v["enum"].([]any); ok {
				delete(v, "enum")
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// documentProxy is contractProxy with the document spec instead of the
// one the service serves.
func documentProxy(t *testing.T, target string, spec []byte) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := testenv.DocumentTransport(spec)
	if err != nil {
		t.Fatal(err)
	}
	p := httputil.NewSingleHostReverseProxy(u)
	p.Transport = tr
	p.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		t.Errorf("%s %s: %v", r.Method, r.URL.Path, err)
		w.WriteHeader(http.StatusBadGateway)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestOpenAnswersFollowThePolicy checks the old document's validation
// itself, on the published 1.0.0 order: an added member and a new enum
// value pass (the policy allows them); a removed required member, a
// changed type and a renamed member fail.
func TestOpenAnswersFollowThePolicy(t *testing.T) {
	spec, err := os.ReadFile(filepath.Join("..", "..", "sdk", "history", "openapi-1.0.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := testenv.DocumentTransport(openAnswers(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	order := func(edit func(o map[string]any)) string {
		o := map[string]any{
			"id": 42, "status": "paid", "event_id": 7, "payment": "external", "is_test": true,
			"amount": map[string]any{"amount": 165000, "currency": "RUB"}, "total": map[string]any{"amount": 150000, "currency": "RUB"},
			"service_fee": map[string]any{"amount": 15000, "currency": "RUB"},
			"customer":    map[string]any{"email": "anna@example.com", "first_name": "Анна", "last_name": "Павлова", "phone": "+7 999 123-45-67"},
			"created_at":  "2026-11-29T10:00:00Z", "expires_at": "2026-11-29T10:15:00Z", "paid_at": "2026-11-29T10:01:00Z",
		}
		edit(o)
		b, _ := json.Marshal(map[string]any{"data": o, "request_id": "req_1"})
		return string(b)
	}
	for _, c := range []struct {
		name string
		body string
		ok   bool
	}{
		{"as published", order(func(map[string]any) {}), true},
		{"a member added", order(func(o map[string]any) { o["payment_id"] = "pay-1" }), true},
		{"a new status", order(func(o map[string]any) { o["status"] = "partially_paid" }), true},
		{"amount removed", order(func(o map[string]any) { delete(o, "amount") }), false},
		{"id a string", order(func(o map[string]any) { o["id"] = "42" }), false},
		{"event_id renamed", order(func(o map[string]any) { o["eventId"] = o["event_id"]; delete(o, "event_id") }), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(c.body))
			}))
			defer srv.Close()
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/orders/42", nil)
			res, err := tr.RoundTrip(req)
			if err == nil {
				res.Body.Close()
			}
			if (err == nil) != c.ok {
				t.Errorf("allowed %v, want %v: %v", err == nil, c.ok, err)
			}
		})
	}
}

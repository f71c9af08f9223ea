package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/api"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/requestlog"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

func TestRoutingErrorsAreProblems(t *testing.T) {
	s := testenv.NewStack(t)
	expectProblem(t, s.Get(t, "/v1/nowhere", ""), http.StatusNotFound, "not_found")
	expectProblem(t, s.Get(t, "/", ""), http.StatusNotFound, "not_found")
	res := s.Do(t, http.MethodDelete, "/v1/events", "", "")
	expectProblem(t, res, http.StatusMethodNotAllowed, "method_not_allowed")
	if res.Header.Get("Allow") == "" {
		t.Fatal("405 without Allow")
	}
}

func TestHealthReadinessAndDocs(t *testing.T) {
	s := testenv.NewStack(t)
	if res := s.Get(t, "/healthz", ""); res.Status != 200 || res.Header.Get("X-Request-Id") == "" {
		t.Fatalf("healthz: %d", res.Status)
	}
	// Postgres and the Temporal dev server are both up in the test stack.
	if r := readiness(t, s.Get(t, "/readyz", "")); r != (readyBody{Status: "ready", Postgres: "ok", Temporal: "ok"}) {
		t.Fatalf("readyz: %+v", r)
	}
	if r := readiness(t, s.Get(t, "/readyz/temporal", "")); r != (readyBody{Status: "ready", Temporal: "ok"}) {
		t.Fatalf("readyz/temporal: %+v", r)
	}
	res := s.Get(t, "/openapi.json", "")
	var doc struct {
		OpenAPI    string                    `json:"openapi"`
		Paths      map[string]map[string]any `json:"paths"`
		Components struct {
			SecuritySchemes map[string]any `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(res.Body, &doc); err != nil || res.Status != 200 {
		t.Fatalf("openapi.json: %d %v", res.Status, err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Paths["/v1/events/{id}/availability"] == nil || doc.Components.SecuritySchemes["bearer"] == nil {
		t.Fatalf("openapi document: version %q, %d paths", doc.OpenAPI, len(doc.Paths))
	}
	if res := s.Get(t, "/docs", ""); res.Status != 200 {
		t.Fatalf("docs: %d", res.Status)
	}
}

type readyBody struct {
	Status   string `json:"status"`
	Postgres string `json:"postgres"`
	Temporal string `json:"temporal"`
}

func readiness(t *testing.T, res *testenv.Response) readyBody {
	t.Helper()
	if res.Status != http.StatusOK {
		t.Fatalf("readiness: %d %s", res.Status, res.Body)
	}
	var r readyBody
	res.Decode(t, &r)
	return r
}

// The catalog and holds need only Postgres: with Temporal unreachable the
// instance stays ready and says so, while /readyz/temporal answers 503.
func TestReadinessWithTemporalUnreachable(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1") // nothing listens there: a lazy client to a closed port
	s := testenv.NewStack(t)
	if r := readiness(t, s.Get(t, "/readyz", "")); r != (readyBody{Status: "ready", Postgres: "ok", Temporal: "unreachable"}) {
		t.Fatalf("readyz: %+v", r)
	}
	res := s.Get(t, "/readyz/temporal", "")
	expectProblem(t, res, http.StatusServiceUnavailable, "unavailable")
	if res.Header.Get("Retry-After") == "" {
		t.Fatal("503 without Retry-After")
	}
}

func TestReadinessWithPostgresUnreachable(t *testing.T) {
	s := testenv.NewStack(t)
	closed, err := store.Open(context.Background(), s.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	_ = closed.Close()
	url := s.APIWith(t, func(d *api.Deps) { d.DB = closed })
	res := testenv.Do(t, url, http.MethodGet, "/readyz", "", "")
	expectProblem(t, res, http.StatusServiceUnavailable, "unavailable")
	if res.Header.Get("Retry-After") == "" {
		t.Fatal("503 without Retry-After")
	}
}

// A path that is not UTF-8 is logged cleaned, and the other companies'
// requests written in the same batch are logged too.
func TestRequestLogBatchSurvivesAPathThatIsNotUTF8(t *testing.T) {
	s := testenv.NewStack(t)
	companyA, companyB := s.Company(t, "Acme"), s.Company(t, "Beta")
	keyA, _ := s.Key(t, companyA, apikey.Sandbox)
	keyB, _ := s.Key(t, companyB, apikey.Sandbox)
	// A writer that flushes only on Close: the three requests are one batch.
	rl := requestlog.NewWriter(s.DB, slog.New(slog.DiscardHandler), time.Hour, nil)
	url := s.APIWith(t, func(d *api.Deps) { d.RequestLog = rl })
	a := testenv.Do(t, url, http.MethodGet, "/v1/cities", keyA, "")
	bad := testenv.Do(t, url, http.MethodGet, "/v1/%FF", "", "")
	b := testenv.Do(t, url, http.MethodGet, "/v1/cities", keyB, "")
	expectProblem(t, bad, http.StatusNotFound, "not_found")
	rl.Close()

	entries, err := store.ListRequestLog(context.Background(), s.DB, store.RequestLogFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]store.RequestLogEntry{}
	for _, e := range entries {
		byID[e.RequestID] = e
	}
	if len(entries) != 3 {
		t.Fatalf("want 3 logged requests, got %d: %+v", len(entries), entries)
	}
	if e := byID[a.Header.Get("X-Request-Id")]; e.CompanyID == nil || *e.CompanyID != companyA || e.Status != 200 {
		t.Fatalf("company A's request: %+v", e)
	}
	if e := byID[b.Header.Get("X-Request-Id")]; e.CompanyID == nil || *e.CompanyID != companyB || e.Status != 200 {
		t.Fatalf("company B's request: %+v", e)
	}
	if e := byID[bad.Header.Get("X-Request-Id")]; e.Path != "/v1/\uFFFD" || e.Status != 404 || e.CompanyID != nil {
		t.Fatalf("the request with a path that is not UTF-8: %+v", e)
	}
}

func TestRequestIDAndRequestLog(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	key, keyID := s.Key(t, company, apikey.Sandbox)
	ok := s.Get(t, "/v1/cities", key)
	var body struct {
		RequestID string `json:"request_id"`
	}
	ok.Decode(t, &body)
	if body.RequestID == "" || body.RequestID != ok.Header.Get("X-Request-Id") {
		t.Fatalf("request_id %q vs X-Request-Id %q", body.RequestID, ok.Header.Get("X-Request-Id"))
	}
	missing := s.Get(t, "/v1/events/424242/categories", key)
	anonymous := s.Get(t, "/v1/cities", "")
	s.Get(t, "/healthz", "") // not a partner request: not logged

	// The log is written in batches off the request path; wait for the flush.
	var entries []store.RequestLogEntry
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var err error
		entries, err = store.ListRequestLog(context.Background(), s.DB, store.RequestLogFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) >= 3 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(entries) != 3 {
		t.Fatalf("want 3 logged requests, got %d", len(entries))
	}
	byID := map[string]store.RequestLogEntry{}
	for _, e := range entries {
		byID[e.RequestID] = e
	}
	e := byID[ok.Header.Get("X-Request-Id")]
	if e.Status != 200 || e.Method != "GET" || e.Path != "/v1/cities" || e.CompanyID == nil || *e.CompanyID != company ||
		e.APIKeyID == nil || *e.APIKeyID != keyID || e.DurationUS <= 0 {
		t.Fatalf("logged entry: %+v", e)
	}
	if e := byID[missing.Header.Get("X-Request-Id")]; e.Status != 404 {
		t.Fatalf("404 entry: %+v", e)
	}
	if e := byID[anonymous.Header.Get("X-Request-Id")]; e.Status != 401 || e.CompanyID != nil {
		t.Fatalf("401 entry: %+v", e)
	}
	// Filters of `ticketctl requests`.
	only404, err := store.ListRequestLog(context.Background(), s.DB, store.RequestLogFilter{CompanyID: company, Status: 404})
	if err != nil || len(only404) != 1 {
		t.Fatalf("status filter: %d entries, %v", len(only404), err)
	}
}

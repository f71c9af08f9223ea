package api

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPanicBecomesOpaqueProblem(t *testing.T) {
	h := withRequest(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("secret: connection string postgres://admin:pw@db")
	}), slog.New(slog.NewTextHandler(io.Discard, nil)), nil, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/events", nil))
	if rec.Code != 500 || rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("panic: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	if strings.Contains(rec.Body.String(), "secret") {
		t.Fatalf("panic leaked internals: %s", rec.Body)
	}
	var p Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Code != "internal" || p.RequestID != rec.Header().Get("X-Request-Id") {
		t.Fatalf("problem %+v (%v)", p, err)
	}
}

func TestETagMatching(t *testing.T) {
	tests := []struct {
		header string
		want   bool
	}{
		{``, false},
		{`"a"`, true},
		{`W/"a"`, true},
		{`"b", "a"`, true},
		{`"b"`, false},
		{`*`, true},
	}
	for _, tt := range tests {
		if got := etagMatches(tt.header, `"a"`); got != tt.want {
			t.Errorf("etagMatches(%q) = %v", tt.header, got)
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	for header, want := range map[string]bool{
		"": false, "gzip": true, "br, gzip": true, "gzip;q=0": false, "deflate": false, "*": true, "GZIP; q=0.5": true,
	} {
		if got := acceptsGzip(header); got != want {
			t.Errorf("acceptsGzip(%q) = %v", header, got)
		}
	}
}

// TestRequestLogLineHidesLinkTokens: the process log's line of a request
// to a sign-in link does not hold the link's token.
func TestRequestLogLineHidesLinkTokens(t *testing.T) {
	var buf strings.Builder
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := withRequest(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}), log, nil, nil)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/cabinet/link/live-token-secret", nil))
	if !strings.Contains(buf.String(), "/cabinet/link/") || strings.Contains(buf.String(), "live-token-secret") {
		t.Fatalf("log line: %s", buf.String())
	}
}

package seatmapjs

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
)

// TestSDKCopyIsTheSource: the TypeScript SDK ships the component as
// @ticketsales/sdk/seat-map; its copy must be this package's file, byte for
// byte (one source). Fix with: cp api/seatmapjs/seat-map.js sdk/ts/seat-map/.
func TestSDKCopyIsTheSource(t *testing.T) {
	copyOf, err := os.ReadFile("../../sdk/ts/seat-map/seat-map.js")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(copyOf, Script) {
		t.Fatal("sdk/ts/seat-map/seat-map.js differs from api/seatmapjs/seat-map.js: run `scripts/clients.sh write` (it copies the source)")
	}
}

// TestServedScript: the script is served as JavaScript with a validator
// and a short public cache; a revalidation with the ETag costs a 304.
func TestServedScript(t *testing.T) {
	mux := http.NewServeMux()
	Register(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, Path, nil))
	h := rec.Header()
	if rec.Code != 200 || h.Get("Content-Type") != "text/javascript; charset=utf-8" || !bytes.Equal(rec.Body.Bytes(), Script) {
		t.Fatalf("GET: %d %q, %d bytes", rec.Code, h.Get("Content-Type"), rec.Body.Len())
	}
	if h.Get("ETag") == "" || h.Get("Cache-Control") != "public, max-age=300" || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("headers: %v", h)
	}
	req := httptest.NewRequest(http.MethodGet, Path, nil)
	req.Header.Set("If-None-Match", `"other", `+h.Get("ETag"))
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Fatalf("revalidation: %d, %d bytes", rec.Code, rec.Body.Len())
	}
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, Path, nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", rec.Code)
	}
}

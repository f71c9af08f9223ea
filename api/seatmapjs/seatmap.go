// Package seatmapjs serves <ticket-seat-map>, the seat map web component for
// partners' shops (docs/seat-map.md), at /seat-map/v1/seat-map.js: one
// dependency-free script embedded in the binary. seat-map.js here is its
// source; the TypeScript SDK ships a copy (sdk/ts/seat-map), which a test
// keeps equal to it.
package seatmapjs

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"strings"
)

// Path is where the script is served.
const Path = "/seat-map/v1/seat-map.js"

//go:embed seat-map.js
var Script []byte

// etag is the script's strong validator: it changes with every release
// that changes the file.
var etag = func() string {
	sum := sha256.Sum256(Script)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}()

// Register mounts the script on mux. Partners' pages load it from another
// origin, so it is served to any (a script needs no CORS, but a module
// import or a fetch for integrity does); a browser revalidates it at
// most every 5 minutes, so a release reaches shops quickly, and a
// revalidation costs a 304.
func Register(mux *http.ServeMux) {
	mux.HandleFunc("GET "+Path, func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/javascript; charset=utf-8")
		h.Set("Cache-Control", "public, max-age=300")
		h.Set("ETag", etag)
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("X-Content-Type-Options", "nosniff")
		if match(r.Header.Get("If-None-Match")) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(Script)
	})
}

// match says whether an If-None-Match header names the script's ETag (or *).
func match(header string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

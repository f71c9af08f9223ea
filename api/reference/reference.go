// Package reference serves the API reference page, /docs: Stoplight
// Elements rendering /openapi.yaml, with its script and styles embedded in
// the binary, so the page works behind a firewall or offline. Huma's own
// docs page loads the same files from a public CDN.
package reference

import (
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
)

// Version is the Stoplight Elements release embedded, the one Huma pins
// (the files' SHA-384 equal Huma's integrity attributes; see
// scripts/docs-assets.sh). Asset paths carry it, so browsers may cache
// them for good.
const Version = "9.0.15"

//go:embed assets
var assets embed.FS

// AssetsPrefix is where the embedded files are served.
const AssetsPrefix = "/docs/assets/"

var page = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="referrer" content="no-referrer">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>{{.Title}}</title>
    <link rel="stylesheet" href="{{.Assets}}/styles.min.css">
    <script src="{{.Assets}}/web-components.min.js"></script>
  </head>
  <body style="height: 100vh;">
    <elements-api apiDescriptionUrl="{{.Spec}}" router="hash" layout="sidebar" tryItCredentialsPolicy="same-origin"></elements-api>
  </body>
</html>
`))

// csp allows nothing from elsewhere: the page, its assets and the spec all
// come from this server. Elements needs inline styles.
var csp = strings.Join([]string{
	"default-src 'none'",
	"base-uri 'none'",
	"connect-src 'self'",
	"img-src 'self' data:",
	"font-src 'self' data:",
	"form-action 'none'",
	"frame-ancestors 'none'",
	"script-src 'self'",
	"style-src 'self' 'unsafe-inline'",
}, "; ")

// Register mounts /docs and its assets on mux; specPath is the OpenAPI
// document the page renders (e.g. /openapi.yaml).
func Register(mux *http.ServeMux, title, specPath string) {
	var body strings.Builder
	if err := page.Execute(&body, struct{ Title, Assets, Spec string }{title, AssetsPrefix + "elements-" + Version, specPath}); err != nil {
		panic(err) // a fixed template over fixed values
	}
	html := []byte(body.String())
	mux.HandleFunc("GET /docs", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", csp)
		h.Set("Cache-Control", "no-cache")
		_, _ = w.Write(html)
	})
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err)
	}
	files := http.StripPrefix(AssetsPrefix, http.FileServerFS(sub))
	mux.Handle("GET "+AssetsPrefix, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no directory listings
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		files.ServeHTTP(w, r)
	}))
}

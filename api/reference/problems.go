package reference

import (
	"html/template"
	"net/http"
	"strconv"
	"strings"
)

// ProblemType documents one problem code for the page: a problem's type
// is the page's path with the code as its fragment, so each code has a
// section whose id is the code.
type ProblemType struct {
	Code     string
	Statuses []int
	Meaning  string // may hold `code` spans
	Do       string // may hold `code` spans
}

var problemsPage = template.Must(template.New("problems").Funcs(template.FuncMap{
	"status": func(s int) string { return strconv.Itoa(s) + " " + http.StatusText(s) },
	"spans":  spans,
}).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; color: #14213d; background: #f6f7f9; margin: 0; }
main { max-width: 50rem; margin: 0 auto; padding: 1rem; overflow-wrap: break-word; }
h1 { font-size: 1.6rem; }
section { background: #fff; border: 1px solid #d8dde4; border-radius: 8px; padding: .25rem 1rem .5rem; margin: 1rem 0; }
section:target { border-color: #1f5fbf; box-shadow: 0 0 0 3px #c9dafc; }
h2 { font-size: 1.1rem; display: flex; flex-wrap: wrap; gap: .2rem .75rem; align-items: baseline; }
h2 .status { font-weight: normal; color: #4a5563; font-size: .95rem; }
code { font-family: ui-monospace, monospace; font-size: .92em; background: #eef1f5; padding: 0 .2em; border-radius: 3px; overflow-wrap: anywhere; }
a { color: #1f5fbf; }
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
<p>Every error is a problem (RFC 9457, <code>application/problem+json</code>) with a <code>code</code>, a
<code>request_id</code> and a <code>type</code> that links to its section below
(<code>{{.Path}}#seat_taken</code>). Switch on <code>code</code>; a code you do not know is handled by its
HTTP status. New codes may be added; none is removed or changes meaning within <code>/v1</code>.
The <a href="/docs">API reference</a> lists every operation.</p>
{{range .Types}}<section id="{{.Code}}" aria-labelledby="{{.Code}}-h">
<h2 id="{{.Code}}-h"><code>{{.Code}}</code>{{range .Statuses}} <span class="status">{{status .}}</span>{{end}}</h2>
<p>{{spans .Meaning}}</p>
<p><strong>What to do:</strong> {{spans .Do}}</p>
</section>
{{end}}</main>
</body>
</html>
`))

// spans escapes s and makes its `backtick` spans code.
func spans(s string) template.HTML {
	parts := strings.Split(s, "`")
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 {
			b.WriteString("<code>" + template.HTMLEscapeString(p) + "</code>")
		} else {
			b.WriteString(template.HTMLEscapeString(p))
		}
	}
	return template.HTML(b.String())
}

// problemsCSP allows the page nothing from elsewhere: its one style sheet
// is inline, it has no script.
const problemsCSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; style-src 'unsafe-inline'"

// RegisterProblems mounts the page documenting every problem code at path.
func RegisterProblems(mux *http.ServeMux, path, title string, types []ProblemType) {
	var body strings.Builder
	if err := problemsPage.Execute(&body, struct {
		Title, Path string
		Types       []ProblemType
	}{title, path, types}); err != nil {
		panic(err) // a fixed template over fixed values
	}
	html := []byte(body.String())
	mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", problemsCSP)
		h.Set("Cache-Control", "public, max-age=3600")
		_, _ = w.Write(html)
	})
}

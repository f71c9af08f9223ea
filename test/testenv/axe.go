package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// The accessibility check of the service's pages (the cabinet, the order
// page, the seat map, the example shop): axe-core, the engine behind most
// accessibility checkers, run in the page as a person's browser shows it,
// with the rules of WCAG 2.0, 2.1 and 2.2 at levels A and AA.
// scripts/axe.sh fetches it once (make test names it in AXE_CORE_JS); it
// is never served by the service.

var axeSource = sync.OnceValues(func() (string, error) {
	path := os.Getenv("AXE_CORE_JS")
	if path == "" {
		_, here, _, _ := runtime.Caller(0)
		out, err := exec.Command(filepath.Join(filepath.Dir(here), "..", "..", "scripts", "axe.sh")).Output()
		if err != nil {
			return "", fmt.Errorf("scripts/axe.sh: %w", err)
		}
		path = strings.TrimSpace(string(out))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("axe-core: %w", err)
	}
	return string(b), nil
})

// axeTags are the rule sets checked: every WCAG A and AA rule axe has.
var axeTags = []string{"wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"}

type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target  string `json:"target"`
		Summary string `json:"summary"`
	} `json:"nodes"`
}

// AxeViolations runs axe-core on the page open in ctx and returns one line
// per rule it breaks, with up to three of the elements that break it.
func AxeViolations(t *testing.T, ctx context.Context) []string {
	t.Helper()
	src, err := axeSource()
	if err != nil {
		t.Fatalf("the accessibility check needs axe-core: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof axe !== 'undefined' || (function () {`+src+`
	}).call(window) || true`)); err != nil {
		t.Fatalf("load axe-core: %v", err)
	}
	tags := `['` + strings.Join(axeTags, `', '`) + `']`
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]axeViolation](`axe.run(document, {runOnly: {type: 'tag', values: `+tags+`}, resultTypes: ['violations']})
	  .then(r => r.violations.map(v => ({id: v.id, impact: v.impact || '', help: v.help,
	    nodes: v.nodes.slice(0, 3).map(n => ({target: n.target.map(String).join(' '), summary: (n.failureSummary || '').replace(/\s+/g, ' ').slice(0, 300)}))})))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("run axe-core: %v", err)
	}
	var out []string
	for _, v := range got {
		var where []string
		for _, n := range v.Nodes {
			where = append(where, n.Target+" ("+n.Summary+")")
		}
		out = append(out, fmt.Sprintf("%s [%s]: %s: %s", v.ID, v.Impact, v.Help, strings.Join(where, "; ")))
	}
	return out
}

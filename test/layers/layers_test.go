// Package layers keeps the import graph the architecture the README draws:
// a package imports only its own layer or lower ones, the api's side never
// imports the worker's (nor the other way round), and the README's
// architecture table lists exactly the packages of each layer.
package layers_test

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// layers of the service, lowest first, each with its packages. A new
// package is placed here and in the README's table.
var layers = []struct {
	name     string
	packages []string
}{
	{"vocabulary", []string{"internal/states", "internal/errs", "internal/pricing", "internal/door", "internal/window", "internal/config"}},
	{"data", []string{"store", "store/migrations"}},
	{"adapters", []string{"internal/apikey", "internal/ratelimit", "internal/requestlog", "internal/metrics", "internal/mail",
		"internal/payment", "internal/delivery", "internal/delivery/email", "internal/seatmap", "internal/catalog", "internal/catalog/catalogfile",
		"internal/export", "workflows/contract"}},
	{"domain", []string{"internal/holds", "internal/orders", "internal/refunds", "internal/webhooks", "internal/report", "internal/checkin", "internal/organizer", "internal/distribution"}},
	{"wiring", []string{"internal/app"}},
	{"saga", []string{"activities", "workflows", "worker"}},
	{"edge", []string{"api", "api/request", "api/aggregator", "api/cabinet", "api/reference", "api/seatmapjs"}},
	{"entry", []string{"cmd/api", "cmd/worker", "cmd/ticketctl"}},
}

// side: the api process serves requests and starts workflows by name; the
// worker runs them. Neither links the other's code.
var side = map[string]string{
	"api": "api", "api/request": "api", "api/aggregator": "api", "api/reference": "api", "api/seatmapjs": "api", "api/cabinet": "api",
	"workflows": "worker", "activities": "worker", "worker": "worker", "internal/delivery/email": "worker",
}

// throughConcepts reach the data only through the concept packages
// (internal/report, internal/apikey, …), never the store itself.
var throughConcepts = []string{"api/cabinet"}

func layerOf() map[string]int {
	m := map[string]int{}
	for i, l := range layers {
		for _, p := range l.packages {
			m[p] = i
		}
	}
	return m
}

func TestImportsFollowTheLayers(t *testing.T) {
	layer := layerOf()
	// ./... from the root: the server's module only, not the Go SDK's
	// (sdk/go), a module of its own the server requires like a library.
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(p.ImportPath, "github.com/ticketsales/ticketsales/")
		if strings.HasPrefix(name, "test/") || strings.HasPrefix(name, "scripts/") {
			continue // harnesses and the release's tools may use anything
		}
		from, ok := layer[name]
		if !ok {
			t.Errorf("%s has no layer: place it in test/layers and the README's table", name)
			continue
		}
		checked++
		if slices.Contains(throughConcepts, name) && slices.Contains(p.Imports, "github.com/ticketsales/ticketsales/store") {
			t.Errorf("%s imports store: it reads and acts through the concept packages", name)
		}
		for _, imp := range p.Imports {
			dep, ours := strings.CutPrefix(imp, "github.com/ticketsales/ticketsales/")
			if !ours || strings.HasPrefix(dep, "sdk/go") {
				continue // a library, the Go SDK included (its own module, importing nothing of ours)
			}
			to, ok := layer[dep]
			switch {
			case !ok:
				t.Errorf("%s imports %s, which has no layer", name, dep)
			case to > from:
				t.Errorf("%s (%s) imports %s (%s): a lower layer must not import a higher one", name, layers[from].name, dep, layers[to].name)
			case side[name] != "" && side[dep] != "" && side[name] != side[dep]:
				t.Errorf("%s (the %s's) imports %s (the %s's)", name, side[name], dep, side[dep])
			}
		}
	}
	if checked < len(layer) {
		t.Errorf("checked %d packages of %d placed: go list saw fewer than expected", checked, len(layer))
	}
}

// The README's architecture table is a row per package group: "| layer |
// packages | what they hold |", the layer's cell empty on the rows after
// its first, the highest layer first. It must list exactly the packages of
// each layer.
func TestReadmeTableIsTheLayers(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n| layer | package | holds |\n")
	if !ok {
		t.Fatal("README.md has no architecture table (| layer | package | holds |)")
	}
	pkg := regexp.MustCompile("`([a-z][a-z0-9/]*)`")
	var got []struct {
		name     string
		packages []string
	}
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		name := strings.TrimSpace(cells[1])
		if name == "tests" {
			break // the harnesses under test/ are outside the layers
		}
		if name != "" {
			got = append(got, struct {
				name     string
				packages []string
			}{name: name})
		} else if len(got) == 0 {
			t.Fatalf("the table's first row names no layer: %q", line)
		}
		for _, m := range pkg.FindAllStringSubmatch(cells[2], -1) {
			got[len(got)-1].packages = append(got[len(got)-1].packages, m[1])
		}
	}
	slices.Reverse(got)
	if len(got) != len(layers) {
		t.Fatalf("README names %d layers, test/layers %d", len(got), len(layers))
	}
	for i, l := range layers {
		want := slices.Sorted(slices.Values(l.packages))
		have := slices.Sorted(slices.Values(got[i].packages))
		if got[i].name != l.name || !slices.Equal(have, want) {
			t.Errorf("README layer %d: %s %v; test/layers: %s %v", i+1, got[i].name, have, l.name, want)
		}
	}
}

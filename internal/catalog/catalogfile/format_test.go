package catalogfile_test

import (
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
)

var update = flag.Bool("update", false, "rewrite docs/catalog-format.md's field reference")

// acceptedPaths lists every field path the importer decodes, by walking the
// structs' json tags on their own (not through Format).
func acceptedPaths() []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "" || name == "-" {
				continue
			}
			p := prefix + name
			out = append(out, p)
			ft := f.Type
			switch {
			case ft == reflect.TypeFor[catalogfile.SeatList]():
				walk(reflect.TypeFor[catalogfile.Seat](), p+"[].")
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem(), p+"[].")
			case ft.Kind() == reflect.Struct && ft.PkgPath() == reflect.TypeFor[catalogfile.File]().PkgPath():
				walk(ft, p+".")
			}
		}
	}
	walk(reflect.TypeFor[catalogfile.File](), "")
	return out
}

func TestFormatDocumentsEveryField(t *testing.T) {
	documented := map[string]catalogfile.FieldDoc{}
	for _, s := range catalogfile.Format() {
		for _, f := range s.Fields {
			documented[f.Path] = f
		}
	}
	paths := acceptedPaths()
	if len(paths) < 40 {
		t.Fatalf("found only %d fields: the walk is broken", len(paths))
	}
	for _, p := range paths {
		f, ok := documented[p]
		switch {
		case !ok:
			t.Errorf("%s is not documented", p)
		case f.Doc == "" || f.Need == "" || f.Type == "":
			t.Errorf("%s lacks its meaning, type or need: %+v", p, f)
		}
	}
	if len(documented) != len(paths) {
		t.Errorf("documented %d fields, the importer accepts %d", len(documented), len(paths))
	}
}

// The doc's field reference is generated from the structs: run
// go test ./internal/catalog/catalogfile -run TestFormatDoc -update after
// changing a field.
func TestFormatDocMatchesTheImporter(t *testing.T) {
	const file = "../../../docs/catalog-format.md"
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- fields:begin -->\n", "<!-- fields:end -->"
	head, rest, ok1 := strings.Cut(string(doc), begin)
	_, tail, ok2 := strings.Cut(rest, end)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the field markers", file)
	}
	want := head + begin + catalogfile.FormatMarkdown() + end + tail
	if *update {
		if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(doc) != want {
		t.Fatalf("%s's field reference is out of date: run go test ./internal/catalog/catalogfile -run TestFormatDoc -update", file)
	}
	for _, p := range acceptedPaths() {
		if !strings.Contains(string(doc), "| `"+p+"` |") {
			t.Errorf("the doc lacks %s", p)
		}
	}
}

// The example is valid and shows every field at least once.
func TestExampleIsValidAndUsesEveryField(t *testing.T) {
	if _, err := catalogfile.Check(catalogfile.Example(), noKnown()); err != nil {
		t.Fatalf("the example file is refused: %v", err)
	}
	var v any
	if err := json.Unmarshal(catalogfile.Example(), &v); err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	var walk func(v any, prefix string)
	walk = func(v any, prefix string) {
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				used[prefix+k] = true
				if k != "rows" || !strings.HasSuffix(prefix, "categories[].") { // rows of a category: zone ids, not fields
					walk(val, prefix+k+".")
				}
			}
		case []any:
			for _, item := range x {
				walk(item, strings.TrimSuffix(prefix, ".")+"[].")
			}
		}
	}
	walk(v, "")
	for _, p := range acceptedPaths() {
		if !used[p] {
			t.Errorf("the example does not show %s", p)
		}
	}
}

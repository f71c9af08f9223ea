package catalogfile

import (
	_ "embed"
	"fmt"
	"reflect"
	"strings"
)

//go:embed example.json
var example []byte

// Example is a complete catalog file: a seated, a general admission and a
// scheduled event in one venue. The cabinet offers it for download.
func Example() []byte { return example }

// Section is one kind of object of a catalog file with its fields, as the
// format page and docs/catalog-format.md list them.
type Section struct {
	// Path is where the objects stand ("events[].categories[]"; "" for
	// the file itself), Title what they are.
	Path, Title string
	Fields      []FieldDoc
}

// FieldDoc is one field: its name, full path, type, whether it is required
// and what it means, all from the struct's tags.
type FieldDoc struct {
	Name, Path, Type, Need, Doc string
}

// Format lists every object and field of a catalog file, from the structs
// the importer decodes into: the documentation cannot miss a field.
func Format() []Section {
	var out []Section
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		sec := Section{Path: path, Title: sectionTitle(t)}
		var nested []func()
		for _, f := range reflect.VisibleFields(t) {
			name := jsonName(f)
			if name == "" {
				continue
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			sec.Fields = append(sec.Fields, FieldDoc{Name: name, Path: p, Type: docType(f.Type, f), Need: f.Tag.Get("need"), Doc: f.Tag.Get("doc")})
			switch ft := f.Type; {
			case ft == seatListType:
				nested = append(nested, func() { walk(reflect.TypeFor[Seat](), p+"[]") })
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				nested = append(nested, func() { walk(ft.Elem(), p+"[]") })
			case ft.Kind() == reflect.Struct && ft != timeType:
				nested = append(nested, func() { walk(ft, p) })
			}
		}
		out = append(out, sec)
		for _, n := range nested {
			n()
		}
	}
	walk(reflect.TypeFor[File](), "")
	return out
}

func sectionTitle(t reflect.Type) string {
	n := noun(t)
	if t == reflect.TypeFor[File]() {
		return "The file"
	}
	n = strings.TrimPrefix(strings.TrimPrefix(n, "a "), "an ")
	return strings.ToUpper(n[:1]) + n[1:]
}

// docType names a field's type for the documentation.
func docType(t reflect.Type, sf reflect.StructField) string {
	switch {
	case t == timeType:
		return "date-time"
	case t == seatListType:
		return "count or list"
	case t == pointType:
		return "point [x, y]"
	case t.Kind() == reflect.Slice && t.Elem() == pointType:
		return "list of points"
	case sf.Tag.Get("unit") == "minor":
		return "money (minor units)"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return docType(t.Elem(), sf)
	case reflect.Struct:
		return "object"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			return "list of objects"
		}
		return "list of " + docType(t.Elem(), reflect.StructField{})
	case reflect.Map:
		return "object of lists"
	case reflect.String:
		return "text"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "whole number"
	case reflect.Float64:
		return "number"
	}
	return t.Kind().String()
}

// FormatMarkdown is the field reference of docs/catalog-format.md.
func FormatMarkdown() string {
	var b strings.Builder
	for i, s := range Format() {
		if i > 0 {
			b.WriteString("\n")
		}
		if s.Path == "" {
			fmt.Fprintf(&b, "### %s\n\n", s.Title)
		} else {
			fmt.Fprintf(&b, "### %s: `%s`\n\n", s.Title, s.Path)
		}
		b.WriteString("| Field | Type | Required | Meaning |\n|---|---|---|---|\n")
		for _, f := range s.Fields {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Path, f.Type, f.Need, strings.ReplaceAll(f.Doc, "|", "\\|"))
		}
	}
	return b.String()
}

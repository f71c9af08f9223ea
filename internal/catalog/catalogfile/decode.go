package catalogfile

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// decoder fills a File from the scanned nodes, collecting every wrong type,
// unknown or repeated field with its path, in the organizer's words.
type decoder struct {
	errs Errors
	data []byte
}

// add reports a problem of the file's structure (an unknown or repeated
// field) at off.
func (d *decoder) add(path string, off int, format string, args ...any) {
	line, _ := position(d.data, off)
	d.errs = append(d.errs, Error{Path: path, Line: line, Reason: fmt.Sprintf(format, args...)})
}

// refuse reports a value at path that could not be decoded.
func (d *decoder) refuse(path string, off int, format string, args ...any) {
	d.add(path, off, format, args...)
	d.errs[len(d.errs)-1].refused = true
}

var (
	timeType     = reflect.TypeFor[time.Time]()
	seatListType = reflect.TypeFor[SeatList]()
	pointType    = reflect.TypeFor[Point]()
)

// value decodes n into v (of the field sf: its tags tell money from other
// whole numbers). A wrong value leaves v as it was and adds an error.
func (d *decoder) value(n *node, v reflect.Value, path string, sf reflect.StructField) {
	if n.kind == 'n' {
		return // null: as if the field were absent
	}
	t := v.Type()
	wrong := func() {
		d.refuse(path, n.off, "expected %s, not %s", expected(t, sf), shown(n))
	}
	switch {
	case t == timeType:
		if n.kind != '"' {
			wrong()
			return
		}
		s := unquote(n)
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			d.refuse(path, n.off, "expected %s, not %q", expected(t, sf), clip(s))
			return
		}
		if at.Year() < minYear || at.Year() > maxYear {
			// Year 0001 is a typo, and Postgres refuses some such years.
			d.refuse(path, n.off, "expected a date-time between the years %d and %d, not %q", minYear, maxYear, clip(s))
			return
		}
		v.Set(reflect.ValueOf(at))
	case t == seatListType:
		d.seats(n, v.Addr().Interface().(*SeatList), path, sf)
	case t.Kind() == reflect.Pointer:
		p := reflect.New(t.Elem())
		before := len(d.errs)
		d.value(n, p.Elem(), path, sf)
		if len(d.errs) == before {
			v.Set(p)
		}
	case t.Kind() == reflect.Struct:
		if n.kind != '{' {
			wrong()
			return
		}
		d.object(n, v, path)
	case t.Kind() == reflect.Slice:
		if n.kind != '[' {
			wrong()
			return
		}
		s := reflect.MakeSlice(t, len(n.vals), len(n.vals))
		for i, item := range n.vals {
			d.value(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i), sf)
		}
		v.Set(s)
	case t.Kind() == reflect.Map:
		if n.kind != '{' {
			wrong()
			return
		}
		m := reflect.MakeMapWithSize(t, len(n.keys))
		seen := map[string]bool{}
		for i, k := range n.keys {
			if seen[k] {
				d.add(path, n.keyOffs[i], "%q is given twice", k)
				continue
			}
			if strings.ContainsRune(k, 0) {
				d.refuse(path, n.keyOffs[i], "a name must not contain the NUL character (\\u0000)")
				continue
			}
			seen[k] = true
			e := reflect.New(t.Elem()).Elem()
			d.value(n.vals[i], e, path+"."+k, sf)
			m.SetMapIndex(reflect.ValueOf(k), e)
		}
		v.Set(m)
	case t.Kind() == reflect.String:
		if n.kind != '"' {
			wrong()
			return
		}
		if s, ok := d.text(n, path); ok {
			v.SetString(s)
		}
	case t.Kind() == reflect.Bool:
		if n.kind != 'b' {
			wrong()
			return
		}
		v.SetBool(n.raw[0] == 't')
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
		i, ok := whole(n)
		if !ok || v.OverflowInt(i) {
			wrong()
			return
		}
		v.SetInt(i)
	case t.Kind() == reflect.Float64:
		if n.kind != '0' {
			wrong()
			return
		}
		f, err := strconv.ParseFloat(string(n.raw), 64)
		if err != nil {
			wrong()
			return
		}
		v.SetFloat(f)
	default:
		panic("catalogfile: no decoder for " + t.String())
	}
}

// object decodes an object's members into the struct v by their json
// names: a name the struct lacks or one given twice is an error.
func (d *decoder) object(n *node, v reflect.Value, path string) {
	fields := jsonFields(v.Type())
	seen := map[string]bool{}
	for i, k := range n.keys {
		f, ok := fields[k]
		switch {
		case !ok:
			d.add(path, n.keyOffs[i], "unknown field %q; %s has: %s", k, noun(v.Type()), strings.Join(fieldNames(v.Type()), ", "))
			continue
		case seen[k]:
			d.add(path+"."+k, n.keyOffs[i], "the field %q is given twice", k)
			continue
		}
		seen[k] = true
		d.value(n.vals[i], v.FieldByIndex(f.Index), path+"."+k, f)
	}
}

// seats decodes a row's seats: a count, or a list of seat numbers (whole
// numbers or text) and seat objects.
func (d *decoder) seats(n *node, s *SeatList, path string, sf reflect.StructField) {
	switch n.kind {
	case '0':
		c, ok := whole(n)
		switch {
		case !ok:
			d.refuse(path, n.off, "expected %s, not %s", expected(seatListType, sf), shown(n))
			return
		case c < 1 || c > maxSeatsPerRow:
			d.refuse(path, n.off, "a row has 1 to %d seats, not %d", maxSeatsPerRow, c)
			return
		}
		s.Count, s.IsCount = int(c), true
	case '[':
		s.Seats = make([]Seat, 0, len(n.vals))
		for i, item := range n.vals {
			p := fmt.Sprintf("%s[%d]", path, i)
			var seat Seat
			switch item.kind {
			case '"':
				seat.Number, _ = d.text(item, p)
			case '0':
				num, ok := whole(item)
				if !ok || num < 0 {
					d.refuse(p, item.off, "a seat number is a whole number or text, not %s", shown(item))
				}
				if ok && num >= 0 {
					seat.Number = strconv.FormatInt(num, 10)
				}
			case '{':
				d.object(item, reflect.ValueOf(&seat).Elem(), p)
			default:
				d.refuse(p, item.off, "expected a seat: a number, text or {\"number\": ..., \"x\": ..., \"y\": ..., \"rank\": ...}, not %s", shown(item))
			}
			s.Seats = append(s.Seats, seat)
		}
	default:
		d.refuse(path, n.off, "expected %s, not %s", expected(seatListType, sf), shown(n))
	}
}

// Dates a catalog file may hold.
const minYear, maxYear = 2000, 2100

// text reads a string node; the NUL character is refused (Postgres text
// cannot hold it, and no name needs it).
func (d *decoder) text(n *node, path string) (string, bool) {
	s := unquote(n)
	if strings.ContainsRune(s, 0) {
		d.refuse(path, n.off, "text must not contain the NUL character (\\u0000)")
		return "", false
	}
	return s, true
}

// whole reads a number node as a whole number (12 or 12.0, not 12.5).
func whole(n *node) (int64, bool) {
	if n.kind != '0' {
		return 0, false
	}
	if i, err := strconv.ParseInt(string(n.raw), 10, 64); err == nil {
		return i, true
	}
	f, err := strconv.ParseFloat(string(n.raw), 64)
	if err != nil || f != float64(int64(f)) || f > 1<<53 || f < -(1<<53) {
		return 0, false
	}
	return int64(f), true
}

func unquote(n *node) string {
	var s string
	_ = json.Unmarshal(n.raw, &s) // the scanner checked it
	return s
}

// shown names a wrong value briefly: its kind and, for scalars, itself.
func shown(n *node) string {
	switch n.kind {
	case '{':
		return "an object {...}"
	case '[':
		return "a list [...]"
	case '"':
		return fmt.Sprintf("the text %q", clip(unquote(n)))
	case 'b':
		return string(n.raw)
	default:
		return clip(string(n.raw))
	}
}

func clip(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

// jsonFields maps a struct's json names to its fields.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(t) {
		if name := jsonName(f); name != "" {
			out[name] = f
		}
	}
	return out
}

func fieldNames(t reflect.Type) []string {
	var names []string
	for _, f := range reflect.VisibleFields(t) {
		if name := jsonName(f); name != "" {
			names = append(names, name)
		}
	}
	return names
}

func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// noun names what a struct is in a file, for "unknown field" messages.
func noun(t reflect.Type) string {
	if n, ok := nouns[t]; ok {
		return n
	}
	return "this object"
}

var nouns = map[reflect.Type]string{
	reflect.TypeFor[File]():          "the catalog file",
	reflect.TypeFor[City]():          "a city",
	reflect.TypeFor[Venue]():         "a venue",
	reflect.TypeFor[Scheme]():        "a scheme",
	reflect.TypeFor[Stage]():         "a stage",
	reflect.TypeFor[Zone]():          "a zone",
	reflect.TypeFor[Row]():           "a row",
	reflect.TypeFor[Seat]():          "a seat",
	reflect.TypeFor[Event]():         "an event",
	reflect.TypeFor[Fee]():           "a fee",
	reflect.TypeFor[Category]():      "a category",
	reflect.TypeFor[PriceChange]():   "a price change",
	reflect.TypeFor[Session]():       "a session",
	reflect.TypeFor[SalesWindow]():   "a sales window",
	reflect.TypeFor[Channel]():       "a channel",
	reflect.TypeFor[ChannelMember](): "a channel's application",
	reflect.TypeFor[Allocation]():    "an allocation",
	reflect.TypeFor[SeatSelector]():  "a seat selection",
	reflect.TypeFor[RowRange]():      "a row range",
	reflect.TypeFor[Quantity]():      "a quantity",
}

// expected says what a field of type t holds, as an error message needs
// it ("expected a whole number ...").
func expected(t reflect.Type, sf reflect.StructField) string {
	switch {
	case t == timeType:
		return "a date-time with its UTC offset, like 2026-12-01T19:00:00+03:00"
	case t == seatListType:
		return fmt.Sprintf("a count of seats (1 to %d) or a list of seats", maxSeatsPerRow)
	case t == pointType:
		return "a point [x, y]"
	case t.Kind() == reflect.Slice && t.Elem() == pointType:
		return "a list of points [[x, y], ...]"
	case sf.Tag.Get("unit") == "minor":
		return "a whole number of minor currency units (kopecks: 1500.00 is 150000)"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return expected(t.Elem(), sf)
	case reflect.Struct:
		return "an object {...}"
	case reflect.Slice:
		return "a list [...]"
	case reflect.Map:
		return "an object {...}"
	case reflect.String:
		return "text in double quotes"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.Float64:
		return "a number"
	}
	return t.Kind().String()
}

// sortByLine sorts errors by line, keeping the order of one line's.
func sortByLine(es Errors) {
	slices.SortStableFunc(es, func(a, b Error) int { return a.Line - b.Line })
}

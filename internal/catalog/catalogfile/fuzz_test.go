package catalogfile_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/store"
)

// fuzzCatalogHead is a city and a venue with one small scheme; the seeds
// append events (and variations) to it.
const fuzzCatalogHead = `{"cities": [{"ref": "c", "name": "City"}],
 "venues": [{"ref": "v", "name": "Venue", "city": "c", "timezone": "Europe/Moscow",
  "schemes": [{"ref": "s", "name": "Hall", "zones": [
   {"id": "p", "name": "Stalls", "rows": [{"row": "1", "seats": 3}, {"row": "2", "seats": ["1", 2, {"number": "3", "x": 1.5, "y": -2}]}]},
   {"id": "b", "name": "Balcony", "rows": [{"row": "A", "seats": [{"number": "1"}, {"number": "2", "x": 0}]}]}]}]}],
 "events": [`

func fuzzCatalog(events string) string { return fuzzCatalogHead + events + "]}" }

const fuzzSchemeEvent = `{"ref": "e", "title": "Show", "slug": "show", "status": "published",
  "starts_at": "2030-01-01T19:00:00+03:00", "venue": "v", "scheme": "s",
  "fee": {"mode": "separate", "rate_bp": 1000, "min_fee": 5000},
  "categories": [{"ref": "st", "name": "Stalls", "price": 300000, "zones": ["p"],
    "price_changes": [{"from": "2029-12-01T00:00:00Z", "price": 350000}, {"after_sold": 2, "price": 400000}]},
   {"ref": "vip", "name": "VIP", "price": 500000, "rows": {"p": ["1"]}},
   {"ref": "bal", "name": "Balcony", "price": 100000, "zones": ["b"]}]}`

// fuzzSeeds are the checked-in-in-code seeds of FuzzCatalogFile: the demo
// catalog, valid files of every shape, files with each kind of error, and
// truncated JSON.
func fuzzSeeds() []string {
	demo := string(catalogfile.Demo(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)))
	seeds := []string{
		demo,
		`{}`,
		`{"cities": [], "venues": [], "events": []}`,
		`{"cities": [{"ref": "msk", "name": "Moscow"}]}`,
		fuzzCatalog(fuzzSchemeEvent),
		// General admission with capacity; sessions with a shared category.
		fuzzCatalog(`{"ref": "ga", "title": "GA", "slug": "ga", "status": "draft", "starts_at": "2030-01-01T20:00:00Z",
		  "venue": "v", "fee": {"mode": "included", "rate_bp": 0, "min_fee": 0},
		  "categories": [{"ref": "std", "name": "Standing", "price": 0, "capacity": 200}]},
		 {"ref": "expo", "title": "Expo", "slug": "expo", "status": "archived", "starts_at": "2030-01-01T10:00:00+03:00",
		  "venue": "v", "fee": {"mode": "separate", "rate_bp": 10000, "min_fee": 10000000000},
		  "categories": [{"ref": "a", "name": "Adult", "price": 10000000000, "price_changes": [{"after_sold": 0, "price": 0}]}],
		  "sessions": [{"ref": "s1", "starts_at": "2030-01-01T10:00:00+03:00", "capacity": 1},
		               {"ref": "s2", "starts_at": "2030-01-01T14:00:00+03:00", "capacity": 1000000}]}`),
		// Unknown fields at several depths.
		`{"cities": [], "colour": 1}`,
		`{"cities": [{"ref": "c", "name": "C", "population": 5}]}`,
		fuzzCatalog(strings.Replace(fuzzSchemeEvent, `"price": 100000`, `"price": 100000, "colour": "red"`, 1)),
		strings.Replace(fuzzCatalog(""), `{"number": "1"}`, `{"number": "1", "z": 3}`, 1),
		// Bad references.
		fuzzCatalog(strings.Replace(fuzzSchemeEvent, `"venue": "v"`, `"venue": "ghost"`, 1)),
		fuzzCatalog(strings.Replace(fuzzSchemeEvent, `"scheme": "s"`, `"scheme": "nope"`, 1)),
		fuzzCatalog(strings.Replace(fuzzSchemeEvent, `"zones": ["b"]`, `"zones": ["b", "p", "zz"]`, 1)),
		fuzzCatalog(strings.Replace(fuzzSchemeEvent, `{"p": ["1"]}`, `{"p": ["1", "9"], "q": ["1"]}`, 1)),
		strings.Replace(fuzzCatalog(""), `"city": "c"`, `"city": "nowhere"`, 1),
		// Seats as counts, lists and objects, valid and not.
		strings.Replace(fuzzCatalog(""), `"seats": 3`, `"seats": 0`, 1),
		strings.Replace(fuzzCatalog(""), `"seats": 3`, `"seats": -1`, 1),
		strings.Replace(fuzzCatalog(""), `"seats": 3`, `"seats": 1001`, 1),
		strings.Replace(fuzzCatalog(""), `"seats": 3`, `"seats": 1.5`, 1),
		strings.Replace(fuzzCatalog(""), `"seats": 3`, `"seats": "3"`, 1),
		strings.Replace(fuzzCatalog(""), `"seats": 3`, `"seats": null`, 1),
		strings.Replace(fuzzCatalog(""), `"seats": 3`, `"seats": []`, 1),
		strings.Replace(fuzzCatalog(""), `"seats": 3`, `"seats": [1, "1"]`, 1),
		strings.Replace(fuzzCatalog(""), `"seats": 3`, `"seats": [-1, 1e3, 4294967296]`, 1),
		strings.Replace(fuzzCatalog(""), `"seats": 3`, `"seats": ["a-b", "", "x|y", null, true]`, 1),
		strings.Replace(fuzzCatalog(""), `"seats": 3`, `"seats": [{"number": 5}, {"x": 1}, {"number": "1", "x": "a"}]`, 1),
		strings.Replace(fuzzCatalog(""), `"seats": 3`, `"seats": [{"number": "1", "x": 1e400}]`, 1),
		strings.Replace(fuzzCatalog(""), `"id": "p"`, `"id": "b"`, 1),
		strings.Replace(fuzzCatalog(""), `"row": "2"`, `"row": "1"`, 1),
		strings.Replace(fuzzCatalog(""), `"row": "2"`, `"row": "2-3"`, 1),
		// Price changes: neither or both of from/after_sold, negative values.
		fuzzCatalog(strings.Replace(fuzzSchemeEvent, `{"after_sold": 2, "price": 400000}`,
			`{"price": 1}, {"from": "2030-01-01T00:00:00Z", "after_sold": 1, "price": 2}, {"after_sold": -1, "price": -1}`, 1)),
		fuzzCatalog(strings.Replace(fuzzSchemeEvent, `"from": "2029-12-01T00:00:00Z"`, `"from": "yesterday"`, 1)),
		// Sessions on an event with a scheme; bad sessions.
		fuzzCatalog(strings.Replace(fuzzSchemeEvent, `"categories"`,
			`"sessions": [{"ref": "x", "starts_at": "2030-01-01T10:00:00Z", "capacity": 0}, {"ref": "x", "capacity": 1}], "categories"`, 1)),
		// Bad field values: fee, status, slug, time zone, refs.
		fuzzCatalog(strings.NewReplacer(`"mode": "separate"`, `"mode": "both"`, `"rate_bp": 1000`, `"rate_bp": 10001`,
			`"slug": "show"`, `"slug": "Show Me"`, `"status": "published"`, `"status": "live"`).Replace(fuzzSchemeEvent)),
		strings.Replace(fuzzCatalog(""), `"timezone": "Europe/Moscow"`, `"timezone": "../../etc/passwd"`, 1),
		strings.Replace(fuzzCatalog(""), `"ref": "c"`, `"ref": "-bad ref-"`, 1),
		// Type errors and trailing data.
		`{"events": [{"ref": 5}]}`,
		`{"events": [{"categories": [{"price": 1.5}]}]}`,
		`{"events": [{"starts_at": "tomorrow"}]}`,
		`{"cities": {}}`,
		`[]`,
		`null`,
		`{} {}`,
		`{}]`,
		"",
		"\xff\xfe{",
		`{"cities": [{"ref": "c", "name": "\ud800"}]}`,
	}
	// Truncated JSON: the demo and a small file cut at a few places.
	for _, s := range []string{demo, fuzzCatalog(fuzzSchemeEvent)} {
		for _, n := range []int{1, len(s) / 3, len(s) / 2, len(s) - 1} {
			seeds = append(seeds, s[:n])
		}
	}
	return seeds
}

var hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

// FuzzCatalogFile feeds arbitrary files to Parse and Plan (with an empty
// store) and checks what every caller relies on: no panic, errors that say
// where and why, a consistent plan, and the same plan every time (re-import
// must change nothing).
func FuzzCatalogFile(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		plan, err := parseAndPlan(data)
		checkErrors(t, data, err)
		// Check (what imports run) reports the same file with decoding and
		// validation errors together, all in the organizer's words.
		_, cerr := catalogfile.Check(data, store.KnownCatalog{Cities: map[string]bool{}, Venues: map[string]map[string][]store.PlanSeat{}})
		checkErrors(t, data, cerr)
		if (err == nil) != (cerr == nil) {
			t.Fatalf("Parse+Plan and Check disagree: %v / %v", err, cerr)
		}
		if err == nil {
			checkPlan(t, plan)
		}
		plan2, err2 := parseAndPlan(data)
		if !reflect.DeepEqual(plan, plan2) {
			t.Fatalf("Parse+Plan is not deterministic:\nfirst  %+v\nsecond %+v", plan, plan2)
		}
		if !reflect.DeepEqual(err, err2) {
			t.Fatalf("Parse+Plan errors are not deterministic:\nfirst  %v\nsecond %v", err, err2)
		}
	})
}

func parseAndPlan(data []byte) (*store.CatalogPlan, error) {
	file, err := catalogfile.Parse(data)
	if err != nil {
		if file != nil {
			return nil, errors.New("Parse returned a file together with an error")
		}
		return nil, err
	}
	if file == nil {
		return nil, errors.New("Parse returned neither a file nor an error")
	}
	// Parse refuses trailing data, so what it accepts is one JSON value.
	if !json.Valid(data) {
		return nil, errors.New("Parse accepted a file that is not one well-formed JSON value")
	}
	return catalogfile.Plan(file, store.KnownCatalog{Cities: map[string]bool{}, Venues: map[string]map[string][]store.PlanSeat{}})
}

func checkErrors(t *testing.T, data []byte, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var errs catalogfile.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error is not catalogfile.Errors: %T %v", err, err)
	}
	if len(errs) == 0 {
		t.Fatal("an empty catalogfile.Errors was returned as an error")
	}
	for i, e := range errs {
		if e.Path == "" || !strings.HasPrefix(e.Path, "$") {
			t.Errorf("error %d: path %q does not start with $ (%v)", i, e.Path, e)
		} else if !pathInSchema(e.Path) {
			t.Errorf("error %d: path %q names no place of a catalog file (%v)", i, e.Path, e)
		}
		if goWords.MatchString(e.Reason) {
			t.Errorf("error %d at %s speaks Go: %s", i, e.Path, e.Reason)
		}
		if strings.TrimSpace(e.Reason) == "" {
			t.Errorf("error %d at %s: empty reason", i, e.Path)
		}
		if lines := bytes.Count(data, []byte("\n")) + 1; e.Line < 0 || e.Line > lines {
			t.Errorf("error %d at %s: line %d outside the file's %d lines", i, e.Path, e.Line, lines)
		}
	}
}

var (
	seatListType = reflect.TypeFor[catalogfile.SeatList]()
	seatType     = reflect.TypeFor[catalogfile.Seat]()
	indexSuffix  = regexp.MustCompile(`\[[0-9]+\]$`)
)

// pathInSchema tells whether an error path ("$", "$.events[0].fee.mode",
// "$.venues.schemes.zones" from the decoder, "$...rows.<zone>[1]") follows the
// fields of File: a path elsewhere sends the organizer to a place that does
// not exist.
func pathInSchema(path string) bool {
	rest, ok := strings.CutPrefix(path, "$")
	if !ok {
		return false
	}
	typ := reflect.TypeFor[catalogfile.File]()
	for rest != "" {
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		switch {
		case rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			if end < 2 || strings.Trim(rest[1:end], "0123456789") != "" {
				return false
			}
			switch {
			case typ == seatListType:
				typ = seatType
			case typ.Kind() == reflect.Slice:
				typ = typ.Elem()
			default:
				return false
			}
			rest = rest[end+1:]
		case rest[0] == '.' && (typ == seatListType || typ.Kind() == reflect.Slice):
			// The decoder's paths leave out indices.
			if typ == seatListType {
				typ = seatType
			} else {
				typ = typ.Elem()
			}
		case rest[0] == '.' && typ.Kind() == reflect.Map:
			// A map key (a zone id) may hold any character; only an index
			// may follow it.
			key := indexSuffix.ReplaceAllString(rest[1:], "")
			typ, rest = typ.Elem(), rest[1+len(key):]
		case rest[0] == '.' && typ.Kind() == reflect.Struct && typ != seatListType:
			name := rest[1:]
			if i := strings.IndexAny(name, ".["); i >= 0 {
				name = name[:i]
			}
			field, found := fieldByJSONName(typ, name)
			if !found {
				return false
			}
			typ, rest = field, rest[1+len(name):]
		default:
			return false
		}
	}
	return true
}

func fieldByJSONName(typ reflect.Type, name string) (reflect.Type, bool) {
	for i := range typ.NumField() {
		f := typ.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == name && tag != "" && tag != "-" {
			return f.Type, true
		}
	}
	return nil, false
}

func checkPlan(t *testing.T, plan *store.CatalogPlan) {
	t.Helper()
	if plan == nil {
		t.Fatal("Plan returned neither a plan nor an error")
	}
	schemes := map[string]map[string]bool{} // venue ref + "\x00" + scheme ref → seat ids
	for _, v := range plan.Venues {
		for _, s := range v.Schemes {
			ids := map[string]bool{}
			for _, seat := range s.Seats {
				if want := seat.ZoneID + "-" + seat.Row + "-" + seat.Number; seat.SeatID != want {
					t.Errorf("venue %q scheme %q: seat id %q, want %q", v.Ref, s.Ref, seat.SeatID, want)
				}
				if ids[seat.SeatID] {
					t.Errorf("venue %q scheme %q: duplicate seat id %q", v.Ref, s.Ref, seat.SeatID)
				}
				ids[seat.SeatID] = true
			}
			schemes[v.Ref+"\x00"+s.Ref] = ids
			if !json.Valid(s.Geometry) {
				t.Errorf("venue %q scheme %q: geometry is not valid JSON: %q", v.Ref, s.Ref, s.Geometry)
			}
			if !hex32.MatchString(s.ETag) {
				t.Errorf("venue %q scheme %q: ETag %q is not 32 hex characters", v.Ref, s.Ref, s.ETag)
			}
			if sum := sha256.Sum256(s.Geometry); s.ETag != hex.EncodeToString(sum[:16]) {
				t.Errorf("venue %q scheme %q: ETag %q is not the geometry's hash", v.Ref, s.Ref, s.ETag)
			}
		}
	}
	for _, e := range plan.Events {
		cats := map[string]bool{}
		for _, c := range e.Categories {
			cats[c.Ref] = true
		}
		inScheme := schemes[e.VenueRef+"\x00"+e.SchemeRef]
		if e.SchemeRef == "" && len(e.Seats) > 0 {
			t.Errorf("event %q has no scheme but %d seats", e.Ref, len(e.Seats))
		}
		seen := map[string]bool{}
		for _, s := range e.Seats {
			if !cats[s.CategoryRef] {
				t.Errorf("event %q: seat %q has category %q, not one of the event's", e.Ref, s.SeatID, s.CategoryRef)
			}
			if !inScheme[s.SeatID] {
				t.Errorf("event %q: seat %q is not a seat of scheme %q of venue %q", e.Ref, s.SeatID, e.SchemeRef, e.VenueRef)
			}
			if seen[s.SeatID] {
				t.Errorf("event %q: seat %q listed twice", e.Ref, s.SeatID)
			}
			seen[s.SeatID] = true
		}
	}
}

package catalogfile_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/store"
)

// goWords are what a raw Go decoding error says: an organizer must never
// read them.
var goWords = regexp.MustCompile(`(?i)struct|\bgo\b|unmarshal|catalogfile\.|json:|time\.time|int64|float64|\[\]|map\[|invalid character|looking for beginning`)

func noKnown() store.KnownCatalog {
	return store.KnownCatalog{Cities: map[string]bool{}, Venues: map[string]map[string][]store.PlanSeat{}}
}

// manyErrors has one problem of each kind, each on its own line.
const manyErrors = `{
  "cities": [{"ref": "msk", "name": "Moscow", "colour": "red"}],
  "venues": [{"ref": "hall", "name": "Hall", "city": "spb",
    "timezone": "Mars/Olympus",
    "schemes": [{"ref": "main", "name": "Main", "zones": [
      {"id": "p", "name": "Stalls", "rows": [{"row": "1", "seats": "many"}]}, {"id": "b", "name": "Balcony", "rows": [{"row": "1", "seats": 2}]}]}]}],
  "events": [
    {"ref": "e1", "slug": "e1", "status": "live",
     "starts_at": "2026-12-01 19:00",
     "venue": "hall", "scheme": "main", "fee": {"mode": "separate", "rate_bp": 1000, "min_fee": 0},
     "categories": [{"ref": "c", "name": "C", "price": "1500.00", "zones": ["nope"]}]},
    {"ref": "e2", "title": "GA", "slug": "ga", "status": "published", "starts_at": "2026-12-01T19:00:00+03:00",
     "venue": "ghost", "fee": {"mode": "included"}, "reentry": "yes",
     "categories": [{"ref": "ga", "name": "GA", "price": 1500.5, "capacity": "ten"}]}
  ]
}`

func TestCheckListsEveryProblemWithLineAndPath(t *testing.T) {
	_, err := catalogfile.Check([]byte(manyErrors), noKnown())
	var errs catalogfile.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want catalogfile.Errors, got %v", err)
	}
	want := []string{
		`line 2: cities[0]: unknown field "colour"; a city has: ref, name`,
		`line 3: venues[0].city: unknown city "spb"`,
		`line 4: venues[0].timezone: unknown time zone "Mars/Olympus"`,
		`line 6: venues[0].schemes[0].zones[0].rows[0].seats: expected a count of seats (1 to 1000) or a list of seats, not the text "many"`,
		`line 8: events[0].title: is required`,
		`line 8: events[0].status: status must be published, draft or archived, not "live"`,
		`line 9: events[0].starts_at: expected a date-time with its UTC offset, like 2026-12-01T19:00:00+03:00, not "2026-12-01 19:00"`,
		`line 11: events[0].categories[0].price: expected a whole number of minor currency units (kopecks: 1500.00 is 150000), not the text "1500.00"`,
		`line 11: events[0].categories[0].zones[0]: scheme has no zone "nope"`,
		`line 13: events[1].venue: unknown venue "ghost"`,
		`line 13: events[1].reentry: expected true or false, not the text "yes"`,
		`line 14: events[1].categories[0].price: expected a whole number of minor currency units (kopecks: 1500.00 is 150000), not 1500.5`,
		`line 14: events[1].categories[0].capacity: expected a whole number, not the text "ten"`,
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.String())
		if goWords.MatchString(e.Reason) {
			t.Errorf("a message speaks Go: %s", e)
		}
		if e.Line == 0 {
			t.Errorf("no line: %s", e)
		}
	}
	all := strings.Join(got, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("errors lack\n  %s\ngot:\n%s", w, all)
		}
	}
	if len(errs) != len(want) {
		// A refused value (the text "many" for seats, "ten" for a
		// capacity) is not reported a second time as missing.
		t.Errorf("want %d errors, got %d:\n%s", len(want), len(errs), all)
	}
	for i := 1; i < len(errs); i++ {
		if errs[i].Line < errs[i-1].Line {
			t.Fatalf("errors are not in the file's order:\n%s", all)
		}
	}
}

func TestSyntaxErrorsSayLineAndColumnInWords(t *testing.T) {
	tests := []struct{ name, file, want string }{
		{"comma before brace", "{\n  \"cities\": [\n    {\"ref\": \"a\", }\n  ]\n}", "line 3, column 18: a comma before '}': remove the last comma"},
		{"double comma", "{\n  \"cities\": [\n    {\"ref\": \"a\",, }\n  ]\n}", "line 3, column 17: expected a field name in double quotes, found ','"},
		{"missing comma", "{\"cities\": []\n \"events\": []}", `line 2, column 2: expected ',' between two fields, found '"'`},
		{"single quotes", "{\"cities\": [{'ref': 1}]}", "line 1, column 14: expected a field name in double quotes, found '\\''"},
		{"single-quoted value", "{\"events\": 'x'}", "line 1, column 12: text must be in double quotes"},
		{"unclosed string", "{\n\"cities\": [{\"ref\": \"abc\n}]}", "line 2, column 20: the text is not closed on its line"},
		{"unclosed object", "{\"cities\": [", "line 1, column 13: the file ends where a value was expected"},
		{"bare word", "{\"events\": [nope]}", "line 1, column 13: expected a value (text in double quotes, a number, true, false, null, [...] or {...}), found 'n'"},
		{"trailing data", "{}\n{}", "line 2, column 1: unexpected data after the catalog object"},
		{"empty", "  \n", "the file is empty"},
		{"not an object", "[1, 2]", "line 1: a catalog file is one JSON object"},
		{"bad number", "{\"events\": [01]}", `line 1, column 13: "01" is not a number`},
		{"invalid escape", "{\"cities\": [{\"ref\": \"a\\qb\"}]}", "line 1, column 21: the text has an invalid escape"},
		{"deep", strings.Repeat("[", 100), "nested deeper than 64 levels"},
		{"unknown top field", "{\n\"cities\": [],\n\"colour\": 1}", `line 3: unknown field "colour"; the catalog file has: cities, venues, events`},
		{"NUL", "{\"cities\": [{\"ref\": \"a\", \"name\": \"Mos\\u0000cow\"}]}", `cities[0].name: text must not contain the NUL character (\u0000)`},
		{"year 1", "{\"events\": [{\"starts_at\": \"0001-01-01T00:00:00Z\"}]}", `events[0].starts_at: expected a date-time between the years 2000 and 2100, not "0001-01-01T00:00:00Z"`},
		{"twice", "{\"cities\": [],\n\"cities\": []}", `line 2: cities: the field "cities" is given twice`},
		{"wrong type", "{\n  \"events\": [\n {\"ref\": 5}]}", "line 3: events[0].ref: expected text in double quotes, not 5"},
		{"list for object", "{\"events\": {}}", "line 1: events: expected a list [...], not an object {...}"},
		{"seat object", "{\"venues\": [{\"schemes\": [{\"zones\": [{\"rows\": [{\"seats\": [1, {\"number\": \"2\", \"z\": 1}, true, 2.5]}]}]}]}]}",
			`unknown field "z"; a seat has: number, x, y, rank`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := catalogfile.Parse([]byte(tt.file))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want error containing %q, got %v", tt.want, err)
			}
			if goWords.MatchString(err.Error()) {
				t.Fatalf("the error speaks Go: %v", err)
			}
		})
	}
}

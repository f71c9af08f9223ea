package catalogfile_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

type snapshot struct {
	Events, Categories, Sessions, Seats, SchemeSeats int
	EventsUpdated, CatsUpdated                       string
}

func take(t *testing.T, ctx context.Context, s *testenv.Stack) snapshot {
	t.Helper()
	var snap snapshot
	err := s.DB.NewRaw(`SELECT
		(SELECT count(*) FROM events) AS events,
		(SELECT count(*) FROM ticket_categories) AS categories,
		(SELECT count(*) FROM sessions) AS sessions,
		(SELECT count(*) FROM event_seats) AS seats,
		(SELECT count(*) FROM scheme_seats) AS scheme_seats,
		(SELECT coalesce(string_agg(id || '@' || updated_at || '#' || seat_version, ',' ORDER BY id), '') FROM events) AS events_updated,
		(SELECT coalesce(string_agg(id || '@' || updated_at, ',' ORDER BY id), '') FROM ticket_categories) AS cats_updated`).Scan(ctx, &snap)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func TestImportIsIdempotent(t *testing.T) {
	ctx := context.Background()
	s := &testenv.Stack{}
	s.DB, _ = testenv.DB(t)
	company := s.Company(t, "Acme")
	demo := catalogfile.Demo(time.Now())

	first := s.Import(t, company, demo)
	if first.Count(store.Created) == 0 || first.Count(store.Unchanged) != 0 {
		t.Fatalf("first import: %+v", first)
	}
	before := take(t, ctx, s)
	if before.Seats != 2*96 || before.SchemeSeats != 96 || before.Events != 4 || before.Sessions != 2 {
		t.Fatalf("unexpected inventory after first import: %+v", before)
	}

	second := s.Import(t, company, demo)
	if second.Count(store.Created) != 0 || second.Count(store.Updated) != 0 || second.SeatsChanged != 0 {
		t.Fatalf("re-import changed something: %+v", second)
	}
	if after := take(t, ctx, s); after != before {
		t.Fatalf("re-import changed the store:\nbefore %+v\nafter  %+v", before, after)
	}

	// A real change lands and moves the event's updated_at, nothing else.
	changed := strings.Replace(string(demo), `"price": 150000`, `"price": 160000`, 1)
	third := s.Import(t, company, []byte(changed))
	if third.Count(store.Updated) != 1 {
		t.Fatalf("price change: want 1 updated record, got %+v", third)
	}
	after := take(t, ctx, s)
	if after.EventsUpdated == before.EventsUpdated || after.CatsUpdated == before.CatsUpdated {
		t.Fatal("a category price change did not move updated_at of the category and its event")
	}
}

func TestImportRefusesABadFileWhole(t *testing.T) {
	ctx := context.Background()
	s := &testenv.Stack{}
	s.DB, _ = testenv.DB(t)
	company := s.Company(t, "Acme")

	bad := `{
  "cities": [{"ref": "msk", "name": "Moscow"}, {"ref": "msk", "name": ""}],
  "venues": [{"ref": "hall", "name": "Hall", "city": "spb", "timezone": "Mars/Olympus",
    "schemes": [{"ref": "main", "name": "Main", "zones": [
      {"id": "p", "name": "Stalls", "rows": [{"row": "1", "seats": 0}, {"row": "2", "seats": ["1", "1"]}]}]}]}],
  "events": [
    {"ref": "e1", "title": "", "slug": "Bad Slug", "status": "live", "starts_at": "2026-12-01T19:00:00+03:00",
     "venue": "hall", "scheme": "main", "fee": {"mode": "both", "rate_bp": 20000, "min_fee": -1},
     "categories": [{"ref": "c", "name": "C", "price": -5, "zones": ["nope"], "capacity": 10,
                     "price_changes": [{"price": 1}]}]},
    {"ref": "e2", "title": "GA", "slug": "ga", "status": "published", "starts_at": "2026-12-01T19:00:00+03:00",
     "venue": "ghost", "fee": {"mode": "included", "rate_bp": 0, "min_fee": 0},
     "categories": [{"ref": "ga", "name": "GA", "price": 100}]}
  ]
}`
	_, err := catalogfile.Import(ctx, s.DB, company, []byte(bad))
	var errs catalogfile.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want catalogfile.Errors, got %v", err)
	}
	want := []string{
		"cities[1].ref: duplicate ref",
		"cities[1].name: is required",
		"venues[0].city: unknown city",
		"venues[0].timezone: unknown time zone",
		"venues[0].schemes[0].zones[0].rows[0].seats: a row has 1 to",
		"venues[0].schemes[0].zones[0].rows[1].seats[1]: duplicate seat number",
		"events[0].title: is required",
		"events[0].slug:",
		"events[0].status:",
		"events[0].fee.mode:",
		"events[0].fee.rate_bp:",
		"events[0].fee.min_fee:",
		"events[0].categories[0].price:",
		"events[0].categories[0].price_changes[0]: give exactly one of from or after_sold",
		"events[0].categories[0].capacity:",
		"events[0].categories[0].zones[0]: scheme has no zone",
		"events[1].venue: unknown venue",
		"events[1].categories[0].capacity: a category of an event without a scheme or sessions needs a capacity",
	}
	got := err.Error()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("errors lack %q", w)
		}
	}
	if len(errs) != len(want) {
		t.Errorf("want %d errors, got %d:\n%s", len(want), len(errs), got)
	}
	if snap := take(t, ctx, s); snap.Events != 0 || snap.SchemeSeats != 0 {
		t.Fatalf("a refused file left records behind: %+v", snap)
	}
	var cities int
	if err := s.DB.NewRaw("SELECT count(*) FROM cities").Scan(ctx, &cities); err != nil || cities != 0 {
		t.Fatalf("a refused file left %d cities (err %v)", cities, err)
	}
}

func TestParseReportsLineOfSyntaxAndTypeErrors(t *testing.T) {
	tests := []struct {
		name, file, want string
	}{
		{"syntax", "{\n  \"cities\": [\n    {\"ref\": \"a\",, }\n  ]\n}", "line 3, column 17: expected a field name in double quotes"},
		{"type", "{\n  \"events\": [\n {\"ref\": 5}]}", "line 3: events[0].ref: expected text in double quotes, not 5"},
		{"unknown field", "{\n\"cities\": [],\n\"colour\": 1}", `unknown field "colour"`},
		{"trailing data", "{}\n{}", "unexpected data after the catalog object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := catalogfile.Parse([]byte(tt.file))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want error containing %q, got %v", tt.want, err)
			}
		})
	}
}

func TestImportTenThousandSeats(t *testing.T) {
	ctx := context.Background()
	s := &testenv.Stack{}
	s.DB, _ = testenv.DB(t)
	company := s.Company(t, "Arena")
	res := s.Import(t, company, testenv.HallCatalog(100, 100))
	if res.SeatsChanged != 10_000 {
		t.Fatalf("want 10000 seats, got %d", res.SeatsChanged)
	}
	var n int
	if err := s.DB.NewRaw("SELECT count(*) FROM event_seats WHERE state = 'free'").Scan(ctx, &n); err != nil || n != 10_000 {
		t.Fatalf("want 10000 free seats, got %d (%v)", n, err)
	}
}

func BenchmarkImportTenThousandSeats(b *testing.B) {
	s := &testenv.Stack{}
	s.DB, _ = testenv.DB(b)
	file := testenv.HallCatalog(100, 100)
	for i := 0; b.Loop(); i++ {
		company := s.Company(b, fmt.Sprintf("Arena %d", i))
		s.Import(b, company, file)
	}
}

package catalogfile_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// Catalogs written before channels import as they did: no channel, no
// allocation, no window; and again, unchanged.
func TestOldCatalogsImportUnchanged(t *testing.T) {
	s := &testenv.Stack{}
	s.DB, _ = testenv.DB(t)
	old, err := os.ReadFile("testdata/example-before-channels.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range [][]byte{old, catalogfile.Demo(time.Now())} {
		company := s.Company(t, "Старый каталог")
		first := s.Import(t, company, file)
		again := s.Import(t, company, file)
		if again.Count(store.Created)+again.Count(store.Updated) != 0 || len(again.Records) != len(first.Records) || again.SeatsAllocated != 0 {
			t.Fatalf("re-import changed something: %+v", again)
		}
		var n int
		if err := s.DB.NewRaw(`SELECT (SELECT count(*) FROM channels WHERE company_id = ?0)
			+ (SELECT count(*) FROM events WHERE company_id = ?0 AND (sales_start IS NOT NULL OR sales_end IS NOT NULL))`,
			company).Scan(context.Background(), &n); err != nil || n != 0 {
			t.Fatalf("an old catalog made channels or windows: %d %v", n, err)
		}
	}
}

// The example's channel, allocations and windows land in the import, and a
// second import moves nothing.
func TestImportAllocatesToChannels(t *testing.T) {
	ctx := context.Background()
	s := &testenv.Stack{}
	s.DB, _ = testenv.DB(t)
	company := s.Company(t, "Уральская филармония")
	first := s.Import(t, company, catalogfile.Example())
	// boxes (2) + stalls rows 2-3 (12 + 6) + stalls-1-12
	if first.SeatsAllocated != 21 {
		t.Fatalf("seats allocated: %d", first.SeatsAllocated)
	}
	var got struct {
		Channel    string
		Apps       int
		Seats      int
		Quotas     string
		Terms      int
		SalesStart *time.Time
	}
	read := func() {
		t.Helper()
		if err := s.DB.NewRaw(`SELECT ch.name AS channel,
			(SELECT count(*) FROM channel_applications ca WHERE ca.channel_id = ch.id) AS apps,
			(SELECT count(*) FROM event_seats es WHERE es.channel_id = ch.id) AS seats,
			(SELECT string_agg(q.allocated::text, ',' ORDER BY q.allocated) FROM channel_quotas q WHERE q.channel_id = ch.id) AS quotas,
			(SELECT count(*) FROM channel_events ce WHERE ce.channel_id = ch.id AND ce.sales_start IS NOT NULL AND ce.release_at IS NOT NULL) AS terms,
			(SELECT e.sales_start FROM events e WHERE e.company_id = ch.company_id AND e.ref = 'winter-gala') AS sales_start
			FROM channels ch WHERE ch.company_id = ? AND ch.ref = 'kassir'`, company).Scan(ctx, &got); err != nil {
			t.Fatal(err)
		}
	}
	read()
	if got.Channel != "Кассир.ру" || got.Apps != 2 || got.Seats != 21 || got.Quotas != "5,50" || got.Terms != 1 || got.SalesStart == nil {
		t.Fatalf("after import: %+v", got)
	}
	again := s.Import(t, company, catalogfile.Example())
	if again.SeatsAllocated != 0 || again.Count(store.Created)+again.Count(store.Updated) != 0 {
		t.Fatalf("re-import: %+v", again)
	}
	read()
	if got.Seats != 21 || got.Quotas != "5,50" {
		t.Fatalf("after re-import: %+v", got)
	}
}

// Mistakes in the distribution fields are reported with their paths, and
// nothing is imported.
func TestDistributionErrorsHavePaths(t *testing.T) {
	bad := strings.NewReplacer(
		`"channel": "kassir",
          "seats"`, `"channel": "ponominalu",
          "seats"`,
		`{"zone": "stalls", "from": "2", "to": "3"}`, `{"zone": "stalls", "from": "3", "to": "2"}`,
		`"seat_ids": ["stalls-1-12"]`, `"seat_ids": ["stalls-9-1"]`,
		`"ends_at": "2027-01-15T17:00:00+05:00"`, `"ends_at": "2026-01-15T17:00:00+05:00"`,
		`{"category": "standing", "quantity": 50}`, `{"category": "vip", "quantity": 50}`,
		`"session": "2027-03-01-11"`, `"session": "2027-04-01-11"`,
		`{"ref": "kassir", "name": "Кассир.ру"`, `{"ref": "kassir", "name": " "`,
	).Replace(string(catalogfile.Example()))
	_, err := catalogfile.Check([]byte(bad), store.KnownCatalog{})
	var es catalogfile.Errors
	if !errors.As(err, &es) {
		t.Fatalf("not refused: %v", err)
	}
	want := []string{
		"events[0].sales.ends_at", "events[0].allocations[0].channel", "events[0].allocations[0].seats.rows[0].to",
		"events[0].allocations[0].seats.seat_ids[0]", "events[1].allocations[0].quantities[0].category",
		"events[2].allocations[0].quantities[0].session", "channels[0].name",
	}
	paths := map[string]bool{}
	for _, e := range es {
		paths[e.Where()] = true
	}
	for _, w := range want {
		if !paths[w] {
			t.Errorf("no error at %s; got %v", w, es)
		}
	}
	if len(es) != len(want) {
		t.Errorf("%d errors, want %d: %v", len(es), len(want), es)
	}
}

// Importing the same file again after a whole release takes nothing back
// from general sale, and a file without general sale's window leaves a
// window set by hand as it was.
func TestReimportKeepsReleasesAndWindows(t *testing.T) {
	ctx := context.Background()
	s := &testenv.Stack{}
	s.DB, _ = testenv.DB(t)
	company := s.Company(t, "Уральская филармония")
	s.Import(t, company, catalogfile.Example())
	var ids struct{ Channel, Event int64 }
	if err := s.DB.NewRaw(`SELECT ch.id AS channel, e.id AS event FROM channels ch, events e
		WHERE ch.company_id = ?0 AND ch.ref = 'kassir' AND e.company_id = ?0 AND e.ref = 'winter-gala'`, company).Scan(ctx, &ids); err != nil {
		t.Fatal(err)
	}
	out, err := store.ReleaseAllocation(ctx, s.DB, company, store.Release{EventID: ids.Event, ChannelID: ids.Channel, Whole: true})
	if err != nil || len(out.Seats) == 0 {
		t.Fatalf("release: %+v %v", out, err)
	}
	again := s.Import(t, company, catalogfile.Example())
	var left int
	if err := s.DB.NewRaw(`SELECT count(*) FROM event_seats WHERE event_id = ? AND channel_id = ? AND state <> 'sold'`,
		ids.Event, ids.Channel).Scan(ctx, &left); err != nil {
		t.Fatal(err)
	}
	if again.SeatsAllocated != 0 || left != 0 {
		t.Errorf("the re-import took back %d seats (%d unsold with the channel) from general sale", again.SeatsAllocated, left)
	}
	old, err := os.ReadFile("testdata/example-before-channels.json")
	if err != nil {
		t.Fatal(err)
	}
	other := s.Company(t, "Театр")
	s.Import(t, other, old)
	opens := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if _, err := s.DB.NewRaw("UPDATE events SET sales_start = ? WHERE company_id = ?", opens, other).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	s.Import(t, other, old)
	var kept int
	if err := s.DB.NewRaw("SELECT count(*) FROM events WHERE company_id = ? AND sales_start = ?", other, opens).Scan(ctx, &kept); err != nil || kept == 0 {
		t.Errorf("an old file cleared general sale's window: %d events keep it (%v)", kept, err)
	}
}

package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
)

// TestImportRefreshesSeatStatistics: an import that adds seats refreshes
// the planner's statistics of event_seats at once (free seats new among
// sold ones made the hold statement 3 times slower until autovacuum came),
// and one that changes no seat does not.
func TestImportRefreshesSeatStatistics(t *testing.T) {
	d := newDemo(t) // imports the demo catalog: its seats are new
	ctx := context.Background()
	// ANALYZE writes reltuples at once: a table never analyzed has -1.
	var reltuples float64
	var seats int
	if err := d.DB.NewRaw("SELECT reltuples FROM pg_class WHERE relname = 'event_seats'").Scan(ctx, &reltuples); err != nil {
		t.Fatal(err)
	}
	if err := d.DB.NewRaw("SELECT count(*) FROM event_seats").Scan(ctx, &seats); err != nil {
		t.Fatal(err)
	}
	if seats == 0 || int(reltuples) != seats {
		t.Fatalf("after importing %d seats the planner counts %v rows of event_seats", seats, reltuples)
	}
	// Manual ANALYZE runs, as the statistics view counts them (it may take a
	// moment to show one).
	analyses := func(atLeast int) int {
		t.Helper()
		var n int
		for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if err := d.DB.NewRaw("SELECT analyze_count FROM pg_stat_user_tables WHERE relname = 'event_seats'").Scan(ctx, &n); err != nil {
				t.Fatal(err)
			}
			if n >= atLeast || time.Now().After(deadline) {
				return n
			}
		}
	}
	before := analyses(1)
	if before < 1 {
		t.Fatal("the import ran no ANALYZE of event_seats")
	}
	d.Import(t, d.company, catalogfile.Demo(time.Now())) // the same seats: nothing changes
	time.Sleep(200 * time.Millisecond)
	if after := analyses(before); after != before {
		t.Fatalf("an import that changed no seat ran ANALYZE (%d runs, %d before)", after, before)
	}
}

package store_test

import (
	"context"
	"testing"
	"time"
)

// TestImportRefreshesSeatStatistics: an import that adds seats refreshes
// the planner's statistics of event_seats at once (free seats new among
// sold ones made the hold statement 3 times slower until autovacuum came),
// and one that changes no seat does not.
func TestImportRefreshesSeatStatistics(t *testing.T) {
	d := newDemo(t) // imports the demo catalog: its seats are new
	ctx := context.Background()
	analyzed := func() (at *time.Time) {
		t.Helper()
		// Statistics reach the view within a moment of the command.
		for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if err := d.DB.NewRaw("SELECT last_analyze FROM pg_stat_user_tables WHERE relname = 'event_seats'").Scan(ctx, &at); err != nil {
				t.Fatal(err)
			}
			if at != nil || time.Now().After(deadline) {
				return at
			}
		}
	}
	first := analyzed()
	if first == nil {
		t.Fatal("importing seats left event_seats without fresh statistics")
	}
	var n int
	if err := d.DB.NewRaw("SELECT n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = 'event_seats'").Scan(ctx, &n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d rows of event_seats changed since the import's ANALYZE, want 0", n)
	}
}

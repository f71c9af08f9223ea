package catalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/catalog"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// bigHallOnSale is a 10,000-seat hall a third sold and a fifth held, as a
// seat map looks halfway through an on-sale.
func bigHallOnSale(tb testing.TB) (s *testenv.Stack, company, event int64) {
	tb.Helper()
	ctx := context.Background()
	s = &testenv.Stack{}
	s.DB, _ = testenv.DB(tb)
	company = s.Company(tb, "Arena")
	s.Import(tb, company, testenv.HallCatalog(100, 100))
	if err := s.DB.NewRaw("SELECT id FROM events WHERE company_id = ? AND slug = 'show'", company).Scan(ctx, &event); err != nil {
		tb.Fatal(err)
	}
	if _, err := s.DB.ExecContext(ctx, `UPDATE event_seats SET state = 'sold', version = version + 1
		WHERE event_id = ? AND pos % 3 = 0`, event); err != nil {
		tb.Fatal(err)
	}
	if _, err := s.DB.ExecContext(ctx, `UPDATE event_seats SET state = 'held', hold_id = 'h' || pos,
		hold_expires_at = now() + interval '10 minutes', version = version + 1
		WHERE event_id = ? AND pos % 5 = 1 AND state = 'free'`, event); err != nil {
		tb.Fatal(err)
	}
	return s, company, event
}

// BenchmarkAvailabilityBuild is what a seat map costs the api when a seat
// changed since it was last built: one build of a 10,000-seat hall's
// availability (read, encode, compress). In an on-sale the pickers' maps
// are rebuilt about once a second (docs/performance.md).
func BenchmarkAvailabilityBuild(b *testing.B) {
	if testing.Short() {
		b.Skip("needs Postgres")
	}
	s, _, event := bigHallOnSale(b)
	svc := catalog.New(s.DB, time.Now)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := svc.Build(ctx, event); err != nil {
			b.Fatal(err)
		}
	}
}

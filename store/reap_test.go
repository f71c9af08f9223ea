package store_test

import (
	"context"
	"testing"
	"time"

	"ticketsales/store"
)

// TestReapLapsedFinalisesOrphans: a hold and an order whose workflows never
// started (the api died after its commit) are finalised by the reaper, once.
func TestReapLapsedFinalisesOrphans(t *testing.T) {
	ctx := context.Background()
	s := newDemo(t)
	past := time.Now().Add(-time.Hour)
	_, ok, err := store.HoldSeats(ctx, s.DB, store.NewHold{
		Reservation: store.Reservation{ID: "rsv_orphan", CompanyID: s.company, APIKeyID: s.keyID, IsTest: true,
			EventID: s.eventID(t, "swan-lake"), ExpiresAt: past, Currency: "RUB"},
		SeatIDs: []string{"parterre-1-1"}, Prices: map[string]int64{"parterre-1-1": 1},
	})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	o, cat := s.gaOrder(t, 3, past)
	fresh, _ := s.gaOrder(t, 1, time.Now().Add(time.Hour))

	r, err := store.ReapLapsed(ctx, s.DB, time.Minute)
	if err != nil || r.Reservations != 1 || r.Orders != 1 {
		t.Fatalf("reaped %+v (%v), want the one lapsed hold and the one lapsed order", r, err)
	}
	again, err := store.ReapLapsed(ctx, s.DB, time.Minute)
	if err != nil || again.Reservations+again.Orders != 0 {
		t.Fatalf("second reap changed %+v (%v)", again, err)
	}
	var rs, os_, fs string
	var sold int
	_ = s.DB.NewRaw("SELECT status FROM reservations WHERE id = 'rsv_orphan'").Scan(ctx, &rs)
	_ = s.DB.NewRaw("SELECT status FROM orders WHERE id = ?", o.ID).Scan(ctx, &os_)
	_ = s.DB.NewRaw("SELECT status FROM orders WHERE id = ?", fresh.ID).Scan(ctx, &fs)
	_ = s.DB.NewRaw("SELECT sold FROM ticket_categories WHERE id = ?", cat).Scan(ctx, &sold)
	if rs != "expired" || os_ != "cancelled" || fs != "pending_payment" || sold != 1 {
		t.Fatalf("after the reap: reservation %s, lapsed order %s, live order %s, GA sold %d", rs, os_, fs, sold)
	}
}

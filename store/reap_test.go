package store_test

import (
	"context"
	"testing"
	"time"

	"ticketsales/catalogfile"
	"ticketsales/pricing"
	"ticketsales/store"
	"ticketsales/testenv"
)

// TestReapLapsedFinalisesOrphans: a hold and an order whose workflows never
// started (the api died after its commit) are finalised by the reaper, once.
func TestReapLapsedFinalisesOrphans(t *testing.T) {
	ctx := context.Background()
	s := &testenv.Stack{}
	s.DB, _ = testenv.DB(t)
	company := s.Company(t, "A")
	s.Import(t, company, catalogfile.Demo(time.Now()))
	_, keyID := s.Key(t, company, "sandbox")
	var event, cat int64
	if err := s.DB.NewRaw("SELECT e.id, c.id FROM events e JOIN ticket_categories c ON c.event_id = e.id WHERE e.slug = 'standup'").Scan(ctx, &event, &cat); err != nil {
		t.Fatal(err)
	}
	var swan int64
	_ = s.DB.NewRaw("SELECT id FROM events WHERE slug = 'swan-lake'").Scan(ctx, &swan)
	past := time.Now().Add(-time.Hour)
	_, ok, err := store.HoldSeats(ctx, s.DB, store.NewHold{
		Reservation: store.Reservation{ID: "rsv_orphan", CompanyID: company, APIKeyID: keyID, IsTest: true, EventID: swan,
			ExpiresAt: past, Currency: "RUB"},
		SeatIDs: []string{"parterre-1-1"}, Prices: map[string]int64{"parterre-1-1": 1},
	})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	o := &store.Order{CompanyID: company, APIKeyID: keyID, IsTest: true, EventID: event, Status: store.OrderPendingPayment,
		Payment: "external", CustomerEmail: "a@b.c", CustomerFirstName: "A", CustomerLastName: "B", AccessTokenHash: []byte{1},
		ExpiresAt: past}
	fee := pricing.Fee{Mode: pricing.Included}
	if err := store.CreateOrderFromItems(ctx, s.DB, o, []store.ItemQuantity{{CategoryID: cat, Quantity: 3, Price: 100}},
		func(p []int64) (int64, int64, int64) { q := fee.Order(p...); return q.Total, q.Fee, q.Amount }); err != nil {
		t.Fatal(err)
	}
	fresh := &store.Order{CompanyID: company, APIKeyID: keyID, IsTest: true, EventID: event, Status: store.OrderPendingPayment,
		Payment: "external", CustomerEmail: "a@b.c", CustomerFirstName: "A", CustomerLastName: "B", AccessTokenHash: []byte{1},
		ExpiresAt: time.Now().Add(time.Hour)}
	if err := store.CreateOrderFromItems(ctx, s.DB, fresh, []store.ItemQuantity{{CategoryID: cat, Quantity: 1, Price: 100}},
		func(p []int64) (int64, int64, int64) { q := fee.Order(p...); return q.Total, q.Fee, q.Amount }); err != nil {
		t.Fatal(err)
	}

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

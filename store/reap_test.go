package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/store"
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

	r, err := store.ReapLapsed(ctx, s.DB, time.Minute, delivery.NewBarcode)
	if err != nil || r.Reservations != 1 || r.Orders != 1 {
		t.Fatalf("reaped %+v (%v), want the one lapsed hold and the one lapsed order", r, err)
	}
	again, err := store.ReapLapsed(ctx, s.DB, time.Minute, delivery.NewBarcode)
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

// TestReapLapsedGoesOnPastAFailingRow: a row the reaper cannot finalise
// (here a trigger refuses it) is reported, and every other row is still
// finalised: one bad row does not starve the rest.
func TestReapLapsedGoesOnPastAFailingRow(t *testing.T) {
	ctx := context.Background()
	s := newDemo(t)
	swan := s.eventID(t, "swan-lake")
	hold := func(id, seat string, expires time.Time) {
		t.Helper()
		_, ok, err := store.HoldSeats(ctx, s.DB, store.NewHold{
			Reservation: store.Reservation{ID: id, CompanyID: s.company, APIKeyID: s.keyID, IsTest: true,
				EventID: swan, ExpiresAt: expires, Currency: "RUB"},
			SeatIDs: []string{seat}, Prices: map[string]int64{seat: 1},
		})
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
	}
	hold("rsv_bad", "parterre-1-1", time.Now().Add(-2*time.Hour)) // first in the reaper's order
	hold("rsv_good", "parterre-1-2", time.Now().Add(-time.Hour))
	o, _ := s.gaOrder(t, 1, time.Now().Add(-time.Hour))
	if _, err := s.DB.ExecContext(ctx, `
		CREATE FUNCTION refuse_bad() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.id = 'rsv_bad' THEN RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END $$;
		CREATE TRIGGER refuse_bad BEFORE UPDATE ON reservations FOR EACH ROW EXECUTE FUNCTION refuse_bad();`); err != nil {
		t.Fatal(err)
	}

	r, err := store.ReapLapsed(ctx, s.DB, time.Minute, delivery.NewBarcode)
	if err == nil || r.Reservations != 1 || r.Orders != 1 {
		t.Fatalf("reaped %+v (%v), want the good hold and the order, and the bad hold's error", r, err)
	}
	var good, bad, order string
	_ = s.DB.NewRaw("SELECT status FROM reservations WHERE id = 'rsv_good'").Scan(ctx, &good)
	_ = s.DB.NewRaw("SELECT status FROM reservations WHERE id = 'rsv_bad'").Scan(ctx, &bad)
	_ = s.DB.NewRaw("SELECT status FROM orders WHERE id = ?", o.ID).Scan(ctx, &order)
	if good != "expired" || bad != "reserved" || order != "cancelled" {
		t.Fatalf("after the reap: good hold %s, bad hold %s, order %s", good, bad, order)
	}
}

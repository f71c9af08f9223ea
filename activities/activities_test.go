package activities_test

import (
	"context"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// hold places a real hold through the store, as the API does.
func hold(t *testing.T, s *testenv.Stack, company, keyID int64, id string, seat string, expires time.Time) int64 {
	t.Helper()
	ctx := context.Background()
	var eventID int64
	if err := s.DB.NewRaw("SELECT id FROM events WHERE slug = 'swan-lake' AND company_id = ?", company).Scan(ctx, &eventID); err != nil {
		t.Fatal(err)
	}
	_, ok, err := store.HoldSeats(ctx, s.DB, store.NewHold{
		Reservation: store.Reservation{ID: id, CompanyID: company, APIKeyID: keyID, IsTest: true, EventID: eventID,
			ExpiresAt: expires, Currency: "RUB", Total: 1, ServiceFee: 1, TotalToPay: 2},
		SeatIDs: []string{seat}, Prices: map[string]int64{seat: 1},
	})
	if err != nil || !ok {
		t.Fatalf("hold %s: ok=%v err=%v", seat, ok, err)
	}
	return eventID
}

func seatState(t *testing.T, s *testenv.Stack, eventID int64, seat string) (state string) {
	t.Helper()
	if err := s.DB.NewRaw("SELECT state FROM event_seats WHERE event_id = ? AND seat_id = ?", eventID, seat).Scan(context.Background(), &state); err != nil {
		t.Fatal(err)
	}
	return state
}

// demoStore is a fresh database with the demo catalog of one company and a
// sandbox key, and the activities over it.
func demoStore(t *testing.T) (s *testenv.Stack, company, keyID int64, acts *activities.Activities) {
	t.Helper()
	s = &testenv.Stack{}
	s.DB, _ = testenv.DB(t)
	company = s.Company(t, "A")
	s.Import(t, company, catalogfile.Demo(time.Now()))
	_, keyID = s.Key(t, company, "sandbox")
	return s, company, keyID, &activities.Activities{DB: s.DB}
}

func TestExpireReservationRunsOnce(t *testing.T) {
	ctx := context.Background()
	s, company, keyID, acts := demoStore(t)

	// A live hold is not expired early: the activity asks to be retried.
	event := hold(t, s, company, keyID, "rsv_live", "parterre-1-1", time.Now().Add(time.Hour))
	if _, err := acts.ExpireReservation(ctx, "rsv_live"); err == nil {
		t.Fatal("a hold before its deadline was expired")
	}
	if st := seatState(t, s, event, "parterre-1-1"); st != "held" {
		t.Fatalf("seat of a live hold: %s", st)
	}

	hold(t, s, company, keyID, "rsv_old", "parterre-1-2", time.Now().Add(-time.Second))
	first, err := acts.ExpireReservation(ctx, "rsv_old")
	if err != nil || !first.Changed || first.Status != "expired" {
		t.Fatalf("first run: %+v %v", first, err)
	}
	if st := seatState(t, s, event, "parterre-1-2"); st != "free" {
		t.Fatalf("seat after expiry: %s", st)
	}
	// The retried activity (same input) changes nothing: even when the
	// freed seat was held again by someone else meanwhile.
	hold(t, s, company, keyID, "rsv_next", "parterre-1-2", time.Now().Add(time.Hour))
	second, err := acts.ExpireReservation(ctx, "rsv_old")
	if err != nil || second.Changed || second.Status != "expired" {
		t.Fatalf("second run: %+v %v", second, err)
	}
	if st := seatState(t, s, event, "parterre-1-2"); st != "held" {
		t.Fatalf("a repeated expiry freed another reservation's seat: %s", st)
	}

	// A released reservation stays released.
	if _, err := store.EndReservation(ctx, s.DB, "rsv_live", states.ReservationReleased); err != nil {
		t.Fatal(err)
	}
	res, err := acts.ExpireReservation(ctx, "rsv_live")
	if err != nil || res.Changed || res.Status != "released" {
		t.Fatalf("expire after release: %+v %v", res, err)
	}
}

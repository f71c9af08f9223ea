package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"ticketsales/internal/states"
	"ticketsales/store"
)

// waitForLockWait waits until a statement of this database that mentions
// query waits on a lock.
func waitForLockWait(t *testing.T, db *bun.DB, query string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var n int
		if err := db.NewRaw(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query LIKE ?`, "%"+query+"%").Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
	}
	t.Fatalf("no statement with %q waited on a lock", query)
}

// TestEndReservationFreesSeatsAddedWhileItWaited: a release that waits on
// the reservation's row lock behind a replace frees the seats the replace
// added, not only those its statement could see when it began.
func TestEndReservationFreesSeatsAddedWhileItWaited(t *testing.T) {
	ctx := context.Background()
	s := newDemo(t)
	event := s.eventID(t, "swan-lake")
	expires := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	_, ok, err := store.HoldSeats(ctx, s.DB, store.NewHold{
		Reservation: store.Reservation{ID: "rsv_race", CompanyID: s.company, APIKeyID: s.keyID, IsTest: true,
			EventID: event, ExpiresAt: expires, Currency: "RUB"},
		SeatIDs: []string{"parterre-1-1"}, Prices: map[string]int64{"parterre-1-1": 1},
	})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}

	// What ReplaceSeats does: lock the reservation, then hold a new seat for it.
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "SELECT 1 FROM reservations WHERE id = 'rsv_race' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE event_seats SET state = 'held', hold_id = 'rsv_race', hold_expires_at = ?,
		version = nextval('seat_change_seq') WHERE event_id = ? AND seat_id = 'parterre-1-2' AND state = 'free'`, expires, event); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO reservation_seats (reservation_id, event_id, seat_id, category_id, price)
		SELECT 'rsv_race', event_id, seat_id, category_id, 1 FROM event_seats WHERE event_id = ? AND seat_id = 'parterre-1-2'`, event); err != nil {
		t.Fatal(err)
	}

	type result struct {
		changed bool
		err     error
	}
	done := make(chan result, 1)
	go func() {
		changed, err := store.EndReservation(ctx, s.DB, "rsv_race", states.ReservationReleased)
		done <- result{changed, err}
	}()
	waitForLockWait(t, s.DB, "UPDATE reservations")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var res result
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("release did not finish after the replace committed")
	}
	if res.err != nil || !res.changed {
		t.Fatalf("release: changed %v, %v", res.changed, res.err)
	}

	var held []string
	if err := s.DB.NewRaw("SELECT seat_id FROM event_seats WHERE hold_id = 'rsv_race' AND state = 'held' ORDER BY seat_id").
		Scan(ctx, &held); err != nil {
		t.Fatal(err)
	}
	if len(held) > 0 {
		t.Fatalf("seats %v are still held by the released reservation", held)
	}
	again, err := store.EndReservation(ctx, s.DB, "rsv_race", states.ReservationReleased)
	if err != nil || again {
		t.Fatalf("second release: changed %v, %v", again, err)
	}
}

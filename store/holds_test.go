package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
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

// TestHoldFailsFastOnALockedSeat: a hold meeting a seat another transaction
// has locked (a concurrent hold in flight) answers at once that the seat is
// taken, holding nothing, instead of queueing behind the lock.
func TestHoldFailsFastOnALockedSeat(t *testing.T) {
	ctx := context.Background()
	s := newDemo(t)
	swan := s.eventID(t, "swan-lake")
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT 1 FROM event_seats WHERE event_id = ? AND seat_id = 'parterre-1-2' FOR UPDATE", swan); err != nil {
		t.Fatal(err)
	}
	// Waiting would run into this deadline; failing fast does not.
	quick, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	taken, ok, err := store.HoldSeats(quick, s.DB, store.NewHold{
		Reservation: store.Reservation{ID: "rsv_fast", CompanyID: s.company, APIKeyID: s.keyID, IsTest: true,
			EventID: swan, ExpiresAt: time.Now().Add(time.Hour), Currency: "RUB"},
		SeatIDs: []string{"parterre-1-1", "parterre-1-2"}, Prices: map[string]int64{"parterre-1-1": 1, "parterre-1-2": 1},
	})
	// The locked seat is among those named (a lock does not say which row
	// it holds, so a seat that reads free may be named too).
	if err != nil || ok || !slices.Contains(taken, "parterre-1-2") {
		t.Fatalf("hold over a locked seat: taken %v ok %v err %v", taken, ok, err)
	}
	var held int
	if err := s.DB.NewRaw("SELECT count(*) FROM event_seats WHERE event_id = ? AND state = 'held'", swan).Scan(ctx, &held); err != nil || held != 0 {
		t.Fatalf("%d seats held after a refused hold (%v)", held, err)
	}
}

// TestManyBuyersOfTheSameSeats: 200 buyers race for the same two seats;
// exactly one gets them, every other is told they are taken, none errs.
func TestManyBuyersOfTheSameSeats(t *testing.T) {
	ctx := context.Background()
	s := newDemo(t)
	swan := s.eventID(t, "swan-lake")
	const buyers = 200
	type result struct {
		ok    bool
		taken []string
		err   error
	}
	results := make(chan result, buyers)
	start := make(chan struct{})
	for i := 0; i < buyers; i++ {
		go func() {
			<-start
			taken, ok, err := store.HoldSeats(ctx, s.DB, store.NewHold{
				Reservation: store.Reservation{ID: fmt.Sprintf("rsv_race_%d", i), CompanyID: s.company, APIKeyID: s.keyID, IsTest: true,
					EventID: swan, ExpiresAt: time.Now().Add(time.Hour), Currency: "RUB"},
				SeatIDs: []string{"parterre-2-1", "parterre-2-2"}, Prices: map[string]int64{"parterre-2-1": 1, "parterre-2-2": 1},
			})
			results <- result{ok, taken, err}
		}()
	}
	close(start)
	won := 0
	seen := map[string]int{}
	defer func() { t.Logf("answers: %v", seen) }()
	for i := 0; i < buyers; i++ {
		r := <-results
		seen[fmt.Sprint(r.ok, r.taken, r.err)]++
		switch {
		case r.err != nil:
			t.Errorf("buyer failed: %v", r.err)
		case r.ok:
			won++
		case len(r.taken) == 0:
			t.Errorf("a refused hold names no taken seat: %+v", r)
		}
	}
	var held, reservations int
	_ = s.DB.NewRaw("SELECT count(*) FROM event_seats WHERE event_id = ? AND state = 'held'", swan).Scan(ctx, &held)
	_ = s.DB.NewRaw("SELECT count(*) FROM reservations").Scan(ctx, &reservations)
	if won != 1 || held != 2 || reservations != 1 {
		t.Fatalf("%d buyers won, %d seats held, %d reservations; want 1, 2, 1", won, held, reservations)
	}
}

// TestRefusedHoldWritesNothing: refusing seats another hold already has
// locks no row and takes no transaction id, so the refusal never waits for
// a WAL flush (in a rush, refusals queued behind every commit's flush).
func TestRefusedHoldWritesNothing(t *testing.T) {
	ctx := context.Background()
	s := newDemo(t)
	swan := s.eventID(t, "swan-lake")
	hold := func(db bun.IDB, id string) ([]string, bool, error) {
		return store.HoldSeats(ctx, db, store.NewHold{
			Reservation: store.Reservation{ID: id, CompanyID: s.company, APIKeyID: s.keyID, IsTest: true,
				EventID: swan, ExpiresAt: time.Now().Add(time.Hour), Currency: "RUB"},
			SeatIDs: []string{"parterre-1-1", "parterre-1-2"}, Prices: map[string]int64{"parterre-1-1": 1, "parterre-1-2": 1},
		})
	}
	if _, ok, err := hold(s.DB, "rsv_first"); err != nil || !ok {
		t.Fatalf("first hold: ok %v err %v", ok, err)
	}
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	taken, ok, err := hold(tx, "rsv_second")
	if err != nil || ok || !slices.Equal(taken, []string{"parterre-1-1", "parterre-1-2"}) {
		t.Fatalf("second hold of the same seats: taken %v ok %v err %v", taken, ok, err)
	}
	var xid *string
	if err := tx.NewRaw("SELECT pg_current_xact_id_if_assigned()::text").Scan(ctx, &xid); err != nil {
		t.Fatal(err)
	}
	if xid != nil {
		t.Fatalf("the refused hold took transaction id %s: it locked or wrote rows", *xid)
	}
}

// TestHoldTellsUntilWhenSeatsAreTaken: a refused hold says until when each
// seat it found taken stays so: a held seat until its hold's deadline, a
// sold one without end.
func TestHoldTellsUntilWhenSeatsAreTaken(t *testing.T) {
	ctx := context.Background()
	s := newDemo(t)
	swan := s.eventID(t, "swan-lake")
	deadline := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	hold := func(id string, seats ...string) store.HoldOutcome {
		prices := map[string]int64{}
		for _, seat := range seats {
			prices[seat] = 1
		}
		out, err := store.Hold(ctx, s.DB, store.NewHold{
			Reservation: store.Reservation{ID: id, CompanyID: s.company, APIKeyID: s.keyID, IsTest: true,
				EventID: swan, ExpiresAt: deadline, Currency: "RUB"},
			SeatIDs: seats, Prices: prices,
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := hold("rsv_first", "parterre-1-1"); !out.OK || len(out.TakenUntil) != 0 {
		t.Fatalf("first hold: %+v", out)
	}
	if _, err := s.DB.ExecContext(ctx, "UPDATE event_seats SET state = 'sold', hold_id = NULL, hold_expires_at = NULL WHERE event_id = ? AND seat_id = 'parterre-1-2'", swan); err != nil {
		t.Fatal(err)
	}
	out := hold("rsv_second", "parterre-1-1", "parterre-1-2", "parterre-1-3")
	if out.OK || !slices.Equal(out.Taken, []string{"parterre-1-1", "parterre-1-2"}) || len(out.TakenUntil) != 2 {
		t.Fatalf("second hold: %+v", out)
	}
	if u := out.TakenUntil["parterre-1-1"]; u == nil || !u.Equal(deadline) {
		t.Errorf("held seat taken until %v, want the hold's deadline %v", u, deadline)
	}
	if u, ok := out.TakenUntil["parterre-1-2"]; !ok || u != nil {
		t.Errorf("sold seat: taken until %v (listed %v), want listed without end", u, ok)
	}
}

// TestHoldSQLIsTheHoldStatement: the hold statement with its values
// inlined (what the bench gives pgbench) holds as Hold does, prices and
// deadline included, and refuses the same seats the second time.
func TestHoldSQLIsTheHoldStatement(t *testing.T) {
	ctx := context.Background()
	s := newDemo(t)
	swan := s.eventID(t, "swan-lake")
	deadline := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	sql := func(id string) string {
		return store.HoldSQL(store.NewHold{
			Reservation: store.Reservation{ID: id, CompanyID: s.company, APIKeyID: s.keyID, IsTest: true,
				EventID: swan, ExpiresAt: deadline, Currency: "RUB", Total: 2500000, TotalToPay: 2500000},
			SeatIDs: []string{"parterre-1-1", "parterre-1-2"}, Prices: map[string]int64{"parterre-1-1": 1000000, "parterre-1-2": 1500000},
		})
	}
	var out struct {
		OK         bool
		OnSale     bool
		Taken      []string              `bun:",array"`
		TakenUntil map[string]*time.Time `bun:"type:json"`
		Withheld   []string              `bun:",array"`
		CreatedAt  *time.Time
		ExpiresAt  *time.Time
	}
	if err := s.DB.NewRaw(sql("rsv_inline")).Scan(ctx, &out); err != nil || !out.OK {
		t.Fatalf("inlined hold: %+v %v", out, err)
	}
	var sum int64
	var until time.Time
	if err := s.DB.NewRaw(`SELECT sum(rs.price), min(r.expires_at) FROM reservation_seats rs JOIN reservations r ON r.id = rs.reservation_id
		WHERE r.id = 'rsv_inline'`).Scan(ctx, &sum, &until); err != nil || sum != 2500000 || !until.Equal(deadline) {
		t.Fatalf("the inlined hold's seats cost %d until %v (%v); want 2500000 until %v", sum, until, err, deadline)
	}
	if err := s.DB.NewRaw(sql("rsv_again")).Scan(ctx, &out); err != nil || out.OK || len(out.Taken) != 2 {
		t.Fatalf("the same seats again: %+v %v", out, err)
	}
}

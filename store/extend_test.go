package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/store"
)

func (d *demo) holdFor(t *testing.T, id string, expires time.Time, seats ...string) {
	t.Helper()
	prices := map[string]int64{}
	for _, s := range seats {
		prices[s] = 1
	}
	_, ok, err := store.HoldSeats(context.Background(), d.DB, store.NewHold{
		Reservation: store.Reservation{ID: id, CompanyID: d.company, APIKeyID: d.keyID, IsTest: true,
			EventID: d.eventID(t, "swan-lake"), ExpiresAt: expires.Truncate(time.Microsecond), Currency: "RUB"},
		SeatIDs: seats, Prices: prices,
	})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
}

// seatDeadlines are the deadlines of the seats a hold holds.
func (d *demo) seatDeadlines(t *testing.T, id string) map[string]time.Time {
	t.Helper()
	var rows []struct {
		SeatID        string    `bun:"seat_id"`
		HoldExpiresAt time.Time `bun:"hold_expires_at"`
	}
	if err := d.DB.NewRaw("SELECT seat_id, hold_expires_at FROM event_seats WHERE hold_id = ? AND state = 'held'", id).
		Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	out := map[string]time.Time{}
	for _, r := range rows {
		out[r.SeatID] = r.HoldExpiresAt
	}
	return out
}

func TestExtendHoldMovesTheHoldAndItsSeats(t *testing.T) {
	ctx := context.Background()
	d := newDemo(t)
	d.holdFor(t, "rsv_ext", time.Now().Add(10*time.Minute), "parterre-1-1", "parterre-1-2")
	x := store.Extension{ReservationID: "rsv_ext", CompanyID: d.company, IsTest: true, TTL: 30 * time.Minute, MaxLife: time.Hour}
	out, err := store.ExtendHold(ctx, d.DB, x)
	if err != nil || !out.Moved || time.Until(out.ExpiresAt) < 29*time.Minute {
		t.Fatalf("extend: %+v %v", out, err)
	}
	for seat, until := range d.seatDeadlines(t, "rsv_ext") {
		if !until.Equal(out.ExpiresAt) {
			t.Fatalf("seat %s held until %v, the hold until %v", seat, until, out.ExpiresAt)
		}
	}
	// Less than is left: nothing moves.
	x.TTL = 5 * time.Minute
	if again, err := store.ExtendHold(ctx, d.DB, x); err != nil || again.Moved || !again.ExpiresAt.Equal(out.ExpiresAt) {
		t.Fatalf("shorter extension: %+v %v", again, err)
	}
	// Past the life bound: refused, with the latest deadline.
	x.TTL = 61 * time.Minute
	capped, err := store.ExtendHold(ctx, d.DB, x)
	var created time.Time
	if err := d.DB.NewRaw("SELECT created_at FROM reservations WHERE id = 'rsv_ext'").Scan(ctx, &created); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(err, store.ErrHoldLifeCap) || !capped.Latest.Equal(created.Add(time.Hour)) {
		t.Fatalf("past the bound: %+v %v", capped, err)
	}
	// Another company's or environment's: not found.
	for _, other := range []store.Extension{{ReservationID: "rsv_ext", CompanyID: d.company + 1000, IsTest: true},
		{ReservationID: "rsv_ext", CompanyID: d.company, IsTest: false}} {
		other.TTL, other.MaxLife = time.Minute, time.Hour
		if _, err := store.ExtendHold(ctx, d.DB, other); !errors.Is(err, errs.NotFound) {
			t.Fatalf("extension of another's hold: %v", err)
		}
	}
}

// A seat retaken in the instant the hold lapsed (its deadline passed while
// the extension ran) rolls the extension back as expired.
func TestExtendHoldRollsBackWhenASeatIsNoLongerTheHolds(t *testing.T) {
	ctx := context.Background()
	d := newDemo(t)
	expires := time.Now().Add(10 * time.Minute).Truncate(time.Microsecond)
	d.holdFor(t, "rsv_ext", expires, "parterre-1-1", "parterre-1-2")
	if _, err := d.DB.ExecContext(ctx, "UPDATE event_seats SET hold_id = 'rsv_thief' WHERE hold_id = 'rsv_ext' AND seat_id = 'parterre-1-2'"); err != nil {
		t.Fatal(err)
	}
	_, err := store.ExtendHold(ctx, d.DB, store.Extension{ReservationID: "rsv_ext", CompanyID: d.company, IsTest: true,
		TTL: 30 * time.Minute, MaxLife: time.Hour})
	if !errors.Is(err, errs.ReservationExpired) {
		t.Fatalf("extension of a hold that lost a seat: %v", err)
	}
	var now time.Time
	if err := d.DB.NewRaw("SELECT expires_at FROM reservations WHERE id = 'rsv_ext'").Scan(ctx, &now); err != nil || !now.Equal(expires) {
		t.Fatalf("the reservation's deadline moved to %v (%v)", now, err)
	}
	if got := d.seatDeadlines(t, "rsv_ext")["parterre-1-1"]; !got.Equal(expires) {
		t.Fatalf("the kept seat's deadline moved to %v", got)
	}
}

// An extension that waited for the reservation's lock judges the hold as
// the lock holder left it: a hold another extension moved while the old
// deadline passed is live, not expired.
func TestExtendHoldAfterWaitingSeesTheOtherExtension(t *testing.T) {
	ctx := context.Background()
	d := newDemo(t)
	d.holdFor(t, "rsv_ext", time.Now().Add(1500*time.Millisecond), "parterre-1-3")
	tx, err := d.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "SELECT 1 FROM reservations WHERE id = 'rsv_ext' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(20 * time.Minute).Truncate(time.Microsecond)
	if _, err := tx.ExecContext(ctx, `UPDATE reservations SET expires_at = ? WHERE id = 'rsv_ext';
		UPDATE event_seats SET hold_expires_at = ? WHERE hold_id = 'rsv_ext'`, later, later); err != nil {
		t.Fatal(err)
	}
	type result struct {
		out store.ExtendOutcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := store.ExtendHold(ctx, d.DB, store.Extension{ReservationID: "rsv_ext", CompanyID: d.company, IsTest: true,
			TTL: 10 * time.Minute, MaxLife: time.Hour})
		done <- result{out, err}
	}()
	waitForLockWait(t, d.DB, "expires_at FROM reservations")
	time.Sleep(2 * time.Second) // the old deadline passes while it waits
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil || res.out.Moved || !res.out.ExpiresAt.Equal(later) {
		t.Fatalf("extension after the wait: %+v %v", res.out, res.err)
	}
}

package api_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/test/testenv"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

func (f *fixture) extend(t *testing.T, key, id string, ttl int) *testenv.Response {
	t.Helper()
	return f.Do(t, http.MethodPost, "/v1/reservations/"+id+"/extend", key, fmt.Sprintf(`{"ttl_minutes": %d}`, ttl))
}

func (f *fixture) reserveFor(t *testing.T, key string, ttl int, seats ...string) reservation {
	t.Helper()
	res := f.Do(t, http.MethodPost, "/v1/reservations", key,
		fmt.Sprintf(`{"event_id": %d, "seats": %s, "ttl_minutes": %d}`, f.ids["swan-lake"], seatsJSON(seats...), ttl), idemKey(t))
	if res.Status != http.StatusCreated {
		t.Fatalf("reserve %v: %d %s", seats, res.Status, res.Body)
	}
	var r reservationBody
	res.Decode(t, &r)
	return r.Data
}

func (f *fixture) holdOf(t *testing.T, seat string) (holdID string, until time.Time) {
	t.Helper()
	var row struct {
		HoldID        *string    `bun:"hold_id"`
		HoldExpiresAt *time.Time `bun:"hold_expires_at"`
	}
	if err := f.DB.NewRaw("SELECT hold_id, hold_expires_at FROM event_seats WHERE event_id = ? AND seat_id = ?",
		f.ids["swan-lake"], seat).Scan(context.Background(), &row); err != nil {
		t.Fatal(err)
	}
	if row.HoldID != nil {
		holdID = *row.HoldID
	}
	if row.HoldExpiresAt != nil {
		until = *row.HoldExpiresAt
	}
	return holdID, until
}

// An extended hold keeps its seats past its old deadline, everywhere a
// seat's state is read, and is made final at its new one: the old
// minute's holds workflow passes it on to the new minute's, which expires
// it.
func TestHoldExtendedOutlivesItsOldDeadline(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Holds.TTLUnit = time.Second // ttl_minutes=n → an n-second hold; at most 60 s in all
	f.StartWorker(t)
	// The old deadline in this minute, the new one in the next: the hold
	// changes workflows.
	for s := time.Now().Second(); s < 35 || s > 50; s = time.Now().Second() {
		time.Sleep(200 * time.Millisecond)
	}
	r := f.reserveFor(t, f.keyA, 3, "parterre-1-1", "parterre-1-2")
	res := f.extend(t, f.keyA, r.ID, 25)
	if res.Status != http.StatusOK {
		t.Fatalf("extend: %d %s", res.Status, res.Body)
	}
	var ext reservationBody
	res.Decode(t, &ext)
	if d := time.Until(ext.Data.ExpiresAt); d < 20*time.Second || d > 26*time.Second || ext.Data.Status != "reserved" || len(ext.Data.Seats) != 2 {
		t.Fatalf("extended hold expires in %v: %+v", d, ext.Data)
	}
	var got reservationBody
	f.Get(t, "/v1/reservations/"+r.ID, f.keyA).Decode(t, &got)
	if !got.Data.ExpiresAt.Equal(ext.Data.ExpiresAt) {
		t.Fatalf("GET shows expires_at %v, the extension answered %v", got.Data.ExpiresAt, ext.Data.ExpiresAt)
	}
	for _, seat := range []string{"parterre-1-1", "parterre-1-2"} {
		if id, until := f.holdOf(t, seat); id != r.ID || !until.Equal(ext.Data.ExpiresAt) {
			t.Fatalf("seat %s held by %q until %v, want %s until %v", seat, id, until, r.ID, ext.Data.ExpiresAt)
		}
	}

	// Past the old deadline, the seats are still the hold's.
	time.Sleep(time.Until(r.ExpiresAt) + 2*time.Second)
	other, _ := f.Key(t, f.companyA, apikey.Sandbox)
	expectProblem(t, f.reserve(t, other, "parterre-1-2"), http.StatusConflict, "seat_taken")
	if st := f.seatStates(t); st["parterre-1-1"] != "reserved" || st["parterre-1-2"] != "reserved" {
		t.Fatalf("availability after the old deadline: %s %s", st["parterre-1-1"], st["parterre-1-2"])
	}
	f.Get(t, "/v1/reservations/"+r.ID, f.keyA).Decode(t, &got)
	if got.Data.Status != "reserved" {
		t.Fatalf("after the old deadline the hold reads %q", got.Data.Status)
	}
	// The old minute's run let it go as still reserved, and retries nothing.
	oldRun := contract.EventHoldsWorkflowID(r.EventID, r.ExpiresAt)
	var st contract.HoldState
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var v converter.EncodedValue
		v, err := f.Temporal.QueryWorkflow(context.Background(), oldRun, "", contract.HoldQuery, r.ID)
		if err == nil {
			err = v.Get(&st)
		}
		if err == nil && st.Status == states.ReservationReserved {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("old run %s: %+v (%v)", oldRun, st, err)
		}
	}
	var summary contract.HoldsSummary
	if v, err := f.Temporal.QueryWorkflow(context.Background(), oldRun, "", contract.HoldsQuery); err != nil {
		t.Fatal(err)
	} else if err := v.Get(&summary); err != nil || summary.Pending != 0 {
		t.Fatalf("old run still has pending holds: %+v %v", summary, err)
	}

	// At the new deadline the new minute's run makes it final.
	f.AwaitHold(t, r.ID, states.ReservationExpired, 60*time.Second)
	f.Get(t, "/v1/reservations/"+r.ID, f.keyA).Decode(t, &got)
	if got.Data.Status != "expired" {
		t.Fatalf("after the new deadline the hold reads %q", got.Data.Status)
	}
	if id, _ := f.holdOf(t, "parterre-1-1"); id != "" {
		t.Fatalf("seat still held by %q after expiry", id)
	}
	expectProblem(t, f.extend(t, f.keyA, r.ID, 10), http.StatusConflict, "reservation_expired")
	if res := f.reserve(t, other, "parterre-1-1", "parterre-1-2"); res.Status != http.StatusCreated {
		t.Fatalf("seats not free after the new deadline: %d %s", res.Status, res.Body)
	}
}

// An extension within the same minute of deadlines is met by the same run.
func TestHoldExtendedWithinItsMinuteExpiresAtTheNewDeadline(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Holds.TTLUnit = time.Second
	f.StartWorker(t)
	for s := time.Now().Second(); s < 5 || s > 30; s = time.Now().Second() {
		time.Sleep(200 * time.Millisecond)
	}
	r := f.reserveFor(t, f.keyA, 2, "parterre-1-5")
	var ext reservationBody
	if res := f.extend(t, f.keyA, r.ID, 8); res.Status != http.StatusOK {
		t.Fatalf("extend: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &ext)
	}
	time.Sleep(time.Until(r.ExpiresAt) + time.Second)
	other, _ := f.Key(t, f.companyA, apikey.Sandbox)
	expectProblem(t, f.reserve(t, other, "parterre-1-5"), http.StatusConflict, "seat_taken")
	f.AwaitHold(t, r.ID, states.ReservationExpired, 30*time.Second)
	if time.Now().Before(ext.Data.ExpiresAt) {
		t.Fatalf("expired before its new deadline %v", ext.Data.ExpiresAt)
	}
}

func TestHoldExtendRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	r := f.reserveFor(t, f.keyA, 15, "parterre-2-1")
	var created time.Time
	if err := f.DB.NewRaw("SELECT created_at FROM reservations WHERE id = ?", r.ID).Scan(ctx, &created); err != nil {
		t.Fatal(err)
	}
	get := func() reservation {
		var got reservationBody
		f.Get(t, "/v1/reservations/"+r.ID, f.keyA).Decode(t, &got)
		return got.Data
	}

	// Beyond 60 minutes of life: refused, nothing changes.
	res := f.extend(t, f.keyA, r.ID, 60)
	expectProblem(t, res, http.StatusConflict, "hold_limit_reached")
	var limit struct {
		LatestExpiresAt time.Time `json:"latest_expires_at"`
	}
	res.Decode(t, &limit)
	if !limit.LatestExpiresAt.Equal(created.Add(time.Hour)) {
		t.Fatalf("latest_expires_at %v, want created_at + 60 min = %v", limit.LatestExpiresAt, created.Add(time.Hour))
	}
	if got := get(); !got.ExpiresAt.Equal(r.ExpiresAt) {
		t.Fatalf("a refused extension moved expires_at: %v → %v", r.ExpiresAt, got.ExpiresAt)
	}
	if _, until := f.holdOf(t, "parterre-2-1"); !until.Equal(r.ExpiresAt) {
		t.Fatalf("a refused extension moved the seat's deadline to %v", until)
	}

	// Within it: 30 minutes from now.
	res = f.extend(t, f.keyA, r.ID, 30)
	var ext reservationBody
	res.Decode(t, &ext)
	if res.Status != http.StatusOK || time.Until(ext.Data.ExpiresAt) < 29*time.Minute || time.Until(ext.Data.ExpiresAt) > 30*time.Minute+time.Second {
		t.Fatalf("extend by 30: %d %s", res.Status, res.Body)
	}
	// Asking for less than is left never shortens the hold.
	res = f.extend(t, f.keyA, r.ID, 5)
	var same reservationBody
	res.Decode(t, &same)
	if res.Status != http.StatusOK || !same.Data.ExpiresAt.Equal(ext.Data.ExpiresAt) {
		t.Fatalf("a shorter extension: %d, expires_at %v (was %v)", res.Status, same.Data.ExpiresAt, ext.Data.ExpiresAt)
	}

	// Bad bodies: 422, nothing changes.
	if res := f.Do(t, http.MethodPost, "/v1/reservations/"+r.ID+"/extend", f.keyA, `{}`); res.Status != http.StatusOK {
		t.Fatalf("extend by the default 15 minutes: %d %s", res.Status, res.Body)
	}
	for _, body := range []string{`{"ttl_minutes": 0}`, `{"ttl_minutes": 61}`, `{"ttl_minutes": 5, "extra": 1}`, `{"ttl_minutes": "5"}`} {
		expectProblem(t, f.Do(t, http.MethodPost, "/v1/reservations/"+r.ID+"/extend", f.keyA, body), http.StatusUnprocessableEntity, "validation_error")
	}
	if got := get(); !got.ExpiresAt.Equal(ext.Data.ExpiresAt) {
		t.Fatalf("a bad request moved expires_at to %v", got.ExpiresAt)
	}

	// Another company's key, or the other environment's: not found.
	expectProblem(t, f.extend(t, f.keyB, r.ID, 10), http.StatusNotFound, "not_found")
	prod, _ := f.Key(t, f.companyA, apikey.Production)
	expectProblem(t, f.extend(t, prod, r.ID, 10), http.StatusNotFound, "not_found")
	expectProblem(t, f.extend(t, f.keyA, "rsv_nosuch", 10), http.StatusNotFound, "not_found")
	// A key without orders:write may not.
	reader, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeOrdersRead)
	expectProblem(t, f.extend(t, reader, r.ID, 10), http.StatusForbidden, "insufficient_scope")

	// Ended holds: an ordered or released one is not live, an expired one expired.
	if res := f.orderFromReservation(t, f.keyA, r.ID, "external"); res.Status != http.StatusCreated {
		t.Fatalf("order: %d %s", res.Status, res.Body)
	}
	expectProblem(t, f.extend(t, f.keyA, r.ID, 10), http.StatusConflict, "invalid_state")
	released := f.reserveFor(t, f.keyA, 15, "parterre-2-2")
	if res := f.Do(t, http.MethodDelete, "/v1/reservations/"+released.ID, f.keyA, ""); res.Status != http.StatusOK {
		t.Fatalf("release: %d %s", res.Status, res.Body)
	}
	expectProblem(t, f.extend(t, f.keyA, released.ID, 10), http.StatusConflict, "invalid_state")
	lapsed := f.reserveFor(t, f.keyA, 15, "parterre-2-3")
	if _, err := f.DB.ExecContext(ctx, `UPDATE reservations SET expires_at = now() - interval '1 second' WHERE id = ?;
		UPDATE event_seats SET hold_expires_at = now() - interval '1 second' WHERE hold_id = ?`, lapsed.ID, lapsed.ID); err != nil {
		t.Fatal(err)
	}
	expectProblem(t, f.extend(t, f.keyA, lapsed.ID, 10), http.StatusConflict, "reservation_expired")
	if id, until := f.holdOf(t, "parterre-2-3"); id != lapsed.ID || until.After(time.Now()) {
		t.Fatalf("a lapsed hold's seat was extended: %q until %v", id, until)
	}
}

// Extensions racing the deadline, other partners' holds of the same seats
// and an order from the hold: Postgres decides each, and no seat is ever
// the hold's and someone else's.
func TestHoldExtendRacesExpiryAndOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Holds.TTLUnit = time.Second
	f.StartWorker(t)
	ctx := context.Background()
	others := make([]string, 4)
	for i := range others {
		others[i], _ = f.Key(t, f.companyA, apikey.Sandbox)
	}
	for round := range 6 {
		seats := []string{fmt.Sprintf("parterre-3-%d", 2*round+1), fmt.Sprintf("parterre-3-%d", 2*round+2)}
		r := f.reserveFor(t, f.keyA, 1, seats...)
		// Start everyone in the hold's last moments, some rounds just after.
		time.Sleep(time.Until(r.ExpiresAt) - 30*time.Millisecond + time.Duration(round%3)*20*time.Millisecond)
		var wg sync.WaitGroup
		start := make(chan struct{})
		var mu sync.Mutex
		extended, othersWon, ordered := 0, 0, false
		var last time.Time
		run := func(fn func()) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				fn()
			}()
		}
		for range 8 {
			run(func() {
				res := f.extend(t, f.keyA, r.ID, 30)
				switch res.Status {
				case http.StatusOK:
					var b reservationBody
					res.Decode(t, &b)
					mu.Lock()
					extended++
					if b.Data.ExpiresAt.After(last) {
						last = b.Data.ExpiresAt
					}
					mu.Unlock()
				case http.StatusConflict:
				default:
					t.Errorf("round %d extend: %d %s", round, res.Status, res.Body)
				}
			})
		}
		for _, k := range others {
			run(func() {
				res := f.reserve(t, k, seats...)
				switch res.Status {
				case http.StatusCreated:
					mu.Lock()
					othersWon++
					mu.Unlock()
				case http.StatusConflict:
				default:
					t.Errorf("round %d other hold: %d %s", round, res.Status, res.Body)
				}
			})
		}
		if round%2 == 0 {
			run(func() {
				res := f.orderFromReservation(t, f.keyA, r.ID, "external")
				switch res.Status {
				case http.StatusCreated:
					mu.Lock()
					ordered = true
					mu.Unlock()
				case http.StatusConflict:
				default:
					t.Errorf("round %d order: %d %s", round, res.Status, res.Body)
				}
			})
		}
		close(start)
		wg.Wait()

		t.Logf("round %d: %d extensions, %d other holds won, ordered %v", round, extended, othersWon, ordered)
		if othersWon > 1 || (othersWon == 1 && (extended > 0 || ordered)) {
			t.Fatalf("round %d: %d other holds won, %d extensions, ordered %v", round, othersWon, extended, ordered)
		}
		var status string
		if err := f.DB.NewRaw("SELECT status FROM reservations WHERE id = ?", r.ID).Scan(ctx, &status); err != nil {
			t.Fatal(err)
		}
		// Every seat has one owner: the hold (reserved or ordered), another
		// partner's hold, or no one.
		for _, seat := range seats {
			var owners int
			if err := f.DB.NewRaw(`SELECT count(*) FROM reservation_seats rs JOIN reservations x ON x.id = rs.reservation_id
				WHERE rs.event_id = ? AND rs.seat_id = ? AND (x.status = 'ordered' OR (x.status = 'reserved' AND x.expires_at > now()))`,
				f.ids["swan-lake"], seat).Scan(ctx, &owners); err != nil {
				t.Fatal(err)
			}
			if owners > 1 {
				t.Fatalf("round %d: seat %s has %d live holders", round, seat, owners)
			}
			id, until := f.holdOf(t, seat)
			switch {
			case extended > 0 && !ordered && status == "reserved":
				if id != r.ID || !until.Equal(last) {
					t.Fatalf("round %d: extended hold's seat %s held by %q until %v, want until %v", round, seat, id, until, last)
				}
			case othersWon == 1:
				if id == r.ID || id == "" {
					t.Fatalf("round %d: the other partner's hold does not hold %s (%q)", round, seat, id)
				}
			}
		}
		if ordered && status != "ordered" {
			t.Fatalf("round %d: ordered, yet the reservation is %s", round, status)
		}
	}
}

package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/test/testenv"
)

type takenProblem struct {
	Code             string `json:"code"`
	UnavailableSeats []struct {
		ZoneID string `json:"zone_id"`
		SeatID string `json:"seat_id"`
	} `json:"unavailable_seats"`
}

func TestReservationLifecycle(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	before := f.Get(t, fmt.Sprintf("/v1/events/%d/availability", f.ids["swan-lake"]), f.keyA).Header.Get("ETag")

	res := f.reserve(t, f.keyA, "parterre-1-1", "parterre-1-2")
	if res.Status != http.StatusCreated {
		t.Fatalf("reserve: %d %s", res.Status, res.Body)
	}
	var body reservationBody
	res.Decode(t, &body)
	r := body.Data
	// Two stalls at 3000.00, fee 10% (min 50.00 once): 6000.00 + 600.00.
	if r.Status != "reserved" || len(r.Seats) != 2 || r.Total.Amount != 600000 || r.ServiceFee.Amount != 60000 ||
		r.TotalToPay.Amount != 660000 || r.Seats[0].Label != "Stalls, row 1, seat 1" || r.Seats[0].Price.Amount != 300000 {
		t.Fatalf("reservation: %+v", r)
	}
	if d := time.Until(r.ExpiresAt); d < 14*time.Minute || d > 15*time.Minute+time.Second {
		t.Fatalf("default hold is 15 minutes, expires in %v", d)
	}
	if res.Header.Get("Location") != "/v1/reservations/"+r.ID {
		t.Fatalf("Location %q", res.Header.Get("Location"))
	}
	states := f.seatStates(t)
	if states["parterre-1-1"] != "reserved" || states["parterre-1-2"] != "reserved" || states["parterre-1-3"] != "free" {
		t.Fatalf("availability after hold: %v", states)
	}
	afterHold := f.Get(t, fmt.Sprintf("/v1/events/%d/availability", f.ids["swan-lake"]), f.keyA).Header.Get("ETag")
	if afterHold == before {
		t.Fatal("availability ETag did not change with the hold")
	}

	// Another partner (a key of the same company) cannot take a held seat.
	other, _ := f.Key(t, f.companyA, apikey.Sandbox)
	taken := f.reserve(t, other, "parterre-1-2", "parterre-1-3")
	expectProblem(t, taken, http.StatusConflict, "seat_taken")
	var tp takenProblem
	taken.Decode(t, &tp)
	if len(tp.UnavailableSeats) != 1 || tp.UnavailableSeats[0].SeatID != "parterre-1-2" || tp.UnavailableSeats[0].ZoneID != "parterre" {
		t.Fatalf("unavailable_seats: %+v", tp)
	}
	if f.seatStates(t)["parterre-1-3"] != "free" {
		t.Fatal("a refused hold held a seat")
	}

	// Replace: keep 1-1, drop 1-2, add a balcony seat. The deadline stays.
	res = f.Do(t, http.MethodPatch, "/v1/reservations/"+r.ID, f.keyA, `{"seats": `+seatsJSON("parterre-1-1", "balcony-1-1")+`}`)
	if res.Status != 200 {
		t.Fatalf("replace: %d %s", res.Status, res.Body)
	}
	var replaced reservationBody
	res.Decode(t, &replaced)
	if !replaced.Data.ExpiresAt.Equal(r.ExpiresAt) || len(replaced.Data.Seats) != 2 || replaced.Data.Total.Amount != 450000 ||
		replaced.Data.ServiceFee.Amount != 45000 || replaced.Data.TotalToPay.Amount != 495000 {
		t.Fatalf("replaced: %+v", replaced.Data)
	}
	states = f.seatStates(t)
	if states["parterre-1-1"] != "reserved" || states["parterre-1-2"] != "free" || states["balcony-1-1"] != "reserved" {
		t.Fatalf("availability after replace: %v", states)
	}
	// A replace that wants a taken seat changes nothing.
	blocker := f.reserve(t, other, "balcony-1-2")
	if blocker.Status != 201 {
		t.Fatalf("blocker: %d", blocker.Status)
	}
	res = f.Do(t, http.MethodPatch, "/v1/reservations/"+r.ID, f.keyA, `{"seats": `+seatsJSON("parterre-1-5", "balcony-1-2")+`}`)
	expectProblem(t, res, http.StatusConflict, "seat_taken")
	states = f.seatStates(t)
	if states["parterre-1-1"] != "reserved" || states["balcony-1-1"] != "reserved" || states["parterre-1-5"] != "free" {
		t.Fatalf("a refused replace changed seats: %v", states)
	}

	got := f.Get(t, "/v1/reservations/"+r.ID, f.keyA)
	var gotBody reservationBody
	got.Decode(t, &gotBody)
	if got.Status != 200 || gotBody.Data.Status != "reserved" || len(gotBody.Data.Seats) != 2 {
		t.Fatalf("get: %d %s", got.Status, got.Body)
	}
	expectProblem(t, f.Get(t, "/v1/reservations/"+r.ID, f.keyB), http.StatusNotFound, "not_found")

	// Release frees the seats; releasing again answers the same.
	for i := 0; i < 2; i++ {
		res = f.Do(t, http.MethodDelete, "/v1/reservations/"+r.ID, f.keyA, "")
		var rel reservationBody
		res.Decode(t, &rel)
		if res.Status != 200 || rel.Data.Status != "released" {
			t.Fatalf("release #%d: %d %s", i+1, res.Status, res.Body)
		}
	}
	states = f.seatStates(t)
	if states["parterre-1-1"] != "free" || states["balcony-1-1"] != "free" {
		t.Fatalf("availability after release: %v", states)
	}
	expectProblem(t, f.Do(t, http.MethodPatch, "/v1/reservations/"+r.ID, f.keyA, `{"seats": `+seatsJSON("parterre-1-1")+`}`),
		http.StatusConflict, "invalid_state")
}

func TestReservationValidation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	swan := f.ids["swan-lake"]
	post := func(body string, headers ...string) *testenv.Response {
		return f.Do(t, http.MethodPost, "/v1/reservations", f.keyA, body, append([]string{idemKey(t)}, headers...)...)
	}
	noKey := f.Do(t, http.MethodPost, "/v1/reservations", f.keyA, fmt.Sprintf(`{"event_id": %d, "seats": %s}`, swan, seatsJSON("parterre-1-1")))
	expectProblem(t, noKey, http.StatusBadRequest, "idempotency_key_required")
	expectProblem(t, post(`{"event_id": 1, "seats": [`), http.StatusBadRequest, "malformed_request")

	many := make([]string, 21)
	for i := range many {
		many[i] = fmt.Sprintf("parterre-1-%d", i+1)
	}
	cases := []struct {
		name, body, location string
	}{
		{"no seats", fmt.Sprintf(`{"event_id": %d, "seats": []}`, swan), "body.seats"},
		{"21 seats", fmt.Sprintf(`{"event_id": %d, "seats": %s}`, swan, seatsJSON(many...)), "body.seats"},
		{"duplicate", fmt.Sprintf(`{"event_id": %d, "seats": %s}`, swan, seatsJSON("parterre-1-1", "parterre-1-1")), "body.seats[1].seat_id"},
		{"unknown seat", fmt.Sprintf(`{"event_id": %d, "seats": %s}`, swan, seatsJSON("parterre-9-1")), "body.seats[0].seat_id"},
		{"wrong zone", fmt.Sprintf(`{"event_id": %d, "seats": [{"zone_id": "balcony", "seat_id": "parterre-1-1"}]}`, swan), "body.seats[0].zone_id"},
		{"ttl too long", fmt.Sprintf(`{"event_id": %d, "seats": %s, "ttl_minutes": 61}`, swan, seatsJSON("parterre-1-1")), "body.ttl_minutes"},
		{"ttl zero", fmt.Sprintf(`{"event_id": %d, "seats": %s, "ttl_minutes": -1}`, swan, seatsJSON("parterre-1-1")), "body.ttl_minutes"},
		{"draft event", fmt.Sprintf(`{"event_id": %d, "seats": %s}`, f.ids["nutcracker"], seatsJSON("parterre-1-1")), "body.event_id"},
		{"event without scheme", fmt.Sprintf(`{"event_id": %d, "seats": %s}`, f.ids["standup"], seatsJSON("parterre-1-1")), "body.event_id"},
		{"missing event", fmt.Sprintf(`{"seats": %s}`, seatsJSON("parterre-1-1")), "body"},
		{"unknown field", fmt.Sprintf(`{"event_id": %d, "seats": %s, "colour": 1}`, swan, seatsJSON("parterre-1-1")), "body.colour"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := expectProblem(t, post(c.body), http.StatusUnprocessableEntity, "validation_error")
			found := false
			for _, e := range p.Errors {
				found = found || strings.HasPrefix(e.Location, c.location)
			}
			if !found {
				t.Fatalf("want an error at %s, got %+v", c.location, p.Errors)
			}
		})
	}
	expectProblem(t, post(fmt.Sprintf(`{"event_id": %d, "seats": %s}`, f.foreignID, seatsJSON("x-1-1"))), http.StatusNotFound, "not_found")
	readOnly, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCatalogRead, apikey.ScopeOrdersRead)
	expectProblem(t, f.reserve(t, readOnly, "parterre-1-1"), http.StatusForbidden, "insufficient_scope")

	var n int
	if err := f.DB.NewRaw("SELECT count(*) FROM reservations").Scan(context.Background(), &n); err != nil || n != 0 {
		t.Fatalf("refused requests created %d reservations (%v)", n, err)
	}
	if states := f.seatStates(t); states["parterre-1-1"] != "free" {
		t.Fatal("refused requests held a seat")
	}
}

func TestFiftyPartnersRaceForTwoSeats(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	keys := make([]string, 50)
	for i := range keys {
		keys[i], _ = f.Key(t, f.companyA, apikey.Sandbox)
	}
	var wg sync.WaitGroup
	results := make([]*testenv.Response, len(keys))
	start := make(chan struct{})
	for i, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = f.reserve(t, k, "parterre-2-1", "parterre-2-2")
		}()
	}
	close(start)
	wg.Wait()
	won, lost := 0, 0
	var winner reservationBody
	for _, res := range results {
		switch res.Status {
		case http.StatusCreated:
			won++
			res.Decode(t, &winner)
		case http.StatusConflict:
			var p takenProblem
			res.Decode(t, &p)
			if p.Code != "seat_taken" || len(p.UnavailableSeats) == 0 {
				t.Fatalf("409 without seat_taken details: %s", res.Body)
			}
			lost++
		default:
			t.Fatalf("unexpected %d %s", res.Status, res.Body)
		}
	}
	if won != 1 || lost != 49 {
		t.Fatalf("want 1 winner and 49 × 409, got %d and %d", won, lost)
	}
	var holders []string
	if err := f.DB.NewRaw("SELECT DISTINCT hold_id FROM event_seats WHERE seat_id IN ('parterre-2-1', 'parterre-2-2') AND event_id = ?",
		f.ids["swan-lake"]).Scan(context.Background(), &holders); err != nil {
		t.Fatal(err)
	}
	var rows int
	_ = f.DB.NewRaw("SELECT count(*) FROM reservations").Scan(context.Background(), &rows)
	if len(holders) != 1 || holders[0] != winner.Data.ID || rows != 1 {
		t.Fatalf("seats held by %v, %d reservations; winner %s", holders, rows, winner.Data.ID)
	}
	// Exactly one workflow started: the lost races started none.
	countWorkflows(t, f.Stack, fmt.Sprintf("CompanyId = %d", f.companyA), 1)
}

func TestTwentyPartnersOnDisjointSeatsAllWin(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var wg sync.WaitGroup
	statuses := make([]int, 20)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key, _ := f.Key(t, f.companyA, apikey.Sandbox)
			row, seat := i/10+1, i%10+1
			statuses[i] = f.reserve(t, key, fmt.Sprintf("parterre-%d-%d", row, seat), fmt.Sprintf("parterre-%d-%d", row, seat+10)).Status
		}()
	}
	wg.Wait()
	for i, st := range statuses {
		if st != http.StatusCreated {
			t.Fatalf("partner %d: %d", i, st)
		}
	}
	reserved := 0
	for _, st := range f.seatStates(t) {
		if st == "reserved" {
			reserved++
		}
	}
	if reserved != 40 {
		t.Fatalf("want 40 reserved seats, got %d", reserved)
	}
}

func TestLapsedHoldIsFreeWithoutWorker(t *testing.T) {
	t.Parallel()
	f := newFixture(t) // no worker runs in this test
	res := f.reserve(t, f.keyA, "parterre-3-1")
	var r reservationBody
	res.Decode(t, &r)
	if res.Status != 201 {
		t.Fatalf("reserve: %d %s", res.Status, res.Body)
	}
	// Move the deadline into the past, as if the worker had been down.
	if _, err := f.DB.ExecContext(context.Background(), `UPDATE reservations SET expires_at = now() - interval '1 second' WHERE id = ?;
		UPDATE event_seats SET hold_expires_at = now() - interval '1 second' WHERE hold_id = ?`, r.Data.ID, r.Data.ID); err != nil {
		t.Fatal(err)
	}
	if st := f.seatStates(t)["parterre-3-1"]; st != "free" {
		t.Fatalf("lapsed hold shows %q", st)
	}
	var got reservationBody
	f.Get(t, "/v1/reservations/"+r.Data.ID, f.keyA).Decode(t, &got)
	if got.Data.Status != "expired" {
		t.Fatalf("lapsed reservation reads %q", got.Data.Status)
	}
	expectProblem(t, f.Do(t, http.MethodPatch, "/v1/reservations/"+r.Data.ID, f.keyA, `{"seats": `+seatsJSON("parterre-3-2")+`}`),
		http.StatusConflict, "reservation_expired")
	expectProblem(t, f.Do(t, http.MethodDelete, "/v1/reservations/"+r.Data.ID, f.keyA, ""), http.StatusConflict, "reservation_expired")
	other, _ := f.Key(t, f.companyA, apikey.Sandbox)
	if res := f.reserve(t, other, "parterre-3-1"); res.Status != 201 {
		t.Fatalf("a lapsed seat cannot be held again: %d %s", res.Status, res.Body)
	}
}

func TestWorkerExpiresTheHold(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Holds.TTLUnit = time.Second // ttl_minutes=1 → a one-second hold
	f.StartWorker(t)
	res := f.Do(t, http.MethodPost, "/v1/reservations", f.keyA,
		fmt.Sprintf(`{"event_id": %d, "seats": %s, "ttl_minutes": 1}`, f.ids["swan-lake"], seatsJSON("parterre-3-3")), idemKey(t))
	var r reservationBody
	res.Decode(t, &r)
	if res.Status != 201 {
		t.Fatalf("reserve: %d %s", res.Status, res.Body)
	}
	// The event's holds workflow finalises the hold within a second of its
	// deadline; Postgres and the seat map agree.
	f.AwaitHold(t, r.Data.ID, states.ReservationExpired, 30*time.Second)
	var stored, seat string
	if err := f.DB.NewRaw("SELECT status FROM reservations WHERE id = ?", r.Data.ID).Scan(context.Background(), &stored); err != nil {
		t.Fatal(err)
	}
	if err := f.DB.NewRaw("SELECT state FROM event_seats WHERE seat_id = 'parterre-3-3' AND event_id = ?", f.ids["swan-lake"]).Scan(context.Background(), &seat); err != nil {
		t.Fatal(err)
	}
	if stored != "expired" || seat != "free" {
		t.Fatalf("after expiry: stored %q, seat %q", stored, seat)
	}
}

// Holds read the event from a short-lived cache; an event that stops
// selling meanwhile is refused all the same, by the hold statement.
func TestCachedEventThatStoppedSellingRefusesHolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Holds.CacheSaleContext(time.Hour)
	if res := f.reserve(t, f.keyA, "parterre-1-1"); res.Status != http.StatusCreated {
		t.Fatalf("reserve: %d %s", res.Status, res.Body)
	}
	if _, err := f.DB.ExecContext(context.Background(), "UPDATE events SET status = 'archived' WHERE id = ?", f.ids["swan-lake"]); err != nil {
		t.Fatal(err)
	}
	res := f.reserve(t, f.keyA, "parterre-1-2")
	expectProblem(t, res, http.StatusUnprocessableEntity, "validation_error")
	if !strings.Contains(string(res.Body), "not on sale") {
		t.Fatalf("refusal does not say why: %s", res.Body)
	}
	var state string
	if err := f.DB.NewRaw("SELECT state FROM event_seats WHERE event_id = ? AND seat_id = 'parterre-1-2'", f.ids["swan-lake"]).
		Scan(context.Background(), &state); err != nil {
		t.Fatal(err)
	}
	if state != "free" {
		t.Fatalf("seat of an archived event is %q", state)
	}
}

// Holds keep the event's seat list in memory while its seat version stays,
// not reading it again each time the event is; an import that moves a row
// to another category moves the version, and a hold made once the event is
// read again is priced in the new category.
func TestCachedSeatsFollowAnImport(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const ttl = 50 * time.Millisecond
	f.Holds.CacheSaleContext(ttl)
	hold := func(seat string) reservation {
		t.Helper()
		res := f.reserve(t, f.keyA, seat)
		if res.Status != http.StatusCreated {
			t.Fatalf("reserve %s: %d %s", seat, res.Status, res.Body)
		}
		var r reservationBody
		res.Decode(t, &r)
		return r.Data
	}
	first := hold("parterre-1-1")
	if first.Seats[0].Price.Amount != 300000 {
		t.Fatalf("a stalls seat: %+v, want 300000", first.Seats[0])
	}
	// Kept while the version stays: a label changed behind the version's
	// back (no writer does this; an import moves it) is not read again,
	// however many times the event itself is.
	if _, err := f.DB.ExecContext(context.Background(), "UPDATE event_seats SET label = 'renamed' WHERE event_id = ? AND seat_id = 'parterre-1-2'",
		f.ids["swan-lake"]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * ttl)
	if r := hold("parterre-1-2"); r.Seats[0].Label == "renamed" {
		t.Fatalf("the seat list was read again with its version unchanged: %+v", r.Seats[0])
	}
	// Row 2 of the parterre now sells as balcony, at 150000.
	demo := strings.Replace(string(catalogfile.Demo(time.Now())), `"zones": ["balcony"]}`,
		`"zones": ["balcony"], "rows": {"parterre": ["2"]}}`, 1)
	if !strings.Contains(demo, `"rows": {"parterre": ["2"]}`) {
		t.Fatal("the demo catalog changed: no balcony category to move a row to")
	}
	f.Import(t, f.companyA, []byte(demo))
	time.Sleep(2 * ttl)
	if r := hold("parterre-2-1"); r.Seats[0].Price.Amount != 150000 {
		t.Fatalf("a seat moved to the balcony category: %+v, want 150000", r.Seats[0])
	}
}

// TestReplaceRacingReleaseLeavesNoSeatHeld: partners replacing and releasing
// the same reservation at once end with it released and none of the seats
// any replace held for it still held.
func TestReplaceRacingReleaseLeavesNoSeatHeld(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	for round := 0; round < 8; round++ {
		row := round%3 + 1
		res := f.reserve(t, f.keyA, fmt.Sprintf("parterre-%d-1", row))
		var r reservationBody
		res.Decode(t, &r)
		if res.Status != http.StatusCreated {
			t.Fatalf("round %d reserve: %d %s", round, res.Status, res.Body)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		statuses := make([]int, 12)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				var res *testenv.Response
				if i%4 == 3 {
					res = f.Do(t, http.MethodDelete, "/v1/reservations/"+r.Data.ID, f.keyA, "")
				} else {
					seats := seatsJSON(fmt.Sprintf("parterre-%d-%d", row, 2*i+2), fmt.Sprintf("parterre-%d-%d", row, 2*i+3))
					res = f.Do(t, http.MethodPatch, "/v1/reservations/"+r.Data.ID, f.keyA, `{"seats": `+seats+`}`)
				}
				statuses[i] = res.Status
				if res.Status != http.StatusOK && res.Status != http.StatusConflict {
					t.Errorf("round %d request %d: %d %s", round, i, res.Status, res.Body)
				}
			}()
		}
		close(start)
		wg.Wait()

		var status string
		var held []string
		if err := f.DB.NewRaw("SELECT status FROM reservations WHERE id = ?", r.Data.ID).Scan(ctx, &status); err != nil {
			t.Fatal(err)
		}
		if err := f.DB.NewRaw("SELECT seat_id FROM event_seats WHERE hold_id = ? AND state = 'held' ORDER BY seat_id",
			r.Data.ID).Scan(ctx, &held); err != nil {
			t.Fatal(err)
		}
		if status != "released" || len(held) > 0 {
			t.Fatalf("round %d (%v): reservation %s, seats still held by it: %v", round, statuses, status, held)
		}
	}
	for seat, st := range f.seatStates(t) {
		if st != "free" {
			t.Fatalf("seat %s is %s after every reservation was released", seat, st)
		}
	}
}

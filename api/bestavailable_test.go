package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ticketsales/ticketsales/test/testenv"
)

func (f *fixture) reserveBest(t *testing.T, best string) *testenv.Response {
	t.Helper()
	return f.Do(t, http.MethodPost, "/v1/reservations", f.keyA,
		fmt.Sprintf(`{"event_id": %d, "best_available": %s}`, f.ids["swan-lake"], best), idemKey(t))
}

// rushBest sends n best-available holds at once and returns the answers.
func (f *fixture) rushBest(t *testing.T, n int, best string) []*testenv.Response {
	var wg sync.WaitGroup
	results := make([]*testenv.Response, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = f.reserveBest(t, best)
		}()
	}
	wg.Wait()
	return results
}

// TestBestAvailable: the service picks the best seats — a group side by
// side in the stalls' front row centre — holds them like listed seats, and
// answers sold_out with what is left when nothing fits; seats and
// best_available together, or neither, are refused.
func TestBestAvailable(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.reserveBest(t, `{"quantity": 4, "zone_ids": ["parterre"], "together": true}`)
	if res.Status != http.StatusCreated {
		t.Fatalf("best available: %d %s", res.Status, res.Body)
	}
	var r reservationBody
	res.Decode(t, &r)
	var got []string
	for _, s := range r.Data.Seats {
		got = append(got, s.SeatID)
	}
	if want := "[parterre-1-14 parterre-1-15 parterre-1-16 parterre-1-17]"; fmt.Sprint(got) != want {
		t.Fatalf("picked %v, want %s", got, want)
	}
	if st := f.seatStates(t); st["parterre-1-15"] != "reserved" {
		t.Fatalf("picked seat is %q in availability", st["parterre-1-15"])
	}
	// The balcony has six seats: seven together cannot fit.
	p := expectProblem(t, f.reserveBest(t, `{"quantity": 7, "zone_ids": ["balcony"], "together": true}`), http.StatusConflict, "sold_out")
	if p.Detail == "" {
		t.Fatal("sold_out without a detail")
	}
	expectProblem(t, f.Do(t, http.MethodPost, "/v1/reservations", f.keyA,
		fmt.Sprintf(`{"event_id": %d, "seats": %s, "best_available": {"quantity": 1}}`, f.ids["swan-lake"], seatsJSON("parterre-3-1")), idemKey(t)),
		http.StatusUnprocessableEntity, "validation_error")
	expectProblem(t, f.Do(t, http.MethodPost, "/v1/reservations", f.keyA,
		fmt.Sprintf(`{"event_id": %d}`, f.ids["swan-lake"]), idemKey(t)), http.StatusUnprocessableEntity, "validation_error")
	expectProblem(t, f.reserveBest(t, `{"quantity": 21}`), http.StatusUnprocessableEntity, "validation_error")

	// The aggregator adapter: reserve a quantity, no seats.
	res = f.Do(t, http.MethodPost, "/aggregator/v1/reserve", f.keyA, fmt.Sprintf(`{"sessionId": "%d", "quantity": 3}`, f.ids["swan-lake"]))
	if res.Status != http.StatusCreated {
		t.Fatalf("aggregator reserve by quantity: %d %s", res.Status, res.Body)
	}
	var o aggOrder
	res.Decode(t, &o)
	// The stalls come first in the scheme: three of its front row's
	// centre (3 × 3000.00 + 10%).
	if o.Status != "RESERVED" || o.Amount.Value != 990000 {
		t.Fatalf("aggregator reserve by quantity: %s", res.Body)
	}
	// It says which seats it held: three of the stalls, side by side,
	// each as reserve takes them, and those seats are now reserved.
	if len(o.Seats) != 3 {
		t.Fatalf("the reserve by quantity names %d seats: %s", len(o.Seats), res.Body)
	}
	states := f.seatStates(t)
	for i, s := range o.Seats {
		zone, id, _ := strings.Cut(s.ID, "|")
		if zone != "parterre" || s.Sector != zone || s.Row != o.Seats[0].Row || states[id] != "reserved" {
			t.Fatalf("held seat %d: %+v (%s)", i, s, states[id])
		}
	}
	if again := f.aggGet(t, o.OrderID); len(again.Seats) != 3 || again.Seats[0] != o.Seats[0] {
		t.Fatalf("the order read again names %+v", again.Seats)
	}
}

// TestBestAvailableRush: 40 buyers ask for two seats each at once; every
// one gets two seats, no seat goes to two buyers, nobody errs.
func TestBestAvailableRush(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const buyers = 40
	results := f.rushBest(t, buyers, `{"quantity": 2}`)
	owner := map[string]int{}
	for i, res := range results {
		if res.Status != http.StatusCreated {
			t.Fatalf("buyer %d: %d %s", i, res.Status, res.Body)
		}
		var r reservationBody
		res.Decode(t, &r)
		if len(r.Data.Seats) != 2 {
			t.Fatalf("buyer %d got %d seats", i, len(r.Data.Seats))
		}
		for _, s := range r.Data.Seats {
			if j, taken := owner[s.SeatID]; taken {
				t.Fatalf("seat %s went to buyers %d and %d", s.SeatID, j, i)
			}
			owner[s.SeatID] = i
		}
	}
	held := 0
	for _, st := range f.seatStates(t) {
		if st == "reserved" {
			held++
		}
	}
	if held != 2*buyers {
		t.Fatalf("%d seats reserved in availability, want %d", held, 2*buyers)
	}
}

// TestBestAvailableTogetherRush: 24 buyers of two seats side by side at
// once, in a hall with room for 45 such pairs: every buyer gets two
// neighbours in one row, and no seat goes to two buyers. Buyers arriving
// together must not be told sold_out because they all tried the same best
// groups (the picks look past each other's locked seats).
func TestBestAvailableTogetherRush(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const buyers = 24
	results := f.rushBest(t, buyers, `{"quantity": 2, "together": true}`)
	owner := map[string]int{}
	for i, res := range results {
		if res.Status != http.StatusCreated {
			t.Fatalf("buyer %d: %d %s", i, res.Status, res.Body)
		}
		var r reservationBody
		res.Decode(t, &r)
		a, b := r.Data.Seats[0], r.Data.Seats[1]
		var za, ra, zb, rb string
		var na, nb int
		fmt.Sscanf(strings.ReplaceAll(a.SeatID, "-", " "), "%s %s %d", &za, &ra, &na)
		fmt.Sscanf(strings.ReplaceAll(b.SeatID, "-", " "), "%s %s %d", &zb, &rb, &nb)
		if za != zb || ra != rb || nb-na != 1 && na-nb != 1 {
			t.Fatalf("buyer %d got %s and %s: not side by side", i, a.SeatID, b.SeatID)
		}
		for _, s := range r.Data.Seats {
			if j, taken := owner[s.SeatID]; taken {
				t.Fatalf("seat %s went to buyers %d and %d", s.SeatID, j, i)
			}
			owner[s.SeatID] = i
		}
	}
}

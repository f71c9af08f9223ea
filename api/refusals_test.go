package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// An on-sale rush's attempts at seats an instance knows are taken are
// refused from its memory: the same 409 seat_taken, nothing written (not
// even an idempotency record, so a retry asks again), and the memory lets
// go as soon as the seats are freed, here or by another process.
func TestRushRefusalsFromMemory(t *testing.T) {
	f := newFixture(t)
	url := f.ProductionLikeAPI(t)
	ctx := context.Background()
	other, _ := f.Key(t, f.companyA, apikey.Sandbox)
	event := f.ids["swan-lake"]
	body := fmt.Sprintf(`{"event_id": %d, "seats": %s}`, event, seatsJSON("parterre-2-7", "parterre-2-8"))
	hold := func(key, idem string) *testenv.Response {
		return testenv.Do(t, url, http.MethodPost, "/v1/reservations", key, body, "Idempotency-Key: "+idem)
	}
	records := func(idem string) int {
		var n int
		if err := f.DB.NewRaw("SELECT count(*) FROM idempotency_keys WHERE key = ?", idem).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	first := hold(f.keyA, "rush-first")
	if first.Status != http.StatusCreated {
		t.Fatalf("first hold: %d %s", first.Status, first.Body)
	}
	var won struct{ Data struct{ ID string } }
	first.Decode(t, &won)

	// The instance forgets an event's seats on every notice for it, its own
	// announcement of the hold too (≤ 50 ms after it); a refusal from
	// Postgres fills the memory again, and the next attempt is answered
	// from it.
	fromMemory, fromPostgres := "", ""
	for i, deadline := 0, time.Now().Add(5*time.Second); fromMemory == "" && time.Now().Before(deadline); i++ {
		idem := fmt.Sprintf("rush-second-%d", i)
		res := hold(other, idem)
		if res.Status != http.StatusConflict || !strings.Contains(string(res.Body), `"seat_taken"`) ||
			!strings.Contains(string(res.Body), "parterre-2-7") || !strings.Contains(string(res.Body), "parterre-2-8") {
			t.Fatalf("hold of held seats: %d %s", res.Status, res.Body)
		}
		if records(idem) == 0 {
			fromMemory = idem
		} else if fromPostgres == "" {
			fromPostgres = idem
		}
	}
	if fromMemory == "" || fromPostgres == "" {
		t.Fatalf("refusals from memory: %q, from Postgres: %q; want one of each", fromMemory, fromPostgres)
	}
	// The holds metric counts each decision once: a repeat of a key that
	// Postgres refused gets the stored answer, not one more refusal, while
	// a new key's refusal counts.
	refused := func() float64 { return testutil.ToFloat64(f.Metrics.Holds.WithLabelValues("refused")) }
	before := refused()
	if res := hold(other, fromPostgres); res.Status != http.StatusConflict || res.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("repeat of a refused hold: %d %q %s", res.Status, res.Header.Get("Idempotent-Replayed"), res.Body)
	}
	if res := hold(other, "rush-counted"); res.Status != http.StatusConflict {
		t.Fatalf("hold of held seats: %d %s", res.Status, res.Body)
	}
	if got := refused() - before; got != 1 {
		t.Errorf("refused holds counted %v times for one refusal and one repeat, want 1", got)
	}
	// A request the schema refuses is not masked by the memory.
	wrongZone := testenv.Do(t, url, http.MethodPost, "/v1/reservations", other,
		fmt.Sprintf(`{"event_id": %d, "seats": [{"zone_id": "balcony", "seat_id": "parterre-2-7"}]}`, event), "Idempotency-Key: rush-zone")
	if wrongZone.Status != http.StatusUnprocessableEntity {
		t.Fatalf("a seat named in the wrong zone: %d %s", wrongZone.Status, wrongZone.Body)
	}

	// Released here: the same key asks again and wins.
	if res := testenv.Do(t, url, http.MethodDelete, "/v1/reservations/"+won.Data.ID, f.keyA, ""); res.Status != http.StatusOK {
		t.Fatalf("release: %d %s", res.Status, res.Body)
	}
	again := hold(other, fromMemory)
	if again.Status != http.StatusCreated || again.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry after the release: %d %s", again.Status, again.Body)
	}
	var second struct{ Data struct{ ID string } }
	again.Decode(t, &second)

	// Freed by another process (as the worker's expiry would): the notice
	// makes the memory let go, long before the hold's deadline.
	if res := hold(f.keyA, "rush-third"); res.Status != http.StatusConflict {
		t.Fatalf("hold of seats held again: %d %s", res.Status, res.Body)
	}
	if changed, err := store.EndReservation(ctx, f.DB, second.Data.ID, states.ReservationReleased); err != nil || !changed {
		t.Fatalf("release elsewhere: %v %v", changed, err)
	}
	var last *testenv.Response
	for i, deadline := 0, time.Now().Add(5*time.Second); time.Now().Before(deadline); i++ {
		if last = hold(f.keyA, fmt.Sprintf("rush-fourth-%d", i)); last.Status == http.StatusCreated {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("seats freed elsewhere still refused after 5 s: %d %s", last.Status, last.Body)
}

// Many buyers racing through the api for the same seats: exactly one
// wins, every other is told the seats are taken, none errs, and the seats
// belong to the winner's hold.
func TestRaceForTheSameSeatsThroughTheAPI(t *testing.T) {
	f := newFixture(t)
	url := f.ProductionLikeAPI(t)
	event := f.ids["swan-lake"]
	body := fmt.Sprintf(`{"event_id": %d, "seats": %s}`, event, seatsJSON("parterre-2-9", "parterre-2-10"))
	codes := map[int]int{}
	var winner string
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := testenv.NewRequest(t, http.MethodPost, url+"/v1/reservations", f.keyA, body, fmt.Sprintf("Idempotency-Key: race-%d", i))
			<-start
			res, err := testenv.Send(http.DefaultClient, req)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				codes[0]++
				return
			}
			codes[res.Status]++
			if res.Status == http.StatusCreated {
				var r struct{ Data struct{ ID string } }
				res.Decode(t, &r)
				winner = r.Data.ID
			}
		}()
	}
	close(start)
	wg.Wait()
	if codes[http.StatusCreated] != 1 || codes[http.StatusConflict] != 99 {
		t.Fatalf("answers %v; want one 201 and 99 409", codes)
	}
	var holders []string
	if err := f.DB.NewRaw("SELECT DISTINCT hold_id FROM event_seats WHERE event_id = ? AND seat_id IN ('parterre-2-9', 'parterre-2-10')", event).
		Scan(context.Background(), &holders); err != nil {
		t.Fatal(err)
	}
	if len(holders) != 1 || holders[0] != winner {
		t.Fatalf("seats held by %v, the winner is %s", holders, winner)
	}
}

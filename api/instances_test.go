package api_test

// Several api instances and workers over one Postgres and Temporal, as
// production runs them behind a balancer: what one instance changes, the
// other honours.

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// memoryBound is how long after a seat is freed anywhere an api instance
// may still refuse it from memory, or show it taken in availability
// (docs/decisions.md, "Rush refusals from memory").
const memoryBound = time.Second

// instances is a stack with two production-like api instances, a and b,
// and two workers on its task queue.
type instances struct {
	*fixture
	a, b *testenv.Instance
}

func newInstances(t *testing.T) *instances {
	t.Helper()
	f := newFixture(t)
	mailer, err := mail.New("", t.TempDir(), "tickets@ticketsales.test") // production orders' e-mails
	if err != nil {
		t.Fatal(err)
	}
	f.Mailer = mailer
	f.StartWorker(t)
	f.StartWorker(t)
	return &instances{fixture: f, a: f.ProductionLikeInstance(t), b: f.ProductionLikeInstance(t)}
}

// holdRequest is a hold of swan-lake seats at url (ttl 0: the default).
func (f *fixture) holdRequest(t *testing.T, url, key, idem string, ttl int, seats ...string) *http.Request {
	body := fmt.Sprintf(`{"event_id": %d, "seats": %s}`, f.ids["swan-lake"], seatsJSON(seats...))
	if ttl > 0 {
		body = fmt.Sprintf(`{"event_id": %d, "seats": %s, "ttl_minutes": %d}`, f.ids["swan-lake"], seatsJSON(seats...), ttl)
	}
	return testenv.NewRequest(t, http.MethodPost, url+"/v1/reservations", key, body, "Idempotency-Key: "+idem)
}

// isSeatTaken tells a 409 seat_taken.
func isSeatTaken(res *testenv.Response) bool {
	return res.Status == http.StatusConflict && strings.Contains(string(res.Body), `"seat_taken"`)
}

// idempotencyRecorded tells whether a request with this Idempotency-Key
// reached the ordinary path (a refusal from memory writes no record).
func (f *fixture) idempotencyRecorded(t *testing.T, idem string) bool {
	t.Helper()
	var n int
	if err := f.DB.NewRaw("SELECT count(*) FROM idempotency_keys WHERE key = ?", idem).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// refusedFromMemory asks url to hold the seats until it refuses them from
// its memory twice in a row, 100 ms apart: the instance then knows them
// taken, and no notice still on its way from the change that took them
// will make it forget before the test frees them.
func (f *fixture) refusedFromMemory(t *testing.T, url, key string, seats ...string) {
	t.Helper()
	inARow := 0
	for i, deadline := 0, time.Now().Add(10*time.Second); time.Now().Before(deadline); i++ {
		idem := fmt.Sprintf("%s-remember-%d-%d", t.Name(), i, time.Now().UnixNano())
		res, err := testenv.Send(http.DefaultClient, f.holdRequest(t, url, key, idem, 0, seats...))
		if err != nil {
			t.Fatal(err)
		}
		if !isSeatTaken(res) {
			t.Fatalf("hold of taken seats %v: %d %s", seats, res.Status, res.Body)
		}
		if f.idempotencyRecorded(t, idem) {
			inARow = 0
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if inARow++; inARow == 2 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s never refused %v from memory twice in a row", url, seats)
}

// awaitFreedOn polls url every 25 ms until its availability shows seat
// shown free, then until a hold of seat wins; freed is when the seats were
// free in Postgres. Availability showing shown taken, or a hold refused,
// when asked more than memoryBound after freed fails the test. (Seen in
// this order: a hold won through url would refresh its availability.)
func (f *fixture) awaitFreedOn(t *testing.T, url, key string, freed time.Time, seat, shown string) {
	t.Helper()
	for {
		asked := time.Now()
		st := f.seatStatusOn(t, url, shown)
		if st == "free" {
			break
		}
		if asked.After(freed.Add(memoryBound)) {
			t.Fatalf("%s shows seat %s %s %v after it was freed", url, shown, st, asked.Sub(freed).Round(time.Millisecond))
		}
		time.Sleep(25 * time.Millisecond)
	}
	shownAfter := time.Since(freed)
	for i := 0; ; i++ {
		asked := time.Now()
		res, err := testenv.Send(http.DefaultClient, f.holdRequest(t, url, key, fmt.Sprintf("%s-free-%d-%d", t.Name(), i, asked.UnixNano()), 0, seat))
		switch {
		case err != nil:
			t.Fatal(err)
		case res.Status == http.StatusCreated:
			t.Logf("%s showed %s free %v and held %s %v after they were freed", url, shown, shownAfter.Round(time.Millisecond),
				seat, time.Since(freed).Round(time.Millisecond))
			return
		case !isSeatTaken(res):
			t.Fatalf("hold of a freed seat: %d %s", res.Status, res.Body)
		case asked.After(freed.Add(memoryBound)):
			t.Fatalf("%s refused seat %s %v after it was freed: %s", url, seat, asked.Sub(freed).Round(time.Millisecond), res.Body)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// A seat freed through one instance (released, its order cancelled, its
// hold expired, its ticket refunded) can be held through the other within
// memoryBound, though the other remembered it taken, and the other's
// availability shows it free within that time. So too when the notice of
// the change is lost (the instance that made it died before announcing
// it): the bound holds by time alone. And notices alone free it: an
// instance that would trust its memory and cache for a minute without one
// still lets go within the bound.
func TestSeatFreedOnOneInstanceIsHeldOnTheOther(t *testing.T) {
	f := newInstances(t)
	other, _ := f.Key(t, f.companyA, apikey.Sandbox)
	deaf := f.ProductionLikeInstance(t) // trusts what it read until a notice comes
	deaf.Holds.RememberTakenFor(time.Minute)
	deaf.Catalog.TrustCacheFor(time.Minute)
	silent, err := store.OpenAppNotifying(context.Background(), f.DBURL) // the seat triggers stay silent for it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = silent.Close() })
	hold := func(t *testing.T, ttl int, seats ...string) reservation {
		t.Helper()
		res, err := testenv.Send(http.DefaultClient, f.holdRequest(t, f.a.URL, f.keyA, fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()), ttl, seats...))
		if err != nil || res.Status != http.StatusCreated {
			t.Fatalf("hold on a: %v %v", res, err)
		}
		var r reservationBody
		res.Decode(t, &r)
		return r.Data
	}
	order := func(t *testing.T, r reservation) order {
		t.Helper()
		res := testenv.Do(t, f.a.URL, http.MethodPost, "/v1/orders", f.keyA, fmt.Sprintf(`{"event_id": %d, "reservation_id": %q, "customer": %s, "payment": "external"}`,
			f.ids["swan-lake"], r.ID, customer), idemKey(t))
		if res.Status != http.StatusCreated {
			t.Fatalf("order on a: %d %s", res.Status, res.Body)
		}
		var ob orderBody
		res.Decode(t, &ob)
		return ob.Data
	}
	released := func(t *testing.T, seats []string) func() time.Time {
		r := hold(t, 0, seats...)
		return func() time.Time {
			if res := testenv.Do(t, f.a.URL, http.MethodDelete, "/v1/reservations/"+r.ID, f.keyA, ""); res.Status != http.StatusOK {
				t.Fatalf("release on a: %d %s", res.Status, res.Body)
			}
			return time.Now()
		}
	}
	for _, c := range []struct {
		name  string
		seats []string
		// take makes the seats taken through a; the function it returns
		// frees them and says when they were free in Postgres.
		take func(t *testing.T, seats []string) (free func() time.Time)
		// on is the instance that must see them free: b, or deaf.
		on *testenv.Instance
	}{
		// First, while no other change of the event is under way: any
		// notice for the event makes an instance forget all of it.
		{"notice lost", []string{"parterre-2-1", "parterre-2-2"}, func(t *testing.T, seats []string) func() time.Time {
			r := hold(t, 0, seats...)
			return func() time.Time {
				// As an instance releases it, dying before it announces the change.
				if changed, err := store.EndReservation(context.Background(), silent, r.ID, states.ReservationReleased); err != nil || !changed {
					t.Fatalf("release without a notice: %v %v", changed, err)
				}
				return time.Now()
			}
		}, f.b},
		{"notices alone", []string{"parterre-2-3", "parterre-2-4"}, released, deaf},
		{"released", []string{"parterre-1-1", "parterre-1-2"}, released, f.b},
		{"order cancelled", []string{"parterre-1-3", "parterre-1-4"}, func(t *testing.T, seats []string) func() time.Time {
			o := order(t, hold(t, 0, seats...))
			return func() time.Time {
				res := testenv.Do(t, f.a.URL, http.MethodPost, fmt.Sprintf("/v1/orders/%d/cancel", o.ID), f.keyA, "")
				if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"cancelled"`) {
					t.Fatalf("cancel on a: %d %s", res.Status, res.Body)
				}
				return time.Now()
			}
		}, f.b},
		{"ticket refunded", []string{"parterre-1-7", "parterre-1-8"}, func(t *testing.T, seats []string) func() time.Time {
			o := order(t, hold(t, 0, seats...))
			res := testenv.Do(t, f.a.URL, http.MethodPost, fmt.Sprintf("/v1/orders/%d/confirm", o.ID), f.keyA,
				fmt.Sprintf(`{"external_payment_id": "ext-%d", "paid_amount": %d}`, o.ID, o.Amount.Amount), idemKey(t))
			if res.Status != http.StatusOK {
				t.Fatalf("confirm on a: %d %s", res.Status, res.Body)
			}
			return func() time.Time {
				res := testenv.Do(t, f.a.URL, http.MethodPost, fmt.Sprintf("/v1/orders/%d/refund", o.ID), f.keyA, `{"reason": "cannot come"}`, idemKey(t))
				if res.Status != http.StatusCreated || !strings.Contains(string(res.Body), `"completed"`) {
					t.Fatalf("refund on a: %d %s", res.Status, res.Body)
				}
				return time.Now()
			}
		}, f.b},
		{"hold expired", []string{"parterre-1-5", "parterre-1-6"}, func(t *testing.T, seats []string) func() time.Time {
			f.a.Holds.TTLUnit = time.Second // ttl_minutes=5 → a five-second hold
			r := hold(t, 5, seats...)
			f.a.Holds.TTLUnit = time.Minute
			return func() time.Time {
				time.Sleep(time.Until(r.ExpiresAt)) // the workers expire it
				return r.ExpiresAt
			}
		}, f.b},
	} {
		t.Run(c.name, func(t *testing.T) {
			free := c.take(t, c.seats)
			// The instance knows them taken: its availability (cached, its
			// ETag current) shows them so once a's announcement came, and
			// it refuses them from memory, read just now.
			if st := f.awaitSeatStatus(t, c.on.URL, c.seats[1], "free"); st == "free" {
				t.Fatalf("%s still shows the taken seat %s free", c.on.URL, c.seats[1])
			}
			f.refusedFromMemory(t, c.on.URL, other, c.seats[0])
			f.awaitFreedOn(t, c.on.URL, other, free(), c.seats[0], c.seats[1])
		})
	}
}

// attempt is one buyer's hold request in a race.
type attempt struct {
	seat       string
	instance   int // 0: a, 1: b
	idem       string
	start, end time.Time
	status     int
}

// win is a won hold and what its buyer did with it: released, or ordered
// and cancelled, by a request sent at freeStart and answered at freeEnd; or
// ordered and paid (both zero: sold).
type win struct {
	attempt
	reservation        string
	order              int64
	freeStart, freeEnd time.Time
}

// Buyers race for the same few seats through two instances, each hold
// answered by whichever instance the balancer picked, and two workers run
// the sagas. Per seat and round, the first winner releases the hold through
// the other instance, the second orders and cancels the order through the
// other instance, the third orders and confirms: the seat is sold. No seat
// is held or sold twice, every paid order has exactly its tickets, and
// every 409 seat_taken was for a seat taken at the time (or freed less
// than memoryBound before, or wanted by a hold in flight).
func TestTwoInstancesRaceForTheSameSeats(t *testing.T) {
	f := newInstances(t)
	urls := []string{f.a.URL, f.b.URL}
	sandbox, _ := f.Key(t, f.companyA, apikey.Sandbox)
	prod1, _ := f.Key(t, f.companyA, apikey.Production)
	prod2, _ := f.Key(t, f.companyA, apikey.Production)
	keys := []string{f.keyA, sandbox, prod1, prod2}
	const rounds, seatsPerRound, buyers = 3, 3, 40

	var mu sync.Mutex
	var attempts []attempt
	var wins []win
	winsOf := map[string]int{}
	sold := map[string]bool{}
	// send runs a request, failing the test (not the goroutine) on errors.
	send := func(req *http.Request, want int) (*testenv.Response, bool) {
		res, err := testenv.Send(http.DefaultClient, req)
		if err != nil || res.Status != want {
			t.Errorf("%s %s: want %d, got %v %v", req.Method, req.URL.Path, want, res, err)
			return nil, false
		}
		return res, true
	}
	// finish does with a won hold what the seat's script says: release,
	// order and cancel, or order and confirm.
	finish := func(w win, key string, i int) {
		own, other := urls[w.instance], urls[1-w.instance]
		mu.Lock()
		k := winsOf[w.seat]
		winsOf[w.seat]++
		mu.Unlock()
		if k == 0 {
			w.freeStart = time.Now()
			if _, ok := send(testenv.NewRequest(t, http.MethodDelete, other+"/v1/reservations/"+w.reservation, key, ""), http.StatusOK); !ok {
				return
			}
			w.freeEnd = time.Now()
		} else {
			res, ok := send(testenv.NewRequest(t, http.MethodPost, own+"/v1/orders", key, fmt.Sprintf(
				`{"event_id": %d, "reservation_id": %q, "customer": %s, "payment": "external"}`, f.ids["swan-lake"], w.reservation, customer),
				fmt.Sprintf("Idempotency-Key: race-order-%d-%d", i, time.Now().UnixNano())), http.StatusCreated)
			if !ok {
				return
			}
			var ob orderBody
			res.Decode(t, &ob)
			w.order = ob.Data.ID
			if k == 1 {
				w.freeStart = time.Now()
				if _, ok := send(testenv.NewRequest(t, http.MethodPost, fmt.Sprintf("%s/v1/orders/%d/cancel", other, w.order), key, ""), http.StatusOK); !ok {
					return
				}
				w.freeEnd = time.Now()
			} else if _, ok := send(testenv.NewRequest(t, http.MethodPost, fmt.Sprintf("%s/v1/orders/%d/confirm", own, w.order), key,
				fmt.Sprintf(`{"external_payment_id": "race-%d", "paid_amount": %d}`, w.order, ob.Data.Amount.Amount),
				fmt.Sprintf("Idempotency-Key: race-confirm-%d-%d", i, time.Now().UnixNano())), http.StatusOK); !ok {
				return
			}
		}
		mu.Lock()
		defer mu.Unlock()
		wins = append(wins, w)
		if k >= 2 {
			sold[w.seat] = true
		}
	}
	var allSeats []string
	for round := range rounds {
		seats := make([]string, seatsPerRound)
		for i := range seats {
			seats[i] = fmt.Sprintf("parterre-%d-%d", 1+round, 1+i)
		}
		allSeats = append(allSeats, seats...)
		deadline := time.Now().Add(time.Minute)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range buyers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				seat, inst, key := seats[i%seatsPerRound], i%2, keys[i%len(keys)]
				<-start
				for n := 0; time.Now().Before(deadline); n++ {
					mu.Lock()
					done := sold[seat]
					mu.Unlock()
					if done {
						return
					}
					a := attempt{seat: seat, instance: inst, idem: fmt.Sprintf("race-%d-%d-%d", round, i, n), start: time.Now()}
					res, err := testenv.Send(http.DefaultClient, f.holdRequest(t, urls[inst], key, a.idem, 0, seat))
					a.end = time.Now()
					if err != nil {
						t.Errorf("hold: %v", err)
						return
					}
					a.status = res.Status
					mu.Lock()
					attempts = append(attempts, a)
					mu.Unlock()
					switch {
					case res.Status == http.StatusCreated:
						var r reservationBody
						res.Decode(t, &r)
						finish(win{attempt: a, reservation: r.Data.ID}, key, i)
						return // a winner leaves the race
					case !isSeatTaken(res):
						t.Errorf("hold through %s: %d %s", urls[inst], res.Status, res.Body)
						return
					}
					time.Sleep(time.Duration(10+i%10) * time.Millisecond)
				}
			}()
		}
		close(start)
		wg.Wait()
		for _, s := range seats {
			if !sold[s] {
				t.Fatalf("round %d: seat %s not sold within a minute (%d wins)", round, s, winsOf[s])
			}
		}
	}

	// Each seat: three wins, none overlapping another, the third sold.
	ids := map[string]bool{}
	for _, w := range wins {
		if ids[w.reservation] {
			t.Errorf("reservation %s won twice", w.reservation)
		}
		ids[w.reservation] = true
	}
	for _, seat := range allSeats {
		var of []win
		for _, w := range wins {
			if w.seat == seat {
				of = append(of, w)
			}
		}
		if len(of) != 3 {
			t.Errorf("seat %s won %d times, want 3 (released, cancelled, sold)", seat, len(of))
		}
		for i, w1 := range of {
			for _, w2 := range of[i+1:] {
				// Two holds of one seat: one was freed before the other won.
				before := func(x, y win) bool { return !x.freeStart.IsZero() && x.freeStart.Before(y.end) }
				if !before(w1, w2) && !before(w2, w1) {
					t.Errorf("seat %s held by %s and %s at once", seat, w1.reservation, w2.reservation)
				}
			}
		}
		var owner int64
		if err := f.DB.NewRaw("SELECT order_id FROM event_seats WHERE event_id = ? AND seat_id = ? AND state = 'sold'",
			f.ids["swan-lake"], seat).Scan(context.Background(), &owner); err != nil {
			t.Errorf("seat %s not sold: %v", seat, err)
		} else if i := slices.IndexFunc(of, func(w win) bool { return w.freeStart.IsZero() }); i < 0 || of[i].order != owner {
			t.Errorf("seat %s sold to order %d, not to its last winner's", seat, owner)
		}
	}
	testenv.CheckSales(t, f.DB)

	// Every refusal: the seat was taken at some moment of the request, or
	// freed at most memoryBound before it began, or another request for it
	// reached the hold statement meanwhile (a hold in flight).
	var recorded []string
	if err := f.DB.NewRaw("SELECT key FROM idempotency_keys WHERE key LIKE 'race-%'").Scan(context.Background(), &recorded); err != nil {
		t.Fatal(err)
	}
	reached := map[string]bool{}
	for _, k := range recorded {
		reached[k] = true
	}
	overlaps := func(s1, e1, s2, e2 time.Time) bool { return !e1.Before(s2) && !e2.Before(s1) }
	refused, fromMemory, wrong := 0, 0, 0
	for _, a := range attempts {
		if a.status != http.StatusConflict {
			continue
		}
		refused++
		if !reached[a.idem] {
			fromMemory++
		}
		legit := false
		for _, w := range wins {
			if w.seat != a.seat {
				continue
			}
			taken := w.freeEnd // held, or ordered, until its freeing was answered
			if w.freeStart.IsZero() {
				taken = a.end // sold
			}
			if overlaps(a.start.Add(-memoryBound), a.end, w.start, taken) {
				legit = true
				break
			}
		}
		for _, b := range attempts {
			if legit {
				break
			}
			legit = b.seat == a.seat && b.idem != a.idem && reached[b.idem] && overlaps(a.start, a.end, b.start, b.end)
		}
		if !legit {
			if wrong++; wrong <= 10 {
				t.Errorf("%s refused seat %s at %s–%s while it was free", urls[a.instance], a.seat,
					a.start.Format("15:04:05.000"), a.end.Format("15:04:05.000"))
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d refusals of free seats", wrong)
	}
	t.Logf("%d holds asked, %d won, %d refused (%d from memory)", len(attempts), len(wins), refused, fromMemory)
}

package holds

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/errs"
)

func TestTakenSeatsRefuseOnlyWhatTheyKnow(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	m := newTakenSeats()
	a1, a2 := errs.SeatRef{ZoneID: "a", SeatID: "a-1-1"}, errs.SeatRef{ZoneID: "a", SeatID: "a-1-2"}
	m.remember(7, 1, m.mark(1, now), map[string]takenSeat{"a-1-1": {zone: "a", until: now.Add(time.Second / 2)}, "a-1-2": {zone: "a"}})
	if got := m.taken(7, 1, []errs.SeatRef{a1, a2}, "k", now); len(got) != 2 {
		t.Fatalf("known taken seats not refused: %v", got)
	}
	for name, c := range map[string]struct {
		company, event int64
		refs           []errs.SeatRef
		at             time.Time
	}{
		"another company":                     {8, 1, []errs.SeatRef{a1}, now},
		"another event":                       {7, 2, []errs.SeatRef{a1}, now},
		"a seat not known":                    {7, 1, []errs.SeatRef{a1, {ZoneID: "a", SeatID: "a-9-9"}}, now},
		"the seat's zone named wrongly":       {7, 1, []errs.SeatRef{{ZoneID: "b", SeatID: "a-1-1"}}, now},
		"a hold past its deadline":            {7, 1, []errs.SeatRef{a1}, now.Add(time.Second / 2)},
		"a sold seat read longer ago than 1s": {7, 1, []errs.SeatRef{a2}, now.Add(takenFor)},
	} {
		if got := m.taken(c.company, c.event, c.refs, "k", c.at); got != nil {
			t.Errorf("%s: refused %v", name, got)
		}
	}
	if got := m.taken(7, 1, []errs.SeatRef{a2}, "k", now.Add(takenFor-time.Millisecond)); len(got) != 1 {
		t.Errorf("a sold seat is taken for takenFor: %v", got)
	}
	// A hold deadline far off is remembered for takenFor only too.
	m.remember(7, 1, m.mark(1, now), map[string]takenSeat{"a-1-3": {zone: "a", until: now.Add(time.Hour)}})
	if got := m.taken(7, 1, []errs.SeatRef{{ZoneID: "a", SeatID: "a-1-3"}}, "k", now.Add(takenFor)); got != nil {
		t.Errorf("a held seat refused past takenFor without a fresh read: %v", got)
	}
	m.forget(1)
	if got := m.taken(7, 1, []errs.SeatRef{a2}, "k", now); got != nil {
		t.Errorf("refused after forget: %v", got)
	}
}

// A seat is remembered takenFor from when the read that found it taken
// began, however long the read took: freed after the read began, it is
// refused at most takenFor after it was freed, even if no notice comes.
func TestTakenSeatsCountTheBoundFromTheRead(t *testing.T) {
	m := newTakenSeats()
	began := time.Now()
	at := m.mark(1, began)
	answered := began.Add(700 * time.Millisecond) // a slow statement
	m.remember(7, 1, at, map[string]takenSeat{"a-1-1": {zone: "a"}})
	ref := []errs.SeatRef{{ZoneID: "a", SeatID: "a-1-1"}}
	if got := m.taken(7, 1, ref, "k", answered); len(got) != 1 {
		t.Fatalf("not refused right after the read: %v", got)
	}
	if got := m.taken(7, 1, ref, "k", began.Add(takenFor)); got != nil {
		t.Errorf("refused takenFor after the read began: %v", got)
	}
}

// What a statement read before a forget must not be remembered after it:
// the seat may have been freed in between, and no later notice would come.
func TestTakenSeatsIgnoreReadsFromBeforeAForget(t *testing.T) {
	m := newTakenSeats()
	now := time.Now()
	seat := map[string]takenSeat{"a-1-1": {zone: "a"}}
	ref := []errs.SeatRef{{ZoneID: "a", SeatID: "a-1-1"}}
	for name, forget := range map[string]int64{"this event": 1, "every event": 0} {
		at := m.mark(1, now)
		m.forget(forget)
		m.remember(7, 1, at, seat)
		if got := m.taken(7, 1, ref, "k", now); got != nil {
			t.Errorf("forget of %s: a read from before it was remembered", name)
		}
	}
	m.remember(7, 1, m.mark(1, now), seat)
	if got := m.taken(7, 1, ref, "k", now); got == nil {
		t.Error("a read after the forget was not remembered")
	}
}

// Of many requests racing for the same seats, one flies and the others are
// refused; once it lands, the seats are free to try again.
func TestTakenSeatsLetOneOfARaceFly(t *testing.T) {
	m := newTakenSeats()
	now := time.Now()
	refs := []errs.SeatRef{{ZoneID: "a", SeatID: "a-1-1"}, {ZoneID: "a", SeatID: "a-1-2"}}
	zones := map[string]string{"a-1-1": "a", "a-1-2": "a"}
	var flying, refused atomic.Int64
	var landings sync.Map
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got, landed := m.takenOrFly(7, 1, refs, zones, string(rune('A'+i%50))+string(rune('a'+i/50)), now)
			switch {
			case got != nil && landed == nil:
				refused.Add(1)
			case got == nil && landed != nil:
				flying.Add(1)
				landings.Store(i, landed)
			default:
				t.Errorf("refused %v and flying %v at once", got, landed != nil)
			}
		}()
	}
	close(start)
	wg.Wait()
	if flying.Load() != 1 || refused.Load() != 199 {
		t.Fatalf("%d flew, %d refused; want 1 and 199", flying.Load(), refused.Load())
	}
	// A forget (a notice) leaves holds in flight in flight.
	m.forget(1)
	if got, _ := m.takenOrFly(7, 1, refs[:1], zones, "other", now); got == nil {
		t.Fatal("a seat in flight was let through after a forget")
	}
	landings.Range(func(_, v any) bool { v.(func())(); v.(func())(); return true }) // landing twice changes nothing more
	if got, landed := m.takenOrFly(7, 1, refs, zones, "other", now); got != nil || landed == nil {
		t.Fatalf("after landing: refused %v", got)
	}
}

// A repeat of the request in flight (same API key and Idempotency-Key) is
// not refused by its own flight: the claim then answers "in progress".
func TestTakenSeatsDoNotRefuseARepeatOfTheFlight(t *testing.T) {
	m := newTakenSeats()
	now := time.Now()
	refs := []errs.SeatRef{{ZoneID: "a", SeatID: "a-1-1"}}
	zones := map[string]string{"a-1-1": "a"}
	if got, landed := m.takenOrFly(7, 1, refs, zones, "7/K", now); got != nil || landed == nil {
		t.Fatalf("first: refused %v", got)
	}
	if got, _ := m.takenOrFly(7, 1, refs, zones, "7/K", now); got != nil {
		t.Fatalf("a repeat of the flight was refused: %v", got)
	}
	if got, _ := m.takenOrFly(7, 1, refs, zones, "7/L", now); got == nil {
		t.Fatal("another request for the seat in flight was let through")
	}
	m.land(1, "7/K")
	if got, _ := m.takenOrFly(7, 1, refs, zones, "7/L", now); got != nil {
		t.Fatalf("refused after the flight landed: %v", got)
	}
}

// A request naming a seat known taken does not fly (its hold statement
// locks nothing), so it turns no one away from its other, free seats.
func TestTakenSeatsDoomedRequestsDoNotFly(t *testing.T) {
	m := newTakenSeats()
	now := time.Now()
	m.remember(7, 1, m.mark(1, now), map[string]takenSeat{"a-1-9": {zone: "a"}})
	pair := []errs.SeatRef{{ZoneID: "a", SeatID: "a-1-8"}, {ZoneID: "a", SeatID: "a-1-9"}}
	if got, landed := m.takenOrFly(7, 1, pair, map[string]string{"a-1-8": "a", "a-1-9": "a"}, "7/K", now); got != nil || landed != nil {
		t.Fatalf("a pair with a seat known taken: refused %v, flying %v", got, landed != nil)
	}
	if got, landed := m.takenOrFly(7, 1, pair[:1], map[string]string{"a-1-8": "a"}, "7/L", now); got != nil || landed == nil {
		t.Fatalf("the free seat alone was refused: %v", got)
	}
}

package holds

import (
	"sync"
	"time"

	"github.com/ticketsales/ticketsales/internal/errs"
)

// takenSeats remembers, per event, seats this api instance saw taken: the
// seats of its own won holds, and the seats its hold statement found held
// or sold. In an on-sale rush most attempts are at seats already gone; a
// repeat at remembered seats is refused from memory, without the hold
// statement.
//
// It is only ever a "no" from memory, never a "yes": a hold still needs
// the hold statement. An event's memory is forgotten on every seat change
// of that event this instance makes or hears of (LISTEN seat_changes), all
// of it when the listener connects or drops, and each seat takenFor after
// the read that found it taken began at most: a seat freed after that read
// began is refused from memory no longer than takenFor after it was freed,
// whether or not its notice ever comes (lost with a dying instance, or
// late), and a clock behind Postgres's costs no more than that either.
type takenSeats struct {
	mu     sync.Mutex
	events map[int64]*takenOfEvent
	// gen counts forgets per event and epoch forgets of all: what a
	// statement read before a forget is not remembered after it (the seat
	// may have been freed in between, and no later notice would come).
	gen   map[int64]uint64
	epoch uint64
	// bound is takenFor; tests lengthen it to see notices alone at work.
	bound time.Duration
}

// takenFor bounds how long a seat is remembered without a fresh read: the
// longest a seat freed anywhere is refused from memory by any instance
// (docs/decisions.md).
const takenFor = time.Second

// takenMark is when a read began: in forgets, and on the clock.
type takenMark struct {
	gen, epoch uint64
	at         time.Time
}

type takenOfEvent struct {
	company int64
	seats   map[string]takenSeat
	// Holds on their way to the hold statement, by who asked (API key and
	// Idempotency-Key), and how many of them ask for each seat. A seat a
	// hold of all-free-looking seats is about to lock is refused to others,
	// as Postgres refuses a seat locked by a hold in flight (NOWAIT); a
	// repeat of the same request is not refused, so it gets "in progress".
	flights map[string]map[string]string // who → seat → zone
	flying  map[string]flyingSeat        // seat → flights asking for it
}

type flyingSeat struct {
	zone string // as the seat's first flight named it (validated)
	n    int
}

type takenSeat struct {
	zone  string
	until time.Time
}

func newTakenSeats() *takenSeats {
	return &takenSeats{events: map[int64]*takenOfEvent{}, gen: map[int64]uint64{}, bound: takenFor}
}

// rememberFor changes takenFor (see bound).
func (m *takenSeats) rememberFor(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bound = d
}

// mark is taken, at now, before reading what to remember about an event.
func (m *takenSeats) mark(event int64, now time.Time) takenMark {
	m.mu.Lock()
	defer m.mu.Unlock()
	return takenMark{m.gen[event], m.epoch, now}
}

// remember records seats of a company's event as taken until their until
// (zero: sold), and takenFor from the mark at most, as read after mark;
// nothing when the event was forgotten since. Counting from the mark, not
// from the answer, keeps a slow statement from stretching the bound.
func (m *takenSeats) remember(company, event int64, at takenMark, seats map[string]takenSeat) {
	if len(seats) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if at.gen != m.gen[event] || at.epoch != m.epoch {
		return
	}
	e := m.event(company, event)
	limit := at.at.Add(m.bound)
	for id, s := range seats {
		if s.until.IsZero() || s.until.After(limit) {
			s.until = limit
		}
		e.seats[id] = s
	}
}

func (m *takenSeats) event(company, event int64) *takenOfEvent {
	e := m.events[event]
	if e == nil || e.company != company {
		e = &takenOfEvent{company: company, seats: map[string]takenSeat{},
			flights: map[string]map[string]string{}, flying: map[string]flyingSeat{}}
		m.events[event] = e
	}
	return e
}

// taken returns the requested seats when every one of them is remembered
// taken at now, or asked for by another request's hold in flight, in its
// zone, for this company; otherwise nil, and the hold statement decides.
// Every one, so that a request naming a seat the event does not sell, or
// one in another zone, still gets its 422 from the ordinary path.
func (m *takenSeats) taken(company, event int64, refs []errs.SeatRef, who string, now time.Time) []errs.SeatRef {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.takenLocked(company, event, refs, who, now)
}

func (m *takenSeats) takenLocked(company, event int64, refs []errs.SeatRef, who string, now time.Time) []errs.SeatRef {
	e := m.events[event]
	if e == nil || e.company != company || len(refs) == 0 {
		return nil
	}
	mine := e.flights[who]
	for _, r := range refs {
		f := e.flying[r.SeatID]
		if _, own := mine[r.SeatID]; own {
			f.n--
		}
		if f.n > 0 && f.zone == r.ZoneID {
			continue
		}
		s, ok := e.seats[r.SeatID]
		if !ok || s.zone != r.ZoneID || !now.Before(s.until) {
			return nil
		}
	}
	return refs
}

// takenOrFly is taken, and when that refuses nothing, the request's seats
// (id → zone) go in flight for who until landed (or land) is called: of
// requests racing for the same seats, one flies and the others are
// refused. A request with a seat remembered taken does not fly: its hold
// statement will lock nothing.
func (m *takenSeats) takenOrFly(company, event int64, refs []errs.SeatRef, zones map[string]string, who string, now time.Time) ([]errs.SeatRef, func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if got := m.takenLocked(company, event, refs, who, now); got != nil {
		return got, nil
	}
	e := m.event(company, event)
	for id := range zones {
		if s, ok := e.seats[id]; ok && now.Before(s.until) {
			return nil, nil
		}
	}
	if _, flying := e.flights[who]; flying {
		return nil, nil // a repeat of a request in flight: the claim says "in progress"
	}
	e.flights[who] = zones
	for id, zone := range zones {
		f := e.flying[id]
		if f.n == 0 {
			f.zone = zone
		}
		f.n++
		e.flying[id] = f
	}
	return nil, func() { m.land(event, who) }
}

// land ends who's flight over the event's seats; again, nothing.
func (m *takenSeats) land(event int64, who string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.events[event]
	if e == nil {
		return
	}
	seats, ok := e.flights[who]
	if !ok {
		return
	}
	delete(e.flights, who)
	for id := range seats {
		if f := e.flying[id]; f.n <= 1 {
			delete(e.flying, id)
		} else {
			f.n--
			e.flying[id] = f
		}
	}
}

// forget drops what was read of an event's seats; event 0: of every event.
// Holds in flight stay in flight.
func (m *takenSeats) forget(event int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if event == 0 {
		for _, e := range m.events {
			e.seats = map[string]takenSeat{}
		}
		m.gen = map[int64]uint64{}
		m.epoch++
		return
	}
	if e := m.events[event]; e != nil {
		e.seats = map[string]takenSeat{}
	}
	m.gen[event]++
}

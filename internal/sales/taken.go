package sales

import (
	"sync"
	"time"
)

// takenSeats remembers, per event, seats this api instance saw taken: the
// seats of its own won holds, and the seats its hold statement found held
// or sold. In an on-sale rush most attempts are at seats already gone; a
// repeat at remembered seats is refused from memory, without Postgres.
//
// It is only ever a "no" from memory, never a "yes": a hold still needs
// the hold statement. An event's memory is forgotten on every seat change
// of that event this instance makes or hears of (LISTEN seat_changes), and
// all of it whenever the listener (re)connects or is down, so a freed seat
// is refused at most until the notification of its release arrives; a
// held seat is remembered only until its hold's deadline, when Postgres
// counts it free, whatever the worker has done.
type takenSeats struct {
	mu     sync.Mutex
	events map[int64]*takenOfEvent
	// gen counts forgets per event and epoch forgets of all: what a
	// statement read before a forget is not remembered after it (the seat
	// may have been freed in between, and no later notice would come).
	gen   map[int64]uint64
	epoch uint64
}

// takenMark is when a read began, in forgets: see remember.
type takenMark struct{ gen, epoch uint64 }

type takenOfEvent struct {
	company int64
	seats   map[string]takenSeat
	// flying counts this instance's hold statements in flight per seat:
	// the hold statement refuses a seat another one has locked (NOWAIT),
	// and so does the memory, before the statement would meet the lock.
	flying map[string]flyingSeat
}

type flyingSeat struct {
	zone string
	n    int
}

type takenSeat struct {
	zone  string
	until time.Time // zero: sold, taken until forgotten
}

func newTakenSeats() *takenSeats {
	return &takenSeats{events: map[int64]*takenOfEvent{}, gen: map[int64]uint64{}}
}

// mark is taken before reading what to remember about an event.
func (m *takenSeats) mark(event int64) takenMark {
	m.mu.Lock()
	defer m.mu.Unlock()
	return takenMark{m.gen[event], m.epoch}
}

// remember records seats of a company's event as taken, as read after
// mark; nothing when the event was forgotten since.
func (m *takenSeats) remember(company, event int64, at takenMark, seats map[string]takenSeat) {
	if len(seats) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if at != (takenMark{m.gen[event], m.epoch}) {
		return
	}
	e := m.event(company, event)
	for id, s := range seats {
		e.seats[id] = s
	}
}

func (m *takenSeats) event(company, event int64) *takenOfEvent {
	e := m.events[event]
	if e == nil || e.company != company {
		e = &takenOfEvent{company: company, seats: map[string]takenSeat{}, flying: map[string]flyingSeat{}}
		m.events[event] = e
	}
	return e
}

// fly records a hold statement of these seats (id → zone) in flight until
// the returned func is called.
func (m *takenSeats) fly(company, event int64, seats map[string]string) (landed func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.flyLocked(company, event, seats)
}

func (m *takenSeats) flyLocked(company, event int64, seats map[string]string) (landed func()) {
	e := m.event(company, event)
	for id, zone := range seats {
		f := e.flying[id]
		e.flying[id] = flyingSeat{zone: zone, n: f.n + 1}
	}
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		for id := range seats {
			f := e.flying[id] // e, even if forgotten meanwhile: its counts are its own
			if f.n <= 1 {
				delete(e.flying, id)
			} else {
				e.flying[id] = flyingSeat{zone: f.zone, n: f.n - 1}
			}
		}
	}
}

// taken returns the requested seats when every one of them is remembered
// taken at now, or is in a hold statement in flight, in its zone, for this
// company; otherwise nil, and the hold statement decides. Every one, so
// that a request naming a seat the event does not sell, or one in another
// zone, still gets its 422 from the ordinary path.
func (m *takenSeats) taken(company, event int64, refs []SeatRef, now time.Time) []SeatRef {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.takenLocked(company, event, refs, now)
}

func (m *takenSeats) takenLocked(company, event int64, refs []SeatRef, now time.Time) []SeatRef {
	e := m.events[event]
	if e == nil || e.company != company || len(refs) == 0 {
		return nil
	}
	for _, r := range refs {
		if f, ok := e.flying[r.SeatID]; ok && f.zone == r.ZoneID {
			continue
		}
		s, ok := e.seats[r.SeatID]
		if !ok || s.zone != r.ZoneID || (!s.until.IsZero() && !now.Before(s.until)) {
			return nil
		}
	}
	return refs
}

// takenOrFly is taken, and when that refuses nothing, fly of the seats,
// in one step: of requests racing for the same seats, one flies and the
// others are refused.
func (m *takenSeats) takenOrFly(company, event int64, refs []SeatRef, zones map[string]string, now time.Time) ([]SeatRef, func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if got := m.takenLocked(company, event, refs, now); got != nil {
		return got, nil
	}
	return nil, m.flyLocked(company, event, zones)
}

// forget drops an event's memory; event 0 drops every event's.
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
		// Holds in flight stay in flight: only what was read is forgotten.
		e.seats = map[string]takenSeat{}
	}
	m.gen[event]++
}

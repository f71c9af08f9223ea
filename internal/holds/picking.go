package holds

import (
	"slices"
	"sync"
)

// pickingSeats knows, per event, the seats that this instance's best-seat
// picks have locked and not yet committed or given back. A pick of a group
// together looks past them: in an on-sale's first second every buyer would
// otherwise try the same best groups one after another, each a round trip
// that finds them locked (SKIP LOCKED). It is only ever a hint; the lock
// decides.
type pickingSeats struct {
	mu     sync.Mutex
	events map[int64]map[string]int // event → seat → picks holding it
}

func newPickingSeats() *pickingSeats {
	return &pickingSeats{events: map[int64]map[string]int{}}
}

// maxAvoided bounds the seats inFlight lists: they go into the picks'
// statement text (bun writes arguments into it). Seats past it are still
// passed over by busy, without a round trip.
const maxAvoided = 200

// inFlight lists the event's seats locked by picks in flight, at most
// maxAvoided of them.
func (p *pickingSeats) inFlight(eventID int64) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	seats := p.events[eventID]
	ids := make([]string, 0, min(len(seats), maxAvoided))
	for id := range seats {
		if len(ids) == maxAvoided {
			break
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// busy tells whether a pick in flight has locked the event's seat.
func (p *pickingSeats) busy(eventID int64) func(seatID string) bool {
	return func(seatID string) bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.events[eventID][seatID] > 0
	}
}

// add records a pick's locked seats; the returned func forgets them, once
// the pick's transaction has ended.
func (p *pickingSeats) add(eventID int64, ids []string) (done func()) {
	if len(ids) == 0 {
		return func() {}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	seats := p.events[eventID]
	if seats == nil {
		seats = map[string]int{}
		p.events[eventID] = seats
	}
	for _, id := range ids {
		seats[id]++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			// The event's map while these seats are in it is the one they
			// were added to: it is dropped only when empty.
			seats := p.events[eventID]
			for _, id := range ids {
				if seats[id]--; seats[id] <= 0 {
					delete(seats, id)
				}
			}
			if len(seats) == 0 {
				delete(p.events, eventID)
			}
		})
	}
}

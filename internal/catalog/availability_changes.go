package catalog

import (
	"fmt"
	"slices"
	"sync"

	"github.com/ticketsales/ticketsales/internal/states"
)

// A poll that changed one seat of a 10,000-seat hall used to cost the
// whole list again (62 KB gzipped, docs/performance.md). A poll may name
// the availability it holds by its ETag (?since=); while this instance
// still keeps that state, the answer lists only the seats whose status or
// price changed since, with every category as now.

// keptStates is how many of a view's latest builds are kept to answer
// ?since= from: a byte a seat each (the layout and the list of seats shown
// are shared while unchanged). An on-sale builds about once a second, so a
// buyer polling every 5 s stays within them.
const keptStates = 12

// seatState is what one build said of each seat shown, kept apart from its
// encoded body so a later build can tell what changed. Nothing in it
// changes once built but its memo of answers.
type seatState struct {
	etag     string // unquoted
	layout   *seatLayout
	shown    []int  // places shown, in order
	status   []byte // by position in shown: statusCode
	price    map[int64]int64
	currency string

	mu      sync.Mutex
	changes map[string]AvailabilityDoc // encoded answers to ?since=, by since, while this state is the newest
}

func statusCode(s states.SeatStatus) byte {
	if i := slices.Index(states.SeatStatuses, s); i >= 0 {
		return byte(i)
	}
	return 255 // never built; counted as changed whatever it was
}

// newSeatState is a build's state, sharing the view's latest kept list of
// seats shown when it is the same (before anyone else can see it).
func (ac *availabilityCache) newSeatState(v view, l *seatLayout, shown []int, st []states.SeatStatus, price map[int64]int64, currency string) *seatState {
	codes := make([]byte, len(shown))
	for k, i := range shown {
		codes[k] = statusCode(st[i])
	}
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if kept := ac.states[v]; len(kept) > 0 {
		if last := kept[len(kept)-1]; last.layout.samePlaces(l) && slices.Equal(last.shown, shown) {
			shown = last.shown
		}
	}
	return &seatState{layout: l, shown: shown, status: codes, price: price, currency: currency}
}

// keep makes a built state its view's newest kept, and forgets the
// answers the others memoised (only the newest is asked for changes). The
// kept states are of the places the event's builds use now, so they hold
// no places but those the cache keeps (and go with them).
func (ac *availabilityCache) keep(v view, st *seatState) {
	ac.mu.Lock()
	if !ac.layouts[v.event].samePlaces(st.layout) {
		ac.mu.Unlock()
		return // read before the places it was built from were replaced
	}
	kept := slices.DeleteFunc(ac.states[v], func(k *seatState) bool { return k == st || k.etag == st.etag })
	if n := len(kept); n > 0 && !kept[n-1].layout.samePlaces(st.layout) {
		kept = nil // of places no longer used: no change is told from them
	}
	if len(kept) == keptStates {
		kept = slices.Delete(kept, 0, 1)
	}
	kept = append(kept, st)
	ac.states[v] = kept
	older := slices.Clone(kept[:len(kept)-1])
	ac.mu.Unlock()
	for _, k := range older {
		k.forget()
	}
}

func (st *seatState) forget() {
	st.mu.Lock()
	st.changes = nil
	st.mu.Unlock()
}

// dropStates forgets the event's kept states (its layout goes), under ac.mu.
func (ac *availabilityCache) dropStates(eventID int64) {
	for v := range ac.states {
		if v.event == eventID {
			delete(ac.states, v)
		}
	}
}

func (ac *availabilityCache) kept(v view, etag string) *seatState {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	for _, st := range ac.states[v] {
		if st.etag == etag {
			return st
		}
	}
	return nil
}

// ChangesSince answers a poll that holds the availability whose ETag is
// since (unquoted), given doc, the view's availability now: only the seats
// changed since then, when this instance still keeps that state and the
// same seats are shown in the same places; otherwise doc itself, which a
// caller tells by its empty Since. Either answer carries doc's ETag.
func (s *Service) ChangesSince(doc AvailabilityDoc, channelID, eventID int64, since string) (AvailabilityDoc, error) {
	if since == "" || doc.state == nil {
		return doc, nil
	}
	base := s.availability.kept(view{eventID, channelID}, since)
	if base == nil {
		return doc, nil
	}
	return doc.state.changesSince(doc, base)
}

// sameSeats: the two states show the same seats in the same places and
// currency, so their positions compare one to one.
func sameSeats(a, b *seatState) bool {
	if a.currency != b.currency || !slices.Equal(a.shown, b.shown) {
		return false
	}
	return a.layout.samePlaces(b.layout) || slices.Equal(a.layout.places, b.layout.places)
}

// changesSince encodes doc (the state cur's) as the changes since base,
// once per base; when they are most of the hall (a price change of a
// large category), the whole answer costs the poller about as much and
// the service nothing more to keep. The memo's lock is not held while
// encoding: polls of other bases and builds do not wait for it.
func (cur *seatState) changesSince(doc AvailabilityDoc, base *seatState) (AvailabilityDoc, error) {
	cur.mu.Lock()
	d, ok := cur.changes[base.etag]
	cur.mu.Unlock()
	if ok {
		return d, nil
	}
	d, err := cur.encodeChanges(doc, base)
	if err != nil {
		return AvailabilityDoc{}, err
	}
	cur.mu.Lock()
	defer cur.mu.Unlock()
	if cur.changes == nil {
		cur.changes = map[string]AvailabilityDoc{}
	}
	cur.changes[base.etag] = d // at most keptStates: only kept bases get here
	return d, nil
}

func (cur *seatState) encodeChanges(doc AvailabilityDoc, base *seatState) (AvailabilityDoc, error) {
	if !sameSeats(base, cur) {
		return doc, nil
	}
	a := *doc.Data
	a.Since, a.Seats = base.etag, []SeatAvailability{} // "seats": [] when none changed, not null
	var at []int                                       // places of a.Seats
	for k, i := range cur.shown {
		cat := cur.layout.places[i].CategoryID
		if cur.status[k] != base.status[k] || cur.status[k] == 255 || cur.price[cat] != base.price[cat] {
			a.Seats = append(a.Seats, doc.Data.Seats[k])
			at = append(at, i)
		}
	}
	if len(a.Seats) > len(cur.shown)/2 {
		return doc, nil
	}
	body, err := encodeAvailability(&a, cur.layout, at)
	if err != nil {
		return AvailabilityDoc{}, fmt.Errorf("encode availability of event %d since %s: %w", a.EventID, base.etag, err)
	}
	gz, err := newSplicedGzip([]byte(`{"data":`), body)
	if err != nil {
		return AvailabilityDoc{}, fmt.Errorf("compress availability of event %d since %s: %w", a.EventID, base.etag, err)
	}
	return AvailabilityDoc{JSON: body, ETag: doc.ETag, Data: &a, gz: gz}, nil
}

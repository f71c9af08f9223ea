package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// seatLayout is an event's seats apart from their status, kept from one
// build to the next while events.seat_version stays (store.SeatPlace):
// an on-sale rebuilds a large hall's seat map about once a second, and
// reading and encoding every seat's place each time was most of the cost
// (docs/performance.md).
type seatLayout struct {
	eventVersion int64     // events.seat_version the places were read at
	readAt       time.Time // when (the build's clock)
	places       []store.SeatPlace
	index        map[string]int // seat id → place
	// heads[i] is place i's JSON up to its status's value:
	// {"zone_id":…,"seat_id":…,"row":…,"number":…,"status":"
	heads [][]byte
}

func newSeatLayout(eventVersion int64, places []store.SeatPlace) (*seatLayout, error) {
	l := &seatLayout{eventVersion: eventVersion, places: places, index: make(map[string]int, len(places)),
		heads: make([][]byte, len(places))}
	var buf []byte
	ends := make([]int, len(places))
	for i, p := range places {
		l.index[p.SeatID] = i
		for j, f := range [4]struct{ key, value string }{
			{`{"zone_id":`, p.ZoneID}, {`,"seat_id":`, p.SeatID}, {`,"row":`, p.Row}, {`,"number":`, p.Number}} {
			q, err := json.Marshal(f.value) // escaped as encoding/json escapes
			if err != nil {
				return nil, fmt.Errorf("encode seat %q field %d: %w", p.SeatID, j, err)
			}
			buf = append(append(buf, f.key...), q...)
		}
		buf = append(buf, `,"status":"`...)
		ends[i] = len(buf)
	}
	start := 0
	for i, end := range ends {
		l.heads[i] = buf[start:end:end]
		start = end
	}
	return l, nil
}

// samePlaces: the two layouts are one read of the places (a layout read
// again unchanged shares its places with the one before).
func (l *seatLayout) samePlaces(o *seatLayout) bool {
	if l == nil || o == nil {
		return l == o
	}
	return len(l.places) == len(o.places) && (len(l.places) == 0 || &l.places[0] == &o.places[0])
}

// statuses are the places' statuses given the seats taken; ok is false
// when a taken seat is not among the places (they are stale).
func (l *seatLayout) statuses(taken store.SeatsTaken) (st []states.SeatStatus, ok bool) {
	st = make([]states.SeatStatus, len(l.places))
	for i := range st {
		st[i] = states.SeatFree
	}
	for _, set := range []struct {
		ids    []string
		status states.SeatStatus
	}{{taken.Sold, states.SeatSold}, {taken.Reserved, states.SeatReserved}} {
		for _, id := range set.ids {
			i, found := l.index[id]
			if !found {
				return nil, false
			}
			st[i] = set.status
		}
	}
	return st, true
}

// shown lists the places a caller of the channel (0: general sale) sees
// in order: those of no channel, of its own, or of a channel that released
// its allocation as a whole (released).
func (l *seatLayout) shown(channel int64, released []int64) []int {
	idx := make([]int, 0, len(l.places))
	for i, p := range l.places {
		if p.ChannelID == 0 || p.ChannelID == channel || slices.Contains(released, p.ChannelID) {
			idx = append(idx, i)
		}
	}
	return idx
}

// encodeAvailability is json.Marshal(a) written from the layout's encoded
// places (a.Seats in their order, places shown): the same bytes, without
// reflecting over ten thousand structs.
func encodeAvailability(a *Availability, l *seatLayout, shown []int) ([]byte, error) {
	prices := map[int64][]byte{}
	cats, err := json.Marshal(a.Categories)
	if err != nil {
		return nil, err
	}
	version, err := json.Marshal(a.Version)
	if err != nil {
		return nil, err
	}
	// Each seat adds its status, category and price to its head.
	size := 0
	for _, i := range shown {
		size += len(l.heads[i])
	}
	b := make([]byte, 0, size+len(a.Seats)*96+len(cats)+64)
	b = append(b, `{"event_id":`...)
	b = strconv.AppendInt(b, a.EventID, 10)
	b = append(append(b, `,"version":`...), version...)
	if a.Since != "" {
		since, err := json.Marshal(a.Since)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"since":`...), since...)
	}
	b = append(b, `,"seats":[`...)
	for i, s := range a.Seats {
		price, ok := prices[s.TicketCategoryID]
		if !ok {
			if price, err = json.Marshal(s.Price); err != nil {
				return nil, err
			}
			prices[s.TicketCategoryID] = price
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, l.heads[shown[i]]...)
		b = append(b, s.Status...) // free, reserved, sold: nothing to escape
		b = append(b, `","ticket_category_id":`...)
		b = strconv.AppendInt(b, s.TicketCategoryID, 10)
		b = append(append(b, `,"price":`...), price...)
		b = append(b, '}')
	}
	b = append(append(b, `],"categories":`...), cats...)
	return append(b, '}'), nil
}

// pricedSeats are a.Seats for the layout's places shown and statuses.
func pricedSeats(l *seatLayout, shown []int, st []states.SeatStatus, price map[int64]int64, currency string) []SeatAvailability {
	seats := make([]SeatAvailability, len(shown))
	for k, i := range shown {
		p := l.places[i]
		seats[k] = SeatAvailability{ZoneID: p.ZoneID, SeatID: p.SeatID, Row: p.Row, Number: p.Number, Status: st[i],
			TicketCategoryID: p.CategoryID, Price: pricing.Money{Amount: price[p.CategoryID], Currency: currency}}
	}
	return seats
}

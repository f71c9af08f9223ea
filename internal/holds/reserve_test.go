package holds

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/problems"
)

var oneSeat = []errs.SeatRef{{ZoneID: "parterre", SeatID: "parterre-1-1"}}

// A hold lasts ttl_minutes, 15 when not given, and 1 to 60 are allowed;
// the aggregator's ttl, in seconds, is the hold's exact length.
func TestHoldLength(t *testing.T) {
	for _, c := range []struct {
		name string
		in   ReserveInput
		want time.Duration
	}{
		{"no ttl_minutes: 15 minutes", ReserveInput{Seats: oneSeat}, 15 * time.Minute},
		{"the shortest: 1 minute", ReserveInput{Seats: oneSeat, TTLMinutes: 1}, time.Minute},
		{"the longest: 60 minutes", ReserveInput{Seats: oneSeat, TTLMinutes: 60}, time.Hour},
		{"the aggregator's 90 s", ReserveInput{Seats: oneSeat, TTL: 90 * time.Second}, 90 * time.Second},
		{"the aggregator's ttl, ttl_minutes ignored", ReserveInput{Seats: oneSeat, TTLMinutes: 99, TTL: time.Hour}, time.Hour},
		{"best available", ReserveInput{BestAvailable: &BestAvailable{Quantity: 2}, TTLMinutes: 5}, 5 * time.Minute},
	} {
		got, err := holdLength(c.in, time.Minute)
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	for _, ttl := range []int{-1, 61, 1440} {
		_, err := holdLength(ReserveInput{Seats: oneSeat, TTLMinutes: ttl}, time.Minute)
		if f := problems.Fields(t, err); f["body.ttl_minutes"] != ttl {
			t.Errorf("ttl_minutes %d: refused with %v", ttl, f)
		}
	}
}

// Whoever asks, a hold lasts 1 to 60 minutes and picks 1 to 20 seats: the
// aggregator's ttl of a year (once let through by a member in another
// letter case) or a best available of 22 or -1 seats is refused before
// anything is read.
func TestHoldBounds(t *testing.T) {
	for _, c := range []struct {
		name  string
		in    ReserveInput
		field string
	}{
		{"the aggregator's ttl of a year", ReserveInput{Seats: oneSeat, TTL: 365 * 24 * time.Hour}, "body.ttl"},
		{"the aggregator's ttl of 59 s", ReserveInput{Seats: oneSeat, TTL: 59 * time.Second}, "body.ttl"},
		{"a negative ttl", ReserveInput{Seats: oneSeat, TTL: -time.Minute}, "body.ttl"},
		{"best available of 22", ReserveInput{BestAvailable: &BestAvailable{Quantity: 22}}, "body.best_available.quantity"},
		{"best available of 0", ReserveInput{BestAvailable: &BestAvailable{}}, "body.best_available.quantity"},
		{"best available of -1", ReserveInput{BestAvailable: &BestAvailable{Quantity: -1}}, "body.best_available.quantity"},
		{"51 zones to pick from", ReserveInput{BestAvailable: &BestAvailable{Quantity: 1, ZoneIDs: make([]string, 51)}}, "body.best_available.zone_ids"},
		{"51 categories to pick from", ReserveInput{BestAvailable: &BestAvailable{Quantity: 1, TicketCategoryIDs: make([]int64, 51)}}, "body.best_available.ticket_category_ids"},
	} {
		_, err := holdLength(c.in, time.Minute)
		if _, ok := problems.Fields(t, err)[c.field]; !ok {
			t.Errorf("%s: refused with %v, want an error at %s", c.name, err, c.field)
		}
	}
	for _, in := range []ReserveInput{
		{Seats: oneSeat, TTL: time.Minute}, {Seats: oneSeat, TTL: time.Hour},
		{BestAvailable: &BestAvailable{Quantity: MaxSeats, ZoneIDs: make([]string, MaxPickFilters)}},
	} {
		if _, err := holdLength(in, time.Minute); err != nil {
			t.Errorf("%+v: %v", in, err)
		}
	}
}

// A hold names its seats or asks for the best available: one of the two.
func TestHoldNamesSeatsOrBestAvailable(t *testing.T) {
	for name, in := range map[string]ReserveInput{
		"neither": {},
		"both":    {Seats: oneSeat, BestAvailable: &BestAvailable{Quantity: 1}},
	} {
		_, err := holdLength(in, time.Minute)
		if _, ok := problems.Fields(t, err)["body.seats"]; !ok {
			t.Errorf("%s: refused with %v, want a body.seats error", name, err)
		}
	}
}

func seatRefs(n int) []errs.SeatRef {
	refs := make([]errs.SeatRef, n)
	for i := range refs {
		refs[i] = errs.SeatRef{ZoneID: "parterre", SeatID: fmt.Sprintf("parterre-1-%d", i+1)}
	}
	return refs
}

// A reservation holds 1 to 20 seats, each listed once; every repeat is
// named where it stands.
func TestSeatList(t *testing.T) {
	for _, n := range []int{1, MaxSeats} {
		refs := seatRefs(n)
		ids, err := seatIDs(refs)
		if err != nil || len(ids) != n || ids[n-1] != refs[n-1].SeatID {
			t.Errorf("%d seats: %v, %v", n, ids, err)
		}
	}
	for _, n := range []int{0, MaxSeats + 1} {
		_, err := seatIDs(seatRefs(n))
		if f := problems.Fields(t, err); f["body.seats"] != n {
			t.Errorf("%d seats: refused with %v", n, f)
		}
	}
	a, b := errs.SeatRef{ZoneID: "parterre", SeatID: "parterre-1-1"}, errs.SeatRef{ZoneID: "parterre", SeatID: "parterre-1-2"}
	elsewhere := errs.SeatRef{ZoneID: "balcony", SeatID: "parterre-1-1"} // the same seat, named in another zone
	_, err := seatIDs([]errs.SeatRef{a, b, a, elsewhere})
	want := map[string]any{"body.seats[2].seat_id": a.SeatID, "body.seats[3].seat_id": a.SeatID}
	if f := problems.Fields(t, err); fmt.Sprint(f) != fmt.Sprint(want) {
		t.Errorf("a seat listed three times: %v, want %v", f, want)
	}
}

// A lost race names the seats that were taken, with their zones; when the
// hold statement could not tell which (a lock in flight), every requested
// seat.
func TestTakenErrorNamesTheSeats(t *testing.T) {
	seats := map[string]store.ReservedSeat{
		"parterre-1-1": {ZoneID: "parterre"}, "balcony-1-1": {ZoneID: "balcony"}, "balcony-1-2": {ZoneID: "balcony"},
	}
	requested := []string{"parterre-1-1", "balcony-1-1", "balcony-1-2"}
	for _, c := range []struct {
		name  string
		taken []string
		want  []errs.SeatRef
	}{
		{"one taken", []string{"balcony-1-1"}, []errs.SeatRef{{ZoneID: "balcony", SeatID: "balcony-1-1"}}},
		{"none reported", nil, []errs.SeatRef{{ZoneID: "parterre", SeatID: "parterre-1-1"},
			{ZoneID: "balcony", SeatID: "balcony-1-1"}, {ZoneID: "balcony", SeatID: "balcony-1-2"}}},
	} {
		err := takenError(requested, c.taken, seats)
		var taken *errs.SeatTakenError
		if !errors.As(err, &taken) || !slices.Equal(taken.Seats, c.want) {
			t.Errorf("%s: %v, want the seats %v", c.name, err, c.want)
		}
		if p := problems.Of(t, err); p.Status != 409 || p.Code != "seat_taken" {
			t.Errorf("%s: answered %d %s, want 409 seat_taken", c.name, p.Status, p.Code)
		}
	}
}

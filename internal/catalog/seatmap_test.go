package catalog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/catalog"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// twoRowHall is a hall of two rows of three seats, with a second category
// for the second row when front is set.
func twoRowHall(front bool) []byte {
	extra := ""
	if front {
		extra = `, {"ref": "front", "name": "Front", "price": 150000, "rows": {"a": ["Stalls_1"]}}`
	}
	return fmt.Appendf(nil, `{"cities": [{"ref": "c", "name": "City"}], "venues": [{"ref": "v", "name": "Hall", "city": "c",
	  "timezone": "UTC", "schemes": [{"ref": "s", "name": "Hall", "zones": [{"id": "a", "name": "Hall", "rows": [
	  {"row": "Balcony.B", "seats": 3}, {"row": "Stalls_1", "seats": 3}]}]}]}],
	  "events": [{"ref": "e", "title": "Show", "slug": "show", "status": "published", "starts_at": "2030-01-01T19:00:00Z",
	  "venue": "v", "scheme": "s", "fee": {"mode": "separate", "rate_bp": 1000, "min_fee": 0},
	  "categories": [{"ref": "all", "name": "All", "price": 100000, "zones": ["a"]}%s]}]}`, extra)
}

// twoRowEvent is a database with one company's event in twoRowHall.
func twoRowEvent(t *testing.T) (s *testenv.Stack, company, event int64) {
	t.Helper()
	return importedEvent(t, twoRowHall(false), "show")
}

// TestSeatMapBuildsAreTheSeatsEncoded: a seat map built from its kept
// places is what encoding its seats gives, byte for byte, with every seat's status as stored at the build's
// moment: sold, held, held with no deadline (a paid order's), and held
// past its deadline, which is free. A seat change alone does not read the
// places again; a catalog import that moves seats to another category
// does, so does a seat the kept places lack, and so does time.
func TestSeatMapBuildsAreTheSeatsEncoded(t *testing.T) {
	s, company, event := twoRowEvent(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	svc := catalog.New(s.DB, func() time.Time { return now })
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := s.DB.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	build := func() catalog.AvailabilityDoc {
		t.Helper()
		doc, err := svc.Build(ctx, event)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(doc.Data)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(doc.JSON, want) {
			t.Fatalf("the seat map's JSON is not its data encoded:\n got %s\nwant %s", doc.JSON, want)
		}
		return doc
	}
	seat := func(doc catalog.AvailabilityDoc, row, number string) catalog.SeatAvailability {
		t.Helper()
		for _, st := range doc.Data.Seats {
			if st.Row == row && st.Number == number {
				return st
			}
		}
		t.Fatalf("no seat %s/%s in %+v", row, number, doc.Data.Seats)
		return catalog.SeatAvailability{}
	}
	const balcony, stalls = "Balcony.B", "Stalls_1"
	set := func(row, number, state string, expires any) {
		t.Helper()
		hold := any(nil)
		if state == "held" {
			hold = "h-" + number
		}
		exec(`UPDATE event_seats SET state = ?, hold_id = ?, hold_expires_at = ?, version = version + 1
			WHERE event_id = ? AND row = ? AND number = ?`, state, hold, expires, event, row, number)
	}

	if first := build(); len(first.Data.Seats) != 6 || first.Data.Categories[0].Available != 6 {
		t.Fatalf("a new hall: %d seats, %+v; want 6 seats, 6 available", len(first.Data.Seats), first.Data.Categories)
	}
	set(balcony, "1", "sold", nil)
	set(balcony, "2", "held", now.Add(10*time.Minute))
	set(balcony, "3", "held", now.Add(-time.Minute))
	set(stalls, "1", "held", nil)
	doc := build()
	for _, tt := range []struct {
		row, number string
		want        states.SeatStatus
	}{{balcony, "1", states.SeatSold}, {balcony, "2", states.SeatReserved}, {balcony, "3", states.SeatFree},
		{stalls, "1", states.SeatReserved}, {stalls, "2", states.SeatFree}} {
		if got := seat(doc, tt.row, tt.number).Status; got != tt.want {
			t.Errorf("seat %s/%s: %s, want %s", tt.row, tt.number, got, tt.want)
		}
	}
	if got := doc.Data.Categories[0].Available; got != 3 {
		t.Errorf("available: %d, want 3 (the lapsed hold's seat is free)", got)
	}
	if got := svc.PlacesRead(); got != 1 {
		t.Errorf("seat changes alone: places read by %d builds, want the first only", got)
	}

	// The import moves the free seats of the second row to a new category.
	s.Import(t, company, twoRowHall(true))
	doc = build()
	if got := svc.PlacesRead(); got != 2 {
		t.Errorf("after an import that moved seats: places read by %d builds, want 2", got)
	}
	if st := seat(doc, stalls, "2"); st.Price.Amount != 150000 || st.TicketCategoryID == seat(doc, balcony, "1").TicketCategoryID {
		t.Errorf("a free seat moved to front: %+v, want front's category at 150000", st)
	}

	// A seat the kept places lack, sold without seat_version moving (no
	// writer does this): the build reads the places again rather than
	// leave it out.
	exec(`INSERT INTO event_seats (event_id, seat_id, zone_id, row, number, label, category_id, state, pos, rank)
		SELECT event_id, 'extra', zone_id, row, '9', '9', category_id, 'sold', 9, 9 FROM event_seats
		WHERE event_id = ? AND row = ? AND number = '1'`, event, stalls)
	if st := seat(build(), stalls, "9"); st.Status != states.SeatSold {
		t.Errorf("a seat missing from the kept places: %+v, want it sold", st)
	}

	// Kept places are read again after a while, whatever the version says.
	read := svc.PlacesRead()
	now = now.Add(6 * time.Minute)
	build()
	if got := svc.PlacesRead(); got != read+1 {
		t.Errorf("six minutes on: places read by %d builds, want %d", got, read+1)
	}
}

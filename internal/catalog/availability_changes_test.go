package catalog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/catalog"
)

// pollAvailability answers a poll of the event's general sale that holds
// the state since (none: ""), as the api does.
func pollAvailability(t *testing.T, svc *catalog.Service, company, event int64, since string) catalog.AvailabilityDoc {
	t.Helper()
	doc, err := svc.AvailabilityFor(context.Background(), company, 0, event)
	if err != nil {
		t.Fatal(err)
	}
	if doc, err = svc.ChangesSince(doc, 0, event, since); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestAvailabilityChangesSince: a poll that names the availability it
// holds gets only the seats changed since, and what it holds with them
// applied is the availability as a fresh read gives it: after holds,
// sales and releases, after a hold lapses with no write at all, and from
// any of the latest states. A state the service no longer keeps, one of
// other seats (an import moved them), or one it never made gets the whole
// availability, without since.
func TestAvailabilityChangesSince(t *testing.T) {
	s, company, event := twoRowEvent(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	svc := catalog.New(s.DB, func() time.Time { return now })
	read := func(since string) catalog.AvailabilityDoc {
		t.Helper()
		doc := pollAvailability(t, svc, company, event, since)
		want, err := json.Marshal(doc.Data)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(doc.JSON, want) {
			t.Fatalf("the answer's JSON is not its data encoded:\n got %s\nwant %s", doc.JSON, want)
		}
		return doc
	}
	whole := func() catalog.AvailabilityDoc {
		t.Helper()
		doc := read("")
		if doc.Data.Since != "" {
			t.Fatalf("a read without since answered changes since %s", doc.Data.Since)
		}
		return doc
	}
	etag := func(d catalog.AvailabilityDoc) string { return strings.Trim(d.ETag, `"`) }
	// apply is what a poller holds after an answer.
	apply := func(held []catalog.SeatAvailability, d catalog.AvailabilityDoc) []catalog.SeatAvailability {
		if d.Data.Since == "" {
			return slices.Clone(d.Data.Seats)
		}
		out := slices.Clone(held)
		for _, c := range d.Data.Seats {
			i := slices.IndexFunc(out, func(s catalog.SeatAvailability) bool { return s.SeatID == c.SeatID })
			if i < 0 {
				t.Fatalf("a change of seat %s the poller never had", c.SeatID)
			}
			out[i] = c
		}
		return out
	}
	set := func(row, number, state string, expires any) {
		t.Helper()
		hold := any(nil)
		if state == "held" {
			hold = "h-" + row + number
		}
		if _, err := s.DB.ExecContext(ctx, `UPDATE event_seats SET state = ?, hold_id = ?, hold_expires_at = ?, version = version + 1
			WHERE event_id = ? AND row = ? AND number = ?`, state, hold, expires, event, row, number); err != nil {
			t.Fatal(err)
		}
	}
	const balcony, stalls = "Balcony.B", "Stalls_1"

	first := whole()
	if got := read(etag(first)); got.Data.Since != etag(first) || len(got.Data.Seats) != 0 || !bytes.Contains(got.JSON, []byte(`"seats":[]`)) {
		t.Fatalf("since the current state: since %q, %d seats (%s); want no seat", got.Data.Since, len(got.Data.Seats), got.JSON)
	}

	set(balcony, "1", "sold", nil)
	set(stalls, "2", "held", now.Add(time.Minute))
	d := read(etag(first))
	if d.Data.Since != etag(first) || len(d.Data.Seats) != 2 {
		t.Fatalf("a sale and a hold since the first read: since %q, seats %+v; want the two", d.Data.Since, d.Data.Seats)
	}
	now2 := whole()
	if d.ETag != now2.ETag || !slices.Equal(apply(first.Data.Seats, d), now2.Data.Seats) ||
		!slices.Equal(d.Data.Categories, now2.Data.Categories) {
		t.Fatalf("first + changes (%s, %+v) is not the availability now (%s, %+v)", d.ETag, apply(first.Data.Seats, d), now2.ETag, now2.Data.Seats)
	}
	if cap(d.JSON) > 2*len(d.JSON) {
		t.Errorf("an answer of two seats, %d bytes, holds %d", len(d.JSON), cap(d.JSON))
	}

	// The hold lapses: no row changes, the seat is free again.
	now = now.Add(2 * time.Minute)
	d = read(etag(now2))
	if len(d.Data.Seats) != 1 || d.Data.Seats[0].Row != stalls || d.Data.Seats[0].Number != "2" || d.Data.Seats[0].Status != "free" {
		t.Fatalf("after the hold lapsed: %+v; want stalls 2 free alone", d.Data.Seats)
	}

	// Minutes on, the places are read again, unchanged: the states kept
	// before still answer with changes.
	reads := svc.PlacesRead()
	beforeReread := whole()
	set(balcony, "3", "held", now.Add(time.Hour))
	now = now.Add(6 * time.Minute)
	if d := read(etag(beforeReread)); svc.PlacesRead() != reads+1 || d.Data.Since == "" || len(d.Data.Seats) != 1 {
		t.Fatalf("after the places were read again (%d reads, %d before): since %q, %d seats; want balcony 3 alone",
			svc.PlacesRead(), reads, d.Data.Since, len(d.Data.Seats))
	}

	// Changes of most of the hall are answered whole.
	before := whole()
	set(balcony, "2", "sold", nil)
	set(balcony, "3", "sold", nil)
	set(stalls, "1", "sold", nil)
	set(stalls, "3", "sold", nil)
	if got := read(etag(before)); got.Data.Since != "" || len(got.Data.Seats) != 6 {
		t.Errorf("four of six seats changed: since %q, %d seats; want the whole hall", got.Data.Since, len(got.Data.Seats))
	}

	if got := read(strings.Repeat("ab", 16)); got.Data.Since != "" || len(got.Data.Seats) != 6 {
		t.Errorf("a state never made: since %q, %d seats; want the whole hall", got.Data.Since, len(got.Data.Seats))
	}

	// An import moves the free seat left to a new category: earlier
	// states are of other places.
	set(stalls, "2", "free", nil)
	before = whole()
	s.Import(t, company, twoRowHall(true))
	if got := read(etag(before)); got.Data.Since != "" || len(got.Data.Seats) != 6 {
		t.Errorf("since a state before an import that moved seats: since %q, %d seats; want the whole hall", got.Data.Since, len(got.Data.Seats))
	}
}

// TestAvailabilityChangesFromAnyKeptState: from any of the latest states
// a poller held, the changes lead to the availability as a fresh read
// gives it; the states before them are answered whole.
func TestAvailabilityChangesFromAnyKeptState(t *testing.T) {
	s, company, event := demoCatalog(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	svc := catalog.New(s.DB, func() time.Time { return now })
	read := func(since string) catalog.AvailabilityDoc { return pollAvailability(t, svc, company, event, since) }
	var seats []string
	if err := s.DB.NewRaw("SELECT seat_id FROM event_seats WHERE event_id = ? ORDER BY seat_id", event).Scan(ctx, &seats); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 45))
	held := map[string][]catalog.SeatAvailability{}
	var order []string
	for range 20 {
		cur := read("")
		tag := strings.Trim(cur.ETag, `"`)
		if len(order) == 0 || order[len(order)-1] != tag {
			held[tag] = cur.Data.Seats
			order = append(order, tag)
		}
		for range 1 + rng.IntN(3) {
			state, hold, expires := "sold", any(nil), any(nil)
			switch rng.IntN(3) {
			case 0:
				state = "free"
			case 1:
				state, hold, expires = "held", "h", now.Add(time.Hour)
			}
			if _, err := s.DB.ExecContext(ctx, `UPDATE event_seats SET state = ?, hold_id = ?, hold_expires_at = ?, version = version + 1
				WHERE event_id = ? AND seat_id = ?`, state, hold, expires, event, seats[rng.IntN(len(seats))]); err != nil {
				t.Fatal(err)
			}
		}
	}
	last := read("")
	kept := 0
	for i, since := range order {
		d := read(since)
		got := slices.Clone(d.Data.Seats)
		if d.Data.Since != "" {
			kept++
			got = slices.Clone(held[since])
			for _, c := range d.Data.Seats {
				got[slices.IndexFunc(got, func(s catalog.SeatAvailability) bool { return s.SeatID == c.SeatID })] = c
			}
		}
		if !slices.Equal(got, last.Data.Seats) {
			t.Fatalf("state %d of %d + its answer (since %q): not the availability now", i, len(order), d.Data.Since)
		}
		if (d.Data.Since != "") != (i >= len(order)-11) {
			t.Errorf("state %d of %d: answered since %q; want changes for the latest 11 (and the newest, kept too), whole before", i, len(order), d.Data.Since)
		}
	}
	if kept < 10 {
		t.Errorf("%d of %d earlier states answered with changes", kept, len(order))
	}
}

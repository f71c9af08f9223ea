package store_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// TestBestSeatsTogetherLeaveNoOrphan: of a row's free run 13..17, three
// seats together are 15..17 — as central as 14..16, but that would leave
// seats 13 and 17 alone, each unsellable to a pair.
func TestBestSeatsTogetherLeaveNoOrphan(t *testing.T) {
	s := newDemo(t)
	swan := s.eventID(t, "swan-lake")
	s.leaveFree(t, swan, 13, 17)
	pick := func(req store.BestSeatsRequest) []string {
		t.Helper()
		tx := s.begin(t)
		defer tx.Rollback()
		return pickBest(t, tx, req)
	}
	got := pick(store.BestSeatsRequest{EventID: swan, Quantity: 3, Together: true, Window: 100})
	if want := []string{"parterre-2-15", "parterre-2-16", "parterre-2-17"}; !slices.Equal(got, want) {
		t.Fatalf("three together: %v, want %v", got, want)
	}
	// Apart, the three best ranked: the row's centre.
	got = pick(store.BestSeatsRequest{EventID: swan, Quantity: 3, Window: 100})
	if want := []string{"parterre-2-14", "parterre-2-15", "parterre-2-16"}; !slices.Equal(got, want) {
		t.Fatalf("three apart: %v, want %v", got, want)
	}
	if got := pick(store.BestSeatsRequest{EventID: swan, Quantity: 6, Together: true, Window: 100}); len(got) != 0 {
		t.Fatalf("six together from five free: %v", got)
	}
	if got := pick(store.BestSeatsRequest{EventID: swan, Quantity: 1, ZoneIDs: []string{"balcony"}, Window: 100}); len(got) != 0 {
		t.Fatalf("a seat of the sold-out balcony: %v", got)
	}
}

// TestBestSeatsFollowTheFilesRank: a rank given in the catalog file takes
// the place of the computed one (here the row's centre seat is made the
// worst), and zones rank in the file's order.
func TestBestSeatsFollowTheFilesRank(t *testing.T) {
	s := newDemo(t)
	s.Import(t, s.company, []byte(`{"cities": [{"ref": "c", "name": "City"}], "venues": [{"ref": "club", "name": "Club", "city": "c",
	  "timezone": "UTC", "schemes": [{"ref": "s", "name": "Club", "zones": [
	    {"id": "z", "name": "Front", "rows": [{"row": "1", "seats": ["1", {"number": "2", "rank": 5000000}, "3"]}]},
	    {"id": "a", "name": "Back", "rows": [{"row": "1", "seats": 3}]}]}]}],
	  "events": [{"ref": "gig", "title": "Gig", "slug": "gig", "status": "published", "starts_at": "2030-01-01T19:00:00Z",
	    "venue": "club", "scheme": "s", "fee": {"mode": "included", "rate_bp": 0, "min_fee": 0},
	    "categories": [{"ref": "all", "name": "All", "price": 1000, "zones": ["z", "a"]}]}]}`))
	gig := s.eventID(t, "gig")
	ids := pickBest(t, s.begin(t), store.BestSeatsRequest{EventID: gig, Quantity: 3, Window: 100})
	// Front 1 and 3 (rank 2), then the back row's centre (rank 1,000,000),
	// before front 2 (rank 5,000,000).
	if want := []string{"a-1-2", "z-1-1", "z-1-3"}; !slices.Equal(ids, want) {
		t.Fatalf("picked %v, want %v", ids, want)
	}
}

// TestBestSeatsTogetherLookPastLockedSeats: while another transaction has
// the row's best groups locked, a pick for a group together gets the next
// free one, whether it is told of the locked seats beforehand (Avoid, Busy:
// picks in flight in this process) or finds them locked itself; and when
// the only group that fits is locked, it answers none, without looping.
func TestBestSeatsTogetherLookPastLockedSeats(t *testing.T) {
	s := newDemo(t)
	swan := s.eventID(t, "swan-lake")
	s.leaveFree(t, swan, 1, 12)
	together := func(req store.BestSeatsRequest) store.BestSeatsRequest {
		req.EventID, req.Together, req.Window = swan, true, 100
		return req
	}
	// Each pick below gives its seats back before the next one.
	pick := func(req store.BestSeatsRequest) []string {
		t.Helper()
		tx := s.begin(t)
		defer tx.Rollback()
		return pickBest(t, tx, together(req))
	}
	// Another buyer's pick has locked the best four together, uncommitted.
	first := pickBest(t, s.begin(t), together(store.BestSeatsRequest{Quantity: 4}))
	if len(first) != 4 {
		t.Fatalf("the first pick got %v", first)
	}
	locked := map[string]bool{}
	for _, id := range first {
		locked[id] = true
	}
	disjoint := func(name string, got []string) {
		t.Helper()
		if len(got) != 4 {
			t.Fatalf("%s: got %v, want four together beside %v", name, got, first)
		}
		for _, id := range got {
			if locked[id] {
				t.Fatalf("%s: got %v, overlapping the locked %v", name, got, first)
			}
		}
	}
	disjoint("finding the locks itself", pick(store.BestSeatsRequest{Quantity: 4}))
	disjoint("told of them", pick(store.BestSeatsRequest{Quantity: 4, Avoid: first}))
	disjoint("told while looking", pick(store.BestSeatsRequest{Quantity: 4, Busy: func(id string) bool { return locked[id] }}))
	// A stale hint (seats 1..8 given back since) does not hide the only
	// groups that fit: with 9..12 locked, the pick looks once more with the
	// locks alone deciding.
	stale := []string{"parterre-2-1", "parterre-2-2", "parterre-2-3", "parterre-2-4",
		"parterre-2-5", "parterre-2-6", "parterre-2-7", "parterre-2-8"}
	disjoint("told of seats no longer locked", pick(store.BestSeatsRequest{Quantity: 4, Avoid: stale}))
	// Twelve together fit only as the whole row, part of which is locked.
	if got := pick(store.BestSeatsRequest{Quantity: 12}); len(got) != 0 {
		t.Fatalf("twelve together beside a locked group: %v", got)
	}
}

// leaveFree sells every seat of the event but parterre row 2's seats from
// to (numbers).
func (d *demo) leaveFree(t *testing.T, event int64, from, to int) {
	t.Helper()
	if _, err := d.DB.ExecContext(context.Background(), `UPDATE event_seats SET state = 'sold' WHERE event_id = ?
		AND NOT (zone_id = 'parterre' AND row = '2' AND number::int BETWEEN ? AND ?)`, event, from, to); err != nil {
		t.Fatal(err)
	}
}

// begin opens a transaction that the test's end rolls back.
func (d *demo) begin(t *testing.T) bun.Tx {
	t.Helper()
	tx, err := d.DB.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

// pickBest picks best seats in tx and returns their ids.
func pickBest(t *testing.T, tx bun.Tx, req store.BestSeatsRequest) []string {
	t.Helper()
	_, ids, err := store.PickBestSeats(context.Background(), tx, req)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestBestSeatsReadPastNoSoldSeat: late in an on-sale the best seats are
// sold, and a pick reads the free ones in rank order from the index of
// the seats not sold (migration 48), not through every sold seat before
// them. The plans of the picks as they ran, on a 10,000-seat hall 90%
// sold.
func TestBestSeatsReadPastNoSoldSeat(t *testing.T) {
	s := newDemo(t)
	ctx := context.Background()
	s.Import(t, s.company, testenv.ZonedHallCatalog(10, 40, 25))
	hall := s.eventID(t, "hall")
	if _, err := s.DB.ExecContext(ctx, `UPDATE event_seats SET state = 'sold' WHERE event_id = ?0 AND seat_id IN
		(SELECT seat_id FROM event_seats WHERE event_id = ?0 ORDER BY rank, seat_id LIMIT 9000)`, hall); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB.ExecContext(ctx, "ANALYZE event_seats"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var picks []string
	testenv.WatchQueries(s.DB, "FROM event_seats s WHERE", func(q string) {
		mu.Lock()
		defer mu.Unlock()
		picks = append(picks, q)
	})
	for _, together := range []bool{false, true} {
		if got := pickBest(t, s.begin(t), store.BestSeatsRequest{EventID: hall, Quantity: 3, Together: together, Window: 400}); len(got) != 3 {
			t.Fatalf("together %v: picked %v", together, got)
		}
	}
	mu.Lock()
	ran := slices.Clone(picks) // the EXPLAINs below are watched too
	mu.Unlock()
	if len(ran) < 2 {
		t.Fatalf("picks watched: %d", len(ran))
	}
	for _, q := range ran {
		if !strings.Contains(q, "ORDER BY s.rank") {
			continue // the lock of a group's own seats, by id
		}
		var plan []string
		if err := s.DB.NewRaw("EXPLAIN "+q).Scan(ctx, &plan); err != nil {
			t.Fatal(err)
		}
		if text := strings.Join(plan, "\n"); !strings.Contains(text, "event_seats_unsold_rank") {
			t.Errorf("the pick does not read the seats not sold:\n%s\n%s", q, text)
		}
	}
}

package store_test

import (
	"context"
	"slices"
	"testing"

	"ticketsales/store"
)

// TestBestSeatsTogetherLeaveNoOrphan: of a row's free run 13..17, three
// seats together are 15..17 — as central as 14..16, but that would leave
// seats 13 and 17 alone, each unsellable to a pair.
func TestBestSeatsTogetherLeaveNoOrphan(t *testing.T) {
	ctx := context.Background()
	s := newDemo(t)
	swan := s.eventID(t, "swan-lake")
	if _, err := s.DB.ExecContext(ctx, `UPDATE event_seats SET state = 'sold' WHERE event_id = ?
		AND NOT (zone_id = 'parterre' AND row = '2' AND number::int BETWEEN 13 AND 17)`, swan); err != nil {
		t.Fatal(err)
	}
	pick := func(req store.BestSeatsRequest) []string {
		t.Helper()
		tx, err := s.DB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		_, ids, err := store.PickBestSeats(ctx, tx, req)
		if err != nil {
			t.Fatal(err)
		}
		return ids
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

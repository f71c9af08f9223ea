package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// BestSeatsRequest asks for the best free seats of an event.
type BestSeatsRequest struct {
	EventID     int64
	Quantity    int
	CategoryIDs []int64  // none: any
	ZoneIDs     []string // none: any
	Together    bool     // consecutive seats of one row
	// Window is how many of the best free seats a group together is
	// sought among.
	Window int
	// Avoid lists seats that other picks in flight have locked (those this
	// process knows of): a group together is sought without them, so
	// buyers arriving at once do not all try the same best groups.
	Avoid []string
	// Busy, when set, tells whether another pick in flight has locked a
	// seat since Avoid was read: a group with such a seat is passed over
	// without a round trip.
	Busy func(seatID string) bool
	// ChannelID is the caller's sales channel (0: general sale only): a
	// pick takes only seats it may sell.
	ChannelID int64
}

// PickBestSeats locks and returns the best free seats for the request, in
// the caller's transaction; the caller holds them there with HoldSeats. It
// returns none when nothing fits (or every fit is being taken right now).
//
// Seats another transaction has locked are skipped (SKIP LOCKED): buyers
// picking at the same moment get different seats and never wait on each
// other. Seats apart are simply the best ranked free ones. A group together
// is a run of consecutive free seats in one row, found among the Window
// best free seats: runs that would leave one orphan seat beside them come
// last, then the lower rank sum; the best few are tried in turn, each
// locked whole or given back (a savepoint), so a group is never half taken.
func PickBestSeats(ctx context.Context, tx bun.Tx, r BestSeatsRequest) (map[string]ReservedSeat, []string, error) {
	if r.CategoryIDs == nil {
		r.CategoryIDs = []int64{} // an empty array, not NULL: "any"
	}
	if r.ZoneIDs == nil {
		r.ZoneIDs = []string{}
	}
	filter := `s.event_id = ? AND ` + seatIsFree + ` AND NOT ` + seatWithheld(r.ChannelID) + `
		AND (cardinality(?::bigint[]) = 0 OR s.category_id = ANY(?::bigint[]))
		AND (cardinality(?::text[]) = 0 OR s.zone_id = ANY(?::text[]))`
	args := []any{r.EventID, pgdialect.Array(r.CategoryIDs), pgdialect.Array(r.CategoryIDs), pgdialect.Array(r.ZoneIDs), pgdialect.Array(r.ZoneIDs)}
	var rows []ReservedSeat
	if !r.Together {
		err := tx.NewRaw(`SELECT s.seat_id, s.zone_id, s.row, s.number, s.label, s.category_id, 0 AS price
			FROM event_seats s WHERE `+filter+` ORDER BY s.rank, s.seat_id LIMIT ? FOR UPDATE SKIP LOCKED`,
			append(args, r.Quantity)...).Scan(ctx, &rows)
		if err != nil {
			return nil, nil, fmt.Errorf("pick %d best seats of event %d: %w", r.Quantity, r.EventID, err)
		}
		return pickResult(rows)
	}
	// Buyers picking at the same moment would see the same best groups:
	// a pick looks past the seats others have in flight, and one that
	// finds a group's seat locked all the same looks again, on a fresh
	// snapshot (it shows the others' committed holds) and past every seat
	// it found locked.
	// Every round that finds nothing passes over at least one more seat,
	// so the rounds end; maxPickRounds bounds them when many buyers pick
	// at once on instances that cannot see each other's picks.
	avoid := slices.Clone(r.Avoid)
	for round := 0; round < maxPickRounds; round++ {
		seats, ids, locked, err := pickTogether(ctx, tx, r, filter, args, avoid, round)
		switch {
		case err != nil || len(ids) > 0:
			return seats, ids, err
		case len(locked) == 0 && (len(r.Avoid) > 0 || r.Busy != nil):
			// Nothing fits past the picks in flight; they may have hidden
			// the only groups that fit (a pick that has just failed, say):
			// one more look with the locks alone deciding.
			r.Avoid, r.Busy, avoid = nil, nil, nil
		case len(locked) == 0:
			return nil, nil, nil // no group fits
		default:
			avoid = append(avoid, locked...)
		}
	}
	return nil, nil, nil
}

// maxPickRounds bounds the looks for a group together of one pick.
const maxPickRounds = 8

// pickTogether tries the best groups together of one snapshot, without
// the seats to avoid; when none can be locked whole, it returns the seats
// it found locked by others.
func pickTogether(ctx context.Context, tx bun.Tx, r BestSeatsRequest, filter string, args []any, avoid []string, round int) (map[string]ReservedSeat, []string, []string, error) {
	var rows []ReservedSeat
	var groups []struct {
		SeatIDs []string `bun:"seat_ids,array"`
	}
	if avoid == nil {
		avoid = []string{}
	}
	err := tx.NewRaw(`
		WITH c AS (
			SELECT s.seat_id, s.zone_id, s.row, s.pos, s.rank FROM event_seats s WHERE `+filter+`
				AND NOT (s.seat_id = ANY(?::text[]))
			ORDER BY s.rank, s.seat_id LIMIT ?
		), runs AS (
			SELECT c.*, pos - row_number() OVER (PARTITION BY zone_id, row ORDER BY pos) AS run FROM c
		), sized AS (
			SELECT runs.*, count(*) OVER (PARTITION BY zone_id, row, run) AS len,
				row_number() OVER (PARTITION BY zone_id, row, run ORDER BY pos) AS k,
				sum(rank) OVER (PARTITION BY zone_id, row, run ORDER BY pos ROWS BETWEEN CURRENT ROW AND ? FOLLOWING) AS score,
				array_agg(seat_id) OVER (PARTITION BY zone_id, row, run ORDER BY pos ROWS BETWEEN CURRENT ROW AND ? FOLLOWING) AS seat_ids
			FROM runs
		)
		SELECT seat_ids FROM sized WHERE k + ? - 1 <= len
		ORDER BY (k = 2 OR len - (k + ? - 1) = 1), score, zone_id, row, k
		LIMIT 8`,
		append(args, pgdialect.Array(avoid), r.Window, r.Quantity-1, r.Quantity-1, r.Quantity, r.Quantity)...).Scan(ctx, &groups)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("find %d seats together of event %d: %w", r.Quantity, r.EventID, err)
	}
	var locked []string
	lost := map[string]bool{}
	for i, g := range groups {
		busy := false
		for _, id := range g.SeatIDs {
			if !lost[id] && r.Busy != nil && r.Busy(id) {
				lost[id] = true
				locked = append(locked, id)
			}
			busy = busy || lost[id]
		}
		if busy {
			continue // a seat of it is locked by another pick: no round trip
		}
		sp := fmt.Sprintf("best_group_%d_%d", round, i)
		if _, err := tx.ExecContext(ctx, "SAVEPOINT "+sp); err != nil {
			return nil, nil, nil, fmt.Errorf("pick seats together: %w", err)
		}
		rows = rows[:0]
		err := tx.NewRaw(`SELECT s.seat_id, s.zone_id, s.row, s.number, s.label, s.category_id, 0 AS price
			FROM event_seats s WHERE `+filter+` AND s.seat_id = ANY(?::text[])
			ORDER BY s.seat_id FOR UPDATE SKIP LOCKED`, append(args, pgdialect.Array(g.SeatIDs))...).Scan(ctx, &rows)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("lock seats together of event %d: %w", r.EventID, err)
		}
		if len(rows) == r.Quantity {
			seats, ids, err := pickResult(rows)
			return seats, ids, nil, err
		}
		// Part of the group was taken meanwhile: give the rest back, and
		// pass over the seats another holds from now on. Released, so the
		// next try's savepoint does not nest inside this one.
		if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+sp+"; RELEASE SAVEPOINT "+sp); err != nil {
			return nil, nil, nil, fmt.Errorf("pick seats together: %w", err)
		}
		for _, id := range g.SeatIDs {
			if !slices.ContainsFunc(rows, func(row ReservedSeat) bool { return row.SeatID == id }) {
				lost[id] = true
				locked = append(locked, id)
			}
		}
	}
	return nil, nil, locked, nil
}

func pickResult(rows []ReservedSeat) (map[string]ReservedSeat, []string, error) {
	seats := make(map[string]ReservedSeat, len(rows))
	ids := make([]string, 0, len(rows))
	for _, row := range rows {
		seats[row.SeatID] = row
		ids = append(ids, row.SeatID)
	}
	slices.Sort(ids)
	return seats, ids, nil
}

// FreeSeatsLeft counts an event's free seats within the categories and
// zones (none: any) that a caller of the channel may sell: what a sold_out
// answer says is left; withheld tells whether free seats allocated to
// other channels are among them.
func FreeSeatsLeft(ctx context.Context, db bun.IDB, eventID, channelID int64, categoryIDs []int64, zoneIDs []string) (left int, withheld bool, err error) {
	if categoryIDs == nil {
		categoryIDs = []int64{}
	}
	if zoneIDs == nil {
		zoneIDs = []string{}
	}
	w := seatWithheld(channelID)
	err = db.NewRaw(`SELECT count(*) FILTER (WHERE NOT `+w+`), coalesce(bool_or(`+w+`), false)
		FROM event_seats s WHERE s.event_id = ? AND `+seatIsFree+`
		AND (cardinality(?::bigint[]) = 0 OR s.category_id = ANY(?::bigint[]))
		AND (cardinality(?::text[]) = 0 OR s.zone_id = ANY(?::text[]))`,
		eventID, pgdialect.Array(categoryIDs), pgdialect.Array(categoryIDs), pgdialect.Array(zoneIDs), pgdialect.Array(zoneIDs)).Scan(ctx, &left, &withheld)
	if err != nil {
		return 0, false, fmt.Errorf("count free seats of event %d: %w", eventID, err)
	}
	return left, withheld, nil
}

package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// SeatState is one seat of an event as the organizer's hall map shows
// it: what the selling rules make of it now.
type SeatState struct {
	SeatID string `bun:"seat_id"`
	// State: free, held (a hold or an unpaid order) or sold. An expired
	// hold reads free, as the hold statement takes it.
	State string `bun:"state"`
	// ChannelID is the seat's channel (0: general sale). A channel that
	// released its allocation as a whole keeps only what it sold: its
	// other seats read general sale's, as availability shows them.
	ChannelID int64 `bun:"channel_id"`
	// Admitted: a live ticket on the seat was let in at the door.
	Admitted bool `bun:"admitted"`
}

// EventSeatStates returns every seat the event sells with its state, in
// one statement (the hall map's whole read). The admitted seats are the
// event's own orders' (orders_event), joined by hash: no lookup per seat.
func EventSeatStates(ctx context.Context, db bun.IDB, eventID int64) ([]SeatState, error) {
	var out []SeatState
	err := db.NewRaw(`WITH admitted AS (
			SELECT i.order_id, i.seat_id FROM orders o
			JOIN order_items i ON i.order_id = o.id
			JOIN tickets t ON t.order_id = i.order_id AND t.position = i.position
			WHERE o.event_id = ? AND i.seat_id IS NOT NULL AND t.status = 'active' AND t.checked_in_at IS NOT NULL
		)
		SELECT s.seat_id,
			CASE WHEN `+seatIsFree+` THEN 'free' ELSE s.state END AS state,
			CASE WHEN ce.released_at IS NOT NULL AND s.state <> 'sold' THEN 0 ELSE coalesce(s.channel_id, 0) END AS channel_id,
			s.state = 'sold' AND a.seat_id IS NOT NULL AS admitted
		FROM event_seats s
		LEFT JOIN channel_events ce ON ce.event_id = s.event_id AND ce.channel_id = s.channel_id
		LEFT JOIN admitted a ON a.order_id = s.order_id AND a.seat_id = s.seat_id
		WHERE s.event_id = ?`, eventID, eventID).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("seat states of event %d: %w", eventID, err)
	}
	return out, nil
}

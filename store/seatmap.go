package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// SeatPlace is a seat of an event as its seat map shows it apart from its
// status: where it is and its category. An event's places change only by
// a catalog import, which raises events.seat_version in the same
// transaction, so places read at one seat_version hold for all of it.
type SeatPlace struct {
	SeatID     string
	ZoneID     string
	Row        string
	Number     string
	CategoryID int64
	// ChannelID: the channel the seat is allocated to (0: general sale).
	// An allocation change moves the event's seat_version with it.
	ChannelID int64
}

// SeatsTaken are an event's seats that are not free at a moment: sold, and
// reserved (held with no deadline, an order's whose payment was accepted,
// or with one after the moment); a hold past its deadline is free, whether
// or not the workflow that releases it has run yet. NextExpiry is the
// earliest deadline among the reserved (nil: none has one).
type SeatsTaken struct {
	Sold       []string
	Reserved   []string
	NextExpiry *time.Time
}

// SeatMap is what ReadSeatMap read in one snapshot.
type SeatMap struct {
	Version SeatsVersion
	// Places in the map's order (zone, row, number), read only when the
	// caller's were of another seat_version; nil otherwise.
	Places []SeatPlace
	Taken  SeatsTaken
	// Released lists the channels that released their allocation as a
	// whole: their seats are general sale's.
	Released []int64
}

// ReadSeatMap reads an event's seat version and the seats taken at now,
// and its places unless the caller holds those of placesOf (its
// seat_version; -1: none), in one consistent snapshot. The seats' version
// sum and the taken seats come from one aggregate row, the taken as two id
// lists: a seat map's read costs Postgres one pass over the event's seats
// without a sort, and the api a list of the taken seats' ids rather than a
// row per seat.
func ReadSeatMap(ctx context.Context, db *bun.DB, eventID int64, now time.Time, placesOf int64) (SeatMap, error) {
	var m SeatMap
	err := db.RunInTx(ctx, &sqlRepeatableRead, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewRaw("SELECT e.seat_version FROM events e WHERE e.id = ?", eventID).Scan(ctx, &m.Version.Event); err != nil {
			return err
		}
		if m.Version.Event != placesOf {
			if err := tx.NewRaw(`SELECT seat_id, zone_id, row, number, category_id, coalesce(channel_id, 0) AS channel_id
				FROM event_seats WHERE event_id = ? ORDER BY zone_id, row, number`, eventID).Scan(ctx, &m.Places); err != nil {
				return err
			}
			if m.Places == nil {
				m.Places = []SeatPlace{}
			}
		}
		if err := tx.NewRaw(`SELECT channel_id FROM channel_events WHERE event_id = ? AND released_at IS NOT NULL`,
			eventID).Scan(ctx, &m.Released); err != nil {
			return err
		}
		// The version as seatsVersionSQL sums it, in the same pass.
		return tx.NewRaw(`SELECT coalesce(sum(version), 0)::bigint,
				coalesce(array_agg(seat_id) FILTER (WHERE state = 'sold'), '{}'),
				coalesce(array_agg(seat_id) FILTER (WHERE state = 'held' AND (hold_expires_at IS NULL OR hold_expires_at > ?0)), '{}'),
				min(hold_expires_at) FILTER (WHERE state = 'held' AND hold_expires_at > ?0)
			FROM event_seats WHERE event_id = ?1`, now, eventID).
			Scan(ctx, &m.Version.Seats, pgdialect.Array(&m.Taken.Sold), pgdialect.Array(&m.Taken.Reserved), &m.Taken.NextExpiry)
	})
	if err != nil {
		return SeatMap{}, fmt.Errorf("read seat map of event %d: %w", eventID, err)
	}
	return m, nil
}

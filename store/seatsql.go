package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// The SQL every seat and capacity transition shares, written once. Each is
// spliced into the one statement (or transaction) of its transition.
const (
	// newSeatVersion gives a changed seat a new version: availability
	// caches are keyed on the event's seat versions.
	newSeatVersion = "version = nextval('seat_change_seq')"

	// freeSeat puts a seat back on sale: no hold, no order.
	freeSeat = "state = 'free', hold_id = NULL, hold_expires_at = NULL, order_id = NULL, " + newSeatVersion

	// seatIsFree tells whether a seat (aliased s) can be held: it is free,
	// or its hold passed its deadline. A lapsed hold is free for reads and
	// new holds at once, worker or not (docs/decisions.md, principle 3). A held seat
	// without a deadline (an order whose payment was accepted) is never
	// free; the IS NOT NULL keeps the expression true or false, never NULL,
	// which bool_and and NOT would silently misread.
	seatIsFree = "(s.state = 'free' OR (s.state = 'held' AND s.hold_expires_at IS NOT NULL AND s.hold_expires_at <= now()))"

	// bumpEventVersion changes an event's own version, for availability
	// that is counts rather than seats (general admission); with
	// bumpUnseatedVersion only for events sold without a scheme.
	bumpEventVersion    = "UPDATE events SET seat_version = seat_version + 1 WHERE id = ?"
	bumpUnseatedVersion = bumpEventVersion + " AND scheme_id IS NULL"
)

// giveBackSold lowers the sold counts of categories by the positions
// counted: positions is a query of (category_id, n) rows. Sold counts drive
// "after_sold" prices and general-admission capacity.
func giveBackSold(ctx context.Context, db bun.IDB, positions string, args ...any) error {
	_, err := db.NewRaw(`UPDATE ticket_categories c SET sold = c.sold - x.n FROM (`+positions+`) x
		WHERE c.id = x.category_id`, args...).Exec(ctx)
	if err != nil {
		return fmt.Errorf("give back sold counts: %w", err)
	}
	return nil
}

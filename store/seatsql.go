package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/uptrace/bun"
)

// The SQL every seat and capacity transition shares, written once. Each is
// spliced into the one statement (or transaction) of its transition.
const (
	// newSeatVersion gives a changed seat a new version: availability
	// caches are keyed on the event's seat versions.
	newSeatVersion = "version = nextval('seat_change_seq')"

	// freeSeat puts a seat (aliased s) back on sale: no hold, no order; in
	// the allocation it came from, unless its channel released its
	// allocation as a whole, when it goes to general sale.
	freeSeat = "state = 'free', hold_id = NULL, hold_expires_at = NULL, order_id = NULL, " + newSeatVersion +
		", channel_id = CASE WHEN s.channel_id IS NOT NULL AND EXISTS (SELECT 1 FROM channel_events ce " +
		"WHERE ce.event_id = s.event_id AND ce.channel_id = s.channel_id AND ce.released_at IS NOT NULL) THEN NULL ELSE s.channel_id END"

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

// The selling rules of distribution (docs/decisions.md, "Channels and
// allocations"), written once for every statement that holds, picks,
// counts or orders.

// salesOpen is internal/window's rule by Postgres's clock, for an event
// aliased e and the caller's channel terms joined as ce (LEFT JOIN
// channel_events ce ON ce.event_id = e.id AND ce.channel_id = <caller's>;
// no row for general sale): the event is published and has not started,
// and the caller's window, bound by bound its channel's or else general
// sale's, is open.
const salesOpen = `e.status = 'published' AND e.starts_at > now()
	AND coalesce(ce.sales_start, e.sales_start, '-infinity') <= now()
	AND now() < coalesce(ce.sales_end, e.sales_end, 'infinity')`

// salesOpenFor is salesOpen as a boolean query for one event and caller's
// channel (0: general sale).
func salesOpenFor(eventID, channelID int64) string {
	return salesOpenOf(strconv.FormatInt(eventID, 10), strconv.FormatInt(channelID, 10))
}

// salesOpenOf is salesOpenFor with the event and the channel as SQL
// expressions (a prepared statement's parameters).
func salesOpenOf(event, channel string) string {
	return `SELECT EXISTS (SELECT 1 FROM events e LEFT JOIN channel_events ce ON ce.event_id = e.id AND ce.channel_id = ` +
		channel + ` WHERE e.id = ` + event + ` AND ` + salesOpen + `)`
}

// seatWithheld tells whether a seat (aliased s) is withheld from a caller
// of the channel (0: general sale only): it is allocated to another
// channel. It reads the seat's row alone, so the re-check under the
// seat's lock sees everything committed before it: a whole release moves
// a channel's unsold seats to general sale, and a seat of it freed later
// goes there too (freeSeat). A withheld seat is not for sale to the caller
// whatever its state.
func seatWithheld(channelID int64) string {
	return seatWithheldFrom(strconv.FormatInt(channelID, 10))
}

// seatWithheldFrom is seatWithheld with the channel as an SQL expression.
func seatWithheldFrom(channel string) string {
	return `(s.channel_id IS NOT NULL AND s.channel_id <> ` + channel + `)`
}

// giveBackSold lowers the sold counts of categories by the positions
// counted, and gives the positions taken from a channel's quota back to
// it: positions is a query of (category_id, quota_id, n) rows. Sold counts
// drive "after_sold" prices and general-admission capacity. Categories are
// changed before quotas, the order every order and allocation change takes
// their locks in. (Locking them first in id order, in the same statement,
// deadlocked concurrent refunds of one category in the seat race.)
func giveBackSold(ctx context.Context, db bun.IDB, positions string, args ...any) error {
	_, err := db.NewRaw(`WITH x AS (`+positions+`), cats AS (
			UPDATE ticket_categories c SET sold = c.sold - y.n
			FROM (SELECT category_id, sum(n) AS n FROM x GROUP BY category_id) y
			WHERE c.id = y.category_id RETURNING 1
		)
		`+giveBackQuotas+` AND (SELECT count(*) FROM cats) >= 0`, args...).Exec(ctx)
	if err != nil {
		return fmt.Errorf("give back sold counts: %w", err)
	}
	return nil
}

// giveBackQuotas, with a query x of (quota_id, n) rows before it, returns
// positions to the channel quotas they were taken from; to a channel that
// released its allocation as a whole they go on to general sale. Append
// conditions with AND.
const giveBackQuotas = `UPDATE channel_quotas q SET taken = q.taken - x.n,
		allocated = q.allocated - CASE WHEN q.closed THEN x.n ELSE 0 END,
		released = q.released + CASE WHEN q.closed THEN x.n ELSE 0 END
	FROM (SELECT quota_id, sum(n)::int AS n FROM x WHERE quota_id IS NOT NULL GROUP BY quota_id) x
	WHERE q.id = x.quota_id`

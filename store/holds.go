package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Reservation is a hold of seats of one event.
type Reservation struct {
	bun.BaseModel `bun:"table:reservations,alias:r"`
	ID            string                   `bun:"id,pk"`
	CompanyID     int64                    `bun:"company_id"`
	APIKeyID      int64                    `bun:"api_key_id"`
	IsTest        bool                     `bun:"is_test"`
	EventID       int64                    `bun:"event_id"`
	Status        states.ReservationStatus `bun:"status"`
	ExpiresAt     time.Time                `bun:"expires_at"`
	Currency      string                   `bun:"currency"`
	Total         int64                    `bun:"total"`
	ServiceFee    int64                    `bun:"service_fee"`
	TotalToPay    int64                    `bun:"total_to_pay"`
	CreatedAt     time.Time                `bun:"created_at"`
	UpdatedAt     time.Time                `bun:"updated_at"`
	// Lapsed: expires_at had passed in Postgres's clock when the row was
	// read (deadlines are decided by one clock, never the api's).
	Lapsed bool `bun:"lapsed,scanonly"`
}

// reservationStateError refuses a transition the reservation's status
// forbids; an expired one has a code of its own.
func reservationStateError(id string, st states.ReservationStatus) error {
	if st == states.ReservationExpired {
		return fmt.Errorf("reservation %s: %w", id, errs.ReservationExpired)
	}
	return &errs.StateError{Entity: "reservation", ID: id, Status: string(st)}
}

// selectReservation selects reservations with Lapsed.
func selectReservation(db bun.IDB, model any) *bun.SelectQuery {
	return db.NewSelect().Model(model).ColumnExpr("?TableColumns").ColumnExpr("r.expires_at <= now() AS lapsed")
}

// EffectiveStatus is what partners see: a lapsed hold is expired at once.
// Lapsed is read with the row, by Postgres's clock.
func (r *Reservation) EffectiveStatus() states.ReservationStatus {
	if r.Status == states.ReservationReserved && r.Lapsed {
		return states.ReservationExpired
	}
	return r.Status
}

// ReservedSeat is a seat of a reservation with its fixed price.
type ReservedSeat struct {
	SeatID     string `bun:"seat_id"`
	ZoneID     string `bun:"zone_id"`
	Row        string `bun:"row"`
	Number     string `bun:"number"`
	Label      string `bun:"label"`
	CategoryID int64  `bun:"category_id"`
	Price      int64  `bun:"price"`
}

// ListEventSeats returns every seat the event sells (zone, row, number,
// label, category), by id.
func ListEventSeats(ctx context.Context, db bun.IDB, eventID int64) (map[string]ReservedSeat, error) {
	return eventSeats(ctx, db.NewRaw(seatsOfEvent+"WHERE event_id = ?", eventID), eventID)
}

// ListEventSeatsByID returns the given seats of an event (zone, row, number,
// label, category); seats the event does not sell are absent.
func ListEventSeatsByID(ctx context.Context, db bun.IDB, eventID int64, seatIDs []string) (map[string]ReservedSeat, error) {
	return eventSeats(ctx, db.NewRaw(seatsOfEvent+"WHERE event_id = ? AND seat_id = ANY(?::text[])", eventID, pgdialect.Array(seatIDs)), eventID)
}

const seatsOfEvent = "SELECT seat_id, zone_id, row, number, label, category_id, 0 AS price FROM event_seats "

func eventSeats(ctx context.Context, q *bun.RawQuery, eventID int64) (map[string]ReservedSeat, error) {
	var rows []ReservedSeat
	if err := q.Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("look up seats of event %d: %w", eventID, err)
	}
	out := make(map[string]ReservedSeat, len(rows))
	for _, r := range rows {
		out[r.SeatID] = r
	}
	return out, nil
}

// NewHold is everything the hold statement writes.
type NewHold struct {
	// Reservation's ExpiresAt and CreatedAt, when zero, are set by the
	// statement from Postgres's clock: now() and now() + TTL.
	Reservation Reservation
	TTL         time.Duration
	SeatIDs     []string
	// Prices fixes each seat's price at hold time.
	Prices map[string]int64
	// ChannelID is the caller's sales channel (0: general sale only): the
	// window checked and the seats it may hold are its.
	ChannelID int64
}

// ErrNotOnSale: the event stopped selling (unpublished or started) before
// the hold statement ran.
var ErrNotOnSale = errors.New("event not on sale")

// HoldSeats is Hold's decision alone (tests of the statement use it).
func HoldSeats(ctx context.Context, db bun.IDB, h NewHold) (taken []string, ok bool, err error) {
	out, err := Hold(ctx, db, h)
	return out.Taken, out.OK, err
}

// HoldOutcome is what the hold statement decided.
type HoldOutcome struct {
	OK bool
	// CreatedAt and ExpiresAt of the hold made (OK), by Postgres's clock.
	CreatedAt, ExpiresAt time.Time
	// Taken lists the requested seats that were not free.
	Taken []string
	// TakenUntil tells, of the taken seats its plain read saw held or
	// sold, until when: a held seat's hold deadline, nil for a sold one.
	// Seats taken by a request in flight are not in it.
	TakenUntil map[string]*time.Time
	// Withheld lists the requested seats allocated to a sales channel
	// the caller does not sell in: not for sale to it, whatever their state.
	Withheld []string
}

// Hold holds every seat for its reservation, or none, in one statement
// that locks them in seat order. A seat locked by another transaction
// counts as taken at once (NOWAIT): buyers of the same seats never queue,
// and the first to lock the first seat wins (with SKIP LOCKED each would
// lock a part and all fail). A plain read comes first, so refusing seats
// already taken locks nothing and waits for no WAL flush.
func Hold(ctx context.Context, db bun.IDB, h NewHold) (HoldOutcome, error) {
	r := h.Reservation
	var out struct {
		OK         bool
		OnSale     bool
		Taken      []string              `bun:",array"`
		Withheld   []string              `bun:",array"`
		TakenUntil map[string]*time.Time `bun:"type:json"`
		CreatedAt  *time.Time
		ExpiresAt  *time.Time
	}
	err := scanPrepared(ctx, db, &out, holdSQL, holdArgs(h)...)
	if isLockNotAvailable(err) {
		// A seat is locked by a hold (or order, or expiry) in flight: taken
		// for now. Name the seats a plain read shows taken, else all.
		taken, err := seatsNotFree(ctx, db, r.EventID, h.SeatIDs)
		if err != nil {
			return HoldOutcome{}, fmt.Errorf("hold seats of event %d: %w", r.EventID, err)
		}
		if len(taken) == 0 {
			taken = h.SeatIDs
		}
		return HoldOutcome{Taken: taken}, nil
	}
	if err != nil {
		return HoldOutcome{}, fmt.Errorf("hold %d seats of event %d: %w", len(h.SeatIDs), r.EventID, err)
	}
	if !out.OnSale {
		return HoldOutcome{}, fmt.Errorf("hold seats of event %d: %w", r.EventID, ErrNotOnSale)
	}
	res := HoldOutcome{OK: out.OK, Taken: out.Taken, TakenUntil: out.TakenUntil, Withheld: out.Withheld}
	if out.OK && out.CreatedAt != nil && out.ExpiresAt != nil {
		res.CreatedAt, res.ExpiresAt = *out.CreatedAt, *out.ExpiresAt
	}
	return res, nil
}

// holdSQL is the hold statement of Hold, prepared (execPrepared): the
// statement every buyer runs. Its parameters are holdArgs'.
var holdSQL = `
		WITH clock AS (
			-- The hold's deadline, by Postgres's clock (or as given).
			SELECT coalesce($1::timestamptz, now()) AS created_at,
				coalesce($2::timestamptz, now() + make_interval(secs => $3::float8)) AS expires_at
		), ev AS (
			` + salesOpenOf("$4::bigint", "$5::bigint") + ` AS on_sale
		), peek AS (
			SELECT s.seat_id, s.state, s.hold_expires_at, ` + seatIsFree + ` AS free, ` + seatWithheldFrom("$5::bigint") + ` AS withheld
			FROM event_seats s WHERE s.event_id = $4::bigint AND s.seat_id = ANY($6::text[])
		), go AS (
			SELECT count(*) = $7::bigint AND coalesce(bool_and(free AND NOT withheld), false) AS ok FROM peek
		), cur AS (
			-- Checked again under the lock: an allocation may have moved a seat.
			SELECT s.seat_id, ` + seatIsFree + ` AND NOT ` + seatWithheldFrom("$5::bigint") + ` AS free
			FROM event_seats s WHERE (SELECT ok FROM go) AND s.event_id = $4::bigint AND s.seat_id = ANY($6::text[])
			ORDER BY s.seat_id FOR UPDATE NOWAIT
		), verdict AS (
			SELECT count(*) = $7::bigint AND coalesce(bool_and(free), false) AND (SELECT on_sale FROM ev) AS ok FROM cur
		), held AS (
			UPDATE event_seats s SET state = 'held', hold_id = $8::text, hold_expires_at = (SELECT expires_at FROM clock),
				order_id = NULL, ` + newSeatVersion + `
			FROM verdict WHERE verdict.ok AND s.event_id = $4::bigint AND s.seat_id = ANY($6::text[])
			RETURNING s.seat_id, s.category_id
		), res AS (
			INSERT INTO reservations (id, company_id, api_key_id, is_test, event_id, status, expires_at, currency,
				total, service_fee, total_to_pay, created_at)
			SELECT $8::text, $9::bigint, $10::bigint, $11::boolean, $4::bigint, 'reserved', clock.expires_at, $12::text,
				$13::bigint, $14::bigint, $15::bigint, clock.created_at FROM verdict, clock WHERE verdict.ok
			RETURNING id, created_at, expires_at
		), rs AS (
			INSERT INTO reservation_seats (reservation_id, event_id, seat_id, category_id, price)
			SELECT (SELECT id FROM res), $4::bigint, h.seat_id, h.category_id, p.price
			FROM held h JOIN unnest($6::text[], $16::bigint[]) AS p(seat_id, price) USING (seat_id)
		)
		SELECT (SELECT ok FROM verdict) AS ok, (SELECT on_sale FROM ev) AS on_sale,
			ARRAY(SELECT w FROM unnest($6::text[]) AS w WHERE w NOT IN (SELECT seat_id FROM peek WHERE free)
				OR ((SELECT ok FROM go) AND w NOT IN (SELECT seat_id FROM cur WHERE free)) ORDER BY w) AS taken,
			(SELECT json_object_agg(seat_id, CASE WHEN state = 'held' THEN hold_expires_at END) FROM peek WHERE NOT free) AS taken_until,
			ARRAY(SELECT seat_id FROM peek WHERE withheld ORDER BY seat_id) AS withheld,
			(SELECT created_at FROM res) AS created_at, (SELECT expires_at FROM res) AS expires_at`

// holdArgs are holdSQL's parameters for h, $1 to $16.
func holdArgs(h NewHold) []any {
	r := h.Reservation
	prices := make([]int64, len(h.SeatIDs))
	for i, s := range h.SeatIDs {
		prices[i] = h.Prices[s]
	}
	return []any{nullTime(r.CreatedAt), nullTime(r.ExpiresAt), h.TTL.Seconds(), r.EventID, h.ChannelID,
		h.SeatIDs, int64(len(h.SeatIDs)), r.ID, r.CompanyID, r.APIKeyID, r.IsTest, r.Currency,
		r.Total, r.ServiceFee, r.TotalToPay, prices}
}

// HoldSQL is the hold statement for h with its values inlined, as
// Hold runs it: for benchmarks that run the very statement elsewhere
// (pgbench).
func HoldSQL(h NewHold) string {
	args := holdArgs(h)
	f := bun.NewDB(nil, pgdialect.New())
	sql := holdSQL
	for i := len(args); i >= 1; i-- { // $16 before $1
		a := args[i-1]
		switch a.(type) {
		case []string, []int64:
			a = pgdialect.Array(a)
		}
		sql = strings.ReplaceAll(sql, fmt.Sprintf("$%d::", i), f.NewRaw("?", a).String()+"::")
	}
	return sql
}

// isLockNotAvailable tells a NOWAIT lock refusal (55P03).
func isLockNotAvailable(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "55P03"
}

// seatsNotFree reads, without locking, which of the seats are held by a
// live hold or sold.
func seatsNotFree(ctx context.Context, db bun.IDB, eventID int64, seatIDs []string) ([]string, error) {
	var taken []string
	err := db.NewRaw(`SELECT s.seat_id FROM event_seats s WHERE s.event_id = ? AND s.seat_id = ANY(?::text[])
		AND NOT `+seatIsFree+` ORDER BY s.seat_id`, eventID, pgdialect.Array(seatIDs)).Scan(ctx, &taken)
	return taken, err
}

// EndReservation moves a reserved reservation to status (released or
// expired) and frees its held seats, in one transaction. For expired, the
// deadline must have passed. It reports whether this call made the change,
// so running it twice changes nothing the second time.
//
// The status change comes first, in a statement of its own: it takes the
// reservation's row lock, which ReplaceSeats holds while it adds seats. Under
// READ COMMITTED the seat statement after it then sees what a replace that
// committed during the wait added; one statement would look for the seats in
// its snapshot from before the wait and leave the added ones held.
func EndReservation(ctx context.Context, db bun.IDB, id string, status states.ReservationStatus) (changed bool, err error) {
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw(`UPDATE reservations SET status = ?, updated_at = now()
			WHERE id = ? AND status = 'reserved' AND (? <> 'expired' OR expires_at <= now())`, status, id, status).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		changed = true
		if status == states.ReservationExpired {
			if err := reservationEvent(ctx, tx, states.EventReservationExpired, id); err != nil {
				return err
			}
		}
		_, err = tx.NewRaw(`
			WITH lk AS (
				SELECT s.event_id, s.seat_id FROM event_seats s
				WHERE s.hold_id = ? AND s.state = 'held' ORDER BY s.seat_id FOR UPDATE
			)
			UPDATE event_seats s SET `+freeSeat+`
			FROM lk WHERE s.event_id = lk.event_id AND s.seat_id = lk.seat_id`, id).Exec(ctx)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("end reservation %s as %s: %w", id, status, err)
	}
	return changed, nil
}

// GetReservationStatus reads a reservation's stored status.
func GetReservationStatus(ctx context.Context, db bun.IDB, id string) (states.ReservationStatus, error) {
	var status states.ReservationStatus
	if err := db.NewRaw("SELECT status FROM reservations WHERE id = ?", id).Scan(ctx, &status); err != nil {
		return "", notFound(err, "reservation "+id)
	}
	return status, nil
}

// GetReservation returns a company's reservation with its seats.
func GetReservation(ctx context.Context, db bun.IDB, companyID int64, id string) (*Reservation, []ReservedSeat, error) {
	r := new(Reservation)
	if err := selectReservation(db, r).Where("id = ? AND company_id = ?", id, companyID).Scan(ctx); err != nil {
		return nil, nil, notFound(err, "reservation "+id)
	}
	seats, err := reservationSeats(ctx, db, r)
	return r, seats, err
}

func reservationSeats(ctx context.Context, db bun.IDB, r *Reservation) ([]ReservedSeat, error) {
	var seats []ReservedSeat
	err := db.NewRaw(`
		SELECT rs.seat_id, es.zone_id, es.row, es.number, es.label, rs.category_id, rs.price
		FROM reservation_seats rs JOIN event_seats es ON es.event_id = rs.event_id AND es.seat_id = rs.seat_id
		WHERE rs.reservation_id = ? ORDER BY es.zone_id, es.row, es.number`, r.ID).Scan(ctx, &seats)
	if err != nil {
		return nil, fmt.Errorf("seats of reservation %s: %w", r.ID, err)
	}
	return seats, nil
}

// Replacement is the new composition of a reservation.
type Replacement struct {
	ReservationID string
	CompanyID     int64
	SeatIDs       []string
	// Prices of seats not already in the reservation, fixed now.
	Prices func(categoryID int64) int64
	// Totals recomputes the reservation sums from its final seat prices.
	Totals func(prices []int64) (total, fee, toPay int64)
	// ChannelID is the caller's sales channel (0: general sale only): the
	// seats it adds must be for sale to it.
	ChannelID int64
}

// ReplaceSeats replaces a live reservation's seats as a whole in one
// transaction: kept seats stay held at their price, dropped ones are freed,
// new ones held — or nothing changes and the seats that were taken are
// returned. The deadline does not move.
func ReplaceSeats(ctx context.Context, db *bun.DB, rp Replacement) (taken, withheld []string, err error) {
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		r := new(Reservation)
		if err := selectReservation(tx, r).Where("id = ? AND company_id = ?", rp.ReservationID, rp.CompanyID).For("UPDATE").Scan(ctx); err != nil {
			return notFound(err, "reservation "+rp.ReservationID)
		}
		if st := r.EffectiveStatus(); st != states.ReservationReserved {
			return reservationStateError(r.ID, st)
		}
		seats := pgdialect.Array(rp.SeatIDs)
		var cur []struct {
			SeatID     string
			CategoryID int64
			Mine       bool
			Free       bool
			Withheld   bool
		}
		if err := tx.NewRaw(`
			SELECT s.seat_id, s.category_id, (s.state = 'held' AND s.hold_id = ?) AS mine,
				`+seatIsFree+` AS free, `+seatWithheld(rp.ChannelID)+` AS withheld
			FROM event_seats s
			WHERE s.event_id = ? AND (s.seat_id = ANY(?::text[]) OR (s.state = 'held' AND s.hold_id = ?))
			ORDER BY s.seat_id FOR UPDATE`, r.ID, r.EventID, seats, r.ID).Scan(ctx, &cur); err != nil {
			return fmt.Errorf("lock seats: %w", err)
		}
		wanted := map[string]bool{}
		for _, s := range rp.SeatIDs {
			wanted[s] = true
		}
		present := map[string]bool{}
		for _, s := range cur {
			present[s.SeatID] = true
		}
		for _, s := range rp.SeatIDs {
			if !present[s] { // removed from sale meanwhile
				taken = append(taken, s)
			}
		}
		var add, drop []string
		var addCats []int64
		for _, s := range cur {
			switch {
			case wanted[s.SeatID] && !s.Mine && s.Withheld:
				withheld = append(withheld, s.SeatID)
			case wanted[s.SeatID] && !s.Mine && !s.Free:
				taken = append(taken, s.SeatID)
			case wanted[s.SeatID] && !s.Mine:
				add, addCats = append(add, s.SeatID), append(addCats, s.CategoryID)
			case !wanted[s.SeatID] && s.Mine:
				drop = append(drop, s.SeatID)
			}
		}
		if len(taken) > 0 || len(withheld) > 0 {
			return errTaken
		}
		addPrices := make([]int64, len(add))
		for i, c := range addCats {
			addPrices[i] = rp.Prices(c)
		}
		if len(add) > 0 {
			// Adding seats is holding them: only in the caller's window, by
			// Postgres's clock.
			var open bool
			if err := tx.NewRaw(salesOpenFor(r.EventID, rp.ChannelID)).Scan(ctx, &open); err != nil {
				return err
			}
			if !open {
				return ErrNotOnSale
			}
		}
		if _, err := tx.NewRaw(`UPDATE event_seats s SET `+freeSeat+` WHERE event_id = ? AND seat_id = ANY(?::text[]) AND hold_id = ?`,
			r.EventID, pgdialect.Array(drop), r.ID).Exec(ctx); err != nil {
			return fmt.Errorf("free dropped seats: %w", err)
		}
		if _, err := tx.NewRaw(`UPDATE event_seats SET state = 'held', hold_id = ?, hold_expires_at = ?, order_id = NULL, `+
			newSeatVersion+` WHERE event_id = ? AND seat_id = ANY(?::text[])`,
			r.ID, r.ExpiresAt, r.EventID, pgdialect.Array(add)).Exec(ctx); err != nil {
			return fmt.Errorf("hold added seats: %w", err)
		}
		if _, err := tx.NewRaw(`DELETE FROM reservation_seats WHERE reservation_id = ? AND seat_id = ANY(?::text[])`,
			r.ID, pgdialect.Array(drop)).Exec(ctx); err != nil {
			return fmt.Errorf("drop reservation seats: %w", err)
		}
		if _, err := tx.NewRaw(`INSERT INTO reservation_seats (reservation_id, event_id, seat_id, category_id, price)
			SELECT ?, ?, * FROM unnest(?::text[], ?::bigint[], ?::bigint[])`,
			r.ID, r.EventID, pgdialect.Array(add), pgdialect.Array(addCats), pgdialect.Array(addPrices)).Exec(ctx); err != nil {
			return fmt.Errorf("add reservation seats: %w", err)
		}
		var final []int64
		if err := tx.NewRaw("SELECT price FROM reservation_seats WHERE reservation_id = ?", r.ID).Scan(ctx, &final); err != nil {
			return fmt.Errorf("reservation prices: %w", err)
		}
		total, fee, toPay := rp.Totals(final)
		_, err := tx.NewRaw(`UPDATE reservations SET total = ?, service_fee = ?, total_to_pay = ?, updated_at = now() WHERE id = ?`,
			total, fee, toPay, r.ID).Exec(ctx)
		return err
	})
	if err == errTaken {
		return taken, withheld, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("replace seats of reservation %s: %w", rp.ReservationID, err)
	}
	return nil, nil, nil
}

var errTaken = fmt.Errorf("seats taken")

// Extension moves a live hold's deadline.
type Extension struct {
	ReservationID string
	CompanyID     int64
	IsTest        bool
	// ChannelID is the caller's sales channel (0: general sale only): a
	// hold is made longer only in its window, as it is made.
	ChannelID int64
	// TTL: the hold lasts this long from now, or as long as it already
	// does, whichever is later (an extension never shortens a hold).
	TTL time.Duration
	// MaxLife bounds a hold's whole life, expires_at - created_at.
	MaxLife time.Duration
}

// ExtendOutcome is what an extension did.
type ExtendOutcome struct {
	EventID   int64
	ExpiresAt time.Time // the hold's deadline now
	Moved     bool      // the deadline moved (false: it already lasted as long)
	// Latest is the latest deadline the hold may have (created_at +
	// MaxLife), set when ErrHoldLifeCap refuses the extension.
	Latest time.Time
}

// ErrHoldLifeCap: the extension would make the hold live longer than
// MaxLife from its creation; nothing changed.
var ErrHoldLifeCap = errors.New("hold would outlive its longest life")

// errLapsed rolls an extension back whose hold lapsed while it ran.
var errLapsed = errors.New("hold lapsed during the extension")

// ExtendHold moves a live hold's deadline (the reservation's and its held
// seats') to TTL from now, never earlier than it is, in one transaction.
// The reservation's guarded update decides, under its row lock, by
// Postgres's clock at that moment (clock_timestamp: the lock may have
// waited for an order, an expiry, a replace or another extension): only a reserved hold of the
// company and environment, not past its deadline, within MaxLife and the
// caller's sales window is moved. Its seats follow in a statement of their
// own, as in EndReservation (a replace that committed while the update
// waited added seats its snapshot would not see), and all of them must
// still be the hold's: a seat retaken in the instant the old deadline
// passed during the transaction rolls it back as expired. A refusal says
// why: errs.NotFound, the reservation's state (reservationStateError),
// ErrHoldLifeCap or ErrNotOnSale.
func ExtendHold(ctx context.Context, db *bun.DB, x Extension) (ExtendOutcome, error) {
	var out ExtendOutcome
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// The row lock first, in a statement of its own: the guarded update
		// then reads the row as the last writer left it (in one statement,
		// a row version from before a wait for the lock could fail the
		// guard, say an extension that committed meanwhile). before is
		// the deadline as the lock found it.
		var before time.Time
		if err := tx.NewRaw(`SELECT expires_at FROM reservations WHERE id = ? AND company_id = ? AND is_test = ? FOR UPDATE`,
			x.ReservationID, x.CompanyID, x.IsTest).Scan(ctx, &before); err != nil {
			return notFound(err, "reservation "+x.ReservationID)
		}
		var moved []struct {
			EventID   int64     `bun:"event_id"`
			ExpiresAt time.Time `bun:"expires_at"`
		}
		err := tx.NewRaw(`
			UPDATE reservations r SET expires_at = greatest(r.expires_at,
					least(clock_timestamp() + make_interval(secs => ?), r.created_at + make_interval(secs => ?))),
				updated_at = now()
			WHERE r.id = ? AND r.status = 'reserved' AND r.expires_at > clock_timestamp()
				AND clock_timestamp() + make_interval(secs => ?) <= r.created_at + make_interval(secs => ?)
				AND (SELECT EXISTS (SELECT 1 FROM events e LEFT JOIN channel_events ce
					ON ce.event_id = e.id AND ce.channel_id = ? WHERE e.id = r.event_id AND `+salesOpen+`))
			RETURNING r.event_id, r.expires_at`,
			x.TTL.Seconds(), x.MaxLife.Seconds(), x.ReservationID, x.TTL.Seconds(), x.MaxLife.Seconds(),
			x.ChannelID).Scan(ctx, &moved)
		if err != nil {
			return err
		}
		if len(moved) == 0 {
			return extensionRefusal(ctx, tx, x, &out)
		}
		m := moved[0]
		out.EventID, out.ExpiresAt, out.Moved = m.EventID, m.ExpiresAt, m.ExpiresAt.After(before)
		var seats struct {
			Held, Listed int
		}
		if err := tx.NewRaw(`
			WITH lk AS (
				SELECT s.event_id, s.seat_id, s.hold_expires_at FROM event_seats s
				WHERE s.event_id = ? AND s.hold_id = ? AND s.state = 'held' ORDER BY s.seat_id FOR UPDATE
			), up AS (
				UPDATE event_seats s SET hold_expires_at = ?, `+newSeatVersion+`
				FROM lk WHERE s.event_id = lk.event_id AND s.seat_id = lk.seat_id AND lk.hold_expires_at IS DISTINCT FROM ?
				RETURNING 1
			)
			SELECT (SELECT count(*) FROM lk) AS held,
				(SELECT count(*) FROM reservation_seats WHERE reservation_id = ?) AS listed`,
			m.EventID, x.ReservationID, m.ExpiresAt, m.ExpiresAt, x.ReservationID).Scan(ctx, &seats.Held, &seats.Listed); err != nil {
			return fmt.Errorf("move seats' deadline: %w", err)
		}
		if seats.Held != seats.Listed {
			return errLapsed
		}
		return nil
	})
	switch {
	case errors.Is(err, errLapsed):
		return ExtendOutcome{}, reservationStateError(x.ReservationID, states.ReservationExpired)
	case err != nil:
		return out, fmt.Errorf("extend reservation %s: %w", x.ReservationID, err)
	}
	return out, nil
}

// extensionRefusal says why the extension's guarded update moved nothing,
// from the reservation as it is now.
func extensionRefusal(ctx context.Context, tx bun.Tx, x Extension, out *ExtendOutcome) error {
	var r struct {
		Status  states.ReservationStatus `bun:"status"`
		Lapsed  bool                     `bun:"lapsed"`
		OverCap bool                     `bun:"over_cap"`
		Latest  time.Time                `bun:"latest"`
	}
	err := tx.NewRaw(`SELECT status, expires_at <= clock_timestamp() AS lapsed,
			clock_timestamp() + make_interval(secs => ?) > created_at + make_interval(secs => ?) AS over_cap,
			created_at + make_interval(secs => ?) AS latest
		FROM reservations WHERE id = ? AND company_id = ? AND is_test = ?`,
		x.TTL.Seconds(), x.MaxLife.Seconds(), x.MaxLife.Seconds(), x.ReservationID, x.CompanyID, x.IsTest).Scan(ctx, &r)
	if err != nil {
		return notFound(err, "reservation "+x.ReservationID)
	}
	switch {
	case r.Status == states.ReservationReserved && r.Lapsed:
		return reservationStateError(x.ReservationID, states.ReservationExpired)
	case r.Status != states.ReservationReserved:
		return reservationStateError(x.ReservationID, r.Status)
	case r.OverCap:
		out.Latest = r.Latest
		return ErrHoldLifeCap
	}
	return ErrNotOnSale
}

// GetHold reads a reservation by id alone, with Lapsed (for the workflows,
// which know no company).
func GetHold(ctx context.Context, db bun.IDB, id string) (*Reservation, error) {
	r := new(Reservation)
	if err := selectReservation(db, r).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, notFound(err, "reservation "+id)
	}
	return r, nil
}

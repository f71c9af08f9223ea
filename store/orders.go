package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Order is a purchase.
type Order struct {
	bun.BaseModel     `bun:"table:orders,alias:o"`
	ID                int64                `bun:"id,pk,autoincrement"`
	CompanyID         int64                `bun:"company_id"`
	APIKeyID          int64                `bun:"api_key_id"`
	IsTest            bool                 `bun:"is_test"`
	EventID           int64                `bun:"event_id"`
	ReservationID     *string              `bun:"reservation_id"`
	ScheduleSlotID    *int64               `bun:"schedule_slot_id"`
	Status            states.OrderStatus   `bun:"status"`
	CancelReason      *states.CancelReason `bun:"cancel_reason"`
	Payment           states.PaymentMethod `bun:"payment"`
	Channel           states.Channel       `bun:"channel,nullzero,default:'api'"` // "api" (/v1) or "aggregator" (the adapter)
	Gateway           *string              `bun:"gateway"`                        // which gateway takes a gateway order's payment
	PaymentID         *string              `bun:"payment_id"`
	PaymentURL        *string              `bun:"payment_url"`
	Currency          string               `bun:"currency"`
	Total             int64                `bun:"total"`
	ServiceFee        int64                `bun:"service_fee"`
	Amount            int64                `bun:"amount"`
	CustomerEmail     string               `bun:"customer_email"`
	CustomerFirstName string               `bun:"customer_first_name"`
	CustomerLastName  string               `bun:"customer_last_name"`
	CustomerPhone     string               `bun:"customer_phone"`
	// Reference and Metadata are the partner's, kept as sent (bounds:
	// internal/orders). Metadata is {} when none; nil only in an event's
	// snapshot from before it was stored.
	Reference         *string           `bun:"reference"`
	Metadata          map[string]string `bun:"metadata,type:jsonb,nullzero,default:'{}'"`
	AccessTokenHash   []byte            `bun:"access_token_hash"`
	AccessTokenSealed []byte            `bun:"access_token_sealed"`
	CreatedAt         time.Time         `bun:"created_at,nullzero,default:now()"`
	ExpiresAt         time.Time         `bun:"expires_at"`
	PaidAt            *time.Time        `bun:"paid_at"`
	// PaymentAcceptedAt: when the partner's external payment (PaymentID)
	// was accepted by its confirm, in the payment window; the order is
	// paid with it even if its workflow gets to it only later.
	PaymentAcceptedAt *time.Time `bun:"payment_accepted_at"`
	CancelledAt       *time.Time `bun:"cancelled_at"`
	EmailedAt         *time.Time `bun:"emailed_at"`
	UpdatedAt         time.Time  `bun:"updated_at,nullzero,default:now()"`
	// PaymentWindow sets a new order's ExpiresAt from Postgres's clock: the
	// one clock every deadline is decided by.
	PaymentWindow time.Duration `bun:"-"`
}

// GatewayName is the gateway that takes the order's payment; orders from
// before it was recorded took the test gateway, the only one there was.
func (o *Order) GatewayName() string {
	if o.Gateway == nil {
		return "test"
	}
	return *o.Gateway
}

// insertOrder stores a new order, its access token hash included.
func insertOrder(ctx context.Context, tx bun.Tx, o *Order) error {
	if len(o.AccessTokenHash) == 0 {
		return fmt.Errorf("insert order: no access token")
	}
	q := tx.NewInsert().Model(o).Returning("*")
	if o.ExpiresAt.IsZero() {
		q = q.Value("expires_at", "now() + make_interval(secs => ?)", o.PaymentWindow.Seconds())
	}
	if _, err := q.Exec(ctx); err != nil {
		return fmt.Errorf("insert order: %w", err)
	}
	return nil
}

// OrderItem is one position of an order: one ticket to be.
type OrderItem struct {
	bun.BaseModel `bun:"table:order_items"`
	OrderID       int64   `bun:"order_id,pk"`
	Position      int     `bun:"position,pk"`
	CategoryID    int64   `bun:"category_id"`
	SeatID        *string `bun:"seat_id"`
	Price         int64   `bun:"price"`
	// QuotaID: the channel quota the position was taken from (nil:
	// general sale, or a seat).
	QuotaID *int64 `bun:"quota_id"`
}

// Totals computes an order's sums from its positions' prices.
type Totals func(prices []int64) (total, fee, amount int64)

func applyTotals(o *Order, items []OrderItem, totals Totals) {
	prices := make([]int64, len(items))
	for i, it := range items {
		prices[i] = it.Price
	}
	o.Total, o.ServiceFee, o.Amount = totals(prices)
}

// OtherEventError: the reservation an order names holds seats of another
// event than the order's.
type OtherEventError struct {
	ReservationID string
	EventID       int64 // the reservation's
}

func (e *OtherEventError) Error() string {
	return fmt.Sprintf("reservation %s belongs to event %d", e.ReservationID, e.EventID)
}

// CreateOrderFromReservation turns a live reservation into an order in one
// transaction: the reservation becomes ordered, its seats stay held for the
// order until its payment deadline, and the positions keep the hold prices.
// The order's sums are the reservation's, as quoted when it was held or last
// replaced: a fee the organizer changed since does not change what the buyer
// was told to pay.
func CreateOrderFromReservation(ctx context.Context, db *bun.DB, o *Order) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		r := new(Reservation)
		err := scanPrepared(ctx, tx, r, lockReservationSQL(), *o.ReservationID, o.CompanyID, o.IsTest)
		if err != nil {
			return notFound(err, "reservation "+*o.ReservationID)
		}
		if r.EventID != o.EventID {
			return &OtherEventError{ReservationID: r.ID, EventID: r.EventID}
		}
		if st := r.EffectiveStatus(); st != states.ReservationReserved {
			return reservationStateError(r.ID, st)
		}
		var items []OrderItem
		if err := scanPrepared(ctx, tx, &items, `SELECT row_number() OVER (ORDER BY seat_id) AS position, category_id, seat_id, price
			FROM reservation_seats WHERE reservation_id = $1::text`, r.ID); err != nil {
			return fmt.Errorf("reservation seats: %w", err)
		}
		o.Total, o.ServiceFee, o.Amount, o.Currency = r.Total, r.ServiceFee, r.TotalToPay, r.Currency
		if err := insertOrder(ctx, tx, o); err != nil {
			return err
		}
		if _, err := execPrepared(ctx, tx, "UPDATE reservations SET status = 'ordered', updated_at = now() WHERE id = $1::text", r.ID); err != nil {
			return err
		}
		res, err := execPrepared(ctx, tx, seatsToOrderSQL, o.EventID, r.ID, o.ID, o.ExpiresAt)
		if err != nil {
			return fmt.Errorf("move seats to order: %w", err)
		}
		if n, _ := res.RowsAffected(); int(n) != len(items) {
			// A seat of the hold was retaken after it lapsed.
			return reservationStateError(r.ID, states.ReservationExpired)
		}
		if err := insertItems(ctx, tx, o.ID, items); err != nil {
			return err
		}
		return orderEvent(ctx, tx, states.EventOrderCreated, o.ID, nil)
	})
}

func insertItems(ctx context.Context, tx bun.Tx, orderID int64, items []OrderItem) error {
	for i := range items {
		items[i].OrderID = orderID
	}
	if len(items) > 0 {
		if _, err := tx.NewInsert().Model(&items).Exec(ctx); err != nil {
			return fmt.Errorf("insert order items: %w", err)
		}
	}
	// Sold counts drive "after_sold" prices and general-admission capacity.
	_, err := tx.NewRaw(`UPDATE ticket_categories c SET sold = c.sold + x.n
		FROM (SELECT category_id, count(*) AS n FROM order_items WHERE order_id = ? GROUP BY category_id) x
		WHERE c.id = x.category_id`, orderID).Exec(ctx)
	return err
}

// ItemQuantity asks for tickets of a general-admission category.
type ItemQuantity struct {
	CategoryID int64
	Quantity   int
	Price      int64
}

// CreateOrderFromItems takes general-admission capacity (of each category
// and of the schedule slot) with guarded updates and stores the order, in
// one transaction; if any capacity is short, nothing changes. A caller of
// a sales channel (channelID; 0: general sale) takes a category's tickets
// from its channel's quota when that has enough left, else from general
// sale, which is the capacity less what is sold and what channels have
// left of their quotas. The caller's sales window is checked by
// Postgres's clock (ErrNotOnSale).
func CreateOrderFromItems(ctx context.Context, db *bun.DB, o *Order, want []ItemQuantity, totals Totals, channelID int64) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var open bool
		if err := tx.NewRaw(salesOpenFor(o.EventID, channelID)).Scan(ctx, &open); err != nil {
			return err
		}
		if !open {
			return fmt.Errorf("order event %d: %w", o.EventID, ErrNotOnSale)
		}
		soldOut := &errs.SoldOutError{}
		var items []OrderItem
		n, fromQuotas := 0, 0
		// Lock categories in id order, as every order does: no deadlocks.
		want = slices.SortedFunc(slices.Values(want), func(a, b ItemQuantity) int { return cmp.Compare(a.CategoryID, b.CategoryID) })
		for _, w := range want {
			// The lock first, the sums in a statement of their own: a
			// statement that waits for a lock re-reads only the locked row,
			// and the quotas beside it changed under the same lock.
			if _, err := tx.NewRaw(`SELECT 1 FROM ticket_categories WHERE id = ? AND event_id = ? FOR UPDATE`,
				w.CategoryID, o.EventID).Exec(ctx); err != nil {
				return err
			}
			var cat []struct {
				Fits, FitsGeneral bool
			}
			err := tx.NewRaw(`SELECT c.capacity IS NULL OR c.capacity - c.sold >= ?0 AS fits,
					c.capacity IS NULL OR `+generalLeftSQL+` >= ?0 AS fits_general
				FROM ticket_categories c WHERE c.id = ?1 AND c.event_id = ?2`, w.Quantity, w.CategoryID, o.EventID).Scan(ctx, &cat)
			if err != nil {
				return err
			}
			var quota *int64
			if channelID != 0 && len(cat) == 1 && cat[0].Fits {
				var ids []int64
				if err := tx.NewRaw(`UPDATE channel_quotas q SET taken = q.taken + ?
					FROM channel_events ce WHERE q.channel_id = ? AND q.category_id = ? AND q.session_id IS NOT DISTINCT FROM ?
						AND q.allocated - q.taken >= ? AND ce.event_id = q.event_id AND ce.channel_id = q.channel_id
						AND ce.released_at IS NULL
					RETURNING q.id`, w.Quantity, channelID, w.CategoryID, o.ScheduleSlotID, w.Quantity).Scan(ctx, &ids); err != nil {
					return err
				}
				if len(ids) == 1 {
					quota = &ids[0]
					fromQuotas += w.Quantity
				}
			}
			switch {
			case len(cat) == 0 || !cat[0].Fits:
				soldOut.CategoryIDs = append(soldOut.CategoryIDs, w.CategoryID)
			case quota == nil && !cat[0].FitsGeneral:
				soldOut.CategoryIDs = append(soldOut.CategoryIDs, w.CategoryID)
				soldOut.Withheld = true
			}
			for i := 0; i < w.Quantity; i++ {
				n++
				items = append(items, OrderItem{Position: n, CategoryID: w.CategoryID, Price: w.Price, QuotaID: quota})
			}
		}
		if o.ScheduleSlotID != nil {
			// The slot's quotas were taken from above: general sale's part
			// fits when the slot, less what its quotas have left now, holds
			// the whole order (docs/decisions.md).
			if _, err := tx.NewRaw(`SELECT 1 FROM sessions WHERE id = ? AND event_id = ? FOR UPDATE`,
				*o.ScheduleSlotID, o.EventID).Exec(ctx); err != nil {
				return err
			}
			var slot []struct{ Fits, FitsGeneral bool }
			if err := tx.NewRaw(`SELECT sl.capacity - sl.sold >= ?0 AS fits, `+slotLeftSQL+` >= ?0 AS fits_general
				FROM sessions sl WHERE sl.id = ?1 AND sl.event_id = ?2`, n, *o.ScheduleSlotID, o.EventID).Scan(ctx, &slot); err != nil {
				return err
			}
			switch {
			case len(slot) == 0 || !slot[0].Fits:
				soldOut.Slot = true
			case !slot[0].FitsGeneral && fromQuotas < n:
				soldOut.Slot, soldOut.Withheld = true, true
			}
			if !soldOut.Slot {
				if _, err := tx.NewRaw("UPDATE sessions SET sold = sold + ? WHERE id = ?", n, *o.ScheduleSlotID).Exec(ctx); err != nil {
					return err
				}
			}
		}
		if len(soldOut.CategoryIDs) > 0 || soldOut.Slot {
			return soldOut
		}
		applyTotals(o, items, totals)
		if err := insertOrder(ctx, tx, o); err != nil {
			return err
		}
		if err := insertItems(ctx, tx, o.ID, items); err != nil {
			return err
		}
		if _, err := tx.NewRaw(bumpEventVersion, o.EventID).Exec(ctx); err != nil {
			return err
		}
		return orderEvent(ctx, tx, states.EventOrderCreated, o.ID, nil)
	})
}

// lockReservationSQL reads and locks the reservation an order is made
// from: $1 its id, $2 the company, $3 the environment (is_test).
var lockReservationSQL = preparedSelect(func(db *bun.DB) *bun.SelectQuery {
	return selectReservation(db, (*Reservation)(nil)).
		Where("r.id = $1::text AND r.company_id = $2::bigint AND r.is_test = $3::boolean").For("UPDATE")
})

// seatsToOrderSQL moves a hold's seats ($1 event, $2 hold) to its order
// ($3) with the order's payment deadline ($4), locking them in seat order.
var seatsToOrderSQL = `WITH lk AS (SELECT event_id, seat_id FROM event_seats WHERE event_id = $1::bigint AND hold_id = $2::text
		AND state = 'held' ORDER BY seat_id FOR UPDATE)
	UPDATE event_seats s SET order_id = $3::bigint, hold_expires_at = $4::timestamptz, ` + newSeatVersion + `
	FROM lk WHERE s.event_id = lk.event_id AND s.seat_id = lk.seat_id`

// MarkOrderPaid moves a pending order whose deadline has not passed to paid
// and its seats to sold, in one statement. The deadline check makes payment
// and a new hold of lapsed seats mutually exclusive. It returns the order's
// status afterwards and whether this call paid it.
func MarkOrderPaid(ctx context.Context, db bun.IDB, orderID int64, paymentID string) (status states.OrderStatus, changed bool, err error) {
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var out struct {
			Changed, Sold, Seated int
		}
		// clock_timestamp, not now(): the deadline is checked when the row
		// is locked, not when an enclosing transaction began.
		err := scanPrepared(ctx, tx, &out, markOrderPaidSQL, paymentID, orderID)
		if err != nil {
			return err
		}
		// Every seat of the order must still be its own: a seat retaken after
		// a lapse means this payment cannot be honoured, and nothing changes.
		if out.Changed == 1 && out.Sold != out.Seated {
			return fmt.Errorf("order %d holds %d of its %d seats: %w", orderID, out.Sold, out.Seated, ErrSeatsLost)
		}
		if changed = out.Changed == 1; changed {
			status = states.OrderPaid
			return orderEvent(ctx, tx, states.EventOrderPaid, orderID, nil)
		}
		// Read anew: the statement's own reads are of its snapshot, from
		// before any wait for the order's lock (a payment racing this one
		// may have paid it meanwhile).
		return scanPrepared(ctx, tx, &status, "SELECT status FROM orders WHERE id = $1::bigint", orderID)
	})
	if err != nil {
		return "", false, fmt.Errorf("mark order %d paid: %w", orderID, err)
	}
	return status, changed, nil
}

// markOrderPaidSQL is MarkOrderPaid's statement, prepared (execPrepared):
// $1 the payment id (empty: the order's stays), $2 the order.
var markOrderPaidSQL = `
	WITH o AS (
		UPDATE orders SET status = 'paid', paid_at = now(), updated_at = now(),
			payment_id = COALESCE(NULLIF($1::text, ''), payment_id)
		WHERE id = $2::bigint AND status = 'pending_payment'
			-- In the window, or with this payment accepted in it.
			AND (payment_accepted_at IS NULL AND expires_at > clock_timestamp()
				OR payment_accepted_at IS NOT NULL AND payment_id = NULLIF($1::text, ''))
		RETURNING id, event_id
	), lk AS (
		SELECT s.event_id, s.seat_id FROM event_seats s JOIN o ON s.event_id = o.event_id AND s.order_id = o.id
		WHERE s.state = 'held' ORDER BY s.seat_id FOR UPDATE OF s
	), sold AS (
		UPDATE event_seats s SET state = 'sold', hold_id = NULL, hold_expires_at = NULL, ` + newSeatVersion + `
		FROM lk WHERE s.event_id = lk.event_id AND s.seat_id = lk.seat_id RETURNING 1
	)
	SELECT (SELECT count(*) FROM o) AS changed, (SELECT count(*) FROM sold) AS sold,
		(SELECT count(*) FROM order_items WHERE order_id = $2::bigint AND seat_id IS NOT NULL) AS seated`

// ErrSeatsLost: an order's seat was taken by another hold after the order's
// deadline passed.
var ErrSeatsLost = errors.New("order lost a seat")

// AcceptExternalPayment records a partner's external payment on its pending
// order while the payment window is open, in one transaction: the order
// keeps the payment id and the moment it was accepted, and its held seats
// lose their deadline, so neither the window's end nor another buyer can
// take them before the order is paid (MarkOrderPaid, or the deadline pass:
// CloseLapsedOrder). A payment accepted already is not accepted again. It
// returns the order as it is afterwards: accepted with paymentID, or why
// not (another payment accepted, paid, cancelled, or the window closed).
func AcceptExternalPayment(ctx context.Context, db bun.IDB, orderID int64, paymentID string) (*Order, error) {
	o := new(Order)
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var out struct{ Accepted, Kept, Seated int }
		// clock_timestamp, as MarkOrderPaid: the window is judged when the
		// order's row is locked.
		err := scanPrepared(ctx, tx, &out, acceptPaymentSQL, paymentID, orderID)
		if err != nil {
			return err
		}
		// A seat retaken at the very end of the window (a hold that locked
		// it first): the window closed for this payment; nothing changes.
		if out.Accepted == 1 && out.Kept != out.Seated {
			return fmt.Errorf("order %d holds %d of its %d seats: %w", orderID, out.Kept, out.Seated, ErrSeatsLost)
		}
		if err := scanPrepared(ctx, tx, o, getOrderByIDSQL(), orderID); err != nil {
			return notFound(err, fmt.Sprintf("order %d", orderID))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("accept payment of order %d: %w", orderID, err)
	}
	return o, nil
}

// acceptPaymentSQL is AcceptExternalPayment's statement, prepared
// (execPrepared): $1 the payment id, $2 the order.
var acceptPaymentSQL = `
	WITH o AS (
		UPDATE orders SET payment_id = $1::text, payment_accepted_at = clock_timestamp(), updated_at = now()
		WHERE id = $2::bigint AND payment = 'external' AND status = 'pending_payment'
			AND payment_accepted_at IS NULL AND expires_at > clock_timestamp()
		RETURNING id, event_id
	), lk AS (
		SELECT s.event_id, s.seat_id FROM event_seats s JOIN o ON s.event_id = o.event_id AND s.order_id = o.id
		WHERE s.state = 'held' ORDER BY s.seat_id FOR UPDATE OF s
	), kept AS (
		UPDATE event_seats s SET hold_expires_at = NULL, ` + newSeatVersion + `
		FROM lk WHERE s.event_id = lk.event_id AND s.seat_id = lk.seat_id RETURNING 1
	)
	SELECT (SELECT count(*) FROM o) AS accepted, (SELECT count(*) FROM kept) AS kept,
		(SELECT count(*) FROM order_items WHERE order_id = $2::bigint AND seat_id IS NOT NULL) AS seated`

// CloseLapsedOrder is the payment deadline's pass over a pending order: it
// is cancelled (payment_timeout, seats freed) once its deadline passed in
// Postgres's clock, unless a payment was accepted in its window; then the
// order is paid with that payment and its tickets issued, in one
// transaction — at once, deadline or not, since nothing else can happen to
// it. It returns the status afterwards and whether this call changed it;
// safe to run twice.
func CloseLapsedOrder(ctx context.Context, db bun.IDB, orderID int64, newBarcode func(sandbox bool) string) (status states.OrderStatus, changed bool, err error) {
	status, changed, err = CancelOrder(ctx, db, orderID, states.CancelPaymentTimeout)
	if err != nil || changed || status != states.OrderPendingPayment {
		return status, changed, err
	}
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var paymentID string
		err := tx.NewRaw(`SELECT payment_id FROM orders WHERE id = ? AND status = 'pending_payment'
			AND payment_accepted_at IS NOT NULL FOR UPDATE`, orderID).Scan(ctx, &paymentID)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil // no payment accepted (and not lapsed, or CancelOrder would have cancelled it)
		case err != nil:
			return err
		}
		if status, changed, err = MarkOrderPaid(ctx, tx, orderID, paymentID); err != nil || !changed {
			return err
		}
		_, err = IssueTickets(ctx, tx, orderID, newBarcode)
		return err
	})
	if err != nil {
		return "", false, fmt.Errorf("close lapsed order %d: %w", orderID, err)
	}
	return status, changed, nil
}

// CancelOrder cancels a pending order (for payment_timeout only once its
// deadline passed), frees its held seats and gives back its capacity, in one
// statement. It returns the status afterwards and whether this call did it.
//
// One statement is enough here, unlike EndReservation: an order's seats and
// items are written by the transaction that creates it and none are added
// later, so the snapshot that finds the order finds all of them; seats that
// left it meanwhile (undo, a new hold after a lapse) fail the re-check of
// FOR UPDATE. MarkOrderPaid relies on the same.
func CancelOrder(ctx context.Context, db bun.IDB, orderID int64, reason states.CancelReason) (status states.OrderStatus, changed bool, err error) {
	var out struct{ Changed int }
	err = db.NewRaw(`
		WITH o AS (
			UPDATE orders SET status = 'cancelled', cancel_reason = ?, cancelled_at = now(), updated_at = now()
			WHERE id = ? AND status = 'pending_payment' AND (? <> 'payment_timeout' OR expires_at <= now())
				AND payment_accepted_at IS NULL -- a payment accepted in time pays it instead
			RETURNING *
		), ev AS (
			INSERT INTO webhook_events (id, type, company_id, is_test, order_id, snapshot)
			SELECT `+newEventID+`, '`+string(states.EventOrderCancelled)+`', x.company_id, x.is_test, x.id,
				to_jsonb(x) - 'access_token_hash' - 'access_token_sealed'
			FROM o x WHERE `+hasEndpoint+`
			RETURNING 1
		), lk AS (
			SELECT s.event_id, s.seat_id FROM event_seats s JOIN o ON s.event_id = o.event_id AND s.order_id = o.id
			WHERE s.state = 'held' ORDER BY s.seat_id FOR UPDATE OF s
		), freed AS (
			UPDATE event_seats s SET `+freeSeat+`
			FROM lk WHERE s.event_id = lk.event_id AND s.seat_id = lk.seat_id RETURNING 1
		), x AS (
			SELECT category_id, quota_id, count(*) AS n FROM order_items WHERE order_id IN (SELECT id FROM o) GROUP BY category_id, quota_id
		), counts AS (
			SELECT category_id, sum(n) AS n FROM x GROUP BY category_id
		), lkc AS (
			-- Categories locked in id order, as orders and allocation changes lock them.
			SELECT id FROM ticket_categories WHERE id IN (SELECT category_id FROM counts) ORDER BY id FOR NO KEY UPDATE
		), cats AS (
			UPDATE ticket_categories c SET sold = c.sold - counts.n FROM counts
			WHERE c.id = counts.category_id AND (SELECT count(*) FROM lkc) >= 0 RETURNING 1
		), quotas AS (
			-- After the categories: the lock order of every order.
			`+giveBackQuotas+` AND (SELECT count(*) FROM cats) >= 0 RETURNING 1
		), slot AS (
			-- The slot and the event after the categories and quotas: the
			-- order every order and allocation change takes them in.
			UPDATE sessions SET sold = sold - (SELECT coalesce(sum(n), 0) FROM counts)
			WHERE id = (SELECT schedule_slot_id FROM o) AND (SELECT count(*) FROM quotas) >= 0 RETURNING 1
		), ver AS (
			UPDATE events SET seat_version = seat_version + 1 WHERE id = (SELECT event_id FROM o) AND scheme_id IS NULL
				AND (SELECT count(*) FROM slot) >= 0 AND (SELECT count(*) FROM quotas) >= 0 RETURNING 1
		)
		SELECT (SELECT count(*) FROM o) + 0 * ((SELECT count(*) FROM freed) + (SELECT count(*) FROM cats)
			+ (SELECT count(*) FROM slot) + (SELECT count(*) FROM ver) + (SELECT count(*) FROM quotas)) AS changed`, reason, orderID, reason).Scan(ctx, &out)
	if err != nil {
		return "", false, fmt.Errorf("cancel order %d: %w", orderID, err)
	}
	if err := db.NewRaw("SELECT status FROM orders WHERE id = ?", orderID).Scan(ctx, &status); err != nil {
		return "", false, notFound(err, fmt.Sprintf("order %d", orderID))
	}
	return status, out.Changed == 1, nil
}

// DeleteTestOrder deletes a sandbox order whatever its status, with its
// tickets, and frees its seats and capacity, in one transaction. Deleting a
// deleted order changes nothing.
func DeleteTestOrder(ctx context.Context, db *bun.DB, orderID int64) (deleted bool, err error) {
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		o := new(Order)
		if err := tx.NewSelect().Model(o).Where("id = ? AND is_test", orderID).For("UPDATE").Scan(ctx); err != nil {
			if errors.Is(notFound(err, ""), errs.NotFound) {
				return nil
			}
			return err
		}
		if _, err := tx.NewRaw(`WITH lk AS (SELECT event_id, seat_id FROM event_seats WHERE event_id = ? AND order_id = ?
				AND state IN ('held', 'sold') ORDER BY seat_id FOR UPDATE)
			UPDATE event_seats s SET `+freeSeat+` FROM lk WHERE s.event_id = lk.event_id AND s.seat_id = lk.seat_id`,
			o.EventID, o.ID).Exec(ctx); err != nil {
			return err
		}
		if o.Status != states.OrderCancelled {
			// Positions still counted as sold: those without a refunded ticket.
			if err := giveBackSold(ctx, tx, `SELECT i.category_id, i.quota_id, count(*) AS n FROM order_items i
				LEFT JOIN tickets t ON t.order_id = i.order_id AND t.position = i.position
				WHERE i.order_id = ? AND (t.status IS NULL OR t.status = 'active') GROUP BY i.category_id, i.quota_id`, o.ID); err != nil {
				return err
			}
			if o.ScheduleSlotID != nil {
				// Refunds gave back their positions already.
				if _, err := tx.NewRaw(`UPDATE sessions SET sold = sold - (SELECT count(*) FROM order_items i
					LEFT JOIN tickets t ON t.order_id = i.order_id AND t.position = i.position
					WHERE i.order_id = ? AND (t.status IS NULL OR t.status = 'active')) WHERE id = ?`,
					o.ID, *o.ScheduleSlotID).Exec(ctx); err != nil {
					return err
				}
			}
		}
		if _, err := tx.NewRaw(bumpEventVersion, o.EventID).Exec(ctx); err != nil {
			return err
		}
		if err := orderEvent(ctx, tx, states.EventOrderDeleted, o.ID, nil); err != nil {
			return err
		}
		if _, err := tx.NewDelete().Model(o).WherePK().Exec(ctx); err != nil {
			return err
		}
		deleted = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("delete test order %d: %w", orderID, err)
	}
	return deleted, nil
}

// Ticket is an issued ticket with its seat.
type Ticket struct {
	ID         int64               `bun:"id"`
	OrderID    int64               `bun:"order_id"`
	Position   int                 `bun:"position"`
	Number     string              `bun:"number"`
	Barcode    string              `bun:"barcode"`
	Status     states.TicketStatus `bun:"status"`
	CategoryID int64               `bun:"category_id"`
	Category   string              `bun:"category"`
	SeatID     *string             `bun:"seat_id"`
	ZoneID     *string             `bun:"zone_id"`
	Label      *string             `bun:"label"`
	Price      int64               `bun:"price"`
	// CheckedInAt is when the ticket was first admitted at the door.
	CheckedInAt *time.Time `bun:"checked_in_at"`
}

// IssueTickets creates the missing ticket of every position of a paid order;
// the unique (order, position) key makes a retried issue create none twice.
// newBarcode draws a barcode for the order's environment (sandbox: the
// order is a test one), so a sandbox ticket's code tells what it is; it is
// called again when a random barcode collides.
func IssueTickets(ctx context.Context, db bun.IDB, orderID int64, newBarcode func(sandbox bool) string) (issued int, err error) {
	// The order and its positions without a ticket, in one read.
	var o struct {
		Status  states.OrderStatus `bun:"status"`
		IsTest  bool               `bun:"is_test"`
		Missing []int              `bun:"missing,array"`
	}
	if err := scanPrepared(ctx, db, &o, `SELECT o.status, o.is_test,
			coalesce(array_agg(i.position ORDER BY i.position) FILTER (WHERE i.position IS NOT NULL), '{}') AS missing
		FROM orders o LEFT JOIN order_items i ON i.order_id = o.id
			AND NOT EXISTS (SELECT 1 FROM tickets t WHERE t.order_id = i.order_id AND t.position = i.position)
		WHERE o.id = $1::bigint GROUP BY o.id`, orderID); err != nil {
		return 0, notFound(err, fmt.Sprintf("order %d", orderID))
	}
	if !o.Status.Sold() {
		return 0, &errs.StateError{Entity: "order", ID: fmt.Sprint(orderID), Status: string(o.Status)}
	}
	missing := o.Missing
	for attempt := 0; len(missing) > 0; attempt++ {
		// One statement for every position missing. ON CONFLICT DO NOTHING
		// covers both keys: a position ticketed meanwhile (a retry) and a
		// random barcode that collided (drawn again below). Not raising
		// keeps a surrounding transaction usable.
		numbers, barcodes := make([]string, len(missing)), make([]string, len(missing))
		for k, pos := range missing {
			numbers[k], barcodes[k] = fmt.Sprintf("T-%06d-%02d", orderID, pos), newBarcode(o.IsTest)
		}
		var done []int
		if err := scanPrepared(ctx, db, &done, `INSERT INTO tickets (order_id, position, number, barcode)
			SELECT $1::bigint, x.position, x.number, x.barcode FROM unnest($2::int[], $3::text[], $4::text[]) AS x(position, number, barcode)
			ON CONFLICT DO NOTHING RETURNING position`, orderID, missing, numbers, barcodes); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return issued, fmt.Errorf("issue tickets %v of order %d: %w", missing, orderID, err)
		}
		issued += len(done)
		rest := slices.DeleteFunc(slices.Clone(missing), func(pos int) bool { return slices.Contains(done, pos) })
		if len(rest) == 0 {
			break
		}
		// Not inserted: ticketed by another issue meanwhile, or a barcode
		// that collided, to draw again.
		var ticketed []int
		if err := db.NewRaw("SELECT position FROM tickets WHERE order_id = ? AND position = ANY(?::int[])", orderID, pgdialect.Array(rest)).
			Scan(ctx, &ticketed); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return issued, err
		}
		rest = slices.DeleteFunc(rest, func(pos int) bool { return slices.Contains(ticketed, pos) })
		if len(rest) > 0 && attempt >= 5 {
			return issued, fmt.Errorf("issue ticket %d of order %d: no free barcode after %d draws", rest[0], orderID, attempt+1)
		}
		missing = rest
	}
	return issued, nil
}

// ListOrderTickets lists an order's tickets in position order. Prepared
// (prepared.go): every order's confirm reads them, and its planning cost
// five times its running.
func ListOrderTickets(ctx context.Context, db bun.IDB, orderID int64) ([]Ticket, error) {
	var out []Ticket
	err := scanPrepared(ctx, db, &out, `
		SELECT t.id, t.order_id, t.position, t.number, t.barcode, t.status, i.category_id, c.name AS category,
			i.seat_id, es.zone_id, es.label, i.price, t.checked_in_at
		FROM tickets t
		JOIN orders o ON o.id = t.order_id
		JOIN order_items i ON i.order_id = t.order_id AND i.position = t.position
		JOIN ticket_categories c ON c.id = i.category_id
		LEFT JOIN event_seats es ON es.event_id = o.event_id AND es.seat_id = i.seat_id
		WHERE t.order_id = $1::bigint ORDER BY t.position`, orderID)
	if err != nil {
		return nil, fmt.Errorf("tickets of order %d: %w", orderID, err)
	}
	return out, nil
}

// GetOrder returns a company's order of one environment.
func GetOrder(ctx context.Context, db bun.IDB, companyID int64, isTest bool, orderID int64) (*Order, error) {
	o := new(Order)
	if err := scanPrepared(ctx, db, o, getOrderSQL(), orderID, companyID, isTest); err != nil {
		return nil, notFound(err, fmt.Sprintf("order %d", orderID))
	}
	return o, nil
}

// getOrderSQL and getOrderByIDSQL read an order (prepared: every order's
// calls read it several times).
var (
	getOrderSQL = preparedSelect(func(db *bun.DB) *bun.SelectQuery {
		return db.NewSelect().Model((*Order)(nil)).Where("o.id = $1::bigint AND o.company_id = $2::bigint AND o.is_test = $3::boolean")
	})
	getOrderByIDSQL = preparedSelect(func(db *bun.DB) *bun.SelectQuery {
		return db.NewSelect().Model((*Order)(nil)).Where("o.id = $1::bigint")
	})
)

// GetOrderStatus reads an order's status.
func GetOrderStatus(ctx context.Context, db bun.IDB, orderID int64) (states.OrderStatus, error) {
	var status states.OrderStatus
	if err := db.NewRaw("SELECT status FROM orders WHERE id = ?", orderID).Scan(ctx, &status); err != nil {
		return "", notFound(err, fmt.Sprintf("order %d", orderID))
	}
	return status, nil
}

// CountTickets counts an order's tickets.
func CountTickets(ctx context.Context, db bun.IDB, orderID int64) (int, error) {
	var n int
	if err := scanPrepared(ctx, db, &n, "SELECT count(*) FROM tickets WHERE order_id = $1::bigint", orderID); err != nil {
		return 0, fmt.Errorf("count tickets of order %d: %w", orderID, err)
	}
	return n, nil
}

// SetOrderPayment records the gateway payment made for an order, unless
// one was recorded already; o gets the order's payment either way. An
// order.created event not sent yet gets the payment_url too, unless the
// webhook relay is sending it this moment (SKIP LOCKED: the payment never
// waits on the relay's batch; the event then goes without payment_url).
func SetOrderPayment(ctx context.Context, db bun.IDB, o *Order, paymentID, paymentURL string) error {
	err := db.NewRaw(`WITH x AS (
			UPDATE orders SET payment_id = COALESCE(payment_id, ?),
				payment_url = CASE WHEN payment_id IS NULL THEN ? ELSE payment_url END, updated_at = now()
			WHERE id = ? RETURNING *
		), ev AS (
			UPDATE webhook_events e SET snapshot = to_jsonb(x) - 'access_token_hash' - 'access_token_sealed'
			FROM x WHERE e.id IN (SELECT w.id FROM webhook_events w WHERE w.order_id = ? AND w.type = '`+string(states.EventOrderCreated)+`'
				AND w.dispatched_at IS NULL FOR UPDATE SKIP LOCKED)
			RETURNING 1
		)
		SELECT payment_id, payment_url FROM x`, paymentID, paymentURL, o.ID, o.ID).Scan(ctx, &o.PaymentID, &o.PaymentURL)
	if err != nil {
		return notFound(err, fmt.Sprintf("order %d", o.ID))
	}
	return nil
}

// ReplaceOrderToken gives an order a new page token in place of the one
// whose hash is old; it reports false when the token had been replaced
// already.
func ReplaceOrderToken(ctx context.Context, db bun.IDB, orderID int64, old, hash, sealed []byte) (bool, error) {
	res, err := db.NewRaw(`UPDATE orders SET access_token_hash = ?, access_token_sealed = ?, updated_at = now()
		WHERE id = ? AND access_token_hash = ?`, hash, sealed, orderID, old).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("replace token of order %d: %w", orderID, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// MarkOrderEmailed records that the order's tickets e-mail went out.
func MarkOrderEmailed(ctx context.Context, db bun.IDB, orderID int64) error {
	if _, err := execPrepared(ctx, db, "UPDATE orders SET emailed_at = now() WHERE id = $1::bigint AND emailed_at IS NULL", orderID); err != nil {
		return fmt.Errorf("mark order %d e-mailed: %w", orderID, err)
	}
	return nil
}

// GetOrderAccessTokenHash returns the stored hash of an order's page token,
// so a link is checked before anything else of the order is read.
func GetOrderAccessTokenHash(ctx context.Context, db bun.IDB, orderID int64) ([]byte, error) {
	var hash []byte
	if err := db.NewRaw("SELECT access_token_hash FROM orders WHERE id = ?", orderID).Scan(ctx, &hash); err != nil {
		return nil, notFound(err, fmt.Sprintf("order %d", orderID))
	}
	return hash, nil
}

// GetOrderOfReservation returns the order made from a reservation of a
// company's environment (errs.NotFound: none).
func GetOrderOfReservation(ctx context.Context, db bun.IDB, companyID int64, isTest bool, reservationID string) (*Order, error) {
	o := new(Order)
	err := db.NewSelect().Model(o).Where("reservation_id = ? AND company_id = ? AND is_test = ?", reservationID, companyID, isTest).Scan(ctx)
	if err != nil {
		return nil, notFound(err, "order of reservation "+reservationID)
	}
	return o, nil
}

// GetOrderByID returns any order (for workflows and the public order page).
func GetOrderByID(ctx context.Context, db bun.IDB, orderID int64) (*Order, error) {
	o := new(Order)
	if err := scanPrepared(ctx, db, o, getOrderByIDSQL(), orderID); err != nil {
		return nil, notFound(err, fmt.Sprintf("order %d", orderID))
	}
	return o, nil
}

// OrderFilter selects orders of a company and environment.
type OrderFilter struct {
	Status      states.OrderStatus
	EventID     int64
	CreatedFrom time.Time
	CreatedTo   time.Time
	Page        int
	PerPage     int
	After       *Seek // {created_at, id} of the last order seen
	// The partner's lookups, each an exact match served by an index within
	// the company (migration 20261207000047_order_reference): the order's
	// reference, its payment id, the buyer's e-mail (case aside), and one
	// metadata pair (MetadataKey "": none).
	Reference     string
	PaymentID     string
	Email         string
	MetadataKey   string
	MetadataValue string
}

// ListOrders returns one page of orders, newest first, and the total.
func ListOrders(ctx context.Context, db bun.IDB, companyID int64, isTest bool, f OrderFilter) ([]Order, int, error) {
	var out []Order
	q := db.NewSelect().Model(&out).Where("company_id = ? AND is_test = ?", companyID, isTest)
	if f.Status != "" {
		q.Where("status = ?", f.Status)
	}
	if f.EventID != 0 {
		q.Where("event_id = ?", f.EventID)
	}
	if !f.CreatedFrom.IsZero() {
		q.Where("created_at >= ?", f.CreatedFrom)
	}
	if !f.CreatedTo.IsZero() {
		q.Where("created_at < ?", f.CreatedTo)
	}
	if f.Reference != "" {
		q.Where("reference = ?", f.Reference)
	}
	if f.PaymentID != "" {
		q.Where("payment_id = ?", f.PaymentID)
	}
	if f.Email != "" {
		// The expression of the index orders_company_email.
		q.Where("lower(customer_email) = lower(?)", f.Email)
	}
	if f.MetadataKey != "" {
		pair, err := json.Marshal(map[string]string{f.MetadataKey: f.MetadataValue})
		if err != nil {
			return nil, 0, fmt.Errorf("list orders of company %d: %w", companyID, err)
		}
		// metadata <> '{}' is the GIN index's predicate, stated so the
		// planner may use it.
		q.Where("metadata @> ?::jsonb AND metadata <> '{}'::jsonb", string(pair))
	}
	total, err := scanPage(ctx, q, "created_at DESC, id DESC", Paging{f.Page, f.PerPage, f.After},
		"(created_at, id) < (?, ?)", func(s *Seek) []any { return []any{s.Time, s.ID} })
	if err != nil {
		return nil, 0, fmt.Errorf("list orders of company %d: %w", companyID, err)
	}
	return out, int(total), nil
}

// UndoOrderFromReservation takes back an order whose saga could not start:
// the order is deleted and its reservation is live again with its seats, as
// before the order — in one transaction, and only while the order is unpaid
// and no payment was accepted for it (a confirm that raced the failing
// create: the order is paid with it, never taken back). It reports whether
// it undid anything.
func UndoOrderFromReservation(ctx context.Context, db *bun.DB, orderID int64) (undone bool, err error) {
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		o := new(Order)
		if err := tx.NewSelect().Model(o).Where("id = ?", orderID).For("UPDATE").Scan(ctx); err != nil {
			return notFound(err, fmt.Sprintf("order %d", orderID))
		}
		if o.Status != states.OrderPendingPayment || o.ReservationID == nil || o.PaymentAcceptedAt != nil {
			return nil
		}
		r := new(Reservation)
		if err := tx.NewSelect().Model(r).Where("id = ?", *o.ReservationID).For("UPDATE").Scan(ctx); err != nil {
			return err
		}
		if _, err := tx.NewRaw(`WITH lk AS (SELECT event_id, seat_id FROM event_seats WHERE event_id = ? AND order_id = ?
				AND state = 'held' ORDER BY seat_id FOR UPDATE)
			UPDATE event_seats s SET order_id = NULL, hold_expires_at = ?, `+newSeatVersion+`
			FROM lk WHERE s.event_id = lk.event_id AND s.seat_id = lk.seat_id`, o.EventID, o.ID, r.ExpiresAt).Exec(ctx); err != nil {
			return err
		}
		if err := giveBackSold(ctx, tx, "SELECT category_id, quota_id, count(*) AS n FROM order_items WHERE order_id = ? GROUP BY category_id, quota_id", o.ID); err != nil {
			return err
		}
		if _, err := tx.NewRaw("UPDATE reservations SET status = 'reserved', updated_at = now() WHERE id = ?", r.ID).Exec(ctx); err != nil {
			return err
		}
		// The partner was told the order failed: its creation is not
		// announced, or, if announced already, its deletion is.
		// An event the relay is sending this moment is not waited for
		// (SKIP LOCKED): it goes out, and order.deleted follows it.
		res, err := tx.NewRaw(`DELETE FROM webhook_events WHERE id IN (SELECT id FROM webhook_events
			WHERE order_id = ? AND type = ? AND dispatched_at IS NULL FOR UPDATE SKIP LOCKED)`, o.ID, states.EventOrderCreated).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if err := orderEvent(ctx, tx, states.EventOrderDeleted, o.ID, nil); err != nil {
				return err
			}
		}
		if _, err := tx.NewDelete().Model(o).WherePK().Exec(ctx); err != nil {
			return err
		}
		undone = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("undo order %d: %w", orderID, err)
	}
	return undone, nil
}

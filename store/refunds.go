package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Refund voids tickets of an order and returns money.
type Refund struct {
	bun.BaseModel   `bun:"table:refunds"`
	ID              string               `bun:"id,pk"`
	OrderID         int64                `bun:"order_id"`
	Amount          int64                `bun:"amount"`
	Reason          string               `bun:"reason"`
	MoneyReturnedBy states.PaymentMethod `bun:"money_returned_by"`
	Status          states.RefundStatus  `bun:"status"`
	CreatedAt       time.Time            `bun:"created_at,nullzero,default:now()"`
	CompletedAt     *time.Time           `bun:"completed_at"`
	FailedAt        *time.Time           `bun:"failed_at"`
	LastError       *string              `bun:"last_error"`
	SweptAt         *time.Time           `bun:"swept_at"` // last taken by the reaper
	TicketIDs       []int64              `bun:"-"`
	// AllowCheckedIn refunds tickets already admitted at the door: only
	// the organizer may (a partner's refund of one is refused).
	AllowCheckedIn bool `bun:"-"`
}

// RefundTicketsError: some requested tickets are not tickets of the order
// (NotInOrder) or are refunded already (Refunded).
type RefundTicketsError struct {
	NotInOrder []int64
	Refunded   []int64
}

func (e *RefundTicketsError) Error() string {
	return fmt.Sprintf("tickets not in the order %v, already refunded %v", e.NotInOrder, e.Refunded)
}

// RefundCandidate is one of an order's tickets as a refund chooses among
// them: its id, status, price and whether it was admitted at the door.
type RefundCandidate struct {
	ID        int64
	Status    states.TicketStatus
	Price     int64
	CheckedIn bool
}

// RefundableTickets is the refund rule, pure: of an order in status (its
// tickets all, as locked), the tickets a refund of ticketIDs voids (none
// named: every active one). The order's tickets must be good
// (TicketsValid); a named ticket must be the order's and active; a ticket
// admitted at the door is refused unless allowCheckedIn (the organizer's
// override). Each refusal names what refused it, and nothing is chosen.
func RefundableTickets(orderID int64, status states.OrderStatus, all []RefundCandidate, ticketIDs []int64, allowCheckedIn bool) ([]RefundCandidate, error) {
	if !status.TicketsValid() {
		return nil, &errs.StateError{Entity: "order", ID: fmt.Sprint(orderID), Status: string(status)}
	}
	var chosen []RefundCandidate
	if len(ticketIDs) == 0 {
		for _, t := range all {
			if t.Status == states.TicketActive {
				chosen = append(chosen, t)
			}
		}
		if len(chosen) == 0 {
			return nil, &errs.StateError{Entity: "order", ID: fmt.Sprint(orderID), Status: "refunded"}
		}
	} else {
		bad := &RefundTicketsError{}
		for _, id := range ticketIDs {
			i := slices.IndexFunc(all, func(t RefundCandidate) bool { return t.ID == id })
			switch {
			case i < 0:
				bad.NotInOrder = append(bad.NotInOrder, id)
			case all[i].Status != states.TicketActive:
				bad.Refunded = append(bad.Refunded, id)
			default:
				chosen = append(chosen, all[i])
			}
		}
		if len(bad.NotInOrder) > 0 || len(bad.Refunded) > 0 {
			return nil, bad
		}
	}
	if allowCheckedIn {
		return chosen, nil
	}
	in := &errs.CheckedInError{}
	for _, t := range chosen {
		if t.CheckedIn {
			in.TicketIDs = append(in.TicketIDs, t.ID)
		}
	}
	if len(in.TicketIDs) > 0 {
		return nil, in
	}
	return chosen, nil
}

// RefundAmount is what a refund of chosen returns: their prices, or, when
// they are the order's last active tickets (active of them), the rest of
// the order's amount after what was returned before (fee included), so an
// order's refunds always sum to its amount. last tells which.
func RefundAmount(chosen []RefundCandidate, active int, orderAmount, returned int64) (amount int64, last bool) {
	if len(chosen) == active {
		return orderAmount - returned, true
	}
	for _, t := range chosen {
		amount += t.Price
	}
	return amount, false
}

// lockRefundCandidates reads the order's tickets, locked against a scan
// at the door meanwhile.
func lockRefundCandidates(ctx context.Context, db bun.IDB, orderID int64) ([]RefundCandidate, error) {
	var all []RefundCandidate
	if err := db.NewRaw(`SELECT t.id, t.status, i.price, t.checked_in_at IS NOT NULL AS checked_in FROM tickets t
		JOIN order_items i ON i.order_id = t.order_id AND i.position = t.position
		WHERE t.order_id = ? ORDER BY t.id FOR UPDATE OF t`, orderID).Scan(ctx, &all); err != nil {
		return nil, fmt.Errorf("tickets of order %d: %w", orderID, err)
	}
	return all, nil
}

// LockOrder takes the order's row lock for the rest of tx: what a refund
// writes beside it (the cabinet's record of the action) waits behind
// another refund of the same order instead of deadlocking with it.
func LockOrder(ctx context.Context, tx bun.Tx, orderID int64) error {
	var id int64
	if err := tx.NewRaw("SELECT id FROM orders WHERE id = ? FOR UPDATE", orderID).Scan(ctx, &id); err != nil {
		return notFound(err, fmt.Sprintf("order %d", orderID))
	}
	return nil
}

// CreateRefundTx voids the tickets, puts their seats and capacity back on
// sale, and records the refund, in the caller's transaction, so what the
// caller records of the refund (the cabinet's action) commits or rolls
// back with it. A refund that voids the last active ticket returns the
// rest of the order amount (fee included), so an order's refunds always
// sum to its amount. Creating a refund whose id exists already returns
// that refund (safe to run twice).
func CreateRefundTx(ctx context.Context, tx bun.Tx, r *Refund) error {
	// The order's lock first: a concurrent attempt with the same refund
	// id waits here and then finds the refund below.
	o := new(Order)
	if err := tx.NewSelect().Model(o).Where("id = ?", r.OrderID).For("UPDATE").Scan(ctx); err != nil {
		return notFound(err, fmt.Sprintf("order %d", r.OrderID))
	}
	existing := new(Refund)
	err := tx.NewSelect().Model(existing).Where("id = ?", r.ID).Scan(ctx)
	if err == nil {
		*r = *existing
		return tx.NewRaw("SELECT ticket_id FROM refund_tickets WHERE refund_id = ? ORDER BY ticket_id", r.ID).Scan(ctx, &r.TicketIDs)
	}
	if !errors.Is(notFound(err, ""), errs.NotFound) {
		return err
	}
	all, err := lockRefundCandidates(ctx, tx, o.ID)
	if err != nil {
		return err
	}
	chosen, err := RefundableTickets(o.ID, o.Status, all, r.TicketIDs, r.AllowCheckedIn)
	if err != nil {
		return err
	}
	active := 0
	for _, t := range all {
		if t.Status == states.TicketActive {
			active++
		}
	}
	returned := int64(0)
	if len(chosen) == active {
		if returned, err = RefundedAmount(ctx, tx, o.ID); err != nil {
			return err
		}
	}
	r.TicketIDs = r.TicketIDs[:0]
	for _, t := range chosen {
		r.TicketIDs = append(r.TicketIDs, t.ID)
	}
	amount, last := RefundAmount(chosen, active, o.Amount, returned)
	r.Amount = amount
	status := states.OrderPartiallyRefunded
	if last {
		status = states.OrderRefunded
	}
	r.MoneyReturnedBy = o.Payment
	r.Status = states.RefundPending
	if o.Payment == states.PayExternally {
		// The partner returns the money itself: voiding is all there is.
		r.Status = states.RefundCompleted
		now := time.Now()
		r.CompletedAt = &now
	}
	if _, err := tx.NewInsert().Model(r).Exec(ctx); err != nil {
		return fmt.Errorf("insert refund: %w", err)
	}
	ids := pgdialect.Array(r.TicketIDs)
	if _, err := tx.NewRaw("INSERT INTO refund_tickets (refund_id, ticket_id) SELECT ?, unnest(?::bigint[])", r.ID, ids).Exec(ctx); err != nil {
		return err
	}
	if _, err := tx.NewRaw("UPDATE tickets SET status = 'refunded' WHERE id = ANY(?::bigint[]) AND status = 'active'", ids).Exec(ctx); err != nil {
		return err
	}
	// Seats and capacity of the voided tickets go back on sale.
	if _, err := tx.NewRaw(`WITH lk AS (
			SELECT s.event_id, s.seat_id FROM event_seats s
			JOIN order_items i ON i.seat_id = s.seat_id AND i.order_id = ?
			JOIN tickets t ON t.order_id = i.order_id AND t.position = i.position AND t.id = ANY(?::bigint[])
			WHERE s.event_id = ? AND s.order_id = ? AND s.state = 'sold' ORDER BY s.seat_id FOR UPDATE OF s)
		UPDATE event_seats s SET `+freeSeat+`
		FROM lk WHERE s.event_id = lk.event_id AND s.seat_id = lk.seat_id`,
		o.ID, ids, o.EventID, o.ID).Exec(ctx); err != nil {
		return err
	}
	if err := giveBackSold(ctx, tx, `SELECT i.category_id, i.quota_id, count(*) AS n FROM tickets t
		JOIN order_items i ON i.order_id = t.order_id AND i.position = t.position
		WHERE t.id = ANY(?::bigint[]) GROUP BY i.category_id, i.quota_id`, ids); err != nil {
		return err
	}
	if o.ScheduleSlotID != nil {
		if _, err := tx.NewRaw("UPDATE sessions SET sold = sold - ? WHERE id = ?", len(chosen), *o.ScheduleSlotID).Exec(ctx); err != nil {
			return err
		}
	}
	if _, err := tx.NewRaw(bumpUnseatedVersion, o.EventID).Exec(ctx); err != nil {
		return err
	}
	if _, err = tx.NewRaw("UPDATE orders SET status = ?, updated_at = now() WHERE id = ?", status, o.ID).Exec(ctx); err != nil {
		return err
	}
	// Whoever asked (the cabinet's user, a partner's key: the context's
	// actor), with the refund, in its transaction.
	if err := Audit(ctx, tx, AuditEntry{CompanyID: o.CompanyID, Action: AuditOrderRefund, Subject: fmt.Sprintf("order %d", o.ID),
		Detail: map[string]any{"refund_id": r.ID, "ticket_ids": r.TicketIDs, "amount": r.Amount, "currency": o.Currency,
			"reason": r.Reason, "checked_in_override": r.AllowCheckedIn, "sandbox": o.IsTest}}); err != nil {
		return err
	}
	return orderEvent(ctx, tx, states.EventOrderRefunded, o.ID, &r.ID)
}

// RefundedAmount is what the order's refunds return in all (0: none).
func RefundedAmount(ctx context.Context, db bun.IDB, orderID int64) (int64, error) {
	var sum int64
	if err := db.NewRaw("SELECT coalesce(sum(amount), 0) FROM refunds WHERE order_id = ?", orderID).Scan(ctx, &sum); err != nil {
		return 0, fmt.Errorf("refunds of order %d: %w", orderID, err)
	}
	return sum, nil
}

// CompleteRefund marks a refund's money returned; repeating it is harmless.
func CompleteRefund(ctx context.Context, db bun.IDB, id string) error {
	_, err := db.NewRaw("UPDATE refunds SET status = 'completed', completed_at = now() WHERE id = ? AND status IN ('pending', 'failed')", id).Exec(ctx)
	if err != nil {
		return fmt.Errorf("complete refund %s: %w", id, err)
	}
	return nil
}

// MarkRefundFailed marks a refund whose money is not back yet as failed,
// with when and why, and returns it as it is now.
func MarkRefundFailed(ctx context.Context, db bun.IDB, id, cause string) (*Refund, error) {
	if _, err := db.NewRaw(`UPDATE refunds SET status = 'failed', failed_at = now(), last_error = left(?, 1000)
		WHERE id = ? AND status IN ('pending', 'failed')`, cause, id).Exec(ctx); err != nil {
		return nil, fmt.Errorf("mark refund %s failed: %w", id, err)
	}
	return GetRefund(ctx, db, id)
}

// RefundsToResume lists gateway refunds whose money is not back and whose
// workflow may be gone: failed ones after failedBefore, pending ones (their
// workflow never started, or was ended by hand) created before
// pendingBefore.
func RefundsToResume(ctx context.Context, db bun.IDB, pendingBefore, failedBefore time.Time, limit int) ([]string, error) {
	var ids []string
	// The least recently swept first, each stamped as it is taken, so
	// refunds whose workflow still runs do not hold the others back (round
	// robin). SKIP LOCKED only keeps sweeps at the same instant from
	// waiting on each other; resuming a refund twice is safe (one
	// workflow id per refund).
	err := db.NewRaw(`UPDATE refunds r SET swept_at = now() FROM (
			SELECT id FROM refunds
			WHERE (status = 'pending' AND created_at < ?) OR (status = 'failed' AND failed_at < ?)
			ORDER BY swept_at NULLS FIRST, created_at LIMIT ? FOR UPDATE SKIP LOCKED) o
		WHERE r.id = o.id RETURNING r.id`, pendingBefore, failedBefore, limit).Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("refunds to resume: %w", err)
	}
	return ids, nil
}

// OrderRefunds returns an order's refunds, oldest first, with their
// ticket ids.
func OrderRefunds(ctx context.Context, db bun.IDB, orderID int64) ([]Refund, error) {
	var out []Refund
	if err := db.NewSelect().Model(&out).Where("order_id = ?", orderID).OrderExpr("created_at, id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("refunds of order %d: %w", orderID, err)
	}
	if len(out) == 0 {
		return out, nil
	}
	var rows []struct {
		RefundID string `bun:"refund_id"`
		TicketID int64  `bun:"ticket_id"`
	}
	if err := db.NewRaw(`SELECT rt.refund_id, rt.ticket_id FROM refund_tickets rt JOIN refunds r ON r.id = rt.refund_id
		WHERE r.order_id = ? ORDER BY rt.ticket_id`, orderID).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("tickets of order %d's refunds: %w", orderID, err)
	}
	for i := range out {
		for _, row := range rows {
			if row.RefundID == out[i].ID {
				out[i].TicketIDs = append(out[i].TicketIDs, row.TicketID)
			}
		}
	}
	return out, nil
}

// GetRefund returns a refund with its ticket ids.
func GetRefund(ctx context.Context, db bun.IDB, id string) (*Refund, error) {
	r := new(Refund)
	if err := db.NewSelect().Model(r).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, notFound(err, "refund "+id)
	}
	if err := db.NewRaw("SELECT ticket_id FROM refund_tickets WHERE refund_id = ? ORDER BY ticket_id", id).Scan(ctx, &r.TicketIDs); err != nil {
		return nil, fmt.Errorf("tickets of refund %s: %w", id, err)
	}
	return r, nil
}

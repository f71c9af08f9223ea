package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"

	"github.com/uptrace/bun"
)

// Payment is money a gateway reported as taken.
type Payment struct {
	bun.BaseModel `bun:"table:payments"`
	Gateway       string               `bun:"gateway,pk"`
	ID            string               `bun:"id,pk"`
	OrderID       int64                `bun:"order_id"`
	Amount        int64                `bun:"amount"`
	Currency      string               `bun:"currency"`
	Status        states.PaymentStatus `bun:"status"`
	RefundReason  *states.ReturnReason `bun:"refund_reason"`
	ReceivedAt    time.Time            `bun:"received_at,nullzero,default:now()"`
	SettledAt     *time.Time           `bun:"settled_at"`
	RefundedAt    *time.Time           `bun:"refunded_at"`
	SweptAt       *time.Time           `bun:"swept_at"` // last taken by the reaper
}

// RecordPayment stores a payment the gateway reported, once: a repeated
// report returns the stored payment unchanged. A report whose order or sum
// differs from the stored one is refused, never merged.
func RecordPayment(ctx context.Context, db bun.IDB, p *Payment) (*Payment, error) {
	if _, err := db.NewInsert().Model(p).On("CONFLICT (gateway, id) DO NOTHING").Exec(ctx); err != nil {
		return nil, fmt.Errorf("record payment %s/%s of order %d: %w", p.Gateway, p.ID, p.OrderID, err)
	}
	stored, err := GetPayment(ctx, db, p.Gateway, p.ID)
	if err != nil {
		return nil, err
	}
	if stored.OrderID != p.OrderID || stored.Amount != p.Amount || stored.Currency != p.Currency {
		return nil, fmt.Errorf("payment %s/%s reported for order %d, %d %s; recorded for order %d, %d %s: %w",
			p.Gateway, p.ID, p.OrderID, p.Amount, p.Currency, stored.OrderID, stored.Amount, stored.Currency, errs.PaymentConflict)
	}
	return stored, nil
}

// GetPayment returns a recorded payment.
func GetPayment(ctx context.Context, db bun.IDB, gateway, id string) (*Payment, error) {
	p := new(Payment)
	if err := db.NewSelect().Model(p).Where("gateway = ? AND id = ?", gateway, id).Scan(ctx); err != nil {
		return nil, notFound(err, "payment "+gateway+"/"+id)
	}
	return p, nil
}

// SettlePayment decides a received payment in one transaction: it pays its
// order (order paid, seats sold, tickets issued) when the order can take it,
// and otherwise marks it refund_due with the reason. A payment already
// decided is returned as it is, so settling twice changes nothing.
func SettlePayment(ctx context.Context, db bun.IDB, gateway, id string, newBarcode func(sandbox bool) string) (*Payment, error) {
	p := new(Payment)
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// The payment's lock first: a workflow and the reaper settling the
		// same payment take turns, and the second finds it decided.
		if err := tx.NewSelect().Model(p).Where("gateway = ? AND id = ?", gateway, id).For("UPDATE").Scan(ctx); err != nil {
			return notFound(err, "payment "+gateway+"/"+id)
		}
		if p.Status != states.PaymentReceived {
			return nil
		}
		reason, err := applyPayment(ctx, tx, p, newBarcode)
		if err != nil {
			return err
		}
		status := states.PaymentApplied
		if reason != "" {
			status = states.PaymentRefundDue
		}
		return tx.NewRaw(`UPDATE payments SET status = ?, refund_reason = NULLIF(?, ''), settled_at = now()
			WHERE gateway = ? AND id = ? RETURNING *`, status, reason, gateway, id).Scan(ctx, p)
	})
	if err != nil {
		return nil, fmt.Errorf("settle payment %s/%s: %w", gateway, id, err)
	}
	return p, nil
}

// applyPayment pays p's order if it can take p, inside the settling
// transaction, and otherwise says why p must go back.
func applyPayment(ctx context.Context, tx bun.Tx, p *Payment, newBarcode func(sandbox bool) string) (refundReason states.ReturnReason, err error) {
	o := new(Order)
	if err := tx.NewSelect().Model(o).Where("id = ?", p.OrderID).For("UPDATE").Scan(ctx); err != nil {
		if errors.Is(notFound(err, ""), errs.NotFound) {
			return states.ReturnOrderGone, nil
		}
		return "", fmt.Errorf("order %d: %w", p.OrderID, err)
	}
	switch {
	case o.Payment != states.PayByGateway || o.GatewayName() != p.Gateway || o.PaymentID == nil || *o.PaymentID != p.ID:
		return states.ReturnOtherPayment, nil
	case o.Amount != p.Amount || o.Currency != p.Currency:
		return states.ReturnAmountMismatch, nil
	case o.Status.Sold():
		// Paid before payments were recorded (the same payment, as checked
		// above): it is the one that paid.
		return "", nil
	case o.Status != states.OrderPendingPayment:
		return states.ReturnOrderClosed, nil
	}
	status, _, err := MarkOrderPaid(ctx, tx, o.ID, p.ID)
	switch {
	case errors.Is(err, ErrSeatsLost):
		return states.ReturnSeatsLost, nil
	case err != nil:
		return "", err
	case status != states.OrderPaid:
		return states.ReturnOrderClosed, nil // the window closed in Postgres's clock
	}
	if _, err := IssueTickets(ctx, tx, o.ID, newBarcode); err != nil {
		return "", err
	}
	return "", nil
}

// MarkPaymentRefunded records that the gateway returned a refund_due payment.
func MarkPaymentRefunded(ctx context.Context, db bun.IDB, gateway, id string) error {
	if _, err := db.NewRaw(`UPDATE payments SET status = 'refunded', refunded_at = now()
		WHERE gateway = ? AND id = ? AND status = 'refund_due'`, gateway, id).Exec(ctx); err != nil {
		return fmt.Errorf("mark payment %s/%s refunded: %w", gateway, id, err)
	}
	return nil
}

// OpenPayments lists payments received or due back before cutoff: the ones
// the reaper settles or returns when no workflow did.
func OpenPayments(ctx context.Context, db bun.IDB, cutoff time.Time, limit int64) ([]Payment, error) {
	// The least recently swept first, each stamped as it is taken: a row
	// that keeps failing waits its turn behind the others (round robin).
	// SKIP LOCKED only keeps two sweeps running at the same instant from
	// waiting on each other's rows; sweeps a moment apart may take the same
	// rows, which is safe: settling and returning are idempotent.
	var out []Payment
	err := db.NewRaw(`UPDATE payments p SET swept_at = now() FROM (
			SELECT gateway, id FROM payments WHERE status IN ('received', 'refund_due') AND received_at < ?
			ORDER BY swept_at NULLS FIRST, received_at LIMIT ? FOR UPDATE SKIP LOCKED) o
		WHERE p.gateway = o.gateway AND p.id = o.id RETURNING p.*`, cutoff, limit).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("open payments: %w", err)
	}
	return out, nil
}

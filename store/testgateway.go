package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
)

// TestPayment is a payment of the built-in test gateway: what a provider
// keeps of a payment, kept in the service's own database.
type TestPayment struct {
	bun.BaseModel `bun:"table:gateway_payments"`
	ID            string               `bun:"id,pk"`
	OrderID       int64                `bun:"order_id"`
	Amount        int64                `bun:"amount"`
	Currency      string               `bun:"currency"`
	Description   string               `bun:"description"`
	Status        states.GatewayResult `bun:"status"` // pending, declined, paid (the gateway's own words)
	Refunded      int64                `bun:"refunded"`
	ReportedAt    *time.Time           `bun:"reported_at"` // the service acknowledged the paid report
	CreatedAt     time.Time            `bun:"created_at,nullzero,default:now()"`
	UpdatedAt     time.Time            `bun:"updated_at,nullzero,default:now()"`
}

// CreateTestPayment stores a new pending test payment.
func CreateTestPayment(ctx context.Context, db bun.IDB, p *TestPayment) error {
	if _, err := db.NewInsert().Model(p).Exec(ctx); err != nil {
		return fmt.Errorf("create test payment for order %d: %w", p.OrderID, err)
	}
	return nil
}

// GetTestPayment returns a test payment.
func GetTestPayment(ctx context.Context, db bun.IDB, id string) (*TestPayment, error) {
	p := new(TestPayment)
	if err := db.NewSelect().Model(p).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, notFound(err, "test payment "+id)
	}
	return p, nil
}

// SetTestPaymentStatus moves a test payment to paid or declined: a paid one
// stays paid, and setting the status it has changes nothing. It reports
// whether the status changed.
func SetTestPaymentStatus(ctx context.Context, db bun.IDB, id string, status states.GatewayResult) (bool, error) {
	res, err := db.NewRaw(`UPDATE gateway_payments SET status = ?, updated_at = now()
		WHERE id = ? AND status <> 'paid' AND status <> ?`, status, id, status).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("test payment %s %s: %w", id, status, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// MarkTestPaymentReported records that the service acknowledged a paid
// test payment's report.
func MarkTestPaymentReported(ctx context.Context, db bun.IDB, id string) error {
	if _, err := db.NewRaw("UPDATE gateway_payments SET reported_at = now() WHERE id = ? AND reported_at IS NULL", id).Exec(ctx); err != nil {
		return fmt.Errorf("mark test payment %s reported: %w", id, err)
	}
	return nil
}

// UnreportedTestPayments lists paid test payments the service has not
// acknowledged, paid before the given time.
func UnreportedTestPayments(ctx context.Context, db bun.IDB, before time.Time, limit int) ([]string, error) {
	var ids []string
	if err := db.NewRaw(`SELECT id FROM gateway_payments WHERE status = 'paid' AND reported_at IS NULL AND updated_at < ?
		ORDER BY updated_at LIMIT ?`, before, limit).Scan(ctx, &ids); err != nil {
		return nil, fmt.Errorf("unreported test payments: %w", err)
	}
	return ids, nil
}

// ErrTestRefundRefused: the test payment is not paid, or the refund would
// return more than was paid.
var ErrTestRefundRefused = errors.New("refund exceeds the test payment")

// RefundTestPayment returns amount of a paid test payment once per key, in
// one transaction under the payment's lock: a repeat with the same key,
// even a concurrent one, returns nothing again, and concurrent refunds with
// other keys never return more than was paid.
func RefundTestPayment(ctx context.Context, db bun.IDB, paymentID, key string, amount int64) error {
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		p := new(TestPayment)
		if err := tx.NewSelect().Model(p).Where("id = ?", paymentID).For("UPDATE").Scan(ctx); err != nil {
			if errors.Is(notFound(err, ""), errs.NotFound) {
				return ErrTestRefundRefused
			}
			return err
		}
		var of []string
		if err := tx.NewRaw("SELECT payment_id FROM gateway_refunds WHERE key = ?", key).Scan(ctx, &of); err != nil {
			return err
		}
		if len(of) > 0 {
			if of[0] != paymentID {
				return fmt.Errorf("refund key %s was used for payment %s: %w", key, of[0], ErrTestRefundRefused)
			}
			return nil // a repeat: returned once
		}
		if p.Status != states.GatewayPaid || p.Refunded+amount > p.Amount {
			return ErrTestRefundRefused
		}
		if _, err := tx.NewRaw("INSERT INTO gateway_refunds (key, payment_id, amount) VALUES (?, ?, ?)", key, paymentID, amount).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewRaw("UPDATE gateway_payments SET refunded = refunded + ?, updated_at = now() WHERE id = ?", amount, paymentID).Exec(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("refund %d of test payment %s: %w", amount, paymentID, err)
	}
	return nil
}

package gateway

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"ticketsales/store"
)

// RefundUnapplied returns a captured payment the order did not take: it came
// after the order was cancelled, or the order was paid by another payment.
// The refund key is the payment's, so the money goes back once however often
// this runs.
func RefundUnapplied(ctx context.Context, db bun.IDB, g Gateway, orderID int64, paymentID string) error {
	o, err := store.GetOrderByID(ctx, db, orderID)
	if err != nil {
		return err
	}
	if o.PaymentID != nil && *o.PaymentID == paymentID && o.Status != store.OrderPendingPayment && o.Status != store.OrderCancelled {
		return nil // this payment paid the order
	}
	if o.Status == store.OrderPendingPayment {
		return fmt.Errorf("order %d is still payable: payment %s is not late", orderID, paymentID)
	}
	if err := g.Refund(ctx, paymentID, "late-"+paymentID, o.Amount); err != nil {
		return fmt.Errorf("return late payment %s of order %d: %w", paymentID, orderID, err)
	}
	return nil
}

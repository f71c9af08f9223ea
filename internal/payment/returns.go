package payment

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// ReturnPayment gives a refund_due payment back through its gateway and
// records it. The gateway refund is keyed by the payment, so the money goes
// back once however often this runs (a workflow and the reaper may both).
func ReturnPayment(ctx context.Context, db bun.IDB, gateways Set, p *store.Payment) error {
	if p.Status != states.PaymentRefundDue {
		return nil
	}
	g, err := gateways.Get(p.Gateway)
	if err != nil {
		return fmt.Errorf("return payment %s of order %d: %w", p.ID, p.OrderID, err)
	}
	if p.Amount > 0 {
		if err := g.Refund(ctx, p.ID, "return-"+p.ID, p.Amount); err != nil {
			return fmt.Errorf("return payment %s of order %d: %w", p.ID, p.OrderID, err)
		}
	}
	return store.MarkPaymentRefunded(ctx, db, p.Gateway, p.ID)
}

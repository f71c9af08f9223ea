package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/temporal"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// ErrTypeRefundRefused marks a refund the order's state does not allow.
const ErrTypeRefundRefused = "refund_refused"

// VoidResult is what voiding a refund's tickets did.
type VoidResult struct {
	Amount          int64
	MoneyReturnedBy states.PaymentMethod
	Status          states.RefundStatus // completed for external orders
	OrderStatus     states.OrderStatus
}

// VoidTickets records the refund: tickets refunded, seats and capacity back
// on sale, order status moved, in one transaction. Running it again for the
// same refund id returns the same result and changes nothing.
func (a *Activities) VoidTickets(ctx context.Context, refundID string, orderID int64, ticketIDs []int64) (VoidResult, error) {
	r := &store.Refund{ID: refundID, OrderID: orderID, TicketIDs: ticketIDs}
	if err := store.CreateRefund(ctx, a.DB, r); err != nil {
		var se *errs.StateError
		var te *store.RefundTicketsError
		var ce *errs.CheckedInError // admitted at the door meanwhile: retrying changes nothing
		if errors.As(err, &se) || errors.As(err, &te) || errors.As(err, &ce) {
			return VoidResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRefundRefused, err)
		}
		return VoidResult{}, final(err)
	}
	orderStatus, err := store.GetOrderStatus(ctx, a.DB, orderID)
	if err != nil {
		return VoidResult{}, err
	}
	return VoidResult{Amount: r.Amount, MoneyReturnedBy: r.MoneyReturnedBy, Status: r.Status, OrderStatus: orderStatus}, nil
}

// ReturnMoney refunds a gateway refund's amount through the gateway that
// took the order's payment, keyed by the refund id so a retried call returns
// the money once, then marks the refund completed.
func (a *Activities) ReturnMoney(ctx context.Context, refundID string) error {
	r, err := store.GetRefund(ctx, a.DB, refundID)
	if err != nil {
		return err
	}
	if r.Status == states.RefundCompleted {
		return nil
	}
	o, err := store.GetOrderByID(ctx, a.DB, r.OrderID)
	if err != nil {
		return err
	}
	if o.PaymentID == nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("order %d has no gateway payment", r.OrderID), "no_payment", nil)
	}
	g, err := a.Gateways.Get(o.GatewayName())
	if err != nil {
		return err
	}
	if r.Amount > 0 {
		if err := g.Refund(ctx, *o.PaymentID, refundID, r.Amount); err != nil {
			return final(fmt.Errorf("gateway refund %s: %w", refundID, err))
		}
	}
	return store.CompleteRefund(ctx, a.DB, refundID)
}

// MarkRefundFailed records that a refund's money could not be returned
// within its retry budget and alerts operators; the reaper's sweep resumes
// it later. Marking it again only refreshes the time and cause.
func (a *Activities) MarkRefundFailed(ctx context.Context, refundID, cause string) error {
	r, err := store.MarkRefundFailed(ctx, a.DB, refundID, cause)
	if err != nil {
		return err
	}
	if r.Status == states.RefundFailed {
		a.alert(ctx, "refund_failed", "a refund's money was not returned within its retry budget; the reaper resumes it",
			slog.String("refund_id", refundID), slog.Int64("order_id", r.OrderID), slog.Int64("amount", r.Amount), slog.String("cause", cause))
	}
	return nil
}

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

// ErrTypeRefundRefused marks a refund the order's state does not allow
// (kept for the histories of workflows that recorded refunds themselves).
const ErrTypeRefundRefused = "refund_refused"

// ErrTypeRefundNotRecorded marks a refund workflow whose refund is not on
// record: every way in records the refund before it starts the workflow,
// so none is coming, and a retry would find none either.
const ErrTypeRefundNotRecorded = "refund_not_recorded"

// VoidResult is the recorded refund as its workflow goes on from it.
type VoidResult struct {
	Amount          int64
	MoneyReturnedBy states.PaymentMethod
	Status          states.RefundStatus // completed for external orders
	OrderStatus     states.OrderStatus
}

// VoidTickets reads the refund its request recorded (tickets voided, seats
// back, the order's status moved, all in that request's transaction:
// refunds.Service.Refund): its amount, who returns the money, its status
// and its order's status. It only reads, so running it again is harmless.
// The name stays VoidTickets, which the recorded histories of refund
// workflows schedule: older code ran the refund's transaction again here.
func (a *Activities) VoidTickets(ctx context.Context, refundID string, orderID int64, _ []int64) (VoidResult, error) {
	r, err := store.GetRefund(ctx, a.DB, refundID)
	if errors.Is(err, errs.NotFound) {
		return VoidResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("refund %s of order %d is not recorded", refundID, orderID), ErrTypeRefundNotRecorded, err)
	}
	if err != nil {
		return VoidResult{}, fmt.Errorf("read refund %s: %w", refundID, err)
	}
	orderStatus, err := store.GetOrderStatus(ctx, a.DB, r.OrderID)
	if err != nil {
		return VoidResult{}, fmt.Errorf("read the order of refund %s: %w", refundID, err)
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

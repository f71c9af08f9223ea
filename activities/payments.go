package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/temporal"

	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/payment"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// SettleResult is what settling a gateway payment decided.
type SettleResult struct {
	Gateway      string               // the gateway that took it
	Status       states.PaymentStatus // applied, refund_due or refunded
	RefundReason states.ReturnReason
	// Tickets is how many tickets the order has once the payment is
	// applied (issued in the settling transaction; 0 in results recorded
	// before it was counted).
	Tickets int `json:",omitempty"`
}

// SettlePayment applies a recorded gateway payment to its order (order paid,
// seats sold, tickets issued, in one transaction) or marks it due back.
// Settling a settled payment returns the decision already made. A payment
// signalled by an api from before payments were recorded (no gateway named,
// nothing on record) is recorded from its order first.
func (a *Activities) SettlePayment(ctx context.Context, orderID int64, gatewayName, paymentID string) (SettleResult, error) {
	if _, err := store.GetPayment(ctx, a.DB, gatewayName, paymentID); errors.Is(err, errs.NotFound) {
		if gatewayName, err = a.recordFromOrder(ctx, orderID, paymentID); err != nil {
			return SettleResult{}, final(err)
		}
	} else if err != nil {
		return SettleResult{}, err
	}
	p, err := store.SettlePayment(ctx, a.DB, gatewayName, paymentID, delivery.NewBarcode)
	if err != nil {
		return SettleResult{}, final(err)
	}
	res := SettleResult{Gateway: p.Gateway, Status: p.Status}
	if p.RefundReason != nil {
		res.RefundReason = *p.RefundReason
	}
	if res.Status == states.PaymentApplied {
		if res.Tickets, err = store.CountTickets(ctx, a.DB, p.OrderID); err != nil {
			return SettleResult{}, err
		}
	}
	return res, nil
}

// recordFromOrder records a payment the gateway reported before payments
// were recorded: through the order's gateway, of the order's amount (the
// test gateway, the only one then, took exactly that). A sandbox order
// deleted since is read from the test gateway's own record of the payment,
// and the settling then gives it back. A payment known to neither is a
// final error: no retry can find it. It returns the gateway's name.
func (a *Activities) recordFromOrder(ctx context.Context, orderID int64, paymentID string) (string, error) {
	p := &store.Payment{ID: paymentID, OrderID: orderID, Status: states.PaymentReceived}
	o, err := store.GetOrderByID(ctx, a.DB, orderID)
	switch {
	case err == nil:
		p.Gateway, p.Amount, p.Currency = o.GatewayName(), o.Amount, o.Currency
	case errors.Is(err, errs.NotFound):
		tp, terr := store.GetTestPayment(ctx, a.DB, paymentID)
		if errors.Is(terr, errs.NotFound) {
			return "", temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("payment %s of order %d is known neither to its order nor to the test gateway", paymentID, orderID),
				ErrTypePaymentUnknown, terr)
		} else if terr != nil {
			return "", terr
		}
		p.Gateway, p.Amount, p.Currency = payment.Test, tp.Amount, tp.Currency
	default:
		return "", err
	}
	_, err = store.RecordPayment(ctx, a.DB, p)
	return p.Gateway, err
}

// ReturnPayment gives a payment due back to the buyer through its gateway,
// keyed by the payment, so the money goes back once.
func (a *Activities) ReturnPayment(ctx context.Context, gatewayName, paymentID string) error {
	p, err := store.GetPayment(ctx, a.DB, gatewayName, paymentID)
	if err != nil {
		return err
	}
	return final(payment.ReturnPayment(ctx, a.DB, a.Gateways, p))
}

// AlertPaymentNotReturned reports a payment the workflow could not give back
// within its retries: the reaper keeps trying, an operator should look.
func (a *Activities) AlertPaymentNotReturned(ctx context.Context, gatewayName, paymentID, cause string) error {
	a.alert(ctx, "payment_return_failed", "a payment due back was not returned; the reaper retries it",
		slog.String("gateway", gatewayName), slog.String("payment_id", paymentID), slog.String("cause", cause))
	return nil
}

// AlertPaymentUnknown reports a payment signalled to an order that neither
// the order nor the gateway's record knows: nothing can apply or return it,
// an operator must look at the gateway's side.
func (a *Activities) AlertPaymentUnknown(ctx context.Context, gatewayName, paymentID, cause string) error {
	a.alert(ctx, "payment_unknown", "a payment signalled to an order is on record nowhere",
		slog.String("gateway", gatewayName), slog.String("payment_id", paymentID), slog.String("cause", cause))
	return nil
}

// RefundLatePayment returns a gateway payment the order could not take. It
// serves order workflows started before payments were recorded; newer ones
// settle and return payments with SettlePayment and ReturnPayment.
func (a *Activities) RefundLatePayment(ctx context.Context, orderID int64, paymentID string) error {
	res, err := a.SettlePayment(ctx, orderID, "", paymentID)
	if err != nil {
		return err
	}
	return a.ReturnPayment(ctx, res.Gateway, paymentID)
}

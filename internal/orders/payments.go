package orders

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/payment"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// ReceivePayment takes a gateway's verified report of a payment. A paid
// payment is recorded in Postgres before anything else, so the callback is
// acknowledged only once the money is on record; then the order's workflow
// is told, which applies it or gives it back. If the workflow cannot be told
// (Temporal down, the saga already over), the reaper settles the payment
// later: the report is still acknowledged, since it is on record. Declines
// move no money and are not signalled, so a buyer clicking Decline cannot
// grow the workflow's history.
func (s *Service) ReceivePayment(ctx context.Context, gatewayName string, cb payment.Callback) error {
	if cb.Status != states.GatewayPaid {
		s.log.InfoContext(ctx, "gateway payment declined", "gateway", gatewayName, "payment_id", cb.PaymentID, "order_id", cb.OrderID)
		return nil
	}
	p, err := store.RecordPayment(ctx, s.db, &store.Payment{Gateway: gatewayName, ID: cb.PaymentID, OrderID: cb.OrderID,
		Amount: cb.Amount, Currency: cb.Currency, Status: states.PaymentReceived})
	if err != nil {
		return err
	}
	if p.Status != states.PaymentReceived {
		return nil // settled already: a repeated report
	}
	err = s.temporal.SignalWorkflow(ctx, contract.OrderWorkflowID(cb.OrderID), "", contract.PaymentSignal,
		contract.PaymentEvent{Status: "paid", PaymentID: p.ID, Gateway: p.Gateway})
	if err != nil {
		s.log.WarnContext(ctx, "payment recorded; its order workflow was not told, the reaper settles it",
			"gateway", gatewayName, "payment_id", p.ID, "order_id", p.OrderID, "err", err)
	}
	return nil
}

// PaymentSweep settles and returns, from the worker's reaper, the recorded
// payments no workflow took care of: the callback could not signal (Temporal
// down), or the saga had ended.
type PaymentSweep struct {
	DB       *bun.DB
	Temporal client.Client
	Gateways payment.Set
}

// PaymentsSwept counts what one sweep did.
type PaymentsSwept struct {
	Signalled, Settled, Returned int
}

// Run handles payments received or due back more than grace ago: a payment
// of an order still awaiting payment is signalled to its workflow again;
// any other is settled here (it cannot pay a closed order, so it becomes
// due back); a payment due back is returned through its gateway.
func (w PaymentSweep) Run(ctx context.Context, grace time.Duration) (PaymentsSwept, error) {
	var out PaymentsSwept
	ps, err := store.OpenPayments(ctx, w.DB, time.Now().Add(-grace), 200)
	if err != nil {
		return out, err
	}
	var failed []error
	for i := range ps {
		p := &ps[i]
		if p.Status == states.PaymentReceived {
			signalled, err := w.signalIfPayable(ctx, p)
			if err != nil {
				failed = append(failed, err)
				continue
			}
			if signalled {
				out.Signalled++
				continue
			}
			if p, err = store.SettlePayment(ctx, w.DB, p.Gateway, p.ID, delivery.NewBarcode); err != nil {
				failed = append(failed, err)
				continue
			}
			out.Settled++
		}
		if p.Status == states.PaymentRefundDue {
			if err := payment.ReturnPayment(ctx, w.DB, w.Gateways, p); err != nil {
				failed = append(failed, err)
				continue
			}
			out.Returned++
		}
	}
	return out, errors.Join(failed...)
}

// signalIfPayable tells a pending order's workflow of p again. It reports
// false when the order is not pending or has no workflow: p is then the
// sweep's to settle.
func (w PaymentSweep) signalIfPayable(ctx context.Context, p *store.Payment) (bool, error) {
	status, err := store.GetOrderStatus(ctx, w.DB, p.OrderID)
	switch {
	case errors.Is(err, errs.NotFound):
		return false, nil // a deleted sandbox order: the payment goes back
	case err != nil:
		return false, fmt.Errorf("order of payment %s: %w", p.ID, err)
	case status != states.OrderPendingPayment:
		return false, nil
	}
	err = w.Temporal.SignalWorkflow(ctx, contract.OrderWorkflowID(p.OrderID), "", contract.PaymentSignal,
		contract.PaymentEvent{Status: "paid", PaymentID: p.ID, Gateway: p.Gateway})
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &notFound):
		// A pending order without a workflow: the reaper cancels it at its
		// deadline, and the payment goes back then.
		return true, nil
	case err != nil:
		return false, fmt.Errorf("signal payment %s to order %d: %w", p.ID, p.OrderID, err)
	}
	return true, nil
}

// Package activities holds the workflows' side effects over the store and
// outside services. Every activity is a guarded state transition, safe to
// run twice.
package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"ticketsales/internal/delivery"
	"ticketsales/internal/delivery/email"
	"ticketsales/internal/errs"
	"ticketsales/internal/mail"
	"ticketsales/internal/metrics"
	"ticketsales/internal/payment"
	"ticketsales/internal/states"
	"ticketsales/store"
)

// Activities holds the dependencies of every activity; it is registered once.
type Activities struct {
	DB     *bun.DB
	Mailer mail.Sender    // sends production orders their tickets
	Links  delivery.Links // the order page link in the e-mail
	// Gateways take back money of gateway orders, each through the gateway
	// that took it.
	Gateways payment.Set
	// Metrics counts money alerts (nil: none); Log reports them.
	Metrics *metrics.Registry
	Log     *slog.Logger
	// Webhooks shape partner webhook deliveries.
	Webhooks WebhookSettings
}

// Error types of activity failures that retrying cannot mend.
const (
	ErrTypeConstraintViolation = "constraint_violation"
	ErrTypeGatewayRefused      = "gateway_refused"
	ErrTypePaymentUnknown      = "payment_unknown"
)

// final makes errors that no retry can mend non-retryable: a violated
// constraint (bad input or a bug: the same statement fails again, and so
// does a payment reported again with other details) and a payment
// gateway's final refusal. Others pass unchanged.
func final(err error) error {
	var pg *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pg) && len(pg.Code) == 5 && pg.Code[:2] == "23":
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeConstraintViolation, err)
	case errors.Is(err, payment.ErrRefused):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeGatewayRefused, err)
	case errors.Is(err, errs.PaymentConflict):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeConstraintViolation, err)
	}
	return err
}

// ExpireResult says what expiring a reservation found.
type ExpireResult struct {
	Status  states.ReservationStatus // the reservation's status afterwards
	Changed bool                     // this run made the change
}

// ExpireReservation ends a reservation whose deadline passed and frees its
// seats. If the reservation already ended (released, ordered, or expired by
// an earlier attempt) it changes nothing.
func (a *Activities) ExpireReservation(ctx context.Context, id string) (ExpireResult, error) {
	changed, err := store.EndReservation(ctx, a.DB, id, states.ReservationExpired)
	if err != nil {
		return ExpireResult{}, final(err)
	}
	status, err := store.ReservationStatusOf(ctx, a.DB, id)
	if err != nil {
		return ExpireResult{}, err
	}
	if status == states.ReservationReserved {
		// The database clock is behind the workflow timer: retry shortly.
		return ExpireResult{}, temporal.NewApplicationError(fmt.Sprintf("reservation %s is not past its deadline yet", id), "not_yet_expired")
	}
	return ExpireResult{Status: status, Changed: changed}, nil
}

// ExpiredHold is what the deadline pass found for one hold.
type ExpiredHold struct {
	ReservationID string
	Status        states.ReservationStatus // "" when the reservation no longer exists
	Changed       bool
	// Retry: this hold could not be finalised now (Postgres's clock still
	// behind its deadline, or an error); the workflow tries it again soon.
	Retry bool
}

// ExpireReservations is the deadline pass of an event's holds workflow over
// the holds whose deadline came: each is expired by the same guarded
// transition as ExpireReservation (a hold that ended otherwise is left as
// it is), one transaction per hold so one bad row cannot hold back the
// others. Repeating it changes nothing.
func (a *Activities) ExpireReservations(ctx context.Context, ids []string) ([]ExpiredHold, error) {
	out := make([]ExpiredHold, 0, len(ids))
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("expire holds: %w", err)
		}
		res, err := a.ExpireReservation(ctx, id)
		switch {
		case errors.Is(err, errs.NotFound):
			out = append(out, ExpiredHold{ReservationID: id})
		case err != nil:
			activity.GetLogger(ctx).Warn("hold not finalised at its deadline; retried", "reservation_id", id, "err", err)
			out = append(out, ExpiredHold{ReservationID: id, Retry: true})
		default:
			out = append(out, ExpiredHold{ReservationID: id, Status: res.Status, Changed: res.Changed})
		}
	}
	return out, nil
}

// PayResult is an order's status after an attempt to mark it paid.
type PayResult struct {
	Status  states.OrderStatus
	Changed bool
}

// MarkOrderPaid marks a pending order paid and its seats sold, if its
// payment window is still open. Repeating it changes nothing.
//
// The tickets are issued in the same transaction, so no reader ever sees a
// paid order without its tickets; IssueTickets afterwards only completes
// what a crash could have left. An order that lost a seat cannot be paid:
// that is final (ErrTypeSeatsLost), not retried.
func (a *Activities) MarkOrderPaid(ctx context.Context, orderID int64, paymentID string) (PayResult, error) {
	var res PayResult
	err := a.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		status, changed, err := store.MarkOrderPaid(ctx, tx, orderID, paymentID)
		if err != nil {
			return err
		}
		res = PayResult{Status: status, Changed: changed}
		if status != states.OrderPaid {
			return nil
		}
		_, err = store.IssueTickets(ctx, tx, orderID, delivery.NewBarcode)
		return err
	})
	if errors.Is(err, store.ErrSeatsLost) {
		// The type is workflows.ErrTypeSeatsLost (the contract the api reads).
		return PayResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "seats_lost", err)
	}
	return res, final(err)
}

// SettleResult is what settling a gateway payment decided.
type SettleResult struct {
	Gateway      string               // the gateway that took it
	Status       states.PaymentStatus // applied, refund_due or refunded
	RefundReason states.ReturnReason
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

func (a *Activities) alert(ctx context.Context, kind, msg string, attrs ...slog.Attr) {
	a.Metrics.MoneyAlert(kind)
	log := a.Log
	if log == nil {
		log = slog.Default()
	}
	if activity.IsActivity(ctx) {
		info := activity.GetInfo(ctx)
		attrs = append(attrs, slog.String("workflow_id", info.WorkflowExecution.ID))
	}
	log.LogAttrs(ctx, slog.LevelError, "money alert: "+msg, append(attrs, slog.String("kind", kind))...)
}

// IssueTickets creates the tickets of a paid order, one per position.
func (a *Activities) IssueTickets(ctx context.Context, orderID int64) (int, error) {
	if _, err := store.IssueTickets(ctx, a.DB, orderID, delivery.NewBarcode); err != nil {
		return 0, err
	}
	return store.CountTickets(ctx, a.DB, orderID)
}

// CancelResult is an order's status after an attempt to cancel it.
type CancelResult struct {
	Status  states.OrderStatus
	Changed bool
}

// CancelOrder cancels a pending order and frees its seats. For
// payment_timeout it is the deadline's pass: it waits for the deadline in
// Postgres's clock (if the order is pending but not yet past it, the
// activity is retried), and an order whose payment was accepted in its
// window is paid with it instead, its tickets issued (a confirm whose
// update the workflow never received).
func (a *Activities) CancelOrder(ctx context.Context, orderID int64, reason states.CancelReason) (CancelResult, error) {
	var status states.OrderStatus
	var changed bool
	var err error
	if reason == states.CancelPaymentTimeout {
		status, changed, err = store.CloseLapsedOrder(ctx, a.DB, orderID, delivery.NewBarcode)
	} else {
		status, changed, err = store.CancelOrder(ctx, a.DB, orderID, reason)
	}
	if err != nil {
		return CancelResult{}, err
	}
	if status == states.OrderPendingPayment {
		return CancelResult{}, temporal.NewApplicationError(fmt.Sprintf("order %d is not past its payment deadline yet", orderID), "not_yet_expired")
	}
	return CancelResult{Status: status, Changed: changed}, nil
}

// DeleteTestOrder deletes a sandbox order and frees its seats.
func (a *Activities) DeleteTestOrder(ctx context.Context, orderID int64) (bool, error) {
	return store.DeleteTestOrder(ctx, a.DB, orderID)
}

// ErrTypeMailRefused marks an e-mail the mail server refused for good (5xx):
// retrying cannot deliver it.
const ErrTypeMailRefused = "mail_refused"

// SendTicketsEmail e-mails a production order's tickets (PDF attached) to
// the buyer. emailed_at is set after a successful send; a send repeated
// after a crash carries the same Message-ID, and the outbox overwrites it.
// A permanent refusal is a non-retryable error; anything else is retried.
func (a *Activities) SendTicketsEmail(ctx context.Context, orderID int64) error {
	if a.Mailer == nil {
		return temporal.NewNonRetryableApplicationError("no mailer configured", "no_mailer", nil)
	}
	msg, err := email.Tickets(ctx, a.DB, a.Links, orderID)
	if err != nil || msg == nil {
		return err // nil: a sandbox order, or e-mailed already
	}
	if err := a.Mailer.Send(ctx, *msg); err != nil {
		// The mail package's errors never hold the address (history keeps
		// no personal data); the order id says which e-mail failed.
		if mail.IsPermanent(err) {
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf("e-mail tickets of order %d: %v", orderID, err), ErrTypeMailRefused, nil)
		}
		return fmt.Errorf("e-mail tickets of order %d: %w", orderID, err)
	}
	return store.MarkOrderEmailed(ctx, a.DB, orderID)
}

// ErrTypeRefundRefused marks a refund the order's state does not allow.
const ErrTypeRefundRefused = "refund_refused"

// VoidResult is what voiding a refund's tickets did.
type VoidResult struct {
	Amount          int64
	MoneyReturnedBy string
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
		if errors.As(err, &se) || errors.As(err, &te) {
			return VoidResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRefundRefused, err)
		}
		return VoidResult{}, final(err)
	}
	orderStatus, err := store.OrderStatusOf(ctx, a.DB, orderID)
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

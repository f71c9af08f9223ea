package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/temporal"

	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/delivery/email"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// PayResult is an order's status after an attempt to mark it paid.
type PayResult struct {
	Status  states.OrderStatus
	Changed bool
	// Tickets is how many tickets a paid order has, issued in the same
	// transaction (0 in results recorded before it was counted).
	Tickets int `json:",omitempty"`
}

// MarkOrderPaid marks a pending order paid and its seats sold, if its
// payment window is still open. Repeating it changes nothing.
//
// The tickets are issued in the same transaction, so no reader ever sees a
// paid order without its tickets, and counted (an order workflow of
// revision 1 takes the count from here; older ones run IssueTickets
// afterwards, which finds them issued). An order that lost a seat cannot be paid:
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
		if _, err = store.IssueTickets(ctx, tx, orderID, delivery.NewBarcode); err != nil {
			return err
		}
		res.Tickets, err = store.CountTickets(ctx, tx, orderID)
		return err
	})
	if errors.Is(err, store.ErrSeatsLost) {
		// The type is workflows.ErrTypeSeatsLost (the contract the api reads).
		return PayResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "seats_lost", err)
	}
	return res, final(err)
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
	// Tickets is how many tickets the order has when it was paid instead
	// (its payment accepted in the window: issued in that transaction).
	Tickets int `json:",omitempty"`
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
	res := CancelResult{Status: status, Changed: changed}
	if status == states.OrderPaid {
		if res.Tickets, err = store.CountTickets(ctx, a.DB, orderID); err != nil {
			return CancelResult{}, err
		}
	}
	return res, nil
}

// DeleteTestOrder deletes a sandbox order and frees its seats.
func (a *Activities) DeleteTestOrder(ctx context.Context, orderID int64) (bool, error) {
	return store.DeleteTestOrder(ctx, a.DB, orderID)
}

// ErrTypeMailRefused marks an e-mail the mail server refused for good (5xx):
// retrying cannot deliver it.
const ErrTypeMailRefused = "mail_refused"

// SendTicketsEmail e-mails a production order's tickets (the order page's
// link) to the buyer. emailed_at is set after a successful send; a send repeated
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

// ResendTicketsEmail e-mails a production order's tickets again (the
// organizer's resend from the cabinet): a new message whoever sent the
// first, its Message-ID the resend's, so a retry of this send is the same
// message. It marks the order e-mailed, so a first send still retrying
// after a failure does not send a second copy. Errors as SendTicketsEmail.
func (a *Activities) ResendTicketsEmail(ctx context.Context, orderID int64, resendID string) error {
	if a.Mailer == nil {
		return temporal.NewNonRetryableApplicationError("no mailer configured", "no_mailer", nil)
	}
	msg, err := email.TicketsAgain(ctx, a.DB, a.Links, orderID, resendID)
	if err != nil || msg == nil {
		return err // nil: a sandbox order
	}
	if err := a.Mailer.Send(ctx, *msg); err != nil {
		if mail.IsPermanent(err) {
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf("e-mail tickets of order %d again: %v", orderID, err), ErrTypeMailRefused, nil)
		}
		return fmt.Errorf("e-mail tickets of order %d again: %w", orderID, err)
	}
	return store.MarkOrderEmailed(ctx, a.DB, orderID)
}

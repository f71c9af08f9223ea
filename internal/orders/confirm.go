package orders

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// MaxPaymentIDLength bounds a partner's payment reference, as the API's
// schema states it: it is stored with the payment.
const MaxPaymentIDLength = 200

// checkPaymentRef checks a partner's payment reference: one line of 1 to
// MaxPaymentIDLength characters.
func checkPaymentRef(externalID string) error {
	verr := &errs.ValidationError{}
	verr.Line("body.external_payment_id", externalID, 1, MaxPaymentIDLength)
	return verr.OrNil()
}

// defaultConfirmWait bounds the wait for the order workflow to apply a
// payment it was handed.
const defaultConfirmWait = 20 * time.Second

// Confirm takes the partner's external payment. A wrong amount is refused
// with nothing changed, and an order paid with this payment is returned as
// it is (safe repeat). Otherwise the payment is accepted in Postgres first
// (store.AcceptExternalPayment: within the payment window, and from then on
// the order is paid with it whatever happens to the call), then handed to
// the order workflow, which marks the order paid and issues the tickets.
// When the workflow does not answer within Orders.ConfirmWait, the order is
// returned still pending_payment with PaymentAcceptedAt set: the tickets
// follow, and a repeat returns the paid order. Nothing is recorded only
// when the answer is an error.
//
// simulate SimulateConfirmAccepted (sandbox keys only) hands the payment
// without waiting and returns the order as accepted: the 202 a slow
// workflow gives.
func (s *Service) Confirm(ctx context.Context, p *apikey.Principal, id int64, paidAmount int64, externalID, simulate string) (*Order, error) {
	if err := sandboxOnly(p, simulate); err != nil {
		return nil, err
	}
	if err := checkPaymentRef(externalID); err != nil {
		return nil, err
	}
	o, err := store.GetOrder(ctx, s.db, p.CompanyID, p.IsTest(), id)
	if err != nil {
		return nil, err
	}
	if err := confirmable(o, paidAmount); err != nil {
		return nil, err
	}
	if o.Status == states.OrderPendingPayment && o.PaymentAcceptedAt == nil {
		if o, err = store.AcceptExternalPayment(ctx, s.db, id, externalID); errors.Is(err, store.ErrSeatsLost) {
			return nil, fmt.Errorf("order %d: %w", id, errs.OrderExpired)
		} else if err != nil {
			return nil, err
		}
	}
	if paid, err := paidWithPayment(o, externalID); err != nil {
		return nil, err
	} else if paid {
		return s.View(o), nil // paid with this payment: a safe repeat
	}
	if simulate == SimulateConfirmAccepted {
		if err := s.handPaymentNoWait(ctx, o, paidAmount, externalID); err != nil {
			s.log.WarnContext(ctx, "sandbox confirm_accepted: the payment is on record; the workflow was not told", "order_id", id, "err", err)
		}
		return s.View(o), nil // as accepted, before the workflow pays it
	}
	if err := s.handPayment(ctx, o, paidAmount, externalID); err != nil {
		// The payment is on record and the order will be paid with it: the
		// partner is told so (202), never that nothing happened.
		s.log.WarnContext(ctx, "external payment accepted; the order workflow has not applied it yet",
			"order_id", id, "err", err)
	}
	if o, err = store.GetOrder(ctx, s.db, p.CompanyID, p.IsTest(), id); err != nil {
		return nil, err
	}
	return s.View(o), nil
}

// confirmable refuses, before anything is recorded, a confirm the order
// can never take: another amount than the order's (whatever its status),
// or an order paid through the gateway.
func confirmable(o *store.Order, paidAmount int64) error {
	if paidAmount != o.Amount {
		return &errs.AmountMismatchError{Paid: paidAmount, Amount: o.Amount, Currency: o.Currency}
	}
	if o.Payment != states.PayExternally {
		return &errs.StateError{Entity: "order", ID: strconv.FormatInt(o.ID, 10), Status: "paid through the gateway"}
	}
	return nil
}

// paidWithPayment tells what a confirm of externalID finds once the order's
// payment was accepted, or could not be: an error when this payment will
// not pay the order, paid when it has paid it already (a repeat); else the
// order waits for its workflow to be paid with it.
func paidWithPayment(o *store.Order, externalID string) (paid bool, err error) {
	switch {
	case o.Status == states.OrderCancelled:
		return false, cancelledError(o)
	case o.Status == states.OrderPendingPayment && o.PaymentAcceptedAt == nil:
		return false, fmt.Errorf("order %d: %w", o.ID, errs.OrderExpired) // the window closed before it was accepted
	case o.PaymentID == nil || *o.PaymentID != externalID:
		// Paid or accepted with another payment: this one was not applied,
		// and the partner has to give it back.
		return false, &errs.StateError{Entity: "order", ID: strconv.FormatInt(o.ID, 10), Status: "confirmed with another payment id"}
	}
	return o.Status != states.OrderPendingPayment, nil
}

// handPayment hands an accepted external payment to the order's workflow
// and waits up to Orders.ConfirmWait for it to pay the order. A workflow
// that was never started (its api died after the order's commit) is
// started first.
func (s *Service) handPayment(ctx context.Context, o *store.Order, paidAmount int64, externalID string) error {
	return s.hand(ctx, o, paidAmount, externalID, client.WorkflowUpdateStageCompleted)
}

// handPaymentNoWait hands the payment as handPayment does but waits only
// until the workflow has accepted the update, not until the order is paid.
func (s *Service) handPaymentNoWait(ctx context.Context, o *store.Order, paidAmount int64, externalID string) error {
	return s.hand(ctx, o, paidAmount, externalID, client.WorkflowUpdateStageAccepted)
}

func (s *Service) hand(ctx context.Context, o *store.Order, paidAmount int64, externalID string, stage client.WorkflowUpdateStage) error {
	uctx, cancel := context.WithTimeout(ctx, cmp.Or(s.Settings.ConfirmWait, defaultConfirmWait))
	defer cancel()
	update := func() error {
		h, err := s.temporal.UpdateWorkflow(uctx, client.UpdateWorkflowOptions{
			WorkflowID: contract.OrderWorkflowID(o.ID), UpdateName: contract.ConfirmUpdate,
			Args:         []any{contract.ConfirmInput{PaidAmount: paidAmount, ExternalPaymentID: externalID}},
			WaitForStage: stage,
		})
		if err == nil && stage == client.WorkflowUpdateStageCompleted {
			err = h.Get(uctx, nil)
		}
		return err
	}
	err := update()
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		// No workflow: never started (its api died after the commit), or
		// finished with the order paid meanwhile (the deadline's pass).
		// Only a pending order's saga is started.
		cur, gerr := store.GetOrderByID(uctx, s.db, o.ID)
		if gerr != nil {
			return gerr
		}
		if cur.Status != states.OrderPendingPayment {
			return nil
		}
		if err = s.resumeSaga(uctx, cur); err == nil {
			err = update()
		}
	}
	if err != nil {
		return fmt.Errorf("hand payment to order %d: %w", o.ID, err)
	}
	return nil
}

func cancelledError(o *store.Order) error {
	if o.CancelReason != nil && *o.CancelReason == states.CancelPaymentTimeout {
		return fmt.Errorf("order %d: %w", o.ID, errs.OrderExpired)
	}
	return &errs.StateError{Entity: "order", ID: strconv.FormatInt(o.ID, 10), Status: string(o.Status)}
}

// Cancel cancels an unpaid order and frees its seats; a paid order must be
// refunded instead. Cancelling a cancelled order returns it unchanged.
func (s *Service) Cancel(ctx context.Context, p *apikey.Principal, id int64) (*Order, error) {
	o, _, err := s.cancel(ctx, p.CompanyID, p.IsTest(), id, nil)
	return o, err
}

// CancelAsOrganizer is Cancel for the organizer in the cabinet: an
// order of the company in the environment isTest, cancelled exactly as the
// partner's cancel does (the same statement, seats back, the order's
// workflow told). action, when given, is the cabinet's record of the
// cancel, claimed with its one-time token in the cancel's transaction:
// store.ErrActionClaimed when the token was claimed already (nothing
// done), and no record when the order is not cancelled. cancelled reports
// whether this call cancelled the order (and recorded action).
func (s *Service) CancelAsOrganizer(ctx context.Context, companyID int64, isTest bool, id int64,
	action *store.CabinetAction) (o *Order, cancelled bool, err error) {
	return s.cancel(ctx, companyID, isTest, id, action)
}

// errNotCancelled undoes the action's record when the order left
// pending_payment before the cancel's statement ran.
var errNotCancelled = errors.New("order not cancelled")

func (s *Service) cancel(ctx context.Context, companyID int64, isTest bool, id int64,
	action *store.CabinetAction) (*Order, bool, error) {
	o, err := store.GetOrder(ctx, s.db, companyID, isTest, id)
	if err != nil {
		return nil, false, err
	}
	changed := false
	if o.Status == states.OrderPendingPayment {
		if action == nil {
			_, changed, err = store.CancelOrder(ctx, s.db, id, states.CancelPartner)
		} else {
			err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				if err := store.ClaimCabinetAction(ctx, tx, action); err != nil {
					return err
				}
				if _, changed, err = store.CancelOrder(ctx, tx, id, states.CancelPartner); err == nil && !changed {
					return errNotCancelled
				}
				return err
			})
			if errors.Is(err, errNotCancelled) {
				err = nil
			}
		}
		if err != nil {
			return nil, false, err
		}
		if changed {
			s.holds.SeatsChanged(o.EventID)
			if err := s.temporal.SignalWorkflow(ctx, contract.OrderWorkflowID(id), "", contract.OrderCancelledSignal, nil); err != nil {
				s.log.WarnContext(ctx, "signal cancelled order", "order_id", id, "err", err)
			}
		}
		if o, err = store.GetOrder(ctx, s.db, companyID, isTest, id); err != nil {
			return nil, false, err
		}
	}
	switch {
	case o.Status == states.OrderCancelled:
		return s.View(o), changed, nil
	case o.Status.TicketsValid(), o.PaymentAcceptedAt != nil:
		// A payment accepted by a confirm pays the order: refund it then.
		return nil, false, fmt.Errorf("order %d: %w", id, errs.OrderPaid)
	default:
		return nil, false, &errs.StateError{Entity: "order", ID: strconv.FormatInt(id, 10), Status: string(o.Status)}
	}
}

package organizer

// What the organizer, in the cabinet, does to an order:
// refund tickets, send the tickets e-mail again, cancel an unpaid order.
// Each goes through the service path the API's own request takes (the same
// statements, workflows and waits) and is recorded with who did it in
// cabinet_actions, claimed by the confirm form's one-time token: a double
// click, a reload or a racing second request finds the token claimed and
// does nothing (ErrRepeated).

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/orders"
	"github.com/ticketsales/ticketsales/internal/refunds"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// The actions, as cabinet_actions records them.
const (
	ActionRefund = "refund"
	ActionResend = "resend"
	ActionCancel = "cancel"
)

// ErrRepeated: the form's token was claimed already (its action was done
// then); nothing was done this time.
var ErrRepeated = errors.New("this form was sent already")

// ErrNotPossible: the order's state does not allow the action; nothing was
// done. Why says what the page tells.
type ErrNotPossible struct{ Why string }

func (e *ErrNotPossible) Error() string { return e.Why }

// Orders acts on a company's orders as its organizer, in the cabinet.
type Orders struct {
	DB       *bun.DB
	Orders   *orders.Service
	Refunds  *refunds.Service
	Temporal client.Client
}

// Actor is who acts: a cabinet user of a company.
type Actor struct {
	CompanyID, UserID int64
}

// ActionOrder is an order as the actions' confirm pages show it.
type ActionOrder struct {
	*store.Order
	Event    string
	TimeZone string // the event's: its door's scans are in it
	Refunded int64  // Σ of its refunds
	// Tickets are its active tickets (what a refund may void).
	Tickets []store.Ticket
}

// Action is one thing done to an order, with who did it.
type Action = store.CabinetAction

// GetOrder returns one of the company's orders (either environment):
// another company's is errs.NotFound, as an unknown one.
func (s *Orders) GetOrder(ctx context.Context, companyID, orderID int64) (*ActionOrder, error) {
	o, err := store.GetOrderByID(ctx, s.DB, orderID)
	if err == nil && o.CompanyID != companyID {
		err = fmt.Errorf("order %d: %w", orderID, errs.NotFound)
	}
	if err != nil {
		return nil, err
	}
	ev, err := store.GetEventPlace(ctx, s.DB, o.EventID)
	if err != nil {
		return nil, err
	}
	out := &ActionOrder{Order: o, Event: ev.Title, TimeZone: ev.Timezone}
	if out.Refunded, err = store.RefundedAmount(ctx, s.DB, o.ID); err != nil {
		return nil, err
	}
	rows, err := store.ListOrderTickets(ctx, s.DB, o.ID)
	if err != nil {
		return nil, err
	}
	for _, t := range rows {
		if t.Status == states.TicketActive {
			out.Tickets = append(out.Tickets, t)
		}
	}
	return out, nil
}

// RefundAmount is the money a refund of the order's active tickets
// ticketIDs returns, by the refund's own rule (store.RefundAmount): their
// prices or, when they are all its active tickets, the rest of the order's
// amount, its fee included (withFee). feeBack is what of amount is beyond
// their prices. No ticket of the order chosen: nothing.
func (o *ActionOrder) RefundAmount(ticketIDs []int64) (amount int64, withFee bool, feeBack int64) {
	var chosen []store.RefundCandidate
	for _, t := range o.Tickets {
		if slices.Contains(ticketIDs, t.ID) {
			chosen = append(chosen, store.RefundCandidate{ID: t.ID, Price: t.Price})
		}
	}
	if len(chosen) == 0 {
		return 0, false, 0
	}
	amount, withFee = store.RefundAmount(chosen, len(o.Tickets), o.Amount, o.Refunded)
	if withFee {
		feeBack = amount
		for _, t := range chosen {
			feeBack -= t.Price
		}
	}
	return amount, withFee, feeBack
}

// Refundable, Resendable and Cancellable say why the order's state does
// not allow the action ("": it does).
func Refundable(o *store.Order) string {
	if !o.Status.TicketsValid() {
		return fmt.Sprintf("Order %d is %s: only a paid order's tickets can be refunded.", o.ID, Words(o.Status))
	}
	return ""
}

// Resendable: see Refundable.
func Resendable(o *store.Order) string {
	switch {
	case o.IsTest:
		return fmt.Sprintf("Order %d is a sandbox (test) order: its tickets are never e-mailed.", o.ID)
	case !o.Status.TicketsValid():
		return fmt.Sprintf("Order %d is %s: only a paid order's tickets are e-mailed.", o.ID, Words(o.Status))
	}
	return ""
}

// Cancellable: see Refundable.
func Cancellable(o *store.Order) string {
	if o.Status == states.OrderPendingPayment && o.PaymentAcceptedAt == nil {
		return ""
	}
	why := fmt.Sprintf("Order %d is %s: only an unpaid order can be cancelled.", o.ID, Words(o.Status))
	if o.Status.TicketsValid() || o.PaymentAcceptedAt != nil {
		why += " Refund its tickets instead."
	}
	return why
}

// Words is an order status as the pages say it.
func Words(s states.OrderStatus) string {
	b := []byte(s)
	for i, c := range b {
		if c == '_' {
			b[i] = ' '
		}
	}
	return string(b)
}

// claim records the action under its token, in db (the action's own
// transaction where it is a change in Postgres): ErrRepeated when the token
// was claimed already.
func claim(ctx context.Context, db bun.IDB, a *store.CabinetAction) error {
	return repeated(store.ClaimCabinetAction(ctx, db, a))
}

// repeated is err, or ErrRepeated when it says the form's token was claimed
// already.
func repeated(err error) error {
	if errors.Is(err, store.ErrActionClaimed) {
		return ErrRepeated
	}
	return err
}

// Claimed returns the company's action claimed with token (errs.NotFound:
// none).
func (s *Orders) Claimed(ctx context.Context, companyID int64, token string) (*Action, error) {
	return store.GetCabinetAction(ctx, s.DB, companyID, token)
}

// Actions lists what the cabinet did to one of the company's orders,
// oldest first, with who did it (for the order's timeline).
func (s *Orders) Actions(ctx context.Context, companyID, orderID int64) ([]Action, error) {
	return store.ListCabinetActions(ctx, s.DB, companyID, orderID)
}

// RefundRequest is a refund the organizer confirmed.
type RefundRequest struct {
	OrderID   int64
	TicketIDs []int64 // the chosen tickets
	Reason    string
	// AllowCheckedIn is the form's explicit override: tickets admitted at
	// the door are refunded too (without it such a ticket refuses the whole
	// refund: *errs.CheckedInError).
	AllowCheckedIn bool
	Token          string
}

// Refund refunds the chosen tickets the one way refunds are made
// (refunds.Service.Refund: its checks, the same transaction, seats back,
// the workflow that returns gateway money, the same wait), the action
// recorded and its token claimed first in the refund's own transaction.
// The refund's id derives from the token (refunds.OrganizerRefundID), so
// even a racing repeat finds the same refund. A request out of bounds is
// *refunds.RequestError, nothing done.
func (s *Orders) Refund(ctx context.Context, a Actor, in RefundRequest) (*store.Refund, error) {
	r, err := s.Refunds.Refund(ctx, refunds.Request{By: refunds.AsOrganizer(a.CompanyID, in.AllowCheckedIn), OrderID: in.OrderID,
		TicketIDs: in.TicketIDs, Reason: in.Reason, Source: refunds.FromCabinetToken(in.Token),
		Action: &store.CabinetAction{CompanyID: a.CompanyID, UserID: a.UserID, OrderID: in.OrderID, Action: ActionRefund, Token: in.Token,
			Detail: map[string]any{"ticket_ids": in.TicketIDs, "reason": in.Reason, "checked_in_override": in.AllowCheckedIn}}})
	return r, repeated(err)
}

// ResendID names one resend: derived from the form's token, so a repeat of
// the form starts the same workflow (whose e-mail carries the same
// Message-ID).
func ResendID(token string) string {
	sum := sha256.Sum256([]byte("resend|" + token))
	return hex.EncodeToString(sum[:10])
}

// Resend sends a paid production order's tickets e-mail again: the worker
// sends it, in a ResendTickets workflow whose id derives from the order
// and the token, so however often the form is sent the e-mail goes once.
// The action is recorded in a transaction that commits only once the
// workflow started: a start that fails (Temporal unreachable) leaves no
// record of a resend that did not happen, and the same form sent again
// starts it. first reports whether this call recorded the action.
func (s *Orders) Resend(ctx context.Context, a Actor, o *store.Order, token string) (first bool, err error) {
	id := ResendID(token)
	if _, err := s.Claimed(ctx, a.CompanyID, token); err == nil {
		// This form's action was done already (this resend, or another
		// action whose form was sent here): nothing more.
		return false, ErrRepeated
	} else if !errors.Is(err, errs.NotFound) {
		return false, err
	}
	if why := Resendable(o); why != "" {
		return false, &ErrNotPossible{Why: why}
	}
	// The claim and the start commit together: the claim's row, not yet
	// committed, holds a twin of this form (even one sent for another
	// order) at its insert until the start is done, and a start that
	// fails rolls the claim back.
	err = s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := claim(ctx, tx, &store.CabinetAction{CompanyID: a.CompanyID, UserID: a.UserID, OrderID: o.ID, Action: ActionResend,
			Detail: map[string]any{"resend_id": id, "workflow_id": contract.ResendTicketsWorkflowID(o.ID, id)}, Token: token}); err != nil {
			return err
		}
		_, err := s.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: contract.ResendTicketsWorkflowID(o.ID, id), TaskQueue: s.Orders.TaskQueue,
			WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			TypedSearchAttributes: temporal.NewSearchAttributes(contract.CompanyIDAttr.ValueSet(o.CompanyID),
				contract.EventIDAttr.ValueSet(o.EventID), contract.IsTestAttr.ValueSet(o.IsTest)),
		}, contract.ResendTicketsWorkflow, contract.ResendTicketsInput{OrderID: o.ID, CompanyID: o.CompanyID, ResendID: id})
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if err != nil && !errors.As(err, &started) {
			return fmt.Errorf("start the resend of order %d: %w", o.ID, err)
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	return true, nil
}

// Cancel cancels an unpaid order as the API's cancel does
// (orders.Service), the action recorded and its token claimed in the
// cancel's transaction. A paid order is errs.OrderPaid, unchanged.
// cancelled is false when the order was cancelled before (ErrRepeated if
// by this form).
func (s *Orders) Cancel(ctx context.Context, a Actor, o *store.Order, token string) (cancelled bool, err error) {
	_, cancelled, err = s.Orders.CancelAsOrganizer(ctx, a.CompanyID, o.IsTest, o.ID,
		&store.CabinetAction{CompanyID: a.CompanyID, UserID: a.UserID, OrderID: o.ID, Action: ActionCancel, Token: token})
	if err = repeated(err); err == nil && !cancelled {
		if _, err := s.Claimed(ctx, a.CompanyID, token); err == nil {
			return false, ErrRepeated
		}
	}
	return cancelled, err
}

// withActions adds what the cabinet did to the order (cabinet_actions,
// with who did it) to its timeline, in time order.
func withActions(v *Order, acts []store.CabinetAction, loc *time.Location) {
	// The tickets e-mail went to the address of its time: one corrected
	// since (an 'email' action after it, oldest first) names the old one.
	fixed := map[int]bool{}
	for _, a := range acts {
		from, _ := a.Detail["from"].(string)
		if a.Action != ActionEmail || from == "" {
			continue
		}
		for i, e := range v.Timeline {
			if e.Kind == "emailed" && !fixed[i] && e.At.t.Before(a.CreatedAt) {
				v.Timeline[i].Detail, fixed[i] = "to "+from, true
			}
		}
	}
	for _, a := range acts {
		e := Entry{At: At(a.CreatedAt, loc), Kind: "action"}
		switch a.Action {
		case ActionRefund:
			e.What = "Refund by " + a.UserEmail
			if id, ok := a.Detail["refund_id"].(string); ok {
				e.Detail = "refund " + id
			}
			if o, ok := a.Detail["checked_in_override"].(bool); ok && o {
				e.Detail += "; tickets admitted at the door included"
			}
			if r, ok := a.Detail["reason"].(string); ok && r != "" {
				e.Detail += "; reason: " + r
			}
		case ActionResend:
			e.What = "Tickets e-mail sent again by " + a.UserEmail
		case ActionCancel:
			e.What = "Cancelled by " + a.UserEmail
		case ActionEmail:
			e.What = "Buyer's e-mail corrected by " + a.UserEmail
			from, _ := a.Detail["from"].(string)
			to, _ := a.Detail["to"].(string)
			e.Detail = "from " + from + " to " + to
		default:
			e.What = a.Action + " by " + a.UserEmail
		}
		v.Timeline = append(v.Timeline, e)
	}
	slices.SortStableFunc(v.Timeline, func(a, b Entry) int { return cmp.Compare(a.At.t.UnixNano(), b.At.t.UnixNano()) })
}

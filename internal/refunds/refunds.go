// Package refunds gives money back for tickets: a refund voids them at
// once, in one transaction with its record, and its workflow returns the
// money through the gateway that took it (for external orders the partner
// returns it). A refund is found again by its id, derived from the
// request, whatever happened to the first answer.
package refunds

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/orders"
	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// Refund is a refund as partners see it.
type Refund struct {
	ID              string               `json:"id"`
	OrderID         int64                `json:"order_id"`
	Status          states.RefundStatus  `json:"status" doc:"completed once the money is returned (at once for external orders); failed: the gateway did not return it within a day, operators are alerted and it is retried."`
	Amount          pricing.Money        `json:"amount" doc:"Money returned by this refund."`
	MoneyReturnedBy states.PaymentMethod `json:"money_returned_by" doc:"gateway: the service returned the money; external: the partner returns it."`
	Reason          string               `json:"reason"`
	Tickets         []orders.Ticket      `json:"tickets" doc:"The tickets this refund voided."`
	OrderStatus     states.OrderStatus   `json:"order_status" enum:"partially_refunded,refunded" doc:"The order's status (after this refund, or now when read again)."`
	CreatedAt       time.Time            `json:"created_at"`
}

// Service refunds the caller's paid orders.
type Service struct {
	db       *bun.DB
	temporal client.Client
	log      *slog.Logger
	holds    *holds.Service
	orders   *orders.Service
	// TaskQueue of the refund workflows.
	TaskQueue string
	// Settings shape the refunds (tests shorten them).
	Settings Settings
}

// Settings of refunds.
type Settings struct {
	// RetryBudget is how long a refund retries the gateway before it is
	// marked failed (0: the workflow's default, a day); Wait is how long a
	// refund request waits for the money before answering pending (0: 15 s).
	RetryBudget time.Duration
	Wait        time.Duration
}

// Deps are what refunds work with: the orders whose tickets they void
// (and the holds whose seats come back).
type Deps struct {
	DB       *bun.DB
	Temporal client.Client
	Log      *slog.Logger
	Holds    *holds.Service
	Orders   *orders.Service
}

// New builds the service.
func New(d Deps, taskQueue string, st Settings) *Service {
	return &Service{db: d.DB, temporal: d.Temporal, log: d.Log, holds: d.Holds, orders: d.Orders,
		TaskQueue: cmp.Or(taskQueue, contract.TaskQueue), Settings: st}
}

// defaultRefundWait bounds how long a refund request waits for the money.
const defaultRefundWait = 15 * time.Second

// ID is a refund's id: the same for a repeat of the same request
// (API key, order, Idempotency-Key, tickets), so a retry after a lost
// answer finds the refund its first attempt made instead of making another.
func ID(keyID, orderID int64, idempotencyKey string, ticketIDs []int64) string {
	ids := slices.Sorted(slices.Values(ticketIDs))
	sum := sha256.Sum256(fmt.Appendf(nil, "refund|%d|%d|%s|%v", keyID, orderID, idempotencyKey, ids))
	return "rf_" + hex.EncodeToString(sum[:10])
}

// Refund voids tickets of a paid order (all active ones when ticketIDs is
// empty) at once, in one transaction with the refund's record, and starts
// the workflow that returns gateway money. It waits a while for the money:
// done reports whether the refund completed; a slower one is returned
// pending (the partner reads it again later), never as an error, since the
// tickets are voided already.
func (s *Service) Refund(ctx context.Context, p *apikey.Principal, orderID int64, ticketIDs []int64, reason, idempotencyKey string) (view *Refund, done bool, err error) {
	if err := checkRefund(ticketIDs, reason); err != nil {
		return nil, false, err
	}
	o, err := store.GetOrder(ctx, s.db, p.CompanyID, p.IsTest(), orderID)
	if err != nil {
		return nil, false, err
	}
	r := &store.Refund{ID: ID(p.KeyID, orderID, idempotencyKey, ticketIDs), OrderID: o.ID, TicketIDs: ticketIDs, Reason: reason}
	if err := s.refund(ctx, o, r, nil); err != nil {
		return nil, false, err
	}
	view, err = s.Get(ctx, p, r.ID)
	if err != nil {
		return nil, false, err
	}
	return view, view.Status == states.RefundCompleted, nil
}

// refund records r (voiding its tickets, with record's writes in the same
// transaction when record is given), tells the holds its seats are back,
// and waits a while for a gateway refund's money: the one path of the
// partners' refunds and the organizer's.
func (s *Service) refund(ctx context.Context, o *store.Order, r *store.Refund, record func(ctx context.Context, tx bun.Tx) error) error {
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if record != nil {
			// The order's lock before the record: the record's foreign key
			// takes a share lock on the order, and two refunds of one
			// order each holding that while waiting for the other's
			// FOR UPDATE deadlock. Locked first, the second waits here.
			if err := store.LockOrder(ctx, tx, r.OrderID); err != nil {
				return err
			}
			if err := record(ctx, tx); err != nil {
				return err
			}
		}
		return store.CreateRefundTx(ctx, tx, r)
	})
	if err != nil {
		return refundError(err)
	}
	s.holds.SeatsChanged(o.EventID)
	if r.Status == states.RefundPending {
		s.awaitRefund(ctx, r.ID)
	}
	return nil
}

// OrganizerRefund is a refund the organizer makes in the back office, of
// any of the company's orders (production or sandbox).
type OrganizerRefund struct {
	CompanyID, OrderID int64
	TicketIDs          []int64 // none: every active ticket
	Reason             string
	// AllowCheckedIn refunds tickets admitted at the door too (without it
	// such a ticket refuses the whole refund: errs.CheckedInError).
	AllowCheckedIn bool
	// Token is the back office action's one-time token: the refund's id
	// derives from it, so a repeat, even a racing one, finds the same
	// refund.
	Token string
	// Record runs first in the refund's transaction (the action's record
	// and its claim of Token); an error from it undoes everything.
	Record func(ctx context.Context, tx bun.Tx, refundID string) error
}

// OrganizerRefundID is the id of the organizer's refund made with token.
func OrganizerRefundID(orderID int64, token string, ticketIDs []int64) string {
	return ID(0, orderID, "cabinet:"+token, ticketIDs)
}

// RefundAsOrganizer refunds as Refund does (the same transaction, seats
// back, the same workflow returning gateway money, the same wait), for the
// organizer: of an order of the company in either environment, tickets
// admitted at the door with AllowCheckedIn. It returns the refund as it is
// after the wait (pending: the workflow, or the reaper, finishes it).
func (s *Service) RefundAsOrganizer(ctx context.Context, in OrganizerRefund) (*store.Refund, error) {
	if err := checkRefund(in.TicketIDs, in.Reason); err != nil {
		return nil, err
	}
	o, err := store.GetOrderByID(ctx, s.db, in.OrderID)
	if err != nil {
		return nil, err
	}
	if o.CompanyID != in.CompanyID {
		return nil, fmt.Errorf("order %d: %w", in.OrderID, errs.NotFound)
	}
	r := &store.Refund{ID: OrganizerRefundID(o.ID, in.Token, in.TicketIDs), OrderID: o.ID, TicketIDs: in.TicketIDs,
		Reason: in.Reason, AllowCheckedIn: in.AllowCheckedIn}
	var record func(ctx context.Context, tx bun.Tx) error
	if in.Record != nil {
		record = func(ctx context.Context, tx bun.Tx) error { return in.Record(ctx, tx, r.ID) }
	}
	if err := s.refund(ctx, o, r, record); err != nil {
		return nil, err
	}
	return store.GetRefund(ctx, s.db, r.ID)
}

// The bounds of a refund's request, as the API's schema states them.
const (
	MaxTickets      = holds.MaxSeats // an order holds at most as many
	MaxReasonLength = 500
)

// checkRefund checks a refund's request before anything is read: at most
// MaxTickets ticket ids, each a valid id listed once, a reason of at most
// MaxReasonLength characters.
func checkRefund(ticketIDs []int64, reason string) error {
	verr := &errs.ValidationError{}
	if len(ticketIDs) > MaxTickets {
		verr.Add("body.ticket_ids", fmt.Sprintf("at most %d tickets a refund", MaxTickets), len(ticketIDs))
		return verr
	}
	seen := map[int64]bool{}
	for i, id := range ticketIDs {
		switch {
		case id < 1:
			verr.Add(fmt.Sprintf("body.ticket_ids[%d]", i), "not a ticket id", id)
		case seen[id]:
			verr.Add(fmt.Sprintf("body.ticket_ids[%d]", i), "ticket listed twice", id)
		}
		seen[id] = true
	}
	verr.Text("body.reason", reason, 0, MaxReasonLength)
	return verr.OrNil()
}

// awaitRefund starts (or finds) the refund's workflow and waits for it up to
// Orders.RefundWait. Failing to start it is not the partner's error: the tickets
// are voided and the reaper starts the workflow of a pending refund.
func (s *Service) awaitRefund(ctx context.Context, id string) {
	run, err := s.startWorkflow(ctx, id, false)
	if err != nil {
		s.log.WarnContext(ctx, "refund recorded, its workflow not started yet", "refund_id", id, "err", err)
		return
	}
	wctx, cancel := context.WithTimeout(ctx, cmp.Or(s.Settings.Wait, defaultRefundWait))
	defer cancel()
	if err := run.Get(wctx, nil); err != nil && wctx.Err() == nil {
		s.log.WarnContext(ctx, "refund workflow", "refund_id", id, "err", err)
	}
}

// startWorkflow starts refund/{id}; a run already going is returned
// (or, with errIfRunning, refused as already started). A refund whose
// earlier run ended without returning the money (failed, or ended by hand)
// gets a new run.
func (s *Service) startWorkflow(ctx context.Context, id string, errIfRunning bool) (client.WorkflowRun, error) {
	r, err := store.GetRefund(ctx, s.db, id)
	if err != nil {
		return nil, err
	}
	o, err := store.GetOrderByID(ctx, s.db, r.OrderID)
	if err != nil {
		return nil, err
	}
	// The input names the voided tickets: the workflow finds the refund
	// recorded and changes nothing, whatever else happened meanwhile.
	run, err := s.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: contract.RefundWorkflowID(r.ID), TaskQueue: s.TaskQueue,
		WorkflowIDReusePolicy:                    enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: errIfRunning,
		TypedSearchAttributes: temporal.NewSearchAttributes(contract.CompanyIDAttr.ValueSet(o.CompanyID),
			contract.EventIDAttr.ValueSet(o.EventID), contract.IsTestAttr.ValueSet(o.IsTest),
			contract.OrderStatusAttr.ValueSet(string(o.Status))),
	}, contract.RefundWorkflow, contract.RefundInput{RefundID: r.ID, OrderID: o.ID, CompanyID: o.CompanyID, EventID: o.EventID,
		IsTest: o.IsTest, TicketIDs: r.TicketIDs, MoneyRetryBudget: s.Settings.RetryBudget})
	if err != nil {
		return nil, fmt.Errorf("start workflow of refund %s: %w", r.ID, err)
	}
	return run, nil
}

// Resume starts a new workflow for each refund whose money is not
// back and whose workflow is gone (see store.RefundsToResume); one still
// running is left to it. It returns how many it started.
func (s *Service) Resume(ctx context.Context, grace, retryAfter time.Duration) (int, error) {
	now := time.Now()
	ids, err := store.RefundsToResume(ctx, s.db, now.Add(-grace), now.Add(-retryAfter), 100)
	if err != nil {
		return 0, err
	}
	n := 0
	var failed []error
	for _, id := range ids {
		_, err := s.startWorkflow(ctx, id, true)
		var running *serviceerror.WorkflowExecutionAlreadyStarted
		switch {
		case errors.As(err, &running):
		case err != nil:
			failed = append(failed, err) // the others still get their turn
		default:
			n++
		}
	}
	return n, errors.Join(failed...)
}

// Get returns a refund of the caller's order.
func (s *Service) Get(ctx context.Context, p *apikey.Principal, id string) (*Refund, error) {
	r, err := store.GetRefund(ctx, s.db, id)
	if err != nil {
		return nil, err
	}
	o, err := store.GetOrder(ctx, s.db, p.CompanyID, p.IsTest(), r.OrderID)
	if err != nil {
		return nil, err
	}
	all, err := s.orders.TicketsOf(ctx, o)
	if err != nil {
		return nil, err
	}
	view := &Refund{ID: r.ID, OrderID: r.OrderID, Status: r.Status, Amount: pricing.Money{Amount: r.Amount, Currency: o.Currency},
		MoneyReturnedBy: r.MoneyReturnedBy, Reason: r.Reason, OrderStatus: o.Status, CreatedAt: r.CreatedAt, Tickets: []orders.Ticket{}}
	for _, t := range all {
		for _, tid := range r.TicketIDs {
			if t.ID == tid {
				view.Tickets = append(view.Tickets, t)
			}
		}
	}
	return view, nil
}

func refundError(err error) error {
	var te *store.RefundTicketsError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && len(te.NotInOrder) > 0:
		verr := &errs.ValidationError{}
		for _, id := range te.NotInOrder {
			verr.Add("body.ticket_ids", "not a ticket of this order", id)
		}
		return verr
	case errors.As(err, &te):
		return &errs.StateError{Entity: "ticket", ID: fmt.Sprint(te.Refunded), Status: "refunded already"}
	}
	return err
}

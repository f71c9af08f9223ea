// Package refunds gives money back for tickets: a refund voids them at
// once, in one transaction with its record, and its workflow returns the
// money through the gateway that took it (for external orders the partner
// returns it). A refund is found again by its id, derived from the
// request, whatever happened to the first answer.
package refunds

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
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
	// The order's reference and metadata travel with its refunds, so an
	// order.refunded event reconciles without reading the order.
	OrderReference *string           `json:"order_reference,omitempty" doc:"The order's reference, as given at its creation; absent when none."`
	OrderMetadata  map[string]string `json:"order_metadata" doc:"The order's metadata, as given at its creation; {} when none."`
	CreatedAt      time.Time         `json:"created_at"`
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
	// LeaveToReaper records refunds without starting their workflows:
	// the worker's reaper starts them, on the workers' own task queue,
	// for a process that cannot tell a worker polls its queue (ticketctl).
	LeaveToReaper bool
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

// Asker is who asks for a refund: a partner (AsPartner), of its key's
// company and environment, or the organizer (AsOrganizer), of any of the
// company's orders, production or sandbox.
type Asker struct {
	partner   *apikey.Principal
	companyID int64
	// allowCheckedIn refunds tickets admitted at the door too: the
	// organizer's override (without it such a ticket refuses the whole
	// refund: errs.CheckedInError).
	allowCheckedIn bool
}

// AsPartner is a partner's API key asking.
func AsPartner(p *apikey.Principal) Asker { return Asker{partner: p, companyID: p.CompanyID} }

// AsOrganizer is the company's organizer asking (the cabinet, ticketctl);
// allowCheckedIn includes tickets admitted at the door.
func AsOrganizer(companyID int64, allowCheckedIn bool) Asker {
	return Asker{companyID: companyID, allowCheckedIn: allowCheckedIn}
}

// Source is what a refund's id derives from, so that a repeat of the same
// request finds the refund its first attempt made.
type Source struct {
	kind  sourceKind
	value string
}

type sourceKind int

const (
	fromIdempotencyKey sourceKind = iota + 1
	fromCabinetToken
	fromOneOff
)

// FromIdempotencyKey: a partner's request, by its Idempotency-Key (with
// its API key).
func FromIdempotencyKey(key string) Source { return Source{kind: fromIdempotencyKey, value: key} }

// FromCabinetToken: the cabinet's confirm form, by its one-time token. Such
// a refund names its tickets: the form lists what is refunded.
func FromCabinetToken(token string) Source { return Source{kind: fromCabinetToken, value: token} }

// OneOff: a refund of its own each time (ticketctl); a run again after
// success finds the tickets refunded and changes nothing.
func OneOff() Source { return Source{kind: fromOneOff, value: rand.Text()} }

// Request is a refund asked for: by whom, of which order and tickets, why,
// and what its id derives from.
type Request struct {
	By        Asker
	OrderID   int64
	TicketIDs []int64 // none: every active ticket
	Reason    string
	Source    Source
	// Action is the cabinet's record of the refund (who did it),
	// claimed with the form's token in the refund's own transaction:
	// store.ErrActionClaimed when the token was claimed already, nothing
	// done. Its Detail gets the refund's id.
	Action *store.CabinetAction
}

// ID is the refund's id: the same for the same request (whatever the order
// of its tickets), another for any other.
func (in Request) ID() string {
	switch in.Source.kind {
	case fromIdempotencyKey:
		var keyID int64
		if in.By.partner != nil {
			keyID = in.By.partner.KeyID
		}
		return ID(keyID, in.OrderID, in.Source.value, in.TicketIDs)
	case fromCabinetToken:
		return OrganizerRefundID(in.OrderID, in.Source.value, in.TicketIDs)
	default:
		return ID(0, in.OrderID, "ticketctl:"+in.Source.value, in.TicketIDs)
	}
}

// OrganizerRefundID is the id of the organizer's refund made with the
// cabinet form's token.
func OrganizerRefundID(orderID int64, token string, ticketIDs []int64) string {
	return ID(0, orderID, "cabinet:"+token, ticketIDs)
}

// Refund is the one way a refund is made, whoever asks (the partner API,
// the cabinet, ticketctl): it checks the request, voids the tickets at
// once in one transaction with the refund's record (and the action's, when
// given), tells the holds the seats are back, starts the workflow that
// returns gateway money and waits a while for it. It returns the refund as
// it is after the wait: a slower one pending (the workflow, or the reaper
// when the workflow could not be started, finishes it), never an error,
// since the tickets are voided already. A repeat of the same request
// returns the refund its first attempt made.
func (s *Service) Refund(ctx context.Context, in Request) (*store.Refund, error) {
	if err := checkRefund(in); err != nil {
		return nil, err
	}
	o, err := s.orderOf(ctx, in.By, in.OrderID)
	if err != nil {
		return nil, err
	}
	r := &store.Refund{ID: in.ID(), OrderID: o.ID, TicketIDs: in.TicketIDs, Reason: in.Reason, AllowCheckedIn: in.By.allowCheckedIn}
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if in.Action != nil {
			// The order's lock before the action's record: the record's
			// foreign key takes a share lock on the order, and two refunds
			// of one order each holding that while waiting for the
			// other's FOR UPDATE deadlock. Locked first, the second waits
			// here.
			if err := store.LockOrder(ctx, tx, r.OrderID); err != nil {
				return err
			}
			if in.Action.Detail == nil {
				in.Action.Detail = map[string]any{}
			}
			in.Action.Detail["refund_id"] = r.ID
			if err := store.ClaimCabinetAction(ctx, tx, in.Action); err != nil {
				return err
			}
		}
		return store.CreateRefundTx(ctx, tx, r)
	})
	if err != nil {
		return nil, refundError(err)
	}
	s.holds.SeatsChanged(o.EventID)
	if r.Status != states.RefundPending {
		return r, nil // external: the partner returns the money
	}
	s.awaitRefund(ctx, r.ID)
	return store.GetRefund(ctx, s.db, r.ID)
}

// orderOf is the order a refund is asked of, as the asker may see it:
// another company's, or a partner's of the other environment, is
// errs.NotFound, as an unknown one.
func (s *Service) orderOf(ctx context.Context, by Asker, orderID int64) (*store.Order, error) {
	if by.partner != nil {
		return store.GetOrder(ctx, s.db, by.partner.CompanyID, by.partner.IsTest(), orderID)
	}
	o, err := store.GetOrderByID(ctx, s.db, orderID)
	if err != nil {
		return nil, err
	}
	if o.CompanyID != by.companyID {
		return nil, fmt.Errorf("order %d: %w", orderID, errs.NotFound)
	}
	return o, nil
}

// The bounds of a refund's request, as the API's schema states them.
const (
	MaxTickets      = holds.MaxSeats // an order holds at most as many
	MaxReasonLength = 500
)

// RequestError is a refund's request out of its bounds (checkRefund),
// refused before anything is read or written. The API answers it as the 422
// validation_error of its fields (it unwraps to *errs.ValidationError); its
// text says it for a person (the cabinet's page, ticketctl).
type RequestError struct{ *errs.ValidationError }

func (e *RequestError) Unwrap() error { return e.ValidationError }

// Error is the request's problems as sentences.
func (e *RequestError) Error() string {
	var out []string
	for _, f := range e.Fields {
		switch {
		case f.Location == "body.reason":
			out = append(out, "The reason "+f.Message+".")
		case strings.HasPrefix(f.Location, "body.ticket_ids["):
			out = append(out, fmt.Sprintf("%s (%v).", upperFirst(f.Message), f.Value))
		default:
			out = append(out, upperFirst(f.Message)+".")
		}
	}
	return strings.Join(out, " ")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// checkRefund checks a refund's request before anything is read: who asks
// and what the id derives from fit together; at most MaxTickets ticket ids
// (at least one from a cabinet form), each a valid id listed once; a reason
// of at most MaxReasonLength characters.
func checkRefund(in Request) error {
	switch {
	case in.By.partner == nil && in.By.companyID == 0:
		return errors.New("refund: nobody asks (refunds.AsPartner or AsOrganizer)")
	case in.Source.kind == 0:
		return errors.New("refund: no source of its id")
	case (in.By.partner != nil) != (in.Source.kind == fromIdempotencyKey):
		return errors.New("refund: a partner's refund, and only a partner's, derives its id from the Idempotency-Key")
	case in.Action != nil && in.Source.kind != fromCabinetToken:
		return errors.New("refund: an action is recorded only with the cabinet form's token")
	}
	verr := &errs.ValidationError{}
	switch {
	case len(in.TicketIDs) > MaxTickets:
		verr.Add("body.ticket_ids", fmt.Sprintf("at most %d tickets a refund", MaxTickets), len(in.TicketIDs))
		return &RequestError{verr}
	case len(in.TicketIDs) == 0 && in.Source.kind == fromCabinetToken:
		// Never "all" by omission: the form lists what is refunded.
		verr.Add("body.ticket_ids", "choose at least one ticket to refund", nil)
	}
	seen := map[int64]bool{}
	for i, id := range in.TicketIDs {
		switch {
		case id < 1:
			verr.Add(fmt.Sprintf("body.ticket_ids[%d]", i), "not a ticket id", id)
		case seen[id]:
			verr.Add(fmt.Sprintf("body.ticket_ids[%d]", i), "ticket listed twice", id)
		}
		seen[id] = true
	}
	verr.Text("body.reason", in.Reason, 0, MaxReasonLength)
	if len(verr.Fields) > 0 {
		return &RequestError{verr}
	}
	return nil
}

// awaitRefund starts (or finds) the refund's workflow and waits for it, the
// start included, up to Settings.Wait. Failing to start it is not the
// asker's error: the tickets are voided and the reaper starts the workflow
// of a pending refund.
func (s *Service) awaitRefund(ctx context.Context, id string) {
	if s.Settings.LeaveToReaper {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, cmp.Or(s.Settings.Wait, defaultRefundWait))
	defer cancel()
	run, err := s.startWorkflow(wctx, id, false)
	if err != nil {
		s.log.WarnContext(ctx, "refund recorded, its workflow not started yet: the reaper starts it", "refund_id", id, "err", err)
		return
	}
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
	return s.View(ctx, p, r)
}

// View is the refund r as the caller sees it (errs.NotFound: not of the
// caller's orders).
func (s *Service) View(ctx context.Context, p *apikey.Principal, r *store.Refund) (*Refund, error) {
	o, err := store.GetOrder(ctx, s.db, p.CompanyID, p.IsTest(), r.OrderID)
	if err != nil {
		return nil, err
	}
	all, err := s.orders.TicketsOf(ctx, o)
	if err != nil {
		return nil, err
	}
	return view(o, all, r), nil
}

// OfOrder lists the refunds of one of the caller's orders, oldest first
// (errs.NotFound: not the caller's order).
func (s *Service) OfOrder(ctx context.Context, p *apikey.Principal, orderID int64) ([]*Refund, error) {
	o, err := store.GetOrder(ctx, s.db, p.CompanyID, p.IsTest(), orderID)
	if err != nil {
		return nil, err
	}
	rs, err := store.OrderRefunds(ctx, s.db, o.ID)
	if err != nil {
		return nil, err
	}
	all, err := s.orders.TicketsOf(ctx, o)
	if err != nil {
		return nil, err
	}
	out := make([]*Refund, len(rs))
	for i := range rs {
		out[i] = view(o, all, &rs[i])
	}
	return out, nil
}

// view is refund r of order o, whose tickets are all.
func view(o *store.Order, all []orders.Ticket, r *store.Refund) *Refund {
	v := &Refund{ID: r.ID, OrderID: r.OrderID, Status: r.Status, Amount: pricing.Money{Amount: r.Amount, Currency: o.Currency},
		MoneyReturnedBy: r.MoneyReturnedBy, Reason: r.Reason, OrderStatus: o.Status, CreatedAt: r.CreatedAt, Tickets: []orders.Ticket{},
		OrderReference: o.Reference, OrderMetadata: o.Metadata}
	if v.OrderMetadata == nil {
		v.OrderMetadata = map[string]string{}
	}
	for _, t := range all {
		if slices.Contains(r.TicketIDs, t.ID) {
			v.Tickets = append(v.Tickets, t)
		}
	}
	return v
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

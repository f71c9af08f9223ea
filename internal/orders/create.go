package orders

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/payment"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// gatewayFor names the gateway that takes the caller's gateway payments:
// never the test gateway for real money, unless in development.
func (s *Service) gatewayFor(p *apikey.Principal) (string, error) {
	switch {
	case p.IsTest() && s.Settings.Gateways[payment.Test] != nil:
		return payment.Test, nil
	case p.IsTest():
	case s.Settings.Gateways[payment.Hosted] != nil:
		return payment.Hosted, nil
	case s.Settings.TestGatewayForProduction && s.Settings.Gateways[payment.Test] != nil:
		return payment.Test, nil
	}
	return "", fmt.Errorf("%s key: %w", p.Environment, errs.GatewayUnavailable)
}

// CreateOrder makes an order from a reservation (events with a scheme) or
// from items (general admission, with a schedule slot for scheduled events),
// then starts its saga.
func (s *Service) CreateOrder(ctx context.Context, p *apikey.Principal, in CreateOrderInput) (*Order, error) {
	if err := sandboxOnly(p, in.Simulate); err != nil {
		return nil, err
	}
	in.Customer = in.Customer.Trimmed()
	verr := &errs.ValidationError{}
	switch {
	case in.ReservationID == "" && len(in.Items) == 0:
		verr.Add("body", "give reservation_id (events with a scheme) or items (events without)", nil)
	case in.ReservationID != "" && len(in.Items) > 0:
		verr.Add("body.items", "give either reservation_id or items, not both", nil)
	}
	if in.Payment != states.PayByGateway && in.Payment != states.PayExternally {
		verr.Add("body.payment", "must be gateway or external", in.Payment)
	}
	checkItems(in.Items, verr)
	verr.Text("body.reservation_id", in.ReservationID, 0, MaxReservationIDLength)
	in.Customer.Check("body.customer", verr)
	CheckReference("body.reference", in.Reference, verr)
	CheckMetadata("body.metadata", in.Metadata, verr)
	if err := verr.OrNil(); err != nil {
		return nil, err
	}
	var gw *string
	if in.Payment == states.PayByGateway {
		name, err := s.gatewayFor(p)
		if err != nil {
			return nil, err
		}
		gw = &name
	}
	sc, err := s.holds.OnSale(ctx, p.CompanyID, in.EventID, in.ReservationID != "")
	if err != nil {
		return nil, err
	}
	if in.ReservationID == "" {
		// Tickets by items are taken now, as a hold takes seats: only in
		// the caller's window. An order of a reservation completes a hold
		// made in it.
		if err := sc.Open(p, s.holds.Now()); err != nil {
			return nil, err
		}
	}
	_, tokenHash, tokenSealed, err := s.Settings.Links.Keys.NewToken()
	if err != nil {
		return nil, err
	}
	o := &store.Order{
		CompanyID: p.CompanyID, APIKeyID: p.KeyID, IsTest: p.IsTest(), EventID: sc.Event.ID,
		Status: states.OrderPendingPayment, Payment: in.Payment, Gateway: gw, Currency: sc.Event.Currency,
		CustomerEmail: in.Customer.Email, CustomerFirstName: in.Customer.FirstName,
		CustomerLastName: in.Customer.LastName, CustomerPhone: in.Customer.Phone,
		PaymentWindow:   s.Settings.PaymentWindow, // its deadline is set by Postgres's clock
		AccessTokenHash: tokenHash, AccessTokenSealed: tokenSealed, Channel: cmp.Or(in.Channel, states.ChannelAPI),
		Metadata: map[string]string{},
	}
	if in.Reference != "" {
		o.Reference = &in.Reference
	}
	if len(in.Metadata) > 0 {
		o.Metadata = in.Metadata
	}
	if in.Simulate == SimulatePaymentTimeout {
		o.PaymentWindow = SimulatedPaymentWindow
	}
	if in.ReservationID != "" {
		// Priced as the reservation quoted, whatever the event's fee is now.
		o.ReservationID = &in.ReservationID
		err = store.CreateOrderFromReservation(ctx, s.db, o)
	} else {
		var want []store.ItemQuantity
		want, err = s.itemsOf(ctx, sc, in)
		if err == nil {
			if in.ScheduleSlotID != 0 {
				o.ScheduleSlotID = &in.ScheduleSlotID
			}
			err = store.CreateOrderFromItems(ctx, s.db, o, want, func(prices []int64) (int64, int64, int64) {
				return sc.Totals(prices)
			}, p.ChannelID)
			if errors.Is(err, store.ErrNotOnSale) {
				// The window closed since the check above, by Postgres's clock.
				fresh, ferr := s.holds.OnSale(ctx, p.CompanyID, in.EventID, false)
				if ferr == nil {
					ferr = fresh.Open(p, s.holds.Now())
				}
				if ferr != nil {
					return nil, ferr
				}
				return nil, fmt.Errorf("order on event %d: %w: %w", in.EventID, errs.Unavailable, err)
			}
		}
	}
	var se *errs.StateError
	var other *store.OtherEventError
	switch {
	case errors.As(err, &other):
		return nil, errs.Invalid("body.reservation_id",
			fmt.Sprintf("the reservation belongs to another event (event_id %d), not event_id %d", other.EventID, in.EventID), in.ReservationID)
	case errors.As(err, &se) && se.Status == string(states.ReservationOrdered) && in.ReservationID != "":
		// A repeat of a create whose first attempt committed but never
		// answered (its process died): the order is the answer.
		return s.resumeOrder(ctx, p, in)
	case err != nil:
		return nil, err // a sold out or state error among them
	}
	s.holds.SeatsChanged(o.EventID)
	if err := s.startSaga(ctx, o, sc.Event.Title); err != nil {
		return nil, s.abandonOrder(ctx, o, err)
	}
	// The hold's deadline pass finds it ordered and leaves it: no call to
	// Temporal per hold on the order path either.
	return s.View(o), nil
}

// startSaga creates the gateway payment (for gateway orders) and starts the
// order workflow; both are skipped when already done, so a resumed create
// completes what a crashed one left.
func (s *Service) startSaga(ctx context.Context, o *store.Order, title string) error {
	if o.Payment == states.PayByGateway && o.PaymentID == nil {
		gw, err := s.Settings.Gateways.Get(*o.Gateway)
		if err != nil {
			return fmt.Errorf("create payment: %w: %w", errs.Unavailable, err)
		}
		pay, err := gw.CreatePayment(ctx, payment.Request{OrderID: o.ID, Amount: o.Amount,
			Currency: o.Currency, Description: fmt.Sprintf("%s, order %d", title, o.ID)})
		if err != nil {
			return fmt.Errorf("create payment: %w: %w", errs.Unavailable, err)
		}
		// A concurrent resume may have made one first: the stored one is
		// the order's payment, and this one is never shown.
		if err := store.SetOrderPayment(ctx, s.db, o, pay.ID, pay.URL); err != nil {
			return err
		}
	}
	err := s.startOrderWorkflow(ctx, o)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil
	}
	return err
}

// resumeOrder answers a repeated create of an order from a reservation with
// the order the first attempt made, finishing its start if the first
// attempt died before it.
func (s *Service) resumeOrder(ctx context.Context, p *apikey.Principal, in CreateOrderInput) (*Order, error) {
	o, err := store.GetOrderOfReservation(ctx, s.db, p.CompanyID, p.IsTest(), in.ReservationID)
	// Another reference or metadata is another request, as another event
	// or payment is.
	if err != nil || o.EventID != in.EventID || o.Payment != in.Payment ||
		referenceOf(o) != in.Reference || !maps.Equal(o.Metadata, in.Metadata) {
		return nil, &errs.StateError{Entity: "reservation", ID: in.ReservationID, Status: string(states.ReservationOrdered)}
	}
	if err := s.resumeSaga(ctx, o); err != nil {
		return nil, err
	}
	return s.View(o), nil
}

// referenceOf is the order's reference, "" when none.
func referenceOf(o *store.Order) string {
	if o.Reference == nil {
		return ""
	}
	return *o.Reference
}

// resumeSaga starts the saga of a pending order whose create committed but
// has not started it (yet, or ever: its process died); a started saga is
// left as it is.
func (s *Service) resumeSaga(ctx context.Context, o *store.Order) error {
	if o.Status != states.OrderPendingPayment {
		return nil
	}
	title, err := store.GetEventTitle(ctx, s.db, o.EventID)
	if err != nil {
		return err
	}
	return s.startSaga(ctx, o, title)
}

// abandonOrder takes back an order whose saga could not start and returns
// cause as unavailable: nothing the partner asked for remains changed.
func (s *Service) abandonOrder(ctx context.Context, o *store.Order, cause error) error {
	undoCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	// An order from a reservation gives the reservation back, so the
	// partner's retry can order it again; an items order is cancelled.
	undone := false
	var err error
	if o.ReservationID != nil {
		if undone, err = store.UndoOrderFromReservation(undoCtx, s.db, o.ID); err != nil {
			s.log.ErrorContext(ctx, "undo order after failed start", "order_id", o.ID, "err", err)
		}
	} else if _, undone, err = store.CancelOrder(undoCtx, s.db, o.ID, states.CancelPartner); err != nil {
		s.log.ErrorContext(ctx, "cancel order after failed start", "order_id", o.ID, "err", err)
	}
	s.holds.SeatsChanged(o.EventID)
	if !undone {
		// Kept (a confirm accepted its payment meanwhile, or the undo
		// failed): not "nothing was changed". A retry of the create finds
		// the order.
		return fmt.Errorf("order %d kept after its saga failed to start (%v): %w", o.ID, cause, errs.Incomplete)
	}
	if errors.Is(cause, errs.Unavailable) {
		return cause
	}
	return fmt.Errorf("order %d: %w: %w", o.ID, errs.Unavailable, cause)
}

func (s *Service) itemsOf(ctx context.Context, sc *holds.Sale, in CreateOrderInput) ([]store.ItemQuantity, error) {
	verr := &errs.ValidationError{}
	if sc.Event.SchemeID != nil {
		verr.Add("body.items", "the event sells seats: hold them with a reservation and order by reservation_id", nil)
		return nil, verr
	}
	slots, err := store.CountSessions(ctx, s.db, sc.Event.ID)
	if err != nil {
		return nil, err
	}
	switch {
	case slots > 0 && in.ScheduleSlotID == 0:
		verr.Add("body.schedule_slot_id", "the event is sold by session: give the id of a /v1/sessions item", nil)
	case slots == 0 && in.ScheduleSlotID != 0:
		verr.Add("body.schedule_slot_id", "the event has no sessions", in.ScheduleSlotID)
	case in.ScheduleSlotID != 0:
		ok, err := store.IsSessionOf(ctx, s.db, in.ScheduleSlotID, sc.Event.ID)
		if err != nil {
			return nil, err
		}
		if !ok {
			verr.Add("body.schedule_slot_id", "not a session of this event", in.ScheduleSlotID)
		}
	}
	want := wantedItems(sc, in.Items, verr)
	return want, verr.OrNil()
}

// The bounds of an order's request, as the API's schema states them.
const (
	MaxItems               = 20
	MaxReservationIDLength = 64
)

// checkItems adds to verr what is wrong with the items before anything is
// read: at most MaxItems, each asking for 1 to holds.MaxSeats tickets. A
// quantity of 0 or less would make an order of fewer tickets than it says,
// or none.
func checkItems(items []Item, verr *errs.ValidationError) {
	if len(items) > MaxItems {
		verr.Add("body.items", fmt.Sprintf("at most %d items", MaxItems), len(items))
		return
	}
	for i, it := range items {
		if it.Quantity < 1 || it.Quantity > holds.MaxSeats {
			verr.Add(fmt.Sprintf("body.items[%d].quantity", i), fmt.Sprintf("must be 1..%d", holds.MaxSeats), it.Quantity)
		}
	}
}

// wantedItems prices the items at the sale's prices and adds to verr what
// is wrong with them: a category the event does not sell, a category
// listed twice, more than holds.MaxSeats tickets in all.
func wantedItems(sc *holds.Sale, items []Item, verr *errs.ValidationError) []store.ItemQuantity {
	total := 0
	seen := map[int64]bool{}
	var want []store.ItemQuantity
	for i, it := range items {
		price, ok := sc.Prices[it.TicketCategoryID]
		switch {
		case !ok:
			verr.Add(fmt.Sprintf("body.items[%d].ticket_category_id", i), "not a category of this event", it.TicketCategoryID)
		case seen[it.TicketCategoryID]:
			verr.Add(fmt.Sprintf("body.items[%d].ticket_category_id", i), "category listed twice", it.TicketCategoryID)
		}
		seen[it.TicketCategoryID] = true
		total += it.Quantity
		want = append(want, store.ItemQuantity{CategoryID: it.TicketCategoryID, Quantity: it.Quantity, Price: price})
	}
	if total > holds.MaxSeats {
		verr.Add("body.items", fmt.Sprintf("an order holds at most %d tickets", holds.MaxSeats), total)
	}
	return want
}

func (s *Service) startOrderWorkflow(ctx context.Context, o *store.Order) error {
	in := contract.OrderInput{OrderID: o.ID, CompanyID: o.CompanyID, EventID: o.EventID, IsTest: o.IsTest,
		Payment: o.Payment, Amount: o.Amount, ExpiresAt: o.ExpiresAt, Revision: s.Settings.Revision}
	if o.IsTest {
		in.DeleteAt = o.CreatedAt.Add(s.Settings.SandboxLifetime)
	}
	_, err := s.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: contract.OrderWorkflowID(o.ID), TaskQueue: s.TaskQueue, WorkflowExecutionErrorWhenAlreadyStarted: true,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			contract.CompanyIDAttr.ValueSet(o.CompanyID), contract.EventIDAttr.ValueSet(o.EventID),
			contract.IsTestAttr.ValueSet(o.IsTest), contract.OrderStatusAttr.ValueSet(string(o.Status))),
	}, contract.OrderWorkflow, in)
	if err != nil {
		return fmt.Errorf("start workflow of order %d: %w: %w", o.ID, errs.Unavailable, err)
	}
	return nil
}

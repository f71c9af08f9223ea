package sales

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"ticketsales/internal/apikey"
	"ticketsales/internal/delivery"
	"ticketsales/internal/errs"
	"ticketsales/internal/payment"
	"ticketsales/internal/pricing"
	"ticketsales/internal/states"
	"ticketsales/store"
	"ticketsales/workflows/contract"
)

// OrderSettings are the order saga's durations, links and gateways.
type OrderSettings struct {
	PaymentWindow   time.Duration // 15 minutes
	SandboxLifetime time.Duration // one day
	Links           delivery.Links
	// Gateways take gateway payments: sandbox orders always use the test
	// gateway, production orders the hosted one, or the test gateway only
	// when TestGatewayForProduction is on (APP_ENV=development).
	Gateways                 payment.Set
	TestGatewayForProduction bool
	// RefundRetryBudget is how long a refund retries the gateway before it
	// is marked failed (0: the workflow's default, a day); RefundWait is how
	// long a refund request waits for the money before answering pending
	// (0: 15 s).
	RefundRetryBudget time.Duration
	RefundWait        time.Duration
	// ConfirmWait is how long a confirm waits for the order workflow to
	// apply its accepted payment before answering 202 (0: 20 s).
	ConfirmWait time.Duration
}

// Customer is the buyer. It stays in Postgres; workflows see only ids.
type Customer struct {
	Email     string `json:"email" format:"email" maxLength:"254"`
	FirstName string `json:"first_name" minLength:"1" maxLength:"100"`
	LastName  string `json:"last_name" minLength:"1" maxLength:"100"`
	Phone     string `json:"phone" pattern:"^\\+?[0-9][0-9 ()\\-]{5,24}$" doc:"International format, e.g. +7 999 123-45-67."`
}

// Buyer is the customer as an order shows it: what was given, unchecked
// here (an aggregator's buyer may have no phone).
type Buyer struct {
	Email     string `json:"email"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Phone     string `json:"phone"`
}

// OrderItemInput asks for general-admission tickets of a category.
type OrderItemInput struct {
	TicketCategoryID int64 `json:"ticket_category_id" minimum:"1"`
	Quantity         int   `json:"quantity" minimum:"1" maximum:"20"`
}

// CreateOrderInput is POST /v1/orders.
type CreateOrderInput struct {
	EventID        int64
	ReservationID  string
	Items          []OrderItemInput
	ScheduleSlotID int64
	Customer       Customer
	Payment        string
	// Channel is the sales channel reported to the organizer: ChannelAPI
	// (the default) or ChannelAggregator.
	Channel string
}

// Sales channels of an order, as the organizer's report groups them.
const (
	ChannelAPI        = "api"
	ChannelAggregator = "aggregator"
)

// Order is an order as partners see it.
type Order struct {
	ID             int64                `json:"id"`
	Status         states.OrderStatus   `json:"status" enum:"pending_payment,paid,cancelled,partially_refunded,refunded"`
	CancelReason   *states.CancelReason `json:"cancel_reason,omitempty" enum:"buyer,payment_timeout,partner"`
	EventID        int64                `json:"event_id"`
	ReservationID  *string              `json:"reservation_id,omitempty"`
	ScheduleSlotID *int64               `json:"schedule_slot_id,omitempty"`
	Payment        string               `json:"payment" enum:"gateway,external"`
	PaymentURL     string               `json:"payment_url,omitempty" doc:"Where the buyer pays, for payment=gateway."`
	Amount         pricing.Money        `json:"amount" doc:"The sum to collect; always charge this."`
	Total          pricing.Money        `json:"total" doc:"Sum of ticket prices."`
	ServiceFee     pricing.Money        `json:"service_fee" doc:"Computed from the order sum; the minimum fee is taken once per order."`
	IsTest         bool                 `json:"is_test"`
	Customer       Buyer                `json:"customer"`
	CreatedAt      time.Time            `json:"created_at"`
	ExpiresAt      time.Time            `json:"expires_at" doc:"End of the payment window."`
	PaidAt         *time.Time           `json:"paid_at,omitempty"`
	// PaymentAcceptedAt marks "payment accepted, tickets follow".
	PaymentAcceptedAt *time.Time `json:"payment_accepted_at,omitempty" doc:"payment=external: when the confirm's payment was accepted. On a pending_payment order it means the payment is on record and the order will be paid with it (its seats are kept, the payment window no longer applies): the tickets follow, read the order again."`
}

// Ticket is an issued ticket.
type Ticket struct {
	ID      int64               `json:"id"`
	Number  string              `json:"number"`
	Barcode string              `json:"barcode" doc:"13 digits with an EAN-13 check digit, random and unique; what the QR code and the printed barcode carry."`
	Status  states.TicketStatus `json:"status" enum:"active,refunded"`
	// IsTest is the order's is_test, on each ticket too: a ticket passed on
	// without its order (to a venue, a wallet) still says what it is.
	IsTest bool          `json:"is_test" doc:"A ticket of a sandbox order: marked TEST on its page and PDF, its barcode in the sandbox space (it begins with 2000; production barcodes are drawn outside it). It admits no one."`
	Seat   *TicketSeat   `json:"seat"`
	Price  pricing.Money `json:"price"`
	// OrderURL opens all the order's tickets without authorization.
	OrderURL string `json:"order_url"`
}

// TicketSeat is the seat of a ticket; null for general admission.
type TicketSeat struct {
	ZoneID string `json:"zone_id"`
	SeatID string `json:"seat_id"`
	Label  string `json:"label"`
}

// Links are the orders' public page links.
func (s *Service) Links() delivery.Links { return s.Orders.Links }

// gatewayFor names the gateway that takes the caller's gateway payments:
// never the test gateway for real money, unless in development.
func (s *Service) gatewayFor(p *apikey.Principal) (string, error) {
	switch {
	case p.IsTest() && s.Orders.Gateways[payment.Test] != nil:
		return payment.Test, nil
	case p.IsTest():
	case s.Orders.Gateways[payment.Hosted] != nil:
		return payment.Hosted, nil
	case s.Orders.TestGatewayForProduction && s.Orders.Gateways[payment.Test] != nil:
		return payment.Test, nil
	}
	return "", fmt.Errorf("%s key: %w", p.Environment, errs.GatewayUnavailable)
}

// CreateOrder makes an order from a reservation (events with a scheme) or
// from items (general admission, with a schedule slot for scheduled events),
// then starts its saga.
func (s *Service) CreateOrder(ctx context.Context, p *apikey.Principal, in CreateOrderInput) (*Order, error) {
	verr := &errs.ValidationError{}
	switch {
	case in.ReservationID == "" && len(in.Items) == 0:
		verr.Add("body", "give reservation_id (events with a scheme) or items (events without)", nil)
	case in.ReservationID != "" && len(in.Items) > 0:
		verr.Add("body.items", "give either reservation_id or items, not both", nil)
	}
	if in.Payment != "gateway" && in.Payment != "external" {
		verr.Add("body.payment", "must be gateway or external", in.Payment)
	}
	if err := verr.OrNil(); err != nil {
		return nil, err
	}
	var gw *string
	if in.Payment == "gateway" {
		name, err := s.gatewayFor(p)
		if err != nil {
			return nil, err
		}
		gw = &name
	}
	sc, err := s.onSale(ctx, p.CompanyID, in.EventID, in.ReservationID != "")
	if err != nil {
		return nil, err
	}
	_, tokenHash, tokenSealed, err := s.Orders.Links.Keys.NewToken()
	if err != nil {
		return nil, err
	}
	o := &store.Order{
		CompanyID: p.CompanyID, APIKeyID: p.KeyID, IsTest: p.IsTest(), EventID: sc.event.ID,
		Status: states.OrderPendingPayment, Payment: in.Payment, Gateway: gw, Currency: sc.event.Currency,
		CustomerEmail: in.Customer.Email, CustomerFirstName: in.Customer.FirstName,
		CustomerLastName: in.Customer.LastName, CustomerPhone: in.Customer.Phone,
		PaymentWindow:   s.Orders.PaymentWindow, // its deadline is set by Postgres's clock
		AccessTokenHash: tokenHash, AccessTokenSealed: tokenSealed, Channel: cmp.Or(in.Channel, ChannelAPI),
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
				return s.totals(sc.event, prices)
			})
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
	case errors.As(err, &se):
		return nil, stateError(se)
	case err != nil:
		return nil, err // a sold out error among them
	}
	s.seatsChanged(o.EventID)
	if err := s.startSaga(ctx, o, sc.event.Title); err != nil {
		return nil, s.abandonOrder(ctx, o, err)
	}
	// The hold's deadline pass finds it ordered and leaves it: no call to
	// Temporal per hold on the order path either.
	return s.orderView(o), nil
}

// startSaga creates the gateway payment (for gateway orders) and starts the
// order workflow; both are skipped when already done, so a resumed create
// completes what a crashed one left.
func (s *Service) startSaga(ctx context.Context, o *store.Order, title string) error {
	if o.Payment == "gateway" && o.PaymentID == nil {
		gw, err := s.Orders.Gateways.Get(*o.Gateway)
		if err != nil {
			return fmt.Errorf("create payment: %w: %w", errs.Unavailable, err)
		}
		pay, err := gw.CreatePayment(ctx, payment.PaymentRequest{OrderID: o.ID, Amount: o.Amount,
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
	o, err := store.OrderOfReservation(ctx, s.db, p.CompanyID, p.IsTest(), in.ReservationID)
	if err != nil || o.EventID != in.EventID || o.Payment != in.Payment {
		return nil, &errs.StateError{Entity: "reservation", ID: in.ReservationID, Status: string(states.ReservationOrdered)}
	}
	if err := s.resumeSaga(ctx, o); err != nil {
		return nil, err
	}
	return s.orderView(o), nil
}

// resumeSaga starts the saga of a pending order whose create committed but
// has not started it (yet, or ever: its process died); a started saga is
// left as it is.
func (s *Service) resumeSaga(ctx context.Context, o *store.Order) error {
	if o.Status != states.OrderPendingPayment {
		return nil
	}
	title, err := store.EventTitle(ctx, s.db, o.EventID)
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
	s.seatsChanged(o.EventID)
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

func (s *Service) itemsOf(ctx context.Context, sc *saleContext, in CreateOrderInput) ([]store.ItemQuantity, error) {
	verr := &errs.ValidationError{}
	if sc.event.SchemeID != nil {
		verr.Add("body.items", "the event sells seats: hold them with a reservation and order by reservation_id", nil)
		return nil, verr
	}
	slots, err := store.CountSessions(ctx, s.db, sc.event.ID)
	if err != nil {
		return nil, err
	}
	switch {
	case slots > 0 && in.ScheduleSlotID == 0:
		verr.Add("body.schedule_slot_id", "the event is sold by session: give the id of a /v1/sessions item", nil)
	case slots == 0 && in.ScheduleSlotID != 0:
		verr.Add("body.schedule_slot_id", "the event has no sessions", in.ScheduleSlotID)
	case in.ScheduleSlotID != 0:
		ok, err := store.IsSessionOf(ctx, s.db, in.ScheduleSlotID, sc.event.ID)
		if err != nil {
			return nil, err
		}
		if !ok {
			verr.Add("body.schedule_slot_id", "not a session of this event", in.ScheduleSlotID)
		}
	}
	total := 0
	seen := map[int64]bool{}
	var want []store.ItemQuantity
	for i, it := range in.Items {
		price, ok := sc.prices[it.TicketCategoryID]
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
	if total > MaxSeats {
		verr.Add("body.items", fmt.Sprintf("an order holds at most %d tickets", MaxSeats), total)
	}
	return want, verr.OrNil()
}

func (s *Service) startOrderWorkflow(ctx context.Context, o *store.Order) error {
	in := contract.OrderInput{OrderID: o.ID, CompanyID: o.CompanyID, EventID: o.EventID, IsTest: o.IsTest,
		Payment: o.Payment, Amount: o.Amount, ExpiresAt: o.ExpiresAt}
	if o.IsTest {
		in.DeleteAt = o.CreatedAt.Add(s.Orders.SandboxLifetime)
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

func (s *Service) orderView(o *store.Order) *Order {
	money := func(a int64) pricing.Money { return pricing.Money{Amount: a, Currency: o.Currency} }
	out := &Order{ID: o.ID, Status: o.Status, CancelReason: o.CancelReason, EventID: o.EventID, ReservationID: o.ReservationID,
		ScheduleSlotID: o.ScheduleSlotID, Payment: o.Payment, Amount: money(o.Amount), Total: money(o.Total),
		ServiceFee: money(o.ServiceFee), IsTest: o.IsTest, CreatedAt: o.CreatedAt, ExpiresAt: o.ExpiresAt, PaidAt: o.PaidAt,
		PaymentAcceptedAt: o.PaymentAcceptedAt,
		Customer:          Buyer{Email: o.CustomerEmail, FirstName: o.CustomerFirstName, LastName: o.CustomerLastName, Phone: o.CustomerPhone}}
	if o.Status == states.OrderPendingPayment {
		switch {
		case o.PaymentURL != nil:
			out.PaymentURL = *o.PaymentURL
		case o.Payment == "gateway" && o.PaymentID != nil: // orders made before payment_url was stored
			out.PaymentURL = s.Orders.Links.BaseURL + "/pay/" + *o.PaymentID
		}
	}
	return out
}

// GetOrder returns an order of the caller's company and environment.
func (s *Service) GetOrder(ctx context.Context, p *apikey.Principal, id int64) (*Order, error) {
	o, err := store.GetOrder(ctx, s.db, p.CompanyID, p.IsTest(), id)
	if err != nil {
		return nil, err
	}
	return s.orderView(o), nil
}

// ListOrders lists orders of the caller's company and environment.
func (s *Service) ListOrders(ctx context.Context, p *apikey.Principal, f store.OrderFilter) ([]*Order, int, error) {
	rows, total, err := store.ListOrders(ctx, s.db, p.CompanyID, p.IsTest(), f)
	if err != nil {
		return nil, 0, err
	}
	out := make([]*Order, len(rows))
	for i := range rows {
		out[i] = s.orderView(&rows[i])
	}
	return out, total, nil
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
func (s *Service) Confirm(ctx context.Context, p *apikey.Principal, id int64, paidAmount int64, externalID string) (*Order, error) {
	o, err := store.GetOrder(ctx, s.db, p.CompanyID, p.IsTest(), id)
	if err != nil {
		return nil, err
	}
	if paidAmount != o.Amount {
		return nil, &errs.AmountMismatchError{Paid: paidAmount, Amount: o.Amount}
	}
	if o.Payment != "external" {
		return nil, &errs.StateError{Entity: "order", ID: strconv.FormatInt(id, 10), Status: "paid through the gateway"}
	}
	if o.Status == states.OrderPendingPayment && o.PaymentAcceptedAt == nil {
		if o, err = store.AcceptExternalPayment(ctx, s.db, id, externalID); errors.Is(err, store.ErrSeatsLost) {
			return nil, fmt.Errorf("order %d: %w", id, errs.OrderExpired)
		} else if err != nil {
			return nil, err
		}
	}
	switch {
	case o.Status == states.OrderCancelled:
		return nil, s.cancelledError(o)
	case o.Status == states.OrderPendingPayment && o.PaymentAcceptedAt == nil:
		return nil, fmt.Errorf("order %d: %w", id, errs.OrderExpired) // the window closed before it was accepted
	case o.PaymentID == nil || *o.PaymentID != externalID:
		// Paid or accepted with another payment: this one was not applied,
		// and the partner has to give it back.
		return nil, &errs.StateError{Entity: "order", ID: strconv.FormatInt(id, 10), Status: "confirmed with another payment id"}
	case o.Status != states.OrderPendingPayment:
		return s.orderView(o), nil // paid with this payment: a safe repeat
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
	return s.orderView(o), nil
}

// handPayment hands an accepted external payment to the order's workflow
// and waits up to Orders.ConfirmWait for it to pay the order. A workflow
// that was never started (its api died after the order's commit) is
// started first.
func (s *Service) handPayment(ctx context.Context, o *store.Order, paidAmount int64, externalID string) error {
	uctx, cancel := context.WithTimeout(ctx, cmp.Or(s.Orders.ConfirmWait, defaultConfirmWait))
	defer cancel()
	update := func() error {
		h, err := s.temporal.UpdateWorkflow(uctx, client.UpdateWorkflowOptions{
			WorkflowID: contract.OrderWorkflowID(o.ID), UpdateName: contract.ConfirmUpdate,
			Args:         []any{contract.ConfirmInput{PaidAmount: paidAmount, ExternalPaymentID: externalID}},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		})
		if err == nil {
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

func (s *Service) cancelledError(o *store.Order) error {
	if o.CancelReason != nil && *o.CancelReason == states.CancelPaymentTimeout {
		return fmt.Errorf("order %d: %w", o.ID, errs.OrderExpired)
	}
	return &errs.StateError{Entity: "order", ID: strconv.FormatInt(o.ID, 10), Status: string(o.Status)}
}

// Cancel cancels an unpaid order and frees its seats; a paid order must be
// refunded instead. Cancelling a cancelled order returns it unchanged.
func (s *Service) Cancel(ctx context.Context, p *apikey.Principal, id int64) (*Order, error) {
	o, err := store.GetOrder(ctx, s.db, p.CompanyID, p.IsTest(), id)
	if err != nil {
		return nil, err
	}
	if o.Status == states.OrderPendingPayment {
		_, changed, err := store.CancelOrder(ctx, s.db, id, states.CancelPartner)
		if err != nil {
			return nil, err
		}
		if changed {
			s.seatsChanged(o.EventID)
			if err := s.temporal.SignalWorkflow(ctx, contract.OrderWorkflowID(id), "", contract.OrderCancelledSignal, nil); err != nil {
				s.log.WarnContext(ctx, "signal cancelled order", "order_id", id, "err", err)
			}
		}
		if o, err = store.GetOrder(ctx, s.db, p.CompanyID, p.IsTest(), id); err != nil {
			return nil, err
		}
	}
	switch {
	case o.Status == states.OrderCancelled:
		return s.orderView(o), nil
	case o.Status == states.OrderPaid, o.Status == states.OrderPartiallyRefunded, o.PaymentAcceptedAt != nil:
		// A payment accepted by a confirm pays the order: refund it then.
		return nil, fmt.Errorf("order %d: %w", id, errs.OrderPaid)
	default:
		return nil, &errs.StateError{Entity: "order", ID: strconv.FormatInt(id, 10), Status: string(o.Status)}
	}
}

// Tickets lists an order's tickets (none until it is paid).
func (s *Service) Tickets(ctx context.Context, p *apikey.Principal, id int64) ([]Ticket, error) {
	o, err := store.GetOrder(ctx, s.db, p.CompanyID, p.IsTest(), id)
	if err != nil {
		return nil, err
	}
	return s.ticketsOf(ctx, o)
}

func (s *Service) ticketsOf(ctx context.Context, o *store.Order) ([]Ticket, error) {
	rows, err := store.OrderTickets(ctx, s.db, o.ID)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	// A link sent already must keep working: a token sealed with a secret
	// no longer configured is not replaced here, only left out (and the
	// operators told: ORDER_TOKEN_PREVIOUS_SECRETS lacks that secret).
	url, err := s.Orders.Links.OrderPage(ctx, s.db, o, false)
	if errors.Is(err, delivery.ErrUnknownKey) {
		s.log.ErrorContext(ctx, "order page link cannot be shown: its token was sealed with a secret no longer configured",
			"order_id", o.ID, "err", err)
		url, err = "", nil
	}
	if err != nil {
		return nil, fmt.Errorf("order page link: %w", err)
	}
	out := make([]Ticket, len(rows))
	for i, t := range rows {
		out[i] = Ticket{ID: t.ID, Number: t.Number, Barcode: t.Barcode, Status: t.Status, IsTest: o.IsTest,
			Price: pricing.Money{Amount: t.Price, Currency: o.Currency}, OrderURL: url}
		if t.SeatID != nil {
			out[i].Seat = &TicketSeat{ZoneID: *t.ZoneID, SeatID: *t.SeatID, Label: *t.Label}
		}
	}
	return out, nil
}

// OrderOfReservation returns the order made from a reservation, if any.
func (s *Service) OrderOfReservation(ctx context.Context, p *apikey.Principal, reservationID string) (*Order, error) {
	o, err := store.OrderOfReservation(ctx, s.db, p.CompanyID, p.IsTest(), reservationID)
	switch {
	case errors.Is(err, errs.NotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return s.orderView(o), nil
}

// EventsOnSale lists the company's published events that have not started.
func (s *Service) EventsOnSale(ctx context.Context, p *apikey.Principal) ([]store.Event, error) {
	return store.EventsOnSale(ctx, s.db, p.CompanyID, s.now())
}

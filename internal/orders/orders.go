// Package orders turns holds and general-admission capacity into orders
// and sees them paid: checkout (/v1 and the aggregator's one-call
// confirm), the order saga's start, external payments accepted by a
// confirm, gateway payments recorded from their callbacks and swept when no
// workflow settled them, cancellation, and the issued tickets.
package orders

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/payment"
	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// Service makes orders and sees them paid, for the caller's company and
// environment.
type Service struct {
	db       *bun.DB
	temporal client.Client
	log      *slog.Logger
	holds    *holds.Service
	// TaskQueue of the order workflows.
	TaskQueue string
	// Settings shape the order saga (tests shorten its durations).
	Settings Settings
}

// Deps are what orders work with: the holds they are made from (and whose
// seat changes they announce).
type Deps struct {
	DB       *bun.DB
	Temporal client.Client
	Log      *slog.Logger
	Holds    *holds.Service
}

// New builds the service.
func New(d Deps, taskQueue string, st Settings) *Service {
	return &Service{db: d.DB, temporal: d.Temporal, log: d.Log, holds: d.Holds, TaskQueue: cmp.Or(taskQueue, contract.TaskQueue), Settings: st}
}

// Settings are the order saga's durations, links and gateways.
type Settings struct {
	PaymentWindow   time.Duration // 15 minutes
	SandboxLifetime time.Duration // one day
	Links           delivery.Links
	// Gateways take gateway payments: sandbox orders always use the test
	// gateway, production orders the hosted one, or the test gateway only
	// when TestGatewayForProduction is on (APP_ENV=development).
	Gateways                 payment.Set
	TestGatewayForProduction bool
	// ConfirmWait is how long a confirm waits for the order workflow to
	// apply its accepted payment before answering 202 (0: 20 s).
	ConfirmWait time.Duration
	// Revision is the order workflow revision new orders start with
	// (ORDER_REVISION; contract.OrderRevision by default).
	Revision int
}

// Customer is the buyer. It stays in Postgres; workflows see only ids.
type Customer struct {
	Email     string `json:"email" format:"email" maxLength:"254" doc:"One plain address (no display name or comment); spaces around it are dropped."`
	FirstName string `json:"first_name" minLength:"1" maxLength:"100" doc:"One line: no line breaks or other control characters."`
	LastName  string `json:"last_name" minLength:"1" maxLength:"100" doc:"One line: no line breaks or other control characters."`
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

// Item asks for general-admission tickets of a category.
type Item struct {
	TicketCategoryID int64 `json:"ticket_category_id" minimum:"1"`
	Quantity         int   `json:"quantity" minimum:"1" maximum:"20"`
}

// CreateOrderInput is POST /v1/orders.
type CreateOrderInput struct {
	EventID        int64
	ReservationID  string
	Items          []Item
	ScheduleSlotID int64
	Customer       Customer
	Payment        states.PaymentMethod
	// Reference and Metadata are the partner's, kept as sent ("" and
	// nil: none); see reference.go.
	Reference string
	Metadata  map[string]string
	// Channel is the sales channel reported to the organizer: the API
	// (the default) or the aggregator adapter.
	Channel states.Channel
	// Simulate is a sandbox order's simulation (SimulatePaymentTimeout);
	// "" for none. Production keys are refused one.
	Simulate string
}

// The sandbox's simulations of the slow paths (docs/api.md, Sandbox), named
// by the Sandbox-Simulate header: a partner tests its handling of them
// without waiting 15 minutes or stopping the service.
const (
	// SimulatePaymentTimeout: the order's payment window is
	// SimulatedPaymentWindow, so it expires (and its seats go back) in
	// seconds, as an unpaid order does after 15 minutes.
	SimulatePaymentTimeout = "payment_timeout"
	// SimulateConfirmAccepted: a confirm hands the payment to the order's
	// workflow without waiting for it and answers 202 (payment accepted,
	// tickets follow), as when the workflow is slow.
	SimulateConfirmAccepted = "confirm_accepted"
	// SimulatedPaymentWindow is a payment_timeout order's window.
	SimulatedPaymentWindow = 10 * time.Second
)

// sandboxOnly refuses a simulation asked with a production key: it would
// change a real order's course.
func sandboxOnly(p *apikey.Principal, simulate string) error {
	if simulate == "" || p.IsTest() {
		return nil
	}
	verr := &errs.ValidationError{}
	verr.Add("header.Sandbox-Simulate", "simulations are for sandbox keys only: send it with a tk_sandbox_ key", simulate)
	return verr
}

// Order is an order as partners see it.
type Order struct {
	ID             int64                `json:"id"`
	Status         states.OrderStatus   `json:"status"`
	CancelReason   *states.CancelReason `json:"cancel_reason,omitempty"`
	EventID        int64                `json:"event_id"`
	ReservationID  *string              `json:"reservation_id,omitempty"`
	ScheduleSlotID *int64               `json:"schedule_slot_id,omitempty"`
	Payment        states.PaymentMethod `json:"payment"`
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
	PaymentID         *string           `json:"payment_id,omitempty" doc:"The payment on record for the order: for payment=external the external_payment_id of the confirm that was applied (after a 409 naming another payment id, this is the one applied); for payment=gateway the gateway's payment id. Absent until there is one."`
	PaymentAcceptedAt *time.Time        `json:"payment_accepted_at,omitempty" doc:"payment=external: when the confirm's payment was accepted. On a pending_payment order it means the payment is on record and the order will be paid with it (its seats are kept, the payment window no longer applies): the tickets follow, read the order again."`
	Reference         *string           `json:"reference,omitempty" doc:"Your own id of the order, as you gave it at creation; absent when you gave none. Not unique: look orders up by it with filter.reference."`
	Metadata          map[string]string `json:"metadata" doc:"Your key-value pairs, as you gave them at creation; {} when none."`
}

// Ticket is an issued ticket.
type Ticket struct {
	ID      int64  `json:"id"`
	Number  string `json:"number"`
	Barcode string `json:"barcode" doc:"13 digits with an EAN-13 check digit, random and unique; what the printed barcode (EAN-13) carries."`
	// SignedBarcode is what the ticket's QR code carries: signed with the
	// event's key, a door checks it offline.
	SignedBarcode string              `json:"signed_barcode,omitempty" doc:"What the ticket's QR code carries: the barcode signed with the event's Ed25519 key (format T2, see the offline check-in section of docs/api.md), so a door tells a forged ticket without the network. Doors admit it and the 13-digit barcode alike."`
	Status        states.TicketStatus `json:"status"`
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
func (s *Service) Links() delivery.Links { return s.Settings.Links }

// View is an order as partners see it.
func (s *Service) View(o *store.Order) *Order {
	money := func(a int64) pricing.Money { return pricing.Money{Amount: a, Currency: o.Currency} }
	out := &Order{ID: o.ID, Status: o.Status, CancelReason: o.CancelReason, EventID: o.EventID, ReservationID: o.ReservationID,
		ScheduleSlotID: o.ScheduleSlotID, Payment: o.Payment, Amount: money(o.Amount), Total: money(o.Total),
		ServiceFee: money(o.ServiceFee), IsTest: o.IsTest, CreatedAt: o.CreatedAt, ExpiresAt: o.ExpiresAt, PaidAt: o.PaidAt,
		PaymentAcceptedAt: o.PaymentAcceptedAt, PaymentID: o.PaymentID, Reference: o.Reference, Metadata: o.Metadata,
		Customer: Buyer{Email: o.CustomerEmail, FirstName: o.CustomerFirstName, LastName: o.CustomerLastName, Phone: o.CustomerPhone}}
	if out.Metadata == nil {
		out.Metadata = map[string]string{} // an event's snapshot from before metadata was kept
	}
	if o.Status == states.OrderPendingPayment {
		switch {
		case o.PaymentURL != nil:
			out.PaymentURL = *o.PaymentURL
		case o.Payment == states.PayByGateway && o.PaymentID != nil: // orders made before payment_url was stored
			out.PaymentURL = s.Settings.Links.BaseURL + "/pay/" + *o.PaymentID
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
	return s.View(o), nil
}

// ListOrders lists orders of the caller's company and environment.
func (s *Service) ListOrders(ctx context.Context, p *apikey.Principal, f store.OrderFilter) ([]*Order, int, error) {
	rows, total, err := store.ListOrders(ctx, s.db, p.CompanyID, p.IsTest(), f)
	if err != nil {
		return nil, 0, err
	}
	out := make([]*Order, len(rows))
	for i := range rows {
		out[i] = s.View(&rows[i])
	}
	return out, total, nil
}

// OfReservation returns the order made from a reservation, if any.
func (s *Service) OfReservation(ctx context.Context, p *apikey.Principal, reservationID string) (*Order, error) {
	o, err := store.GetOrderOfReservation(ctx, s.db, p.CompanyID, p.IsTest(), reservationID)
	switch {
	case errors.Is(err, errs.NotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return s.View(o), nil
}

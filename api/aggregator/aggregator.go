// Package aggregator is the aggregator adapter, /aggregator/v1: the same
// reservations and sales as /v1, in the names and statuses of an external
// ticket aggregator's contract. No rule lives here; every call goes to the
// holds, orders and catalog services.
package aggregator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/ticketsales/ticketsales/api/request"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog"
	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/orders"
	"github.com/ticketsales/ticketsales/internal/states"
)

// aggregatorStatus maps a reservation and the order made from it (if any)
// to the aggregator's lifecycle.
func aggregatorStatus(reservation states.ReservationStatus, order states.OrderStatus) states.AggregatorStatus {
	switch {
	case order.TicketsValid():
		return states.AggregatorApproved
	case order == states.OrderPendingPayment:
		return states.AggregatorReserved
	case order == states.OrderCancelled, order == states.OrderRefunded:
		return states.AggregatorCancelled
	}
	switch reservation {
	case states.ReservationReserved, states.ReservationOrdered:
		return states.AggregatorReserved
	case states.ReservationExpired, states.ReservationReleased:
		return states.AggregatorCancelled
	}
	return states.AggregatorCreated
}

type aggMoney struct {
	Value    int64  `json:"value" doc:"Minor units."`
	Currency string `json:"currency"`
}

type aggSession struct {
	SessionID string    `json:"sessionId" doc:"The event id."`
	Title     string    `json:"title"`
	StartsAt  time.Time `json:"startsAt"`
	Venue     string    `json:"venue"`
	City      string    `json:"city"`
	HasSeats  bool      `json:"hasSeats"`
}

type aggSeat struct {
	ID     string   `json:"id" doc:"<zone_id>|<seat_id>, as reserve takes it."`
	Sector string   `json:"sector"`
	Row    string   `json:"row"`
	Seat   string   `json:"seat"`
	Price  aggMoney `json:"price"`
}

type aggOrder struct {
	OrderID         string                  `json:"orderId" doc:"The reservation id."`
	Status          states.AggregatorStatus `json:"status"`
	Amount          aggMoney                `json:"amount"`
	ExpiresAt       time.Time               `json:"expiresAt"`
	ExternalOrderID string                  `json:"externalOrderId,omitempty" doc:"The service's order id, once confirmed."`
	// PaymentAccepted marks "payment accepted, tickets follow".
	PaymentAccepted bool        `json:"paymentAccepted,omitempty" doc:"true while the status is still RESERVED after a confirm whose payment is accepted: the order will be APPROVED with that payment and its tickets follow (read the order again, or repeat the confirm with the same paymentId)."`
	Tickets         []aggTicket `json:"tickets,omitempty"`
	// Seats says which seats the hold has, so a reserve by quantity tells
	// the aggregator what it chose.
	Seats []aggHeldSeat `json:"seats,omitempty" doc:"The seats the order holds (a reserve by quantity: the seats the service chose), each as reserve takes them."`
}

type aggHeldSeat struct {
	ID     string   `json:"id" doc:"<zone_id>|<seat_id>, as reserve's seats."`
	Sector string   `json:"sector"`
	Row    string   `json:"row"`
	Seat   string   `json:"seat"`
	Price  aggMoney `json:"price"`
}

type aggTicket struct {
	Barcode string `json:"barcode"`
	Sector  string `json:"sector"`
	Row     string `json:"row"`
	Seat    string `json:"seat"`
}

type aggReserveInput struct {
	Body struct {
		SessionID string   `json:"sessionId" minLength:"1" maxLength:"20" doc:"The event id."`
		Seats     []string `json:"seats,omitempty" minItems:"1" maxItems:"20" doc:"Seats as <zone_id>|<seat_id>; or quantity instead."`
		Quantity  int      `json:"quantity,omitempty" minimum:"1" maximum:"20" doc:"Instead of seats: the service picks this many of the best free seats, side by side."`
		TTL       int      `json:"ttl,omitempty" minimum:"60" maximum:"3600" default:"900" doc:"Hold in seconds."`
	}
}

type aggConfirmInput struct {
	AggOrderPath
	Body struct {
		Customer struct {
			Email string `json:"email" format:"email" maxLength:"254"`
			Name  string `json:"name" minLength:"1" maxLength:"200"`
		} `json:"customer"`
		PaymentID string `json:"paymentId" minLength:"1" maxLength:"200"`
	}
}

// AggOrderPath is the {orderId} of the adapter.
type AggOrderPath struct {
	OrderID string `path:"orderId" maxLength:"64" doc:"The reservation id returned by reserve."`
}

type aggSessionPath struct {
	ID int64 `path:"id" minimum:"1" doc:"The event id."`
}

type adapter struct {
	holds        *holds.Service
	orders       *orders.Service
	catalog      *catalog.Service
	distribution *distribution.Service
}

// Register adds the adapter's operations to api (the /aggregator/v1 group,
// behind the same authentication as /v1).
func Register(api huma.API, h *holds.Service, o *orders.Service, cat *catalog.Service, dist *distribution.Service) {
	a := &adapter{holds: h, orders: o, catalog: cat, distribution: dist}
	tags := []string{"Aggregator adapter"}
	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "aggregator-list-sessions", Method: http.MethodGet, Path: "/sessions", Tags: tags,
		Summary: "Sessions on sale (the company's published events that have not started)",
	}, apikey.ScopeCatalogRead), func(ctx context.Context, _ *struct{}) (*plainOutput[[]aggSession], error) {
		events, err := a.holds.EventsOnSale(ctx, request.Caller(ctx))
		if err != nil {
			return nil, err
		}
		out := make([]aggSession, len(events))
		for i, e := range events {
			out[i] = aggSession{SessionID: strconv.FormatInt(e.ID, 10), Title: e.Title, StartsAt: e.StartsAt,
				Venue: e.VenueName, City: e.CityName, HasSeats: e.SchemeID != nil}
		}
		return &plainOutput[[]aggSession]{Body: out}, nil
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "aggregator-available-seats", Method: http.MethodGet, Path: "/sessions/{id}/available-seats", Tags: tags,
		Summary: "Free seats of a session with their prices", Errors: []int{http.StatusNotFound},
	}, apikey.ScopeCatalogRead), func(ctx context.Context, in *aggSessionPath) (*plainOutput[[]aggSeat], error) {
		p := request.Caller(ctx)
		doc, err := a.catalog.AvailabilityFor(ctx, p.CompanyID, p.ChannelID, in.ID)
		if err != nil {
			return nil, err
		}
		out := []aggSeat{}
		for _, st := range doc.Data.Seats {
			if st.Status == states.SeatFree {
				out = append(out, aggSeat{ID: st.ZoneID + "|" + st.SeatID, Sector: st.ZoneID, Row: st.Row, Seat: st.Number,
					Price: aggMoney{Value: st.Price.Amount, Currency: st.Price.Currency}})
			}
		}
		return &plainOutput[[]aggSeat]{Body: out}, nil
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "aggregator-session-allocation", Method: http.MethodGet, Path: "/sessions/{id}/allocation", Tags: tags,
		Summary:     "What this key may sell of a session, and when (as /v1/events/{id}/allocation)",
		Description: "The sales channel of this key's application, its window, its channel's allocation and general sale. Seats allocated to other channels are not among available-seats, and reserving them answers 409 seat_not_for_sale.",
		Errors:      []int{http.StatusNotFound},
	}, apikey.ScopeCatalogRead), func(ctx context.Context, in *aggSessionPath) (*plainOutput[*distribution.Share], error) {
		share, err := a.distribution.ShareOf(ctx, request.Caller(ctx), in.ID, a.holds.Now())
		if err != nil {
			return nil, err
		}
		return &plainOutput[*distribution.Share]{Body: share}, nil
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "aggregator-reserve", Method: http.MethodPost, Path: "/reserve", Tags: tags,
		Summary: "Hold seats for an aggregator order", DefaultStatus: http.StatusCreated,
		Errors: []int{http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity, http.StatusServiceUnavailable},
	}, apikey.ScopeOrdersWrite), func(ctx context.Context, in *aggReserveInput) (*aggReserveOutput, error) {
		eventID, err := strconv.ParseInt(in.Body.SessionID, 10, 64)
		if err != nil || eventID < 1 {
			return nil, &errs.ValidationError{Fields: []errs.FieldError{
				{Location: "body.sessionId", Message: "must be an event id", Value: in.Body.SessionID}}}
		}
		seats := make([]errs.SeatRef, len(in.Body.Seats))
		verr := &errs.ValidationError{}
		for i, id := range in.Body.Seats {
			zone, seat, ok := strings.Cut(id, "|")
			if !ok || zone == "" || seat == "" {
				verr.Fields = append(verr.Fields, errs.FieldError{Location: "body.seats[" + strconv.Itoa(i) + "]",
					Message: "a seat is <zone_id>|<seat_id>", Value: id})
			}
			seats[i] = errs.SeatRef{ZoneID: zone, SeatID: seat}
		}
		if len(verr.Fields) > 0 {
			return nil, verr
		}
		ttl := in.Body.TTL
		if ttl == 0 {
			ttl = 900
		}
		in2 := holds.ReserveInput{EventID: eventID, Seats: seats, TTL: time.Duration(ttl) * time.Second}
		switch {
		case in.Body.Quantity > 0 && len(seats) > 0:
			return nil, &errs.ValidationError{Fields: []errs.FieldError{
				{Location: "body.quantity", Message: "give either seats or quantity", Value: in.Body.Quantity}}}
		case in.Body.Quantity > 0:
			in2.Seats, in2.BestAvailable = nil, &holds.BestAvailable{Quantity: in.Body.Quantity, Together: true}
		}
		r, err := a.holds.Reserve(ctx, request.Caller(ctx), in2)
		if err != nil {
			return nil, inAdapterTerms(err, in.Body.SessionID)
		}
		out := aggOrderOf(r, nil, nil)
		return &aggReserveOutput{Location: "/aggregator/v1/orders/" + out.OrderID, Body: out}, nil
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "aggregator-get-order", Method: http.MethodGet, Path: "/orders/{orderId}", Tags: tags,
		Summary: "Order status", Errors: []int{http.StatusNotFound},
	}, apikey.ScopeOrdersRead), func(ctx context.Context, in *AggOrderPath) (*plainOutput[aggOrder], error) {
		out, err := a.order(ctx, in.OrderID)
		if err != nil {
			return nil, err
		}
		return &plainOutput[aggOrder]{Body: *out}, nil
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "aggregator-confirm", Method: http.MethodPost, Path: "/orders/{orderId}/confirm", Tags: tags,
		Summary: "Payment accepted: issue the tickets",
		Description: "Charges the amount reserve quoted. Repeating it with the same paymentId returns the same result; " +
			"another paymentId is refused with 409 invalid_state (that payment was not applied).\n\n" +
			"202: the payment is accepted (on record with the order) but the tickets were not issued in time: " +
			"`status` is still `RESERVED` with `paymentAccepted: true`; the order will be `APPROVED` with this payment " +
			"(its seats are kept even past `expiresAt`). Read it at `Location` or repeat the confirm with the same paymentId.",
		DefaultStatus: http.StatusOK,
		Responses:     map[string]*huma.Response{"202": {Description: "Accepted: the payment is on record, the tickets follow."}},
		Errors:        []int{http.StatusNotFound, http.StatusConflict, http.StatusServiceUnavailable},
	}, apikey.ScopeOrdersWrite), func(ctx context.Context, in *aggConfirmInput) (*aggConfirmOutput, error) {
		first, last, err := splitName(in.Body.Customer.Name)
		if err != nil {
			return nil, err
		}
		_, err = a.orders.CheckoutReservation(ctx, request.Caller(ctx), in.OrderID,
			orders.Customer{Email: in.Body.Customer.Email, FirstName: first, LastName: last}, in.Body.PaymentID)
		if err != nil {
			return nil, inAdapterTerms(err, "")
		}
		out, err := a.order(ctx, in.OrderID)
		if err != nil {
			return nil, err
		}
		res := &aggConfirmOutput{Status: http.StatusOK, Body: *out}
		if out.PaymentAccepted {
			res.Status, res.Location, res.RetryAfter = http.StatusAccepted, "/aggregator/v1/orders/"+in.OrderID, "5"
		}
		return res, nil
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "aggregator-clear-reservation", Method: http.MethodPost, Path: "/orders/{orderId}/clear-reservation", Tags: tags,
		Summary: "Release the reservation", Description: "Status becomes CANCELLED and the seats are free; repeating it is harmless.",
		Errors: []int{http.StatusNotFound, http.StatusConflict},
	}, apikey.ScopeOrdersWrite), func(ctx context.Context, in *AggOrderPath) (*plainOutput[aggOrder], error) {
		p := request.Caller(ctx)
		o, err := a.orders.OfReservation(ctx, p, in.OrderID)
		if err == nil && o != nil {
			_, err = a.orders.Cancel(ctx, p, o.ID) // an unpaid order from it
		} else if err == nil {
			_, err = a.holds.Release(ctx, p, in.OrderID)
		}
		if err != nil && !errorsIsExpired(err) {
			return nil, err
		}
		out, err := a.order(ctx, in.OrderID)
		if err != nil {
			return nil, err
		}
		return &plainOutput[aggOrder]{Body: *out}, nil
	})
}

// aggReserveOutput is the new hold, and where to read it.
type aggReserveOutput struct {
	Location string `header:"Location" doc:"The order: GET /aggregator/v1/orders/{orderId}."`
	Body     aggOrder
}

// aggConfirmOutput is 200 with the approved order, or 202 while its
// accepted payment is still being applied.
type aggConfirmOutput struct {
	Status     int
	RequestID  string `header:"X-Request-Id"`
	Location   string `header:"Location" doc:"202: the order, to read until it is APPROVED."`
	RetryAfter string `header:"Retry-After" doc:"202: seconds before reading the order again."`
	Body       aggOrder
}

// plainOutput is a body without the /v1 envelope: the aggregator's contract
// has its own top-level fields.
type plainOutput[T any] struct {
	RequestID string `header:"X-Request-Id"`
	Body      T
}

func (a *adapter) order(ctx context.Context, reservationID string) (*aggOrder, error) {
	p := request.Caller(ctx)
	r, err := a.holds.GetReservation(ctx, p, reservationID)
	if err != nil {
		return nil, err
	}
	o, err := a.orders.OfReservation(ctx, p, reservationID)
	if err != nil {
		return nil, err
	}
	var ts []orders.Ticket
	if o != nil {
		if ts, err = a.orders.Tickets(ctx, p, o.ID); err != nil {
			return nil, err
		}
	}
	out := aggOrderOf(r, o, ts)
	return &out, nil
}

func aggOrderOf(r *holds.Reservation, o *orders.Order, ts []orders.Ticket) aggOrder {
	out := aggOrder{OrderID: r.ID, Amount: aggMoney{Value: r.TotalToPay.Amount, Currency: r.TotalToPay.Currency}, ExpiresAt: r.ExpiresAt}
	var orderStatus states.OrderStatus
	if o != nil {
		orderStatus = o.Status
		out.ExternalOrderID = strconv.FormatInt(o.ID, 10)
		out.Amount = aggMoney{Value: o.Amount.Amount, Currency: o.Amount.Currency}
	}
	out.Status = aggregatorStatus(r.Status, orderStatus)
	out.PaymentAccepted = o != nil && o.Status == states.OrderPendingPayment && o.PaymentAcceptedAt != nil
	for _, s := range r.Seats {
		out.Seats = append(out.Seats, aggHeldSeat{ID: s.ZoneID + "|" + s.SeatID, Sector: s.ZoneID, Row: s.Row, Seat: s.Number,
			Price: aggMoney{Value: s.Price.Amount, Currency: s.Price.Currency}})
	}
	for _, t := range ts {
		if t.Status != states.TicketActive || t.Seat == nil {
			continue
		}
		row, seat := seatRowNumber(r, t.Seat.SeatID)
		out.Tickets = append(out.Tickets, aggTicket{Barcode: t.Barcode, Sector: t.Seat.ZoneID, Row: row, Seat: seat})
	}
	return out
}

func seatRowNumber(r *holds.Reservation, seatID string) (row, number string) {
	for _, s := range r.Seats {
		if s.SeatID == seatID {
			return s.Row, s.Number
		}
	}
	return "", ""
}

func errorsIsExpired(err error) bool {
	return errors.Is(err, errs.ReservationExpired) || errors.Is(err, errs.OrderExpired)
}

// splitName makes the aggregator's one name a buyer's first and last
// names: the first word, and the rest ("-" when there is none). Runs of
// spaces, tabs and line breaks count as one space.
func splitName(name string) (first, last string, err error) {
	first, last, _ = strings.Cut(strings.Join(strings.Fields(name), " "), " ")
	if last == "" {
		last = "-"
	}
	if utf8.RuneCountInString(first) > orders.MaxNameLength || utf8.RuneCountInString(last) > orders.MaxNameLength {
		return "", "", errs.Invalid("body.customer.name",
			fmt.Sprintf("its first word and the rest are each at most %d characters", orders.MaxNameLength), name)
	}
	return first, last, nil
}

// adapterNames are the adapter's names of the sales' request fields.
var adapterNames = map[string]string{
	"body.best_available.quantity": "body.quantity",
	"body.customer.first_name":     "body.customer.name", // the name's first word
	"body.customer.last_name":      "body.customer.name", // the rest of it
	"body.external_payment_id":     "body.paymentId",
}

// inAdapterTerms words a sales error of reserve or confirm in the adapter's names:
// sessionId for the event. (Seats of a seat_taken are named as the
// adapter's reserve takes them by the error model: see api.fromError.)
func inAdapterTerms(err error, sessionID string) error {
	var invalid *errs.ValidationError
	switch {
	case errors.As(err, &invalid):
		out := &errs.ValidationError{}
		for _, f := range invalid.Fields {
			if name, ok := adapterNames[f.Location]; ok {
				f.Location = name
			}
			if f.Location == "body.event_id" {
				f.Location, f.Value = "body.sessionId", sessionID
				f.Message = strings.Replace(f.Message, "the event", "the session", 1)
				if f.Message == strings.Replace(holds.MsgNoScheme, "the event", "the session", 1) {
					f.Message = "the session is general admission (hasSeats: false): it has no seats to reserve"
				}
			}
			out.Fields = append(out.Fields, f)
		}
		return out
	}
	return err
}

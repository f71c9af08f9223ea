package shop

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"
	ticketsales "github.com/ticketsales/ticketsales/sdk/go"
)

// cart is one buyer's: the hold while they choose, then their orders.
// Its fields are read and written under Shop.mu; busy is held while a
// request changes the cart, so a double click holds once and orders once.
type cart struct {
	busy        sync.Mutex
	id          string
	reservation string  // the held reservation, until it is ordered
	orders      []int64 // newest last, at most maxOrders
	touched     time.Time
}

const (
	// cartTTL is how long an untouched cart is kept: longer than any
	// hold (60 minutes at most) and the payment window.
	cartTTL = 3 * time.Hour
	// maxOrders is how many of a cart's orders the page shows.
	maxOrders = 5
	// callTimeout bounds a change's calls to the service. They run to
	// the end even when the buyer's browser goes away: a hold made and
	// then forgotten would keep its seats from everyone until it expired.
	callTimeout = 30 * time.Second
)

func (s *Shop) cookieName() string {
	if s.HTTPS {
		// Only this host over https can set it: a sibling subdomain
		// cannot plant a cart of its own in the buyer's browser.
		return "__Host-shop_cart"
	}
	return "shop_cart"
}

// cartOf finds the request's cart by its cookie; with start, a buyer
// without one gets a new cart (and untouched carts are dropped).
func (s *Shop) cartOf(w http.ResponseWriter, r *http.Request, start bool) *cart {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if ck, err := r.Cookie(s.cookieName()); err == nil {
		if c, ok := s.carts[ck.Value]; ok {
			c.touched = now
			return c
		}
	}
	if !start {
		return nil
	}
	if s.carts == nil {
		s.carts = map[string]*cart{}
	}
	for id, c := range s.carts {
		if now.Sub(c.touched) > cartTTL {
			delete(s.carts, id)
		}
	}
	c := &cart{id: rand.Text(), touched: now}
	s.carts[c.id] = c
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: c.id, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.HTTPS, MaxAge: int(cartTTL / time.Second)})
	return c
}

// holdRequest is what the page sends: the seats the buyer picked on the
// map, or the best available ones the map asked for.
type holdRequest struct {
	Seats         []ticketsales.SeatRef `json:"seats"`
	BestAvailable *struct {
		Quantity   int64  `json:"quantity"`
		CategoryID *int64 `json:"category_id"`
	} `json:"best_available"`
}

// heldView is what the page is told about a hold.
type heldView struct {
	Seats      []ticketsales.ReservationSeat `json:"seats"`
	ExpiresAt  time.Time                     `json:"expires_at"`
	Total      ticketsales.Money             `json:"total"`
	ServiceFee ticketsales.Money             `json:"service_fee"`
	TotalToPay ticketsales.Money             `json:"total_to_pay"`
}

// hold holds the buyer's seats. A cart that holds seats already has them
// replaced in one step (PATCH): if a new seat was taken meanwhile, the
// buyer keeps the seats they had. Best available makes a new hold and then
// releases the old one, so the buyer is never left with nothing.
func (s *Shop) hold(w http.ResponseWriter, r *http.Request) {
	var in holdRequest
	if !decode(w, r, &in) {
		return
	}
	switch {
	case (len(in.Seats) == 0) == (in.BestAvailable == nil):
		problem(w, http.StatusUnprocessableEntity, "invalid_hold", "Send either seats or best_available.")
		return
	case len(in.Seats) > MaxSeats:
		problem(w, http.StatusUnprocessableEntity, "invalid_hold", fmt.Sprintf("At most %d seats in one cart.", MaxSeats))
		return
	case in.BestAvailable != nil && (in.BestAvailable.Quantity < 1 || in.BestAvailable.Quantity > MaxSeats):
		problem(w, http.StatusUnprocessableEntity, "invalid_hold", fmt.Sprintf("Ask for 1 to %d seats.", MaxSeats))
		return
	}
	c := s.cartOf(w, r, true)
	c.busy.Lock()
	defer c.busy.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), callTimeout)
	defer cancel()
	s.mu.Lock()
	previous := c.reservation
	s.mu.Unlock()

	var held *ticketsales.Reservation
	if len(in.Seats) > 0 && previous != "" {
		res, err := ticketsales.Check(s.Tickets.ReplaceReservationSeatsWithResponse(ctx, previous,
			ticketsales.ReplaceSeatsInputBody{Seats: in.Seats}))
		var p *ticketsales.Problem
		switch {
		case err == nil:
			held = &res.JSON200.Data
		case errors.As(err, &p) && (p.Code == ticketsales.ProblemCodeReservationExpired ||
			p.Code == ticketsales.ProblemCodeInvalidState || p.Status == http.StatusNotFound):
			// The old hold is gone (it expired): hold afresh below.
		default:
			s.refuse(w, r, fmt.Errorf("replace the seats of reservation %s: %w", previous, err))
			return
		}
	}
	if held == nil {
		body := ticketsales.CreateReservationInputBody{EventId: s.EventID}
		if len(in.Seats) > 0 {
			body.Seats = &in.Seats
		} else {
			body.BestAvailable = &ticketsales.BestAvailable{Quantity: in.BestAvailable.Quantity}
			if in.BestAvailable.CategoryID != nil {
				body.BestAvailable.TicketCategoryIds = &[]int64{*in.BestAvailable.CategoryID}
			}
		}
		res, err := ticketsales.Check(s.Tickets.CreateReservationWithResponse(ctx, &ticketsales.CreateReservationParams{}, body))
		if err != nil {
			s.refuse(w, r, fmt.Errorf("hold seats of event %d: %w", s.EventID, err))
			return
		}
		held = &res.JSON201.Data
		if previous != "" {
			// The buyer's earlier seats go back on sale; if this fails they
			// go back when the hold expires anyway.
			if _, err := ticketsales.Check(s.Tickets.ReleaseReservationWithResponse(ctx, previous)); err != nil {
				s.log().WarnContext(ctx, "release a replaced hold", "reservation", previous, "err", err)
			}
		}
	}
	s.mu.Lock()
	c.reservation = held.Id
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, heldView{Seats: held.Seats, ExpiresAt: held.ExpiresAt,
		Total: held.Total, ServiceFee: held.ServiceFee, TotalToPay: held.TotalToPay})
}

// orderRequest is the buyer's form.
type orderRequest struct {
	Email     string `json:"email"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Phone     string `json:"phone"`
}

// order orders the cart's hold, to be paid on the payment page. The
// Idempotency-Key is the reservation and the buyer's details: the SDK's
// retry after a lost answer gets the same order, and details corrected
// after a refusal are a new request (the service keeps refusals per key
// too). A click again once the hold is ordered gets that order.
func (s *Shop) order(w http.ResponseWriter, r *http.Request) {
	var in orderRequest
	if !decode(w, r, &in) {
		return
	}
	c := s.cartOf(w, r, false)
	if c == nil {
		problem(w, http.StatusConflict, "no_hold", "Choose your seats first.")
		return
	}
	c.busy.Lock()
	defer c.busy.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), callTimeout)
	defer cancel()
	s.mu.Lock()
	reservation, cartID, orders := c.reservation, c.id, slices.Clone(c.orders)
	s.mu.Unlock()
	if reservation == "" {
		if len(orders) > 0 {
			if v, err := s.orderView(ctx, orders[len(orders)-1]); err == nil && v.Status == ticketsales.OrderStatusPendingPayment {
				writeJSON(w, http.StatusOK, v)
				return
			}
		}
		problem(w, http.StatusConflict, "no_hold", "Choose your seats first.")
		return
	}
	buyer := ticketsales.Customer{Email: openapi_types.Email(strings.TrimSpace(in.Email)),
		FirstName: strings.TrimSpace(in.FirstName), LastName: strings.TrimSpace(in.LastName),
		Phone: strings.TrimSpace(in.Phone)}
	details, _ := json.Marshal([]string{string(buyer.Email), buyer.FirstName, buyer.LastName, buyer.Phone})
	sum := sha256.Sum256(details)
	metadata := map[string]string{"shop": "example"}
	reference := "cart-" + cartID[:16]
	res, err := ticketsales.Check(s.Tickets.CreateOrderWithResponse(ctx,
		&ticketsales.CreateOrderParams{IdempotencyKey: "order-" + reservation + "-" + hex.EncodeToString(sum[:8])},
		ticketsales.CreateOrderInputBody{
			EventId:       s.EventID,
			ReservationId: &reservation,
			Payment:       ticketsales.CreateOrderInputBodyPaymentGateway,
			Reference:     &reference,
			Metadata:      &metadata,
			Customer:      buyer,
		}))
	if errors.Is(err, openapi_types.ErrValidationEmail) {
		// The SDK checks the address before sending it.
		writeProblem(w, http.StatusUnprocessableEntity, map[string]any{"status": http.StatusUnprocessableEntity,
			"code": "validation_error", "detail": "Check your details.",
			"errors": []map[string]string{{"location": "body.customer.email", "message": "must be an email address"}}})
		return
	}
	if err != nil {
		s.refuse(w, r, fmt.Errorf("order reservation %s: %w", reservation, err))
		return
	}
	o := res.JSON201.Data
	s.mu.Lock()
	c.reservation = ""
	c.orders = append(c.orders, o.Id)
	if len(c.orders) > maxOrders {
		c.orders = c.orders[len(c.orders)-maxOrders:]
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, viewOf(o, nil))
}

// orderView is what the page shows of an order: its payment link while it
// waits for payment, its tickets once paid. A ticket's barcode stays on
// the buyer's page (order_url), not in the shop's answers.
type orderView struct {
	ID         int64                   `json:"order_id"`
	Status     ticketsales.OrderStatus `json:"status"`
	Amount     ticketsales.Money       `json:"amount"`
	PaymentURL *string                 `json:"payment_url,omitempty"`
	Tickets    []ticketView            `json:"tickets"`
}

type ticketView struct {
	Number   string                   `json:"number"`
	Seat     *ticketsales.TicketSeat  `json:"seat"`
	Price    ticketsales.Money        `json:"price"`
	Status   ticketsales.TicketStatus `json:"status"`
	OrderURL string                   `json:"order_url"`
}

func viewOf(o ticketsales.Order, tickets []ticketsales.Ticket) orderView {
	v := orderView{ID: o.Id, Status: o.Status, Amount: o.Amount, Tickets: []ticketView{}}
	if o.Status == ticketsales.OrderStatusPendingPayment {
		v.PaymentURL = o.PaymentUrl
	}
	for _, t := range tickets {
		v.Tickets = append(v.Tickets, ticketView{Number: t.Number, Seat: t.Seat, Price: t.Price, Status: t.Status, OrderURL: t.OrderUrl})
	}
	return v
}

// orderView reads an order and, once it is paid, its tickets.
func (s *Shop) orderView(ctx context.Context, id int64) (orderView, error) {
	res, err := ticketsales.Check(s.Tickets.GetOrderWithResponse(ctx, id))
	if err != nil {
		return orderView{}, fmt.Errorf("read order %d: %w", id, err)
	}
	o := res.JSON200.Data
	if o.Status != ticketsales.OrderStatusPaid && o.Status != ticketsales.OrderStatusPartiallyRefunded {
		return viewOf(o, nil), nil
	}
	t, err := ticketsales.Check(s.Tickets.ListOrderTicketsWithResponse(ctx, id))
	if err != nil {
		return orderView{}, fmt.Errorf("read the tickets of order %d: %w", id, err)
	}
	return viewOf(o, t.JSON200.Data), nil
}

// orders is what the page reads on load and while the buyer pays: the
// cart's orders, newest first.
func (s *Shop) orders(w http.ResponseWriter, r *http.Request) {
	views := []orderView{}
	if c := s.cartOf(w, r, false); c != nil {
		s.mu.Lock()
		ids := slices.Clone(c.orders)
		s.mu.Unlock()
		for _, id := range slices.Backward(ids) {
			v, err := s.orderView(r.Context(), id)
			if err != nil {
				s.refuse(w, r, err)
				return
			}
			views = append(views, v)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"orders": views})
}

// decode reads a JSON body of at most 16 KB into v, refusing unknown
// members and anything after the value, and answers the refusal itself.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	// Only application/json: another site's form cannot send it without
	// a CORS preflight, which this shop never answers.
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		problem(w, http.StatusUnsupportedMediaType, "invalid_body", "Send application/json.")
		return false
	}
	d := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<10))
	d.DisallowUnknownFields()
	err := d.Decode(v)
	if err == nil && d.Decode(&struct{}{}) != io.EOF {
		err = errors.New("more than one JSON value")
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		problem(w, http.StatusRequestEntityTooLarge, "invalid_body", "The body is over 16 KB.")
		return false
	case err != nil:
		problem(w, http.StatusBadRequest, "invalid_body", "The body is not what this call takes: "+err.Error())
		return false
	}
	return true
}

// buyerCodes are the service's refusals a buyer can act on (other seats,
// other details, another time); the shop passes them on as they are.
var buyerCodes = []ticketsales.ProblemCode{
	ticketsales.ProblemCodeSeatTaken, ticketsales.ProblemCodeSeatNotForSale, ticketsales.ProblemCodeSoldOut,
	ticketsales.ProblemCodeSalesClosed, ticketsales.ProblemCodeSalesNotOpen, ticketsales.ProblemCodeValidationError,
	ticketsales.ProblemCodeReservationExpired, ticketsales.ProblemCodeInvalidState, ticketsales.ProblemCodeOrderExpired,
}

// refuse passes on a refusal the buyer can act on (its status, code and
// detail, the seats taken, the fields to correct). Anything else is the
// shop's to fix — its key, its scopes, its rate budget — and the buyer
// gets 503 or 502, with the service's request id in the shop's log.
func (s *Shop) refuse(w http.ResponseWriter, r *http.Request, err error) {
	var p *ticketsales.Problem
	if !errors.As(err, &p) || !slices.Contains(buyerCodes, p.Code) {
		if errors.As(err, &p) && (p.Status == http.StatusTooManyRequests || p.Status == http.StatusServiceUnavailable) {
			s.log().WarnContext(r.Context(), "the ticket service is busy", "code", p.Code, "request_id", p.RequestId, "err", err)
			problem(w, http.StatusServiceUnavailable, "busy", "Tickets are selling fast: try again in a moment.")
			return
		}
		s.fail(w, r, err)
		return
	}
	s.log().InfoContext(r.Context(), "the service refused", "code", p.Code, "request_id", p.RequestId, "err", err)
	detail := p.Title
	if p.Detail != nil {
		detail = *p.Detail
	}
	body := map[string]any{"status": p.Status, "code": p.Code, "detail": detail}
	if p.UnavailableSeats != nil {
		body["unavailable_seats"] = *p.UnavailableSeats
	}
	if p.Errors != nil {
		body["errors"] = *p.Errors
	}
	writeProblem(w, int(p.Status), body)
}

// fail answers 502: the service could not be reached, failed, or refused
// the shop itself. The service's request id is in the log, for its support.
func (s *Shop) fail(w http.ResponseWriter, r *http.Request, err error) {
	s.log().ErrorContext(r.Context(), "the ticket service failed", "err", err)
	problem(w, http.StatusBadGateway, "service_unavailable", "The ticket service did not answer; try again in a moment.")
}

func problem(w http.ResponseWriter, status int, code, detail string) {
	writeProblem(w, status, map[string]any{"status": status, "code": code, "detail": detail})
}

func writeProblem(w http.ResponseWriter, status int, body map[string]any) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

package orders

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// CheckoutReservation turns a live reservation into a paid order in one
// call, as an aggregator confirms: the order is created (payment taken
// outside) and confirmed with its own amount. Repeating it with the same
// payment returns the same paid order; a concurrent repeat finds the order
// the first one made. A confirm whose payment did not pay the order is
// refused.
func (s *Service) CheckoutReservation(ctx context.Context, p *apikey.Principal, reservationID string, c Customer, paymentID string) (*Order, error) {
	if err := checkPaymentRef(paymentID); err != nil {
		return nil, err // before the order is made
	}
	o, err := s.OfReservation(ctx, p, reservationID)
	if err != nil {
		return nil, err
	}
	// An order made by another confirm may not have its saga yet: Confirm
	// starts it when its update finds no workflow, after the payment is
	// accepted (starting it here first could fail with a 503 that claims
	// nothing changed while an earlier attempt's payment stands accepted).
	if o == nil {
		r, err := s.holds.GetReservation(ctx, p, reservationID)
		if err != nil {
			return nil, err
		}
		o, err = s.CreateOrder(ctx, p, CreateOrderInput{EventID: r.EventID, ReservationID: reservationID, Customer: c, Payment: states.PayExternally, Channel: states.ChannelAggregator})
		var se *errs.StateError
		if errors.As(err, &se) {
			// Ordered by a concurrent checkout: continue with its order.
			if o, err = s.OfReservation(ctx, p, reservationID); err == nil && o == nil {
				err = se
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if o.Status == states.OrderCancelled {
		return nil, fmt.Errorf("order %d: %w", o.ID, errs.OrderExpired)
	}
	if o.Status == states.OrderPendingPayment {
		return s.Confirm(ctx, p, o.ID, o.Amount.Amount, paymentID, "")
	}
	return s.paidWith(ctx, p, o.ID, paymentID)
}

// paidWith returns the order when paymentID is the payment that paid it. A
// confirm with another payment (a repeat, or one that lost a race) must not
// read as paid: that payment was not applied, and the partner or aggregator
// has to give it back.
func (s *Service) paidWith(ctx context.Context, p *apikey.Principal, orderID int64, paymentID string) (*Order, error) {
	o, err := store.GetOrder(ctx, s.db, p.CompanyID, p.IsTest(), orderID)
	if err != nil {
		return nil, err
	}
	if o.PaymentID == nil || *o.PaymentID != paymentID {
		return nil, &errs.StateError{Entity: "order", ID: strconv.FormatInt(orderID, 10), Status: "confirmed with another payment id"}
	}
	return s.View(o), nil
}

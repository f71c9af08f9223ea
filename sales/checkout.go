package sales

import (
	"context"
	"errors"
	"fmt"

	"ticketsales/apikey"
	"ticketsales/store"
)

// CheckoutReservation turns a live reservation into a paid order in one
// call, as an aggregator confirms: the order is created (payment taken
// outside) and confirmed with its own amount. Repeating it returns the same
// paid order; a concurrent repeat finds the order the first one made.
func (s *Service) CheckoutReservation(ctx context.Context, p *apikey.Principal, reservationID string, c Customer, paymentID string) (*Order, error) {
	o, err := s.OrderOfReservation(ctx, p, reservationID)
	if err != nil {
		return nil, err
	}
	if o != nil && o.Status == store.OrderPendingPayment {
		// Made by another confirm, which may not have started its saga
		// yet: without the workflow, the confirm below would find nothing
		// to update.
		so, err := store.GetOrder(ctx, s.db, p.CompanyID, p.IsTest(), o.ID)
		if err == nil {
			err = s.resumeSaga(ctx, so)
		}
		if err != nil {
			return nil, err
		}
	}
	if o == nil {
		r, err := s.GetReservation(ctx, p, reservationID)
		if err != nil {
			return nil, err
		}
		o, err = s.CreateOrder(ctx, p, CreateOrderInput{EventID: r.EventID, ReservationID: reservationID, Customer: c, Payment: "external"})
		var se *StateError
		if errors.As(err, &se) {
			// Ordered by a concurrent checkout: continue with its order.
			if o, err = s.OrderOfReservation(ctx, p, reservationID); err == nil && o == nil {
				err = se
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if o.Status != "pending_payment" {
		if o.Status == "cancelled" {
			return nil, fmt.Errorf("order %d: %w", o.ID, ErrOrderExpired)
		}
		return o, nil
	}
	return s.Confirm(ctx, p, o.ID, o.Amount.Amount, paymentID)
}

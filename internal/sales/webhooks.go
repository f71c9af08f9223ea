package sales

import (
	"context"
	"errors"
	"fmt"

	"ticketsales/internal/apikey"
	"ticketsales/internal/errs"
	"ticketsales/store"
)

// WebhookData is an event's data: the object as the API returns it. Order
// events carry the order as the change left it (its row is kept with the
// event); a refund and a reservation are read when the event is sent,
// moments after the change, and both are final by then apart from a
// refund's money status.
func (s *Service) WebhookData(ctx context.Context, ev *store.WebhookEvent) (any, error) {
	env := apikey.Production
	if ev.IsTest {
		env = apikey.Sandbox
	}
	p := &apikey.Principal{CompanyID: ev.CompanyID, Environment: env}
	switch ev.Type {
	case store.EventOrderCreated, store.EventOrderPaid, store.EventOrderCancelled, store.EventOrderDeleted:
		o, err := store.EventOrder(ctx, s.db, ev)
		if err != nil {
			return nil, err
		}
		return s.orderView(o), nil
	case store.EventOrderRefunded:
		if ev.RefundID == nil {
			return nil, fmt.Errorf("event %s names no refund", ev.ID)
		}
		r, err := s.GetRefund(ctx, p, *ev.RefundID)
		if errors.Is(err, errs.NotFound) {
			// A sandbox order deleted before the event went out.
			return map[string]any{"id": *ev.RefundID, "order_id": ev.OrderID}, nil
		}
		return r, err
	case store.EventReservationExpired:
		if ev.ReservationID == nil {
			return nil, fmt.Errorf("event %s names no reservation", ev.ID)
		}
		r, err := s.GetReservation(ctx, p, *ev.ReservationID)
		if errors.Is(err, errs.NotFound) {
			return map[string]any{"id": *ev.ReservationID, "status": "expired"}, nil
		}
		return r, err
	}
	return map[string]any{}, nil
}

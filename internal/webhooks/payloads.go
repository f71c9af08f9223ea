package webhooks

import (
	"context"
	"errors"
	"fmt"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/orders"
	"github.com/ticketsales/ticketsales/internal/refunds"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"

	"github.com/uptrace/bun"
)

// Payloads render events' data from the services that show the objects.
type Payloads struct {
	DB      *bun.DB
	Orders  *orders.Service
	Refunds *refunds.Service
	Holds   *holds.Service
}

// Render is an event's data: the object as the API returns it, of a type
// EventKinds names for the event's type (the API's document describes the
// data from them). Order
// events carry the order as the change left it (its row is kept with the
// event); a refund and a reservation are read when the event is sent,
// moments after the change, and both are final by then apart from a
// refund's money status.
func (r Payloads) Render(ctx context.Context, ev *store.WebhookEvent) (any, error) {
	env := apikey.Production
	if ev.IsTest {
		env = apikey.Sandbox
	}
	p := &apikey.Principal{CompanyID: ev.CompanyID, Environment: env}
	switch ev.Type {
	case states.EventTicketCheckedIn, states.EventTicketCheckInConflict, states.EventAllocationChanged:
		// The first admission as the scan recorded it (ticket, event, gate,
		// when), the conflict as the API lists it, or a channel's
		// allocation as its change left it: the object kept with the event
		// in the change's transaction (json.RawMessage).
		return ev.Snapshot, nil
	case states.EventOrderCreated, states.EventOrderPaid, states.EventOrderCancelled, states.EventOrderDeleted:
		o, err := store.GetEventOrder(ctx, r.DB, ev)
		if err != nil {
			return nil, err
		}
		return r.Orders.View(o), nil
	case states.EventOrderRefunded:
		if ev.RefundID == nil {
			return nil, fmt.Errorf("event %s names no refund", ev.ID)
		}
		rf, err := r.Refunds.Get(ctx, p, *ev.RefundID)
		if errors.Is(err, errs.NotFound) {
			// A sandbox order deleted before the event went out.
			d := DeletedRefund{ID: *ev.RefundID}
			if ev.OrderID != nil {
				d.OrderID = *ev.OrderID
			}
			return d, nil
		}
		return rf, err
	case states.EventReservationExpired:
		if ev.ReservationID == nil {
			return nil, fmt.Errorf("event %s names no reservation", ev.ID)
		}
		rs, err := r.Holds.GetReservation(ctx, p, *ev.ReservationID)
		if errors.Is(err, errs.NotFound) {
			return GoneReservation{ID: *ev.ReservationID, Status: states.ReservationExpired}, nil
		}
		return rs, err
	}
	return map[string]any{}, nil
}

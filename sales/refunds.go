package sales

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"ticketsales/activities"
	"ticketsales/apikey"
	"ticketsales/pricing"
	"ticketsales/store"
	"ticketsales/workflows"
)

// RefundView is a refund as partners see it.
type RefundView struct {
	ID              string        `json:"id"`
	OrderID         int64         `json:"order_id"`
	Status          string        `json:"status" enum:"pending,completed" doc:"completed once the money is returned (at once for external orders)."`
	Amount          pricing.Money `json:"amount" doc:"Money returned by this refund."`
	MoneyReturnedBy string        `json:"money_returned_by" enum:"gateway,external" doc:"gateway: the service returned the money; external: the partner returns it."`
	Reason          string        `json:"reason"`
	Tickets         []Ticket      `json:"tickets" doc:"The tickets this refund voided."`
	OrderStatus     string        `json:"order_status"`
	CreatedAt       time.Time     `json:"created_at"`
}

// refundWait bounds how long a refund request waits for its workflow.
const refundWait = 15 * time.Second

// Refund voids tickets of a paid order (all active ones when ticketIDs is
// empty) and returns their money through the refund workflow.
func (s *Service) Refund(ctx context.Context, p *apikey.Principal, orderID int64, ticketIDs []int64, reason string) (*RefundView, error) {
	o, err := store.GetOrder(ctx, s.db, p.CompanyID, p.IsTest(), orderID)
	if err != nil {
		return nil, err
	}
	// Refuse what cannot be refunded before any workflow starts.
	if err := refundError(store.CheckRefund(ctx, s.db, o, ticketIDs)); err != nil {
		return nil, err
	}
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	id := "rf_" + hex.EncodeToString(b)
	run, err := s.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: workflows.RefundWorkflowID(id), TaskQueue: s.TaskQueue, WorkflowExecutionErrorWhenAlreadyStarted: true,
		TypedSearchAttributes: temporal.NewSearchAttributes(workflows.CompanyIDAttr.ValueSet(o.CompanyID),
			workflows.EventIDAttr.ValueSet(o.EventID), workflows.IsTestAttr.ValueSet(o.IsTest),
			workflows.OrderStatusAttr.ValueSet(o.Status)),
	}, workflows.Refund, workflows.RefundInput{RefundID: id, OrderID: o.ID, CompanyID: o.CompanyID, EventID: o.EventID,
		IsTest: o.IsTest, TicketIDs: ticketIDs})
	if err != nil {
		return nil, fmt.Errorf("start refund of order %d: %w: %w", orderID, ErrUnavailable, err)
	}
	wctx, cancel := context.WithTimeout(ctx, refundWait)
	defer cancel()
	var st workflows.RefundStatus
	if err := run.Get(wctx, &st); err != nil {
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeRefundRefused {
			// Refunded by a concurrent request meanwhile.
			return nil, &StateError{Entity: "order", ID: strconv.FormatInt(orderID, 10), Status: "refunded meanwhile"}
		}
		if wctx.Err() == nil {
			return nil, fmt.Errorf("refund %s: %w", id, err)
		}
		// Still running (the gateway is slow): report it as pending below.
	}
	if _, err := store.GetRefund(ctx, s.db, id); errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("refund %s not recorded yet: %w", id, ErrUnavailable)
	}
	s.seatsChanged(o.EventID)
	// The reason is the partner's free text: it stays out of workflow history.
	if _, err := s.db.NewRaw("UPDATE refunds SET reason = ? WHERE id = ?", reason, id).Exec(ctx); err != nil {
		return nil, fmt.Errorf("store reason of refund %s: %w", id, err)
	}
	return s.GetRefund(ctx, p, id)
}

// GetRefund returns a refund of the caller's order.
func (s *Service) GetRefund(ctx context.Context, p *apikey.Principal, id string) (*RefundView, error) {
	r, err := store.GetRefund(ctx, s.db, id)
	if err != nil {
		return nil, err
	}
	o, err := store.GetOrder(ctx, s.db, p.CompanyID, p.IsTest(), r.OrderID)
	if err != nil {
		return nil, err
	}
	all, err := s.ticketsOf(ctx, o)
	if err != nil {
		return nil, err
	}
	view := &RefundView{ID: r.ID, OrderID: r.OrderID, Status: r.Status, Amount: pricing.Money{Amount: r.Amount, Currency: o.Currency},
		MoneyReturnedBy: r.MoneyReturnedBy, Reason: r.Reason, OrderStatus: o.Status, CreatedAt: r.CreatedAt, Tickets: []Ticket{}}
	for _, t := range all {
		for _, tid := range r.TicketIDs {
			if t.ID == tid {
				view.Tickets = append(view.Tickets, t)
			}
		}
	}
	return view, nil
}

func refundError(err error) error {
	var se *store.StateError
	var te *store.RefundTicketsError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && len(te.NotInOrder) > 0:
		verr := &ValidationError{}
		for _, id := range te.NotInOrder {
			verr.add("body.ticket_ids", "not a ticket of this order", id)
		}
		return verr
	case errors.As(err, &te):
		return &StateError{Entity: "ticket", ID: fmt.Sprint(te.Refunded), Status: "refunded already"}
	case errors.As(err, &se):
		return &StateError{Entity: se.Entity, ID: se.ID, Status: se.Status}
	}
	return err
}

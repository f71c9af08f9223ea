package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"go.temporal.io/api/serviceerror"

	"ticketsales/apikey"
	"ticketsales/gateway"
	"ticketsales/sales"
	"ticketsales/store"
	"ticketsales/workflows"
)

type createOrderInput struct {
	Body struct {
		EventID        int64                  `json:"event_id" minimum:"1"`
		ReservationID  string                 `json:"reservation_id,omitempty" maxLength:"64" doc:"For events with a scheme."`
		Items          []sales.OrderItemInput `json:"items,omitempty" maxItems:"20" doc:"For events without a scheme."`
		ScheduleSlotID int64                  `json:"schedule_slot_id,omitempty" minimum:"1" doc:"For scheduled events: the id of a /v1/sessions item."`
		Customer       sales.Customer         `json:"customer"`
		Payment        string                 `json:"payment" enum:"gateway,external"`
	}
}

// OrderPath is the {id} of an order.
type OrderPath struct {
	ID int64 `path:"id" minimum:"1" doc:"Order id."`
}

type confirmInput struct {
	OrderPath
	Body struct {
		ExternalPaymentID string `json:"external_payment_id" minLength:"1" maxLength:"200" doc:"The partner's payment reference."`
		PaidAmount        int64  `json:"paid_amount" minimum:"0" doc:"Minor units; must equal the order amount."`
	}
}

type listOrdersInput struct {
	PageParams
	Status      string    `query:"filter.status" enum:"pending_payment,paid,cancelled,partially_refunded,refunded"`
	EventID     int64     `query:"filter.event_id" minimum:"1"`
	CreatedFrom time.Time `query:"filter.created_from" doc:"Orders created at or after this ISO 8601 time."`
	CreatedTo   time.Time `query:"filter.created_to" doc:"Orders created before this ISO 8601 time."`
}

type orderOutput struct {
	Location string `header:"Location"`
	Body     Envelope[*sales.Order]
}

func (s *Server) registerOrders(api huma.API) {
	tags := []string{"Orders"}
	huma.Register(api, idempotent(scoped(huma.Operation{
		OperationID: "create-order", Method: http.MethodPost, Path: "/orders", Tags: tags, DefaultStatus: http.StatusCreated,
		Summary: "Create an order from a reservation or items",
		Description: "`payment=gateway`: the buyer pays at `payment_url`. `payment=external`: the partner takes the payment " +
			"and calls confirm. The order holds its seats for the payment window (`expires_at`).",
		Errors: []int{http.StatusNotFound, http.StatusServiceUnavailable},
	}, apikey.ScopeOrdersWrite)), func(ctx context.Context, in *createOrderInput) (*orderOutput, error) {
		b := in.Body
		o, err := s.deps.Sales.CreateOrder(ctx, principal(ctx), sales.CreateOrderInput{EventID: b.EventID,
			ReservationID: b.ReservationID, Items: b.Items, ScheduleSlotID: b.ScheduleSlotID, Customer: b.Customer, Payment: b.Payment})
		if err != nil {
			return nil, fromError(ctx, s.log, err)
		}
		return &orderOutput{Location: "/v1/orders/" + strconv.FormatInt(o.ID, 10), Body: Envelope[*sales.Order]{Data: o, RequestID: RequestID(ctx)}}, nil
	})

	huma.Register(api, scoped(huma.Operation{
		OperationID: "list-orders", Method: http.MethodGet, Path: "/orders", Tags: tags,
		Summary: "List orders, newest first", Errors: []int{http.StatusUnprocessableEntity},
	}, apikey.ScopeOrdersRead), func(ctx context.Context, in *listOrdersInput) (*listOutput[*sales.Order], error) {
		items, total, err := s.deps.Sales.ListOrders(ctx, principal(ctx), store.OrderFilter{Status: in.Status, EventID: in.EventID,
			CreatedFrom: in.CreatedFrom, CreatedTo: in.CreatedTo, Page: in.Page, PerPage: in.PerPage})
		if err != nil {
			return nil, fromError(ctx, s.log, err)
		}
		return page(ctx, items, in.PageParams, total), nil
	})

	huma.Register(api, scoped(huma.Operation{
		OperationID: "get-order", Method: http.MethodGet, Path: "/orders/{id}", Tags: tags,
		Summary: "Get an order", Errors: []int{http.StatusNotFound},
	}, apikey.ScopeOrdersRead), func(ctx context.Context, in *OrderPath) (*dataOutput[*sales.Order], error) {
		o, err := s.deps.Sales.GetOrder(ctx, principal(ctx), in.ID)
		if err != nil {
			return nil, fromError(ctx, s.log, err)
		}
		return ok(ctx, o), nil
	})

	huma.Register(api, idempotent(scoped(huma.Operation{
		OperationID: "confirm-order", Method: http.MethodPost, Path: "/orders/{id}/confirm", Tags: tags,
		Summary:     "Confirm an external payment",
		Description: "For `payment=external`. The order becomes paid and its tickets are issued before this answers. A repeat returns the same paid order; a different `paid_amount` gives 422 `amount_mismatch` and changes nothing.",
		Errors:      []int{http.StatusNotFound, http.StatusServiceUnavailable},
	}, apikey.ScopeOrdersWrite)), func(ctx context.Context, in *confirmInput) (*dataOutput[*sales.Order], error) {
		o, err := s.deps.Sales.Confirm(ctx, principal(ctx), in.ID, in.Body.PaidAmount, in.Body.ExternalPaymentID)
		if err != nil {
			return nil, fromError(ctx, s.log, err)
		}
		return ok(ctx, o), nil
	})

	huma.Register(api, scoped(huma.Operation{
		OperationID: "cancel-order", Method: http.MethodPost, Path: "/orders/{id}/cancel", Tags: tags,
		Summary: "Cancel an unpaid order", Description: "Frees its seats. A paid order answers 409 `order_paid`: refund it instead.",
		Errors: []int{http.StatusNotFound, http.StatusConflict},
	}, apikey.ScopeOrdersWrite), func(ctx context.Context, in *OrderPath) (*dataOutput[*sales.Order], error) {
		o, err := s.deps.Sales.Cancel(ctx, principal(ctx), in.ID)
		if err != nil {
			return nil, fromError(ctx, s.log, err)
		}
		return ok(ctx, o), nil
	})

	huma.Register(api, scoped(huma.Operation{
		OperationID: "list-order-tickets", Method: http.MethodGet, Path: "/orders/{id}/tickets", Tags: tags,
		Summary: "List an order's tickets (empty until it is paid)", Errors: []int{http.StatusNotFound},
	}, apikey.ScopeOrdersRead), func(ctx context.Context, in *OrderPath) (*dataOutput[[]sales.Ticket], error) {
		ts, err := s.deps.Sales.Tickets(ctx, principal(ctx), in.ID)
		if err != nil {
			return nil, fromError(ctx, s.log, err)
		}
		if ts == nil {
			ts = []sales.Ticket{}
		}
		return ok(ctx, ts), nil
	})
}

type refundInput struct {
	OrderPath
	Body struct {
		TicketIDs []int64 `json:"ticket_ids,omitempty" maxItems:"20" doc:"Omit for a full refund; give ticket ids to refund only those."`
		Reason    string  `json:"reason,omitempty" maxLength:"500"`
	}
}

func (s *Server) registerRefunds(api huma.API) {
	huma.Register(api, idempotent(scoped(huma.Operation{
		OperationID: "refund-order", Method: http.MethodPost, Path: "/orders/{id}/refund", Tags: []string{"Orders"},
		Summary: "Refund a paid order, fully or by tickets", DefaultStatus: http.StatusCreated,
		Description: "Voids the tickets at once (their barcodes stop being valid) and puts their seats back on sale. " +
			"Gateway orders get their money back through the gateway (`money_returned_by: gateway`); for external " +
			"orders the partner returns it (`money_returned_by: external`). The refund that voids the last active " +
			"ticket returns the rest of the order amount, fee included, so an order's refunds sum to its amount.",
		Errors: []int{http.StatusNotFound, http.StatusConflict, http.StatusServiceUnavailable},
	}, apikey.ScopeOrdersWrite)), func(ctx context.Context, in *refundInput) (*dataOutput[*sales.RefundView], error) {
		r, err := s.deps.Sales.Refund(ctx, principal(ctx), in.ID, in.Body.TicketIDs, in.Body.Reason)
		if err != nil {
			return nil, fromError(ctx, s.log, err)
		}
		return ok(ctx, r), nil
	})
}

type gatewayCallbackInput struct {
	Signature string `header:"X-Gateway-Signature" required:"true"`
	RawBody   []byte
}

// registerGatewayCallback takes the payment gateway's signed result and
// signals the order workflow; the workflow applies it.
func (s *Server) registerGatewayCallback(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "gateway-callback", Method: http.MethodPost, Path: "/gateway/callback", Tags: []string{"Gateway"},
		Summary: "Payment result from the gateway (HMAC-signed)", DefaultStatus: http.StatusNoContent, Hidden: true,
		Errors: []int{http.StatusUnauthorized, http.StatusBadRequest},
	}, func(ctx context.Context, in *gatewayCallbackInput) (*struct{}, error) {
		if !gateway.Verify(s.deps.GatewaySecret, in.RawBody, in.Signature) {
			return nil, newProblem(ctx, http.StatusUnauthorized, "unauthenticated", "Bad callback signature.")
		}
		var cb gateway.Callback
		if err := json.Unmarshal(in.RawBody, &cb); err != nil || cb.OrderID == 0 {
			return nil, newProblem(ctx, http.StatusBadRequest, "malformed_request", "Bad callback body.")
		}
		o, err := store.GetOrderByID(ctx, s.deps.DB, cb.OrderID)
		if err != nil {
			return nil, fromError(ctx, s.log, err)
		}
		if o.Status != store.OrderPendingPayment {
			// The order can no longer take a payment: a paid callback's
			// money goes back at once (keyed, so once), nothing else to do.
			if cb.Status == "paid" && s.deps.Gateway != nil {
				err = gateway.RefundUnapplied(ctx, s.deps.DB, s.deps.Gateway, cb.OrderID, cb.PaymentID)
			}
		} else {
			err = s.deps.Temporal.SignalWorkflow(ctx, workflows.OrderWorkflowID(cb.OrderID), "", workflows.PaymentSignal,
				workflows.PaymentEvent{Status: cb.Status, PaymentID: cb.PaymentID})
			var done *serviceerror.NotFound
			if errors.As(err, &done) && cb.Status == "paid" && s.deps.Gateway != nil {
				// The saga ended between the read and the signal.
				err = gateway.RefundUnapplied(ctx, s.deps.DB, s.deps.Gateway, cb.OrderID, cb.PaymentID)
			}
		}
		if err != nil {
			return nil, fromError(ctx, s.log, err)
		}
		return nil, nil
	})
}

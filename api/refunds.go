package api

import (
	"cmp"
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/ticketsales/ticketsales/api/request"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/refunds"
	"github.com/ticketsales/ticketsales/internal/states"
)

type refundInput struct {
	OrderPath
	Body *refundBody // none: a full refund
}

type refundBody struct {
	// Unique ids are checked by the sales service: Huma's uniqueItems
	// check panics on malformed items such as nested arrays.
	TicketIDs []int64 `json:"ticket_ids,omitempty" maxItems:"20" doc:"Omit for a full refund; give ticket ids (each once) to refund only those."`
	Reason    string  `json:"reason,omitempty" maxLength:"500"`
}

type refundOutput struct {
	Status   int
	Location string `header:"Location"`
	Body     Envelope[*refunds.Refund]
}

// RefundPath is the {id} of a refund.
type RefundPath struct {
	ID string `path:"id" maxLength:"64" doc:"Refund id."`
}

func (s *Server) registerRefunds(api huma.API) {
	huma.Register(api, idempotent(request.Scoped(huma.Operation{
		OperationID: "refund-order", Method: http.MethodPost, Path: "/orders/{id}/refund", Tags: []string{"Orders"},
		Summary: "Refund a paid order, fully or by tickets", DefaultStatus: http.StatusCreated,
		Description: "Voids the tickets at once (their barcodes stop being valid) and puts their seats back on sale. " +
			"Gateway orders get their money back through the gateway (`money_returned_by: gateway`); for external " +
			"orders the partner returns it (`money_returned_by: external`). The refund that voids the last active " +
			"ticket returns the rest of the order amount, fee included, so an order's refunds sum to its amount.\n\n" +
			"201: the refund is complete. 202: the tickets are voided and the gateway is still returning the money " +
			"(`status: pending`); read it at `Location` (`GET /v1/refunds/{id}`). A retry with the same Idempotency-Key " +
			"finds the same refund, whatever happened to the first answer.",
		Responses: map[string]*huma.Response{"202": {Description: "Accepted: tickets voided, money on its way back."}},
		Errors:    []int{http.StatusNotFound, http.StatusConflict, http.StatusServiceUnavailable},
	}, apikey.ScopeOrdersWrite)), func(ctx context.Context, in *refundInput) (*refundOutput, error) {
		body, p := cmp.Or(in.Body, &refundBody{}), request.Caller(ctx)
		rec, err := s.deps.Refunds.Refund(ctx, refunds.Request{By: refunds.AsPartner(p), OrderID: in.ID, TicketIDs: body.TicketIDs,
			Reason: body.Reason, Source: refunds.FromIdempotencyKey(request.IdempotencyKey(ctx))})
		if err != nil {
			return nil, err
		}
		r, err := s.deps.Refunds.View(ctx, p, rec)
		if err != nil {
			return nil, err
		}
		out := &refundOutput{Status: http.StatusCreated, Location: "/v1/refunds/" + r.ID, Body: Envelope[*refunds.Refund]{Data: r, RequestID: request.ID(ctx)}}
		if r.Status != states.RefundCompleted {
			out.Status = http.StatusAccepted
		}
		return out, nil
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "list-order-refunds", Method: http.MethodGet, Path: "/orders/{id}/refunds", Tags: []string{"Orders"},
		Summary:     "List an order's refunds",
		Description: "Every refund of the order, oldest first, as `GET /v1/refunds/{id}` answers each: its amount, tickets, status and who returns the money. An order's completed and pending refunds sum to at most its amount.",
		Errors:      []int{http.StatusNotFound},
	}, apikey.ScopeOrdersRead), func(ctx context.Context, in *OrderPath) (*dataOutput[[]*refunds.Refund], error) {
		rs, err := s.deps.Refunds.OfOrder(ctx, request.Caller(ctx), in.ID)
		return reply(ctx, rs, err)
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "get-refund", Method: http.MethodGet, Path: "/refunds/{id}", Tags: []string{"Orders"},
		Summary: "Get a refund", Description: "Its status moves from `pending` to `completed` once the gateway returned the money.",
		Errors: []int{http.StatusNotFound},
	}, apikey.ScopeOrdersRead), func(ctx context.Context, in *RefundPath) (*dataOutput[*refunds.Refund], error) {
		r, err := s.deps.Refunds.Get(ctx, request.Caller(ctx), in.ID)
		return reply(ctx, r, err)
	})
}

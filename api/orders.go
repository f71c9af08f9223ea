package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/ticketsales/ticketsales/api/request"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/orders"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

type createOrderInput struct {
	Simulate string `header:"Sandbox-Simulate" enum:"payment_timeout" doc:"Sandbox keys only: payment_timeout makes the order's payment window 10 seconds, so it expires (cancel_reason payment_timeout, seats back, order.cancelled) as an unpaid order does after 15 minutes. A production key is refused (422)."`
	Body     struct {
		EventID        int64                `json:"event_id" minimum:"1"`
		ReservationID  string               `json:"reservation_id,omitempty" maxLength:"64" doc:"For events with a scheme."`
		Items          []orders.Item        `json:"items,omitempty" maxItems:"20" doc:"For events without a scheme."`
		ScheduleSlotID int64                `json:"schedule_slot_id,omitempty" minimum:"1" doc:"For scheduled events: the id of a /v1/sessions item."`
		Customer       orders.Customer      `json:"customer"`
		Payment        states.PaymentMethod `json:"payment"`
		Reference      string               `json:"reference,omitempty" minLength:"1" maxLength:"64" doc:"Your own id of the order (1 to 64 characters, one line), echoed on the order and its webhooks; look orders up by it with filter.reference. Not unique: an order of a cart ordered again (after the first expired) may carry it too."`
		Metadata       orderMetadata        `json:"metadata,omitempty" doc:"Your key-value pairs, echoed on the order and its webhooks: at most 20 keys, each 1 to 40 characters of A-Z, a-z, 0-9, _, . and -; values strings of at most 500 characters, one line. Look orders up by one pair with filter.metadata."`
	}
}

// orderMetadata is an order's metadata in a request: its schema states
// the bounds the schema can (orders.CheckMetadata checks them all).
type orderMetadata map[string]string

// TransformSchema bounds the count of keys and each value's length.
func (orderMetadata) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	s.MaxProperties = ptr(orders.MaxMetadataKeys)
	if v, ok := s.AdditionalProperties.(*huma.Schema); ok {
		v.MaxLength = ptr(orders.MaxMetadataValue)
		v.PrecomputeMessages()
	}
	return s
}

// OrderPath is the {id} of an order.
type OrderPath struct {
	ID int64 `path:"id" minimum:"1" doc:"Order id."`
}

type confirmInput struct {
	OrderPath
	Simulate string `header:"Sandbox-Simulate" enum:"confirm_accepted" doc:"Sandbox keys only: confirm_accepted answers 202 at once (payment accepted, still pending_payment, tickets follow within seconds), as when the order's workflow is slow. A production key is refused (422)."`
	Body     struct {
		ExternalPaymentID string `json:"external_payment_id" minLength:"1" maxLength:"200" doc:"The partner's payment reference."`
		PaidAmount        int64  `json:"paid_amount" minimum:"0" doc:"Minor units; must equal the order amount."`
	}
}

type listOrdersInput struct {
	PageParams
	Status      states.OrderStatus `query:"filter.status"`
	EventID     int64              `query:"filter.event_id" minimum:"1"`
	CreatedFrom string             `query:"filter.created_from" doc:"Orders created at or after: a date (YYYY-MM-DD, UTC) or an ISO 8601 timestamp."`
	CreatedTo   string             `query:"filter.created_to" doc:"Orders created before the end of this date (YYYY-MM-DD, UTC) or before this timestamp."`
	Reference   string             `query:"filter.reference" maxLength:"64" doc:"Orders with this reference, exactly. Several may carry one."`
	PaymentID   string             `query:"filter.payment_id" maxLength:"200" doc:"Orders whose payment_id is this, exactly: the external_payment_id of an applied confirm, or the gateway's payment id."`
	Email       string             `query:"filter.email" maxLength:"254" doc:"Orders of the buyer with this e-mail address (case aside)."`
	Metadata    string             `query:"filter.metadata" maxLength:"541" doc:"Orders whose metadata has this pair, given as key:value (split at the first colon), exactly."`

	from, to           time.Time
	metaKey, metaValue string
}

// Resolve parses the creation bounds and checks the lookups, reporting
// every bad one at once.
func (in *listOrdersInput) Resolve(ctx huma.Context) []error {
	bad := in.PageParams.Resolve(ctx)
	var err error
	if in.from, err = parseDateOrTime("query.filter.created_from", in.CreatedFrom, false); err != nil {
		bad = append(bad, err)
	}
	if in.to, err = parseDateOrTime("query.filter.created_to", in.CreatedTo, true); err != nil {
		bad = append(bad, err)
	}
	if in.Metadata != "" {
		var colon bool
		in.metaKey, in.metaValue, colon = strings.Cut(in.Metadata, ":")
		bad = append(bad, metadataPairErrors(in.Metadata, colon, in.metaKey, in.metaValue)...)
	}
	lookups := &errs.ValidationError{}
	orders.CheckLookups("query.filter.", in.Reference, in.PaymentID, in.Email, lookups)
	for _, f := range lookups.Fields {
		bad = append(bad, &huma.ErrorDetail{Location: f.Location, Message: f.Message, Value: f.Value})
	}
	return bad
}

// metadataPairErrors is what is wrong with filter.metadata, given (raw)
// as key:value.
func metadataPairErrors(raw string, colon bool, key, value string) []error {
	verr := &errs.ValidationError{}
	if !colon {
		verr.Add("query.filter.metadata", "give key:value, e.g. cart_id:c-1042", nil)
	} else {
		orders.CheckMetadataPair("query.filter.metadata", key, value, verr)
	}
	var out []error
	for _, f := range verr.Fields {
		out = append(out, &huma.ErrorDetail{Location: f.Location, Message: f.Message, Value: raw})
	}
	return out
}

// confirmOutput is 200 with the paid order, or 202 with the order still
// pending_payment whose payment is accepted (Location: where to read it).
type confirmOutput struct {
	Status     int
	Location   string `header:"Location" doc:"202: the order, to read until it is paid."`
	RetryAfter string `header:"Retry-After" doc:"202: seconds before reading the order again."`
	Body       Envelope[*orders.Order]
}

type orderOutput struct {
	Location string `header:"Location"`
	Body     Envelope[*orders.Order]
}

func (s *Server) registerOrders(api huma.API) {
	tags := []string{"Orders"}
	huma.Register(api, idempotent(request.Scoped(huma.Operation{
		OperationID: "create-order", Method: http.MethodPost, Path: "/orders", Tags: tags, DefaultStatus: http.StatusCreated,
		Summary: "Create an order from a reservation or items",
		Description: "`payment=gateway`: the buyer pays at `payment_url`. `payment=external`: the partner takes the payment " +
			"and calls confirm. The order holds its seats for the payment window (`expires_at`).",
		Errors: []int{http.StatusNotFound, http.StatusServiceUnavailable},
	}, apikey.ScopeOrdersWrite)), func(ctx context.Context, in *createOrderInput) (*orderOutput, error) {
		b := in.Body
		o, err := s.deps.Orders.CreateOrder(ctx, request.Caller(ctx), orders.CreateOrderInput{EventID: b.EventID,
			ReservationID: b.ReservationID, Items: b.Items, ScheduleSlotID: b.ScheduleSlotID, Customer: b.Customer, Payment: b.Payment, Simulate: in.Simulate,
			Reference: b.Reference, Metadata: b.Metadata})
		if err != nil {
			return nil, err
		}
		return &orderOutput{Location: "/v1/orders/" + strconv.FormatInt(o.ID, 10), Body: Envelope[*orders.Order]{Data: o, RequestID: request.ID(ctx)}}, nil
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "list-orders", Method: http.MethodGet, Path: "/orders", Tags: tags,
		Summary: "List orders, newest first",
		Description: "Filters combine. The lookups `filter.reference`, `filter.payment_id`, `filter.email` and " +
			"`filter.metadata` find your orders by your own records: a reference is not unique, so a lookup may " +
			"find several (an expired order and the one that replaced it). Only the key's company and environment " +
			"are searched.",
		Errors: []int{http.StatusUnprocessableEntity},
	}, apikey.ScopeOrdersRead), func(ctx context.Context, in *listOrdersInput) (*listOutput[*orders.Order], error) {
		items, total, err := s.deps.Orders.ListOrders(ctx, request.Caller(ctx), store.OrderFilter{Status: in.Status, EventID: in.EventID,
			CreatedFrom: in.from, CreatedTo: in.to, Page: in.Page, PerPage: in.PerPage, After: in.after,
			Reference: in.Reference, PaymentID: in.PaymentID, Email: in.Email, MetadataKey: in.metaKey, MetadataValue: in.metaValue})
		return replyPage(ctx, items, in.PageParams, total, err, orderSeek)
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "get-order", Method: http.MethodGet, Path: "/orders/{id}", Tags: tags,
		Summary: "Get an order", Errors: []int{http.StatusNotFound},
	}, apikey.ScopeOrdersRead), func(ctx context.Context, in *OrderPath) (*dataOutput[*orders.Order], error) {
		o, err := s.deps.Orders.GetOrder(ctx, request.Caller(ctx), in.ID)
		return reply(ctx, o, err)
	})

	huma.Register(api, provisionalAccepted(idempotent(request.Scoped(huma.Operation{
		OperationID: "confirm-order", Method: http.MethodPost, Path: "/orders/{id}/confirm", Tags: tags,
		Summary: "Confirm an external payment",
		Description: "For `payment=external`. The payment is accepted (recorded with the order) first, then the order " +
			"becomes paid and its tickets are issued; normally before this answers (200, `status: paid`). " +
			"A different `paid_amount` gives 422 `amount_mismatch` and changes nothing; after the payment window, " +
			"409 `order_expired` and nothing is recorded.\n\n" +
			"202: the payment is accepted but the order did not finish in time. The order is returned still " +
			"`pending_payment` with `payment_accepted_at` set: it will be paid with this payment (its seats are kept " +
			"even past `expires_at`) and its tickets follow. Read it at `Location`, or repeat the confirm with the same " +
			"`external_payment_id` (any Idempotency-Key): a repeat returns the paid order once it is. " +
			"A 202 is never replayed for its Idempotency-Key: a retry asks again.",
		DefaultStatus: http.StatusOK,
		Responses:     map[string]*huma.Response{"202": {Description: "Accepted: the payment is on record, the tickets follow."}},
		Errors:        []int{http.StatusNotFound, http.StatusServiceUnavailable},
	}, apikey.ScopeOrdersWrite))), func(ctx context.Context, in *confirmInput) (*confirmOutput, error) {
		o, err := s.deps.Orders.Confirm(ctx, request.Caller(ctx), in.ID, in.Body.PaidAmount, in.Body.ExternalPaymentID, in.Simulate)
		if err != nil {
			return nil, err
		}
		out := &confirmOutput{Status: http.StatusOK, Body: Envelope[*orders.Order]{Data: o, RequestID: request.ID(ctx)}}
		if o.Status == states.OrderPendingPayment {
			out.Status = http.StatusAccepted
			out.Location = "/v1/orders/" + strconv.FormatInt(o.ID, 10)
			out.RetryAfter = "5"
		}
		return out, nil
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "cancel-order", Method: http.MethodPost, Path: "/orders/{id}/cancel", Tags: tags,
		Summary: "Cancel an unpaid order", Description: "Frees its seats. A paid order answers 409 `order_paid`: refund it instead.",
		Errors: []int{http.StatusNotFound, http.StatusConflict},
	}, apikey.ScopeOrdersWrite), func(ctx context.Context, in *OrderPath) (*dataOutput[*orders.Order], error) {
		o, err := s.deps.Orders.Cancel(ctx, request.Caller(ctx), in.ID)
		return reply(ctx, o, err)
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "list-order-tickets", Method: http.MethodGet, Path: "/orders/{id}/tickets", Tags: tags,
		Summary: "List an order's tickets (empty until it is paid)", Errors: []int{http.StatusNotFound},
	}, apikey.ScopeOrdersRead), func(ctx context.Context, in *OrderPath) (*dataOutput[[]orders.Ticket], error) {
		ts, err := s.deps.Orders.Tickets(ctx, request.Caller(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		if ts == nil {
			ts = []orders.Ticket{}
		}
		return ok(ctx, ts), nil
	})
}

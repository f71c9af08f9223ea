package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/ticketsales/ticketsales/api/request"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/internal/webhooks"
)

type createWebhookEndpointInput struct {
	Body struct {
		URL         string                    `json:"url" minLength:"1" maxLength:"2000" doc:"Where events are POSTed: https for production endpoints; never a loopback, private or link-local address."`
		EventTypes  []states.WebhookEventType `json:"event_types,omitempty" maxItems:"20" doc:"The event types to send; omit or leave empty for all."`
		Enabled     *bool                     `json:"enabled,omitempty" doc:"Default true."`
		Description string                    `json:"description,omitempty" maxLength:"500"`
	}
}

type updateWebhookEndpointInput struct {
	EndpointPath
	Body struct {
		URL         *string                    `json:"url,omitempty" minLength:"1" maxLength:"2000"`
		EventTypes  *[]states.WebhookEventType `json:"event_types,omitempty" maxItems:"20" doc:"Replaces the list; empty: all types."`
		Enabled     *bool                      `json:"enabled,omitempty" doc:"true re-enables an endpoint disabled after failing, and clears why."`
		Description *string                    `json:"description,omitempty" maxLength:"500"`
	}
}

// EndpointPath is the {id} of a webhook endpoint.
type EndpointPath struct {
	ID int64 `path:"id" minimum:"1" doc:"Webhook endpoint id."`
}

// WebhookEventPath is the {id} of a webhook event.
type WebhookEventPath struct {
	ID string `path:"id" maxLength:"64" doc:"Webhook event id (the webhook-id header)."`
}

type listWebhookDeliveriesInput struct {
	EndpointPath
	PageParams
	Status states.DeliveryStatus `query:"filter.status"`
}

type endpointOutput struct {
	Location string `header:"Location"`
	Body     Envelope[*webhooks.Endpoint]
}

type sentOutput struct {
	Body Envelope[*webhooks.Sent]
}

// pingOutput is a test event on its way, and where its delivery shows.
type pingOutput struct {
	Location string `header:"Location" doc:"The endpoint's deliveries, where the test event's delivery is listed."`
	Body     Envelope[*webhooks.Sent]
}

func (s *Server) registerWebhooks(api huma.API) {
	tags := []string{"Webhooks"}
	svc := s.deps.Webhooks
	huma.Register(api, idempotent(request.Scoped(huma.Operation{
		OperationID: "create-webhook-endpoint", Method: http.MethodPost, Path: "/webhook-endpoints", Tags: tags,
		Summary: "Add a webhook endpoint", DefaultStatus: http.StatusCreated,
		Description: "Events of this key's environment (sandbox or production) are POSTed to `url`, signed per the Standard " +
			"Webhooks specification with `secret`, which is shown only now. Production endpoints must use https; addresses that " +
			"are or resolve to loopback, private or link-local ranges are refused (sandbox endpoints may use them only in a " +
			"development deployment). An environment has at most 10 endpoints by default (the deployment's " +
			"`WEBHOOK_ENDPOINTS_MAX`): one more answers 409 `limit_reached`.",
		Errors: []int{http.StatusNotFound, http.StatusConflict},
	}, apikey.ScopeWebhooksWrite)), func(ctx context.Context, in *createWebhookEndpointInput) (*endpointOutput, error) {
		b := in.Body
		ein := webhooks.EndpointInput{URL: &b.URL, Description: &b.Description, Enabled: b.Enabled}
		if b.EventTypes != nil {
			ein.EventTypes = &b.EventTypes
		}
		e, err := svc.Create(ctx, request.Caller(ctx), ein)
		if err != nil {
			return nil, err
		}
		return &endpointOutput{Location: "/v1/webhook-endpoints/" + strconv.FormatInt(e.ID, 10),
			Body: Envelope[*webhooks.Endpoint]{Data: e, RequestID: request.ID(ctx)}}, nil
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "list-webhook-endpoints", Method: http.MethodGet, Path: "/webhook-endpoints", Tags: tags,
		Summary: "List webhook endpoints", Errors: []int{http.StatusUnprocessableEntity},
	}, apikey.ScopeWebhooksRead), func(ctx context.Context, in *PageParams) (*listOutput[*webhooks.Endpoint], error) {
		items, total, err := svc.List(ctx, request.Caller(ctx), in.paging())
		return replyPage(ctx, items, *in, total, err, endpointSeek)
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "get-webhook-endpoint", Method: http.MethodGet, Path: "/webhook-endpoints/{id}", Tags: tags,
		Summary: "Get a webhook endpoint", Description: "A disabled endpoint says why in `disabled_reason`.",
		Errors: []int{http.StatusNotFound},
	}, apikey.ScopeWebhooksRead), func(ctx context.Context, in *EndpointPath) (*dataOutput[*webhooks.Endpoint], error) {
		e, err := svc.Get(ctx, request.Caller(ctx), in.ID)
		return reply(ctx, e, err)
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "update-webhook-endpoint", Method: http.MethodPatch, Path: "/webhook-endpoints/{id}", Tags: tags,
		Summary: "Change a webhook endpoint", Description: "Only the fields sent change. A new `url` is checked as at creation.",
		Errors: []int{http.StatusNotFound, http.StatusUnprocessableEntity},
	}, apikey.ScopeWebhooksWrite), func(ctx context.Context, in *updateWebhookEndpointInput) (*dataOutput[*webhooks.Endpoint], error) {
		b := in.Body
		e, err := svc.Update(ctx, request.Caller(ctx), in.ID, webhooks.EndpointInput{URL: b.URL, Description: b.Description,
			EventTypes: b.EventTypes, Enabled: b.Enabled})
		return reply(ctx, e, err)
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "delete-webhook-endpoint", Method: http.MethodDelete, Path: "/webhook-endpoints/{id}", Tags: tags,
		Summary: "Delete a webhook endpoint", Description: "It receives nothing more; deliveries still pending stop.",
		DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusNotFound},
	}, apikey.ScopeWebhooksWrite), func(ctx context.Context, in *EndpointPath) (*struct{}, error) {
		return nil, svc.Delete(ctx, request.Caller(ctx), in.ID)
	})

	huma.Register(api, idempotent(request.Scoped(huma.Operation{
		OperationID: "rotate-webhook-secret", Method: http.MethodPost, Path: "/webhook-endpoints/{id}/rotate-secret", Tags: tags,
		Summary: "Rotate an endpoint's signing secret",
		Description: "Answers the new `secret`, shown only now. For 24 hours the old secret keeps signing beside it: each delivery " +
			"carries both signatures in `webhook-signature`, so receivers switch without missing an event.",
		Errors: []int{http.StatusNotFound},
	}, apikey.ScopeWebhooksWrite)), func(ctx context.Context, in *EndpointPath) (*dataOutput[*webhooks.Endpoint], error) {
		e, err := svc.RotateSecret(ctx, request.Caller(ctx), in.ID)
		return reply(ctx, e, err)
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "test-webhook-endpoint", Method: http.MethodPost, Path: "/webhook-endpoints/{id}/test", Tags: tags,
		Summary: "Send a test event", DefaultStatus: http.StatusAccepted,
		Description: "Sends a `webhook.test` event to this endpoint only, delivered and retried like any other; its " +
			"delivery is listed with the others. A disabled endpoint answers 409: enable it first. An environment " +
			"sends at most 10 test events a minute by default (`WEBHOOK_TESTS_PER_MINUTE`), counted over all its keys and " +
			"endpoints: past that, 429 `rate_limited` with `Retry-After`.",
		Errors: []int{http.StatusNotFound, http.StatusConflict},
	}, apikey.ScopeWebhooksWrite), func(ctx context.Context, in *EndpointPath) (*pingOutput, error) {
		sent, err := svc.Ping(ctx, request.Caller(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &pingOutput{Location: "/v1/webhook-endpoints/" + strconv.FormatInt(in.ID, 10) + "/deliveries",
			Body: Envelope[*webhooks.Sent]{Data: sent, RequestID: request.ID(ctx)}}, nil
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "list-webhook-deliveries", Method: http.MethodGet, Path: "/webhook-endpoints/{id}/deliveries", Tags: tags,
		Summary:     "List an endpoint's deliveries, newest first",
		Description: "Each with its latest attempts: when, how long, the status and the first bytes of the answer.",
		Errors:      []int{http.StatusNotFound, http.StatusUnprocessableEntity},
	}, apikey.ScopeWebhooksRead), func(ctx context.Context, in *listWebhookDeliveriesInput) (*listOutput[*webhooks.Delivery], error) {
		items, total, err := svc.Deliveries(ctx, request.Caller(ctx), in.ID, in.Status, in.paging())
		return replyPage(ctx, items, in.PageParams, total, err, deliverySeek)
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "redeliver-webhook-event", Method: http.MethodPost, Path: "/webhook-events/{id}/redeliver", Tags: tags,
		Summary: "Send an event again", DefaultStatus: http.StatusAccepted,
		Description: "Delivers the event again, with the same `webhook-id`, to every enabled endpoint that takes it now, " +
			"retrying as a first delivery does. An event not sent yet goes out shortly anyway (`endpoint_ids` empty). " +
			"An environment redelivers at most 60 events a minute by default (`WEBHOOK_REDELIVERIES_PER_MINUTE`), " +
			"counted over all its keys: past that, 429 `rate_limited` with `Retry-After`. The 202 has no `Location`: " +
			"the event may go to several endpoints (or none); read each one's deliveries.",
		Errors: []int{http.StatusNotFound, http.StatusServiceUnavailable},
	}, apikey.ScopeWebhooksWrite), func(ctx context.Context, in *WebhookEventPath) (*sentOutput, error) {
		sent, err := svc.Redeliver(ctx, request.Caller(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &sentOutput{Body: Envelope[*webhooks.Sent]{Data: sent, RequestID: request.ID(ctx)}}, nil
	})
}

package api

import (
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/internal/webhooks"
)

// EventSchemaName is the document's schema of an event type's body:
// "order.paid" is OrderPaidEvent, "ticket.check_in_conflict"
// TicketCheckInConflictEvent.
func EventSchemaName(typ states.WebhookEventType) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(string(typ), func(r rune) bool { return r == '.' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String() + "Event"
}

// documentWebhooks describes what the service POSTs to partners'
// endpoints, as OpenAPI 3.1 webhooks: one per event type, whose body is
// the schema <Type>Event ({id, type, created_at, data}, data from the Go
// types webhooks.EventKinds names, the ones the payloads are built from)
// with the Standard Webhooks headers, so generated clients get a type per
// event. openResponses keeps the bodies open, as answers are: a receiver
// that validates them keeps working when the service adds a member.
func documentWebhooks(doc *huma.OpenAPI) {
	registry := doc.Components.Schemas
	schemas := registry.Map()
	if doc.Webhooks == nil {
		doc.Webhooks = map[string]*huma.PathItem{}
	}
	header := func(desc string) *huma.Param {
		return &huma.Param{In: "header", Required: true, Description: desc, Schema: &huma.Schema{Type: "string"}}
	}
	for _, typ := range states.WebhookEventTypes {
		kind, ok := webhooks.EventKinds[typ]
		if !ok {
			continue // TestEventKindsCoverEveryType and the contract test fail
		}
		name := EventSchemaName(typ)
		var data *huma.Schema
		if len(kind.Data) == 1 {
			data = registry.Schema(kind.Data[0], true, name+"Data")
		} else {
			data = &huma.Schema{}
			for _, t := range kind.Data {
				data.AnyOf = append(data.AnyOf, registry.Schema(t, true, name+"Data"))
			}
		}
		data.Description = "The object as the API returns it."
		if len(kind.Data) > 1 {
			data.Description = "The object as the API returns it, or only its ids when it is gone (a sandbox object deleted before the event went out)."
		}
		schemas[name] = &huma.Schema{
			Type:        huma.TypeObject,
			Description: "Body of the `" + string(typ) + "` deliveries. " + kind.Summary,
			Required:    []string{"id", "type", "created_at", "data"},
			Properties: map[string]*huma.Schema{
				"id": {Type: huma.TypeString, Description: "The event id, also the `webhook-id` header. " +
					"Deliveries of one event carry the same id: dedupe by it."},
				"type":       {Type: huma.TypeString, Enum: []any{string(typ)}, Description: "The event type."},
				"created_at": {Type: huma.TypeString, Format: "date-time", Description: "When the change happened."},
				"data":       data,
			},
		}
		doc.Webhooks[string(typ)] = &huma.PathItem{Post: &huma.Operation{
			OperationID: "webhook-" + strings.NewReplacer(".", "-", "_", "-").Replace(string(typ)),
			Tags:        []string{"Webhooks"},
			Summary:     "Event " + string(typ),
			Description: kind.Summary + " POSTed to each enabled endpoint that takes `" + string(typ) +
				"`, signed per Standard Webhooks: verify the signature over the raw body before trusting it " +
				"(the SDKs' `ConstructEvent` / `constructEvent`), then dedupe by `webhook-id`.",
			Security: []map[string][]string{},
			Parameters: []*huma.Param{
				withName(header("The event id (`evt_…`), the same in every delivery of the event."), "webhook-id"),
				withName(header("Unix seconds of this attempt; refuse one more than 5 minutes from now."), "webhook-timestamp"),
				withName(header("`v1,<base64 HMAC-SHA256 of \"{webhook-id}.{webhook-timestamp}.{body}\">`, keyed with "+
					"the base64 part of the endpoint's `whsec_…` secret; two, space-separated, while a rotated secret "+
					"still signs beside the new one."), "webhook-signature"),
			},
			RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
				"application/json": {Schema: &huma.Schema{Ref: "#/components/schemas/" + name}}}},
			Responses: map[string]*huma.Response{
				"2XX": {Description: "Delivered. Any other answer, a timeout (10 s) or a refused connection is " +
					"retried for three days."},
			},
		}}
	}
}

func withName(p *huma.Param, name string) *huma.Param {
	p.Name = name
	return p
}

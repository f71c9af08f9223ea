package api_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/api"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/internal/webhooks"
)

// TestOpenAPIDocumentsEveryWebhook: every event type the service sends is
// a webhook of the document, a signed POST whose body is its own schema
// ({id, type, created_at, data}, type its one value, data typed), and the
// published clients have a type for it; an event type added without its
// schema fails here. What is actually delivered is checked against these
// schemas by every test's receiver (webhookContract).
func TestOpenAPIDocumentsEveryWebhook(t *testing.T) {
	doc := document(t)
	schemas := doc.Components.Schemas.Map()
	ts, err := os.ReadFile("../sdk/ts/src/schema.d.ts")
	if err != nil {
		t.Fatal(err)
	}
	_, tsHooks, _ := strings.Cut(string(ts), "\nexport interface webhooks {\n")
	tsHooks, _, _ = strings.Cut("\n"+tsHooks, "\n}\n")
	goTypes, err := os.ReadFile("../sdk/go/client.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range states.WebhookEventTypes {
		item := doc.Webhooks[string(typ)]
		if item == nil || item.Post == nil || item.Post.RequestBody == nil {
			t.Errorf("%s: no webhook with a body in the document", typ)
			continue
		}
		name := api.EventSchemaName(typ)
		mt := item.Post.RequestBody.Content["application/json"]
		if mt == nil || mt.Schema == nil || mt.Schema.Ref != "#/components/schemas/"+name {
			t.Errorf("%s: the webhook's body is not the schema %s", typ, name)
		}
		s := schemas[name]
		if s == nil {
			t.Errorf("%s: no schema %s", typ, name)
			continue
		}
		for _, p := range []string{"id", "type", "created_at", "data"} {
			if s.Properties[p] == nil || !slices.Contains(s.Required, p) {
				t.Errorf("%s: %s does not require %s", typ, name, p)
			}
		}
		if tp := s.Properties["type"]; tp == nil || len(tp.Enum) != 1 || tp.Enum[0] != string(typ) {
			t.Errorf("%s: %s.type is not the one value %q", typ, name, typ)
		}
		if d := s.Properties["data"]; d == nil || (d.Ref == "" && len(d.AnyOf) == 0) {
			t.Errorf("%s: %s.data is not a named type", typ, name)
		}
		if allowed, ok := s.AdditionalProperties.(bool); ok && !allowed {
			t.Errorf("%s: %s is closed; what the service sends stays open to added members", typ, name)
		}
		headers := map[string]bool{}
		for _, p := range item.Post.Parameters {
			if p.In == "header" && p.Required {
				headers[p.Name] = true
			}
		}
		for _, h := range []string{webhooks.HeaderID, webhooks.HeaderTimestamp, webhooks.HeaderSignature} {
			if !headers[h] {
				t.Errorf("%s: the webhook does not declare the required header %s", typ, h)
			}
		}
		if !strings.Contains(tsHooks, "\n    \""+string(typ)+"\": {") {
			t.Errorf("%s: not in the TypeScript types' webhooks (run scripts/clients.sh write)", typ)
		}
		if !regexp.MustCompile(`(?m)^type ` + name + ` struct`).Match(goTypes) {
			t.Errorf("%s: the Go SDK has no type %s (run scripts/clients.sh write)", typ, name)
		}
	}
	if len(doc.Webhooks) != len(states.WebhookEventTypes) {
		t.Errorf("the document has %d webhooks for %d event types", len(doc.Webhooks), len(states.WebhookEventTypes))
	}
}

// TestWebhookContractChecksBodies: the receivers' check refuses a body
// its schema does not allow and a type without a webhook, and takes the
// bodies built for what is left of a deleted sandbox refund or
// reservation and for a test ping, which the stack's tests rarely meet.
func TestWebhookContractChecksBodies(t *testing.T) {
	c, err := webhookContract()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(c.Types()), len(states.WebhookEventTypes); got != want {
		t.Errorf("the contract knows %d webhooks, want %d", got, want)
	}
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for typ, data := range map[states.WebhookEventType]any{
		states.EventOrderRefunded:      webhooks.DeletedRefund{ID: "rf_1", OrderID: 7},
		states.EventReservationExpired: webhooks.GoneReservation{ID: "rs_1", Status: states.ReservationExpired},
		states.EventPing:               webhooks.Ping{EndpointID: 3, Message: "A test event"},
	} {
		body, err := webhooks.Body("evt_1", typ, at, data)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Check(body); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
	}
	for name, body := range map[string]string{
		"no data":      `{"id": "evt_1", "type": "order.paid", "created_at": "2026-11-29T10:00:00Z"}`,
		"not an order": `{"id": "evt_1", "type": "order.paid", "created_at": "2026-11-29T10:00:00Z", "data": {"id": "x"}}`,
		"unknown type": `{"id": "evt_1", "type": "order.lost", "created_at": "2026-11-29T10:00:00Z", "data": {}}`,
	} {
		if err := c.Check([]byte(body)); err == nil {
			t.Errorf("%s: the contract took %s", name, body)
		}
	}
}

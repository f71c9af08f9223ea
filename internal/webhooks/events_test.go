package webhooks_test

import (
	"testing"

	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/internal/webhooks"
)

// TestEventKindsCoverEveryType: every event type the service sends has
// its data's Go types, from which the API's document describes it, and
// nothing else does.
func TestEventKindsCoverEveryType(t *testing.T) {
	for _, typ := range states.WebhookEventTypes {
		k, ok := webhooks.EventKinds[typ]
		if !ok || len(k.Data) == 0 || k.Summary == "" {
			t.Errorf("%s: no data types or summary in EventKinds", typ)
		}
	}
	if len(webhooks.EventKinds) != len(states.WebhookEventTypes) {
		t.Errorf("EventKinds has %d types, states.WebhookEventTypes %d", len(webhooks.EventKinds), len(states.WebhookEventTypes))
	}
}

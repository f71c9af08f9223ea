package webhooks

import (
	"context"

	"github.com/ticketsales/ticketsales/store"
)

// RenderBody exposes the relay's body for tests.
func RenderBody(r *Relay, ctx context.Context, ev *store.WebhookEvent) ([]byte, error) {
	return r.body(ctx, ev)
}

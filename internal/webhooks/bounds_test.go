package webhooks_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/internal/webhooks"
)

// An endpoint's fields hold their bounds whoever creates it, before its
// address is resolved or anything is stored: a URL of at most 2,000
// characters, a description of at most 500, at most 20 event types.
func TestEndpointBounds(t *testing.T) {
	p := &apikey.Principal{KeyID: 1, CompanyID: 1, Environment: apikey.Sandbox}
	url := func(s string) *string { return &s }
	types := make([]states.WebhookEventType, webhooks.MaxEventTypes+1)
	for i := range types {
		types[i] = states.WebhookEventTypes[0]
	}
	for _, c := range []struct {
		name  string
		in    webhooks.EndpointInput
		field string
	}{
		{"a URL of 2,001 characters", webhooks.EndpointInput{URL: url("https://partner.example/" + strings.Repeat("h", 1977))}, "body.url"},
		{"a description of 501 characters", webhooks.EndpointInput{URL: url("https://93.184.215.14/"), Description: url(strings.Repeat("о", 501))}, "body.description"},
		{"21 event types", webhooks.EndpointInput{URL: url("https://93.184.215.14/"), EventTypes: &types}, "body.event_types"},
	} {
		_, err := (&webhooks.Service{}).Create(context.Background(), p, c.in)
		var verr *errs.ValidationError
		if !errors.As(err, &verr) || verr.Fields[0].Location != c.field {
			t.Errorf("%s: refused with %v, want an error at %s", c.name, err, c.field)
		}
	}
}

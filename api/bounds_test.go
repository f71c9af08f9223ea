package api_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/api"
	"github.com/ticketsales/ticketsales/internal/checkin"
	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/orders"
	"github.com/ticketsales/ticketsales/internal/refunds"
	"github.com/ticketsales/ticketsales/internal/webhooks"
)

// Every bound that protects inventory or money is checked twice: by the
// document's schema (what partners read and Huma validates) and in the
// domain, where the value is used. The two must state the same number:
// this test reads each from the document and compares it with the
// domain's constant.
func TestSchemaBoundsAreTheDomains(t *testing.T) {
	srv := api.New(api.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	raw, err := json.Marshal(srv.API.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	// bound is a schema's keyword at schema.property[.property…].
	bound := func(at, keyword string) any {
		parts := strings.Split(at, ".")
		s := doc.Components.Schemas[parts[0]]
		for _, p := range parts[1:] {
			if ref, ok := s["$ref"].(string); ok {
				s = doc.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
			}
			props, _ := s["properties"].(map[string]any)
			s, _ = props[p].(map[string]any)
			if items, ok := s["items"].(map[string]any); ok && p != parts[len(parts)-1] {
				s = items
			}
		}
		if ref, ok := s["$ref"].(string); ok && keyword != "$ref" {
			s = doc.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
		}
		return s[keyword]
	}
	for _, c := range []struct {
		at, keyword string
		domain      any
	}{
		{"CreateReservationInputBody.seats", "maxItems", holds.MaxSeats},
		{"CreateReservationInputBody.ttl_minutes", "minimum", holds.MinTTLMinutes},
		{"CreateReservationInputBody.ttl_minutes", "maximum", holds.MaxTTLMinutes},
		{"CreateReservationInputBody.ttl_minutes", "default", holds.DefaultTTLMinutes},
		{"ReplaceSeatsInputBody.seats", "maxItems", holds.MaxSeats},
		{"BestAvailable.quantity", "maximum", holds.MaxSeats},
		{"BestAvailable.zone_ids", "maxItems", holds.MaxPickFilters},
		{"BestAvailable.ticket_category_ids", "maxItems", holds.MaxPickFilters},
		{"AggReserveInputBody.ttl", "minimum", holds.MinTTLMinutes * 60},
		{"AggReserveInputBody.ttl", "maximum", holds.MaxTTLMinutes * 60},
		{"AggReserveInputBody.quantity", "maximum", holds.MaxSeats},
		{"AggReserveInputBody.seats", "maxItems", holds.MaxSeats},
		{"CreateOrderInputBody.items", "maxItems", orders.MaxItems},
		{"CreateOrderInputBody.reservation_id", "maxLength", orders.MaxReservationIDLength},
		{"OrderItemInput.quantity", "maximum", holds.MaxSeats},
		{"Customer.email", "maxLength", orders.MaxEmailLength},
		{"Customer.first_name", "maxLength", orders.MaxNameLength},
		{"Customer.last_name", "maxLength", orders.MaxNameLength},
		{"Customer.phone", "pattern", orders.PhonePattern},
		{"CustomerStruct.email", "maxLength", orders.MaxEmailLength},
		{"ConfirmInputBody.external_payment_id", "maxLength", orders.MaxPaymentIDLength},
		{"AggConfirmInputBody.paymentId", "maxLength", orders.MaxPaymentIDLength},
		{"RefundBody.ticket_ids", "maxItems", refunds.MaxTickets},
		{"RefundBody.reason", "maxLength", refunds.MaxReasonLength},
		{"CheckInInputBody.barcode", "maxLength", checkin.MaxBarcodeLength},
		{"CheckInInputBody.gate", "maxLength", checkin.MaxGateLength},
		{"CheckInInputBody.device_id", "maxLength", checkin.MaxDeviceIDLength},
		{"CheckInBatchInputBody.scans", "maxItems", checkin.MaxBatch},
		{"CheckInBatchInputBody.scans.barcode", "maxLength", checkin.MaxBarcodeLength},
		{"CheckInBatchInputBody.scans.gate", "maxLength", checkin.MaxGateLength},
		{"CheckInBatchInputBody.scans.device_id", "maxLength", checkin.MaxDeviceIDLength},
		{"CreateWebhookEndpointInputBody.url", "maxLength", webhooks.MaxURLLength},
		{"CreateWebhookEndpointInputBody.description", "maxLength", webhooks.MaxDescriptionLength},
		{"CreateWebhookEndpointInputBody.event_types", "maxItems", webhooks.MaxEventTypes},
		{"UpdateWebhookEndpointInputBody.url", "maxLength", webhooks.MaxURLLength},
		{"UpdateWebhookEndpointInputBody.description", "maxLength", webhooks.MaxDescriptionLength},
	} {
		got := bound(c.at, c.keyword)
		want := c.domain
		if n, ok := want.(int); ok {
			want = float64(n)
		}
		if got != want {
			t.Errorf("%s %s: the document says %v, the domain %v", c.at, c.keyword, got, c.domain)
		}
	}
}

package ticketsales

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// ErrWebhookSignature is wrapped by ConstructEvent's error when the
// delivery is not signed with the secret (a wrong or missing signature, a
// timestamp more than 5 minutes from now, missing headers): answer it
// with a 4xx and do not act on the body.
var ErrWebhookSignature = errors.New("ticketsales: webhook not signed with this endpoint's secret")

// WebhookEvent is a delivery verified by [ConstructEvent]: the body every
// event type shares, its data still JSON. [WebhookEvent.Typed] decodes it
// into the event type's own struct.
type WebhookEvent struct {
	// ID is the event id, also the webhook-id header: every delivery of
	// one event carries the same one, so skip ids already handled.
	ID string `json:"id"`
	// Type is the event type, "order.paid", … (the Event* constants).
	Type string `json:"type"`
	// CreatedAt is when the change happened: events of one order may
	// arrive out of order, order them by it.
	CreatedAt time.Time `json:"created_at"`
	// Data is the object as the API returns it (an order, a refund, …).
	Data json.RawMessage `json:"data"`

	body []byte
}

// The event types the service sends (the document's webhooks).
const (
	EventOrderCreated          = "order.created"
	EventOrderPaid             = "order.paid"
	EventOrderCancelled        = "order.cancelled"
	EventOrderRefunded         = "order.refunded"
	EventOrderDeleted          = "order.deleted"
	EventReservationExpired    = "reservation.expired"
	EventTicketCheckedIn       = "ticket.checked_in"
	EventTicketCheckInConflict = "ticket.check_in_conflict"
	EventAllocationChanged     = "allocation.changed"
	EventWebhookTest           = "webhook.test"
)

// webhookTypes makes the struct of each event type (generated from the
// document's <Type>Event schemas); TestWebhookTypesCoverTheDocument keeps
// it complete.
var webhookTypes = map[string]func() any{
	EventOrderCreated:          func() any { return new(OrderCreatedEvent) },
	EventOrderPaid:             func() any { return new(OrderPaidEvent) },
	EventOrderCancelled:        func() any { return new(OrderCancelledEvent) },
	EventOrderRefunded:         func() any { return new(OrderRefundedEvent) },
	EventOrderDeleted:          func() any { return new(OrderDeletedEvent) },
	EventReservationExpired:    func() any { return new(ReservationExpiredEvent) },
	EventTicketCheckedIn:       func() any { return new(TicketCheckedInEvent) },
	EventTicketCheckInConflict: func() any { return new(TicketCheckInConflictEvent) },
	EventAllocationChanged:     func() any { return new(AllocationChangedEvent) },
	EventWebhookTest:           func() any { return new(WebhookTestEvent) },
}

// ConstructEvent verifies a webhook delivery and returns its event, as
// Stripe's constructEvent does. payload is the request's raw body, exactly
// as received (not JSON decoded and encoded again), header its headers,
// secret the endpoint's signing secret ("whsec_…", shown when the endpoint
// was made or its secret rotated). The signature is checked per Standard
// Webhooks by its reference library: HMAC-SHA256 of
// "{webhook-id}.{webhook-timestamp}.{body}", any of the space-separated
// signatures (two while a rotated secret still signs), compared in
// constant time, and a timestamp within 5 minutes of now (a replay is
// refused). A delivery that fails it returns an error wrapping
// [ErrWebhookSignature].
//
//	body, _ := io.ReadAll(r.Body)
//	ev, err := ticketsales.ConstructEvent(body, r.Header, secret)
//	if err != nil {
//		http.Error(w, "bad signature", http.StatusUnauthorized)
//		return
//	}
//	typed, err := ev.Typed()
//	switch e := typed.(type) {
//	case *ticketsales.OrderPaidEvent:
//		fmt.Println("paid:", e.Data.Id)
//	}
func ConstructEvent(payload []byte, header http.Header, secret string) (*WebhookEvent, error) {
	if !strings.HasPrefix(secret, "whsec_") || len(secret) == len("whsec_") {
		return nil, errors.New(`ticketsales: a webhook secret is "whsec_" and base64`)
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, fmt.Errorf(`ticketsales: a webhook secret is "whsec_" and base64: %w`, err)
	}
	if err := wh.Verify(payload, header); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWebhookSignature, err)
	}
	var ev WebhookEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, fmt.Errorf("ticketsales: webhook body: %w", err)
	}
	if ev.ID != header.Get("webhook-id") {
		return nil, fmt.Errorf("%w: the body's id %q is not the webhook-id %q", ErrWebhookSignature, ev.ID, header.Get("webhook-id"))
	}
	ev.body = payload
	return &ev, nil
}

// Typed decodes the event into its type's struct, generated from the
// API's document: *OrderPaidEvent for order.paid (Data an Order),
// *OrderRefundedEvent for order.refunded, … — one for each Event*
// constant, for a type switch. An event type this SDK's version does not
// know yet (the service may add some) is the event itself, *WebhookEvent:
// skip it, or read its Data.
func (ev *WebhookEvent) Typed() (any, error) {
	mk, ok := webhookTypes[ev.Type]
	if !ok {
		return ev, nil
	}
	v := mk()
	body := ev.body
	if body == nil { // a WebhookEvent not made by ConstructEvent
		var err error
		if body, err = json.Marshal(ev); err != nil {
			return nil, err
		}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return nil, fmt.Errorf("ticketsales: %s event %s: %w", ev.Type, ev.ID, err)
	}
	return v, nil
}

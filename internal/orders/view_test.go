package orders

import (
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

func ptr[T any](v T) *T { return &v }

// payment_url is where the buyer pays, so it is shown only while the order
// awaits payment; an order from before it was stored shows its test
// gateway page. payment_accepted_at says a confirm's payment is on record.
func TestOrderView(t *testing.T) {
	s := &Service{Settings: Settings{Links: delivery.Links{BaseURL: "https://tickets.example"}}}
	accepted := time.Date(2026, 11, 23, 19, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name       string
		o          store.Order
		paymentURL string
	}{
		{"a gateway order awaiting payment", store.Order{Status: states.OrderPendingPayment, Payment: "gateway",
			PaymentID: ptr("pay_1"), PaymentURL: ptr("https://pay.example/p/1")}, "https://pay.example/p/1"},
		{"one from before payment_url was stored", store.Order{Status: states.OrderPendingPayment, Payment: "gateway",
			PaymentID: ptr("pay_1")}, "https://tickets.example/pay/pay_1"},
		{"a paid gateway order", store.Order{Status: states.OrderPaid, Payment: "gateway",
			PaymentID: ptr("pay_1"), PaymentURL: ptr("https://pay.example/p/1")}, ""},
		{"a cancelled gateway order", store.Order{Status: states.OrderCancelled, Payment: "gateway",
			PaymentID: ptr("pay_1"), PaymentURL: ptr("https://pay.example/p/1")}, ""},
		{"an external order whose payment was accepted", store.Order{Status: states.OrderPendingPayment, Payment: "external",
			PaymentID: ptr("ext-1"), PaymentAcceptedAt: &accepted}, ""},
	} {
		v := s.View(&c.o)
		if v.PaymentURL != c.paymentURL {
			t.Errorf("%s: payment_url %q, want %q", c.name, v.PaymentURL, c.paymentURL)
		}
		if (v.PaymentAcceptedAt != nil) != (c.o.PaymentAcceptedAt != nil) {
			t.Errorf("%s: payment_accepted_at %v", c.name, v.PaymentAcceptedAt)
		}
	}
	v := s.View(&store.Order{Status: states.OrderPaid, Currency: "RUB", Total: 300000, ServiceFee: 30000, Amount: 330000})
	if v.Total.Amount != 300000 || v.ServiceFee.Amount != 30000 || v.Amount.Amount != 330000 || v.Amount.Currency != "RUB" {
		t.Errorf("sums: total %+v, fee %+v, amount %+v", v.Total, v.ServiceFee, v.Amount)
	}
}

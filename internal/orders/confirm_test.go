package orders

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/problems"
)

// A confirm naming another amount than the order's is refused with 422
// amount_mismatch before anything else is looked at, whatever the order's
// status; one for an order paid through the gateway with 409 invalid_state.
func TestConfirmRefusesAnotherAmountFirst(t *testing.T) {
	order := func(status states.OrderStatus, payment states.PaymentMethod) *store.Order {
		return &store.Order{ID: 5, Status: status, Payment: payment, Amount: 330000}
	}
	for _, o := range []*store.Order{
		order(states.OrderPendingPayment, "external"), order(states.OrderPendingPayment, "gateway"),
		order(states.OrderCancelled, "external"), order(states.OrderPaid, "external"),
	} {
		err := confirmable(o, 300000)
		var mismatch *errs.AmountMismatchError
		if p := problems.Of(t, err); !errors.As(err, &mismatch) || p.Status != 422 || p.Code != "amount_mismatch" {
			t.Errorf("%s %s order: answered %d %s", o.Status, o.Payment, p.Status, p.Code)
		}
	}
	err := confirmable(order(states.OrderPendingPayment, "gateway"), 330000)
	if p := problems.Of(t, err); p.Status != 409 || p.Code != "invalid_state" || !strings.Contains(p.Detail, "paid through the gateway") {
		t.Errorf("a gateway order: answered %d %s %q", p.Status, p.Code, p.Detail)
	}
	if err := confirmable(order(states.OrderPendingPayment, "external"), 330000); err != nil {
		t.Errorf("the order's amount: %v", err)
	}
}

// Once its payment is accepted (or could not be), a confirm answers: the
// order paid with this payment (a repeat), or waiting for its workflow;
// order_expired when the window closed first; invalid_state when the order
// was cancelled otherwise or is paid with another payment, which the
// partner has to give back.
func TestConfirmAfterAcceptance(t *testing.T) {
	at := time.Date(2026, 11, 23, 19, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		o    store.Order
		paid bool
		code string // "": no error
	}{
		{"accepted with this payment, not yet paid", store.Order{Status: states.OrderPendingPayment, PaymentID: ptr("ext-1"), PaymentAcceptedAt: &at}, false, ""},
		{"paid with this payment", store.Order{Status: states.OrderPaid, PaymentID: ptr("ext-1"), PaymentAcceptedAt: &at}, true, ""},
		{"refunded after it was paid with this payment", store.Order{Status: states.OrderRefunded, PaymentID: ptr("ext-1"), PaymentAcceptedAt: &at}, true, ""},
		{"the window closed before acceptance", store.Order{Status: states.OrderPendingPayment}, false, "order_expired"},
		{"cancelled at the deadline", store.Order{Status: states.OrderCancelled, CancelReason: ptr(states.CancelPaymentTimeout)}, false, "order_expired"},
		{"cancelled by the partner", store.Order{Status: states.OrderCancelled, CancelReason: ptr(states.CancelPartner)}, false, "invalid_state"},
		{"accepted with another payment", store.Order{Status: states.OrderPendingPayment, PaymentID: ptr("ext-2"), PaymentAcceptedAt: &at}, false, "invalid_state"},
		{"paid with another payment", store.Order{Status: states.OrderPaid, PaymentID: ptr("ext-2"), PaymentAcceptedAt: &at}, false, "invalid_state"},
	} {
		c.o.ID = 5
		paid, err := paidWithPayment(&c.o, "ext-1")
		switch {
		case c.code == "" && (err != nil || paid != c.paid):
			t.Errorf("%s: paid %v, %v; want paid %v", c.name, paid, err, c.paid)
		case c.code != "" && (err == nil || problems.Of(t, err).Code != c.code || problems.Of(t, err).Status != 409):
			t.Errorf("%s: %v, want 409 %s", c.name, err, c.code)
		}
	}
}

// A confirm's payment reference is stored with the payment: one line of 1
// to 200 characters, refused before the order is read, whoever calls.
func TestConfirmChecksThePaymentReference(t *testing.T) {
	for name, id := range map[string]string{
		"empty":             "",
		"201 characters":    strings.Repeat("п", 201),
		"with a line break": "pay-1\r\npay-2",
	} {
		_, err := (&Service{}).Confirm(context.Background(), sandbox, 1, 100, id, "")
		if _, ok := problems.Fields(t, err)["body.external_payment_id"]; !ok {
			t.Errorf("%s: refused with %v", name, err)
		}
	}
}

// The aggregator's confirm checks its payment reference before it makes
// the order it then confirms: a bad one changes nothing.
func TestCheckoutChecksThePaymentReferenceFirst(t *testing.T) {
	_, err := (&Service{}).CheckoutReservation(context.Background(), sandbox, "rsv_1", anna, "pay\r\n1")
	if _, ok := problems.Fields(t, err)["body.external_payment_id"]; !ok {
		t.Errorf("refused with %v", err)
	}
}

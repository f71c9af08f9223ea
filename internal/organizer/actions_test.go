package organizer

import (
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// What each order status allows the cabinet to do: refund a paid
// order's tickets, e-mail a paid production order's tickets again, cancel
// an unpaid order whose payment no confirm accepted. The table names every
// status (a new one fails here until it is decided).
func TestWhatEachStatusAllows(t *testing.T) {
	type allows struct{ refund, resend, cancel bool }
	want := map[states.OrderStatus]allows{
		states.OrderPendingPayment:    {cancel: true},
		states.OrderPaid:              {refund: true, resend: true},
		states.OrderCancelled:         {},
		states.OrderPartiallyRefunded: {refund: true, resend: true},
		states.OrderRefunded:          {},
	}
	for _, st := range states.OrderStatuses {
		w, ok := want[st]
		if !ok {
			t.Errorf("status %s: not in the table", st)
			continue
		}
		o := &store.Order{ID: 7, Status: st}
		got := allows{Refundable(o) == "", Resendable(o) == "", Cancellable(o) == ""}
		if got != w {
			t.Errorf("%s: refund/resend/cancel allowed %+v, want %+v", st, got, w)
		}
		for action, why := range map[string]string{"refund": Refundable(o), "resend": Resendable(o), "cancel": Cancellable(o)} {
			if why != "" && (!strings.Contains(why, "Order 7 is "+Words(st)+":") || strings.Contains(why, "_")) {
				t.Errorf("%s: why no %s says %q", st, action, why)
			}
		}
		// A paid order is refunded, never cancelled: the refusal says so.
		if why := Cancellable(o); why != "" && strings.HasSuffix(why, "Refund its tickets instead.") != st.TicketsValid() {
			t.Errorf("%s: why no cancel says %q", st, why)
		}

		// A sandbox order's tickets are never e-mailed, whatever its status.
		sandbox := &store.Order{ID: 7, Status: st, IsTest: true}
		if why := Resendable(sandbox); !strings.Contains(why, "sandbox (test) order") {
			t.Errorf("sandbox %s: why no resend says %q", st, why)
		}
		if (Refundable(sandbox) == "") != w.refund || (Cancellable(sandbox) == "") != w.cancel {
			t.Errorf("sandbox %s: refund or cancel allowed otherwise than in production", st)
		}

		// A payment accepted by a confirm pays the order: it is not
		// cancelled, but refunded once paid.
		accepted := &store.Order{ID: 7, Status: st, PaymentAcceptedAt: new(time.Now())}
		if why := Cancellable(accepted); why == "" || !strings.HasSuffix(why, "Refund its tickets instead.") {
			t.Errorf("%s with a payment accepted: why no cancel says %q", st, why)
		}
	}
}

func TestWords(t *testing.T) {
	for in, want := range map[states.OrderStatus]string{
		states.OrderPendingPayment:    "pending payment",
		states.OrderPaid:              "paid",
		states.OrderCancelled:         "cancelled",
		states.OrderPartiallyRefunded: "partially refunded",
		states.OrderRefunded:          "refunded",
		"":                            "",
	} {
		if got := Words(in); got != want {
			t.Errorf("Words(%q) = %q, want %q", in, got, want)
		}
	}
}

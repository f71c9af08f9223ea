package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/test/testenv"
	"github.com/ticketsales/ticketsales/test/testenv/fakegateway"
)

func TestRefundsOfAnExternalOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	id := f.paidOrder(t, f.keyA, "parterre-1-1", "parterre-1-2", "balcony-1-1")
	other := f.paidOrder(t, f.keyA, "parterre-1-3")
	o := f.orderStatus(t, id)
	// 3000 + 3000 + 1500 = 7500.00, fee 750.00: amount 8250.00.
	if o.Amount.Amount != 825000 {
		t.Fatalf("amount %d", o.Amount.Amount)
	}
	ts := f.tickets(t, id)
	stalls := ts[1] // tickets follow seat order: balcony-1-1, parterre-1-1, parterre-1-2

	res := f.refund(t, id, stalls.ID)
	var rb refundBody
	res.Decode(t, &rb)
	if res.Status != 201 || rb.Data.Status != "completed" || rb.Data.MoneyReturnedBy != "external" || rb.Data.Amount.Amount != 300000 ||
		rb.Data.OrderStatus != "partially_refunded" || len(rb.Data.Tickets) != 1 || rb.Data.Tickets[0].Status != "refunded" {
		t.Fatalf("partial refund: %d %s", res.Status, res.Body)
	}
	if st := f.seatStates(t); st[stalls.Seat.SeatID] != "free" || st["parterre-1-2"] != "sold" {
		t.Fatalf("availability after the partial refund: %v", st)
	}
	// The same ticket again: 409; a ticket of another order: 422; nothing changes.
	expectProblem(t, f.refund(t, id, stalls.ID), http.StatusConflict, "invalid_state")
	otherTicket := f.tickets(t, other)[0]
	expectProblem(t, f.refund(t, id, ts[0].ID, otherTicket.ID), http.StatusUnprocessableEntity, "validation_error")
	if got := f.tickets(t, id); got[0].Status != "active" {
		t.Fatal("a refused refund voided a ticket")
	}

	res = f.refund(t, id) // the rest
	res.Decode(t, &rb)
	if res.Status != 201 || rb.Data.Amount.Amount != 525000 || rb.Data.OrderStatus != "refunded" || len(rb.Data.Tickets) != 2 {
		t.Fatalf("full refund of the rest: %d %s", res.Status, res.Body)
	}
	var sum int64
	if err := f.DB.NewRaw("SELECT sum(amount) FROM refunds WHERE order_id = ?", id).Scan(context.Background(), &sum); err != nil || sum != o.Amount.Amount {
		t.Fatalf("refunds sum to %d, order amount %d (%v)", sum, o.Amount.Amount, err)
	}
	// The order lists both refunds, oldest first, as each is read alone.
	var list struct {
		Data []struct {
			ID      string `json:"id"`
			Amount  struct{ Amount int64 }
			Tickets []ticket `json:"tickets"`
		} `json:"data"`
	}
	f.Get(t, fmt.Sprintf("/v1/orders/%d/refunds", id), f.keyA).Decode(t, &list)
	if len(list.Data) != 2 || list.Data[0].Amount.Amount != 300000 || len(list.Data[0].Tickets) != 1 || list.Data[0].Tickets[0].ID != stalls.ID ||
		list.Data[1].ID != rb.Data.ID || list.Data[1].Amount.Amount != 525000 || len(list.Data[1].Tickets) != 2 {
		t.Fatalf("the order's refunds: %+v", list.Data)
	}
	var none struct{ Data []any }
	if res := f.Get(t, fmt.Sprintf("/v1/orders/%d/refunds", other), f.keyA); res.Status != http.StatusOK {
		t.Fatalf("refunds of an order with none: %d %s", res.Status, res.Body)
	} else if res.Decode(t, &none); none.Data == nil || len(none.Data) != 0 {
		t.Fatalf("refunds of an order with none: %s", res.Body)
	}
	expectProblem(t, f.Get(t, fmt.Sprintf("/v1/orders/%d/refunds", id), f.keyB), http.StatusNotFound, "not_found")
	st := f.seatStates(t)
	for _, seat := range []string{"parterre-1-1", "parterre-1-2", "balcony-1-1"} {
		if st[seat] != "free" {
			t.Fatalf("%s after the full refund: %s", seat, st[seat])
		}
	}
	expectProblem(t, f.refund(t, id), http.StatusConflict, "invalid_state")

	// An unpaid order cannot be refunded.
	var r reservationBody
	f.reserve(t, f.keyA, "parterre-1-9").Decode(t, &r)
	var ob orderBody
	f.orderFromReservation(t, f.keyA, r.Data.ID, "external").Decode(t, &ob)
	expectProblem(t, f.refund(t, ob.Data.ID), http.StatusConflict, "invalid_state")
}

func TestRefundsOfAGatewayOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	var r reservationBody
	f.reserve(t, f.keyA, "parterre-2-1", "parterre-2-2").Decode(t, &r)
	var ob orderBody
	res := f.orderFromReservation(t, f.keyA, r.Data.ID, "gateway")
	res.Decode(t, &ob)
	if res.Status != 201 || !strings.HasPrefix(ob.Data.PaymentURL, f.URL+"/pay/") {
		t.Fatalf("gateway order: %d %s", res.Status, res.Body)
	}
	// The buyer declines once, then pays on the gateway's page.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, action := range []string{"decline", "pay"} {
		pr, err := client.PostForm(ob.Data.PaymentURL, url.Values{"action": {action}})
		if err != nil || pr.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s on the payment page: %v %v", action, pr, err)
		}
		pr.Body.Close()
		if action == "decline" {
			time.Sleep(300 * time.Millisecond)
			if st := f.orderStatus(t, ob.Data.ID).Status; st != "pending_payment" {
				t.Fatalf("after a decline the order is %s", st)
			}
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for f.orderStatus(t, ob.Data.ID).Status != "paid" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	ts := f.tickets(t, ob.Data.ID)
	if len(ts) != 2 {
		t.Fatalf("gateway order not paid with tickets: %+v", f.orderStatus(t, ob.Data.ID))
	}
	res = f.refund(t, ob.Data.ID, ts[0].ID)
	var rb refundBody
	res.Decode(t, &rb)
	if res.Status != 201 || rb.Data.MoneyReturnedBy != "gateway" || rb.Data.Status != "completed" || rb.Data.Amount.Amount != 300000 {
		t.Fatalf("gateway partial refund: %d %s", res.Status, res.Body)
	}
	refunded := func() int64 {
		var n int64
		if err := f.DB.NewRaw("SELECT refunded FROM gateway_payments WHERE order_id = ?", ob.Data.ID).Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := refunded(); got != 300000 {
		t.Fatalf("the gateway returned %d", got)
	}
	res = f.refund(t, ob.Data.ID)
	res.Decode(t, &rb)
	if res.Status != 201 || rb.Data.OrderStatus != "refunded" || refunded() != ob.Data.Amount.Amount {
		t.Fatalf("gateway full refund: %d %s; gateway returned %d of %d", res.Status, res.Body, refunded(), ob.Data.Amount.Amount)
	}
}

// TestLateGatewayPaymentGoesBack: a payment arriving after the order's
// saga ended (nothing left to signal) is recorded and given back by the
// reaper.
func TestLateGatewayPaymentGoesBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Orders.Settings.PaymentWindow = time.Second
	f.StartWorker(t)
	f.StartReaper(t, 200*time.Millisecond, time.Second, time.Hour)
	prod, _ := f.Key(t, f.companyA, "production")
	var r reservationBody
	f.reserve(t, prod, "parterre-2-11").Decode(t, &r)
	var ob orderBody
	if res := f.orderFromReservation(t, prod, r.Data.ID, "gateway"); res.Status != 201 {
		t.Fatalf("order: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &ob)
	}
	status := func() string {
		var o orderBody
		f.Get(t, fmt.Sprintf("/v1/orders/%d", ob.Data.ID), prod).Decode(t, &o)
		return o.Data.Status
	}
	for deadline := time.Now().Add(20 * time.Second); status() != "cancelled" && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	// The buyer pays on the page after the window closed.
	pr, err := http.PostForm(ob.Data.PaymentURL, url.Values{"action": {"pay"}})
	if err != nil {
		t.Fatal(err)
	}
	pr.Body.Close()
	var refunded int64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err := f.DB.NewRaw("SELECT refunded FROM gateway_payments WHERE order_id = ?", ob.Data.ID).Scan(context.Background(), &refunded); err != nil {
			t.Fatal(err)
		}
		if refunded > 0 {
			break
		}
	}
	if refunded != ob.Data.Amount.Amount || status() != "cancelled" {
		t.Fatalf("late payment: %d of %d returned, order %s", refunded, ob.Data.Amount.Amount, status())
	}
}

// TestRefundTicketIDsAreUnique: a ticket listed twice is a 422 and changes
// nothing (it used to retry a violated constraint forever).
func TestRefundTicketIDsAreUnique(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	id := f.paidOrder(t, f.keyA, "parterre-3-1", "parterre-3-2")
	ts := f.tickets(t, id)
	p := expectProblem(t, f.refund(t, id, ts[0].ID, ts[0].ID), http.StatusUnprocessableEntity, "validation_error")
	if len(p.Errors) != 1 || p.Errors[0].Location != "body.ticket_ids[1]" {
		t.Fatalf("errors %+v", p.Errors)
	}
	var n int
	if err := f.DB.NewRaw("SELECT count(*) FROM refunds").Scan(context.Background(), &n); err != nil || n != 0 {
		t.Fatalf("%d refunds (%v)", n, err)
	}
	for _, tk := range f.tickets(t, id) {
		if tk.Status != "active" {
			t.Fatalf("ticket %d is %s", tk.ID, tk.Status)
		}
	}
}

// TestRefundRetryFindsTheSameRefund: a refund retried with its
// Idempotency-Key after the first answer was lost (a 5xx is not stored for
// replay) finds the refund the first attempt made, not a second one or a
// "refunded already".
func TestRefundRetryFindsTheSameRefund(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	id := f.paidOrder(t, f.keyA, "parterre-3-3", "parterre-3-4")
	path := fmt.Sprintf("/v1/orders/%d/refund", id)
	var first, again refundBody
	res := f.Do(t, http.MethodPost, path, f.keyA, `{"reason": "r"}`, "Idempotency-Key: refund-once")
	res.Decode(t, &first)
	if res.Status != 201 || first.Data.ID == "" {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	}
	// As if the first answer had been a 503: nothing stored to replay.
	if _, err := f.DB.ExecContext(context.Background(), "DELETE FROM idempotency_keys"); err != nil {
		t.Fatal(err)
	}
	res = f.Do(t, http.MethodPost, path, f.keyA, `{"reason": "r"}`, "Idempotency-Key: refund-once")
	res.Decode(t, &again)
	if res.Status != 201 || again.Data.ID != first.Data.ID || res.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry: %d %s, first %s", res.Status, res.Body, first.Data.ID)
	}
	var n int
	if err := f.DB.NewRaw("SELECT count(*) FROM refunds").Scan(context.Background(), &n); err != nil || n != 1 {
		t.Fatalf("%d refunds (%v)", n, err)
	}
	if res := f.Get(t, "/v1/refunds/"+first.Data.ID, f.keyA); res.Status != 200 {
		t.Fatalf("get refund: %d %s", res.Status, res.Body)
	}
	expectProblem(t, f.Get(t, "/v1/refunds/"+first.Data.ID, f.keyB), http.StatusNotFound, "not_found")
}

// TestRefundOutOfRetriesIsFailedAndResumed: a gateway that will not return
// the money: the request answers 202 pending at once (the tickets are
// voided), the refund becomes failed when its retry budget is spent, with
// an operator alert, and the reaper resumes it once the gateway is back.
func TestRefundOutOfRetriesIsFailedAndResumed(t *testing.T) {
	t.Parallel()
	provider := fakegateway.Start(t, testenv.GatewaySecret)
	f := newFixture(t, testenv.Options{Production: true, HostedGatewayURL: provider.URL})
	f.Refunds.Settings.RetryBudget, f.Refunds.Settings.Wait = 2*time.Second, 300*time.Millisecond
	f.StartWorker(t)
	prod, _ := f.Key(t, f.companyA, apikey.Production)
	o := f.gatewayOrder(t, prod, "parterre-3-5")
	pay := provider.PaymentOf(o.ID)
	if code := provider.Pay(t, pay); code != http.StatusNoContent {
		t.Fatalf("callback: %d", code)
	}
	f.awaitOrderStatus(t, prod, o.ID, "paid")
	provider.SetFailRefunds(http.StatusServiceUnavailable)

	res := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/refund", o.ID), prod, `{"reason": "r"}`, idemKey(t))
	var rb refundBody
	res.Decode(t, &rb)
	if res.Status != http.StatusAccepted || rb.Data.Status != "pending" || res.Header.Get("Location") != "/v1/refunds/"+rb.Data.ID {
		t.Fatalf("refund with the gateway down: %d %s %v", res.Status, res.Body, res.Header)
	}
	if st := f.orderStatus2(t, prod, o.ID).Status; st != "refunded" {
		t.Fatalf("order %s after the refund", st)
	}
	status := func() string {
		var r refundBody
		f.Get(t, "/v1/refunds/"+rb.Data.ID, prod).Decode(t, &r)
		return r.Data.Status
	}
	for deadline := time.Now().Add(20 * time.Second); status() != "failed" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
	}
	if st := status(); st != "failed" {
		t.Fatalf("refund %s after its budget", st)
	}
	if v := testutil.ToFloat64(f.Metrics.MoneyAlerts.WithLabelValues("refund_failed")); v != 1 {
		t.Fatalf("refund_failed alerts: %v", v)
	}
	provider.SetFailRefunds(0)
	f.StartReaper(t, 200*time.Millisecond, time.Second, time.Second)
	for deadline := time.Now().Add(20 * time.Second); status() != "completed" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
	}
	if st := status(); st != "completed" || provider.Refunded(pay) != o.Amount.Amount {
		t.Fatalf("refund %s, provider returned %d of %d", st, provider.Refunded(pay), o.Amount.Amount)
	}
}

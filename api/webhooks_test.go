package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
)

func idIs(id any) func(map[string]any) bool {
	return func(d map[string]any) bool { return fmt.Sprint(d["id"]) == fmt.Sprint(id) }
}

// The three events the issue names, each verified by the reference
// verifier: order.paid after a gateway payment, order.cancelled after the
// payment window closed, order.refunded after a refund.
func TestWebhooksDeliverSignedEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Orders.Settings.PaymentWindow = 3 * time.Second
	f.StartWorker(t)
	r := newReceiver(t)
	f.subscribe(t, f.keyA, r)

	// A gateway payment.
	o := f.gatewayOrder(t, f.keyA, "parterre-1-1")
	payOnTestGateway(t, o.PaymentURL, "pay")
	f.awaitOrderStatus(t, f.keyA, o.ID, "paid")
	paid := r.await("order.paid", idIs(o.ID))
	var po order
	if err := json.Unmarshal(paid.Data, &po); err != nil || po.Status != "paid" || po.PaidAt == nil || po.Amount.Amount != o.Amount.Amount {
		t.Fatalf("order.paid data: %s (%v)", paid.Data, err)
	}
	created := r.await("order.created", idIs(o.ID))
	var cr order
	// The payment is made right after the order's commit: the event has its
	// payment_url unless the relay sent it in between.
	if err := json.Unmarshal(created.Data, &cr); err != nil || cr.Status != "pending_payment" || (cr.PaymentURL != o.PaymentURL && cr.PaymentURL != "") {
		t.Fatalf("order.created data: %s (%v)", created.Data, err)
	}

	// A payment timeout.
	var rb reservationBody
	f.reserve(t, f.keyA, "parterre-1-2").Decode(t, &rb)
	var ob orderBody
	f.orderFromReservation(t, f.keyA, rb.Data.ID, "external").Decode(t, &ob)
	cancelled := r.await("order.cancelled", idIs(ob.Data.ID))
	var co order
	_ = json.Unmarshal(cancelled.Data, &co)
	if co.Status != "cancelled" || co.CancelReason == nil || *co.CancelReason != "payment_timeout" {
		t.Fatalf("order.cancelled data: %s", cancelled.Data)
	}

	// A refund.
	id := f.paidOrder(t, f.keyA, "parterre-1-3", "parterre-1-4")
	ts := f.tickets(t, id)
	res := f.refund(t, id, ts[0].ID)
	if res.Status != http.StatusCreated {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	}
	var rf refundBody
	res.Decode(t, &rf)
	refunded := r.await("order.refunded", idIs(rf.Data.ID))
	var rd struct {
		ID              string `json:"id"`
		OrderID         int64  `json:"order_id"`
		MoneyReturnedBy string `json:"money_returned_by"`
		Amount          struct{ Amount int64 }
		Tickets         []ticket `json:"tickets"`
	}
	_ = json.Unmarshal(refunded.Data, &rd)
	if rd.OrderID != id || rd.MoneyReturnedBy != "external" || rd.Amount.Amount != rf.Data.Amount.Amount ||
		len(rd.Tickets) != 1 || rd.Tickets[0].ID != ts[0].ID {
		t.Fatalf("order.refunded data: %s", refunded.Data)
	}
	if r.bad != 0 {
		t.Fatalf("%d deliveries failed verification", r.bad)
	}

	// Another environment's events never reach this endpoint: company B's
	// production key sees none of it.
	var eps listBody[struct{ ID int64 }]
	f.Get(t, "/v1/webhook-endpoints", f.keyB).Decode(t, &eps)
	if len(eps.Data) != 0 {
		t.Fatalf("production key lists sandbox endpoints: %+v", eps.Data)
	}
}

// The receiver is down for a while, then up: every event arrives, once by
// id; the deliveries list shows the failed attempts before the good one.
func TestWebhooksSurviveAReceiverOutage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	r := newReceiver(t)
	ep := f.subscribe(t, f.keyA, r, "order.created", "order.paid")
	r.down()
	var ids []int64
	for _, seat := range []string{"parterre-2-1", "parterre-2-2", "parterre-2-3"} {
		ids = append(ids, f.paidOrder(t, f.keyA, seat))
	}
	// Wait until every delivery has failed at least once.
	type delivery struct {
		EventID        string `json:"event_id"`
		EventType      string `json:"event_type"`
		Status         string `json:"status"`
		Attempts       int    `json:"attempts"`
		LastError      string `json:"last_error"`
		RecentAttempts []struct {
			StatusCode *int   `json:"status_code"`
			Error      string `json:"error"`
		} `json:"recent_attempts"`
	}
	deliveries := func(query string) listBody[delivery] {
		var l listBody[delivery]
		res := f.Get(t, fmt.Sprintf("/v1/webhook-endpoints/%d/deliveries%s", ep, query), f.keyA)
		if res.Status != http.StatusOK {
			t.Fatalf("deliveries: %d %s", res.Status, res.Body)
		}
		res.Decode(t, &l)
		return l
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		l := deliveries("?filter.status=pending")
		failed := 0
		for _, d := range l.Data {
			if d.Attempts > 0 {
				failed++
			}
		}
		if failed == 6 {
			if l.Data[0].RecentAttempts[0].StatusCode != nil || l.Data[0].RecentAttempts[0].Error == "" {
				t.Fatalf("a refused connection recorded as %+v", l.Data[0].RecentAttempts[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries while the receiver is down: %+v", l.Data)
		}
	}
	r.up()
	for _, id := range ids {
		r.await("order.paid", idIs(id))
		r.await("order.created", idIs(id))
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		l := deliveries("?filter.status=delivered")
		if l.Meta.Total == 6 {
			for _, d := range l.Data {
				if d.Attempts < 2 {
					t.Fatalf("delivered at once while the receiver was down: %+v", d)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivered: %+v", l.Data)
		}
	}
	if got := r.types(); len(got) != 6 {
		t.Fatalf("events received once each: %v", got)
	}

	// Redelivery sends the same event again, with the same webhook-id.
	l := deliveries("")
	before := r.posts
	res := f.Do(t, http.MethodPost, "/v1/webhook-events/"+l.Data[0].EventID+"/redeliver", f.keyA, "")
	if res.Status != http.StatusAccepted {
		t.Fatalf("redeliver: %d %s", res.Status, res.Body)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r.mu.Lock()
		n := r.posts
		r.mu.Unlock()
		if n > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redelivery never arrived: %s; now %+v", res.Body, deliveries("").Data[0])
		}
	}
	if got := r.types(); len(got) != 6 {
		t.Fatalf("a redelivery is the same event: %v", got)
	}
}

// Production endpoints: https only, and never an address that is or
// resolves to loopback, private or link-local, even in a development
// deployment; problems are reported per field and nothing is created.
func TestWebhookEndpointsRefuseSSRF(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, u := range []string{"http://127.0.0.1/hook", "https://127.0.0.1/hook", "http://169.254.169.254/latest/meta-data",
		"https://169.254.169.254/latest/meta-data", "https://[::1]:8443/", "https://localhost/hook", "https://10.0.0.5/",
		"https://192.168.1.1/", "https://0.0.0.0/", "https://[::ffff:127.0.0.1]/", "ftp://example.com/", "not a url"} {
		res := f.createEndpoint(t, f.keyB, fmt.Sprintf(`{"url": %q}`, u))
		p := expectProblem(t, res, http.StatusUnprocessableEntity, "validation_error")
		if len(p.Errors) != 1 || p.Errors[0].Location != "body.url" {
			t.Fatalf("%s: %+v", u, p)
		}
	}
	var eps listBody[struct{ ID int64 }]
	f.Get(t, "/v1/webhook-endpoints", f.keyB).Decode(t, &eps)
	if eps.Meta.Total != 0 {
		t.Fatalf("refused endpoints were stored: %+v", eps)
	}
	// A public address is taken.
	res := f.createEndpoint(t, f.keyB, `{"url": "https://93.184.215.14/hooks", "event_types": ["order.paid"]}`)
	if res.Status != http.StatusCreated {
		t.Fatalf("public https endpoint: %d %s", res.Status, res.Body)
	}
	var e endpointBody
	res.Decode(t, &e)
	// Changing it to a private address is refused the same way.
	res = f.Do(t, http.MethodPatch, fmt.Sprintf("/v1/webhook-endpoints/%d", e.Data.ID), f.keyB, `{"url": "https://169.254.169.254/"}`)
	expectProblem(t, res, http.StatusUnprocessableEntity, "validation_error")
}

func TestWebhookEndpointLifecycle(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	r := newReceiver(t)
	id := f.subscribe(t, f.keyA, r, "order.paid")
	path := fmt.Sprintf("/v1/webhook-endpoints/%d", id)

	var got endpointBody
	f.Get(t, path, f.keyA).Decode(t, &got)
	if got.Data.Secret != "" || !got.Data.Enabled || len(got.Data.EventTypes) != 1 {
		t.Fatalf("endpoint read back: %+v", got.Data)
	}
	// Bad input: every problem at once, nothing changed.
	res := f.Do(t, http.MethodPatch, path, f.keyA, `{"event_types": ["order.exploded"]}`)
	expectProblem(t, res, http.StatusUnprocessableEntity, "validation_error")
	expectProblem(t, f.createEndpoint(t, f.keyA, `{"url": "`+r.URL()+`", "event_types": ["nope", "order.paid", "worse"]}`),
		http.StatusUnprocessableEntity, "validation_error")
	expectProblem(t, f.Do(t, http.MethodPost, "/v1/webhook-endpoints", f.keyA, `{"url": "`+r.URL()+`"}`),
		http.StatusBadRequest, "idempotency_key_required")
	// Scopes: a key without webhooks:write may not add endpoints; one
	// without webhooks:read may not list them.
	readOnly, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeWebhooksRead)
	p := expectProblem(t, f.createEndpoint(t, readOnly, `{"url": "`+r.URL()+`"}`), http.StatusForbidden, "insufficient_scope")
	if p.RequiredScope != apikey.ScopeWebhooksWrite {
		t.Fatalf("required scope %q", p.RequiredScope)
	}
	ordersOnly, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeOrdersRead)
	expectProblem(t, f.Get(t, "/v1/webhook-endpoints", ordersOnly), http.StatusForbidden, "insufficient_scope")
	// Another company's key does not see it.
	expectProblem(t, f.Get(t, path, f.keyB), http.StatusNotFound, "not_found")

	// A test ping arrives signed.
	res = f.Do(t, http.MethodPost, path+"/test", f.keyA, "")
	if res.Status != http.StatusAccepted {
		t.Fatalf("ping: %d %s", res.Status, res.Body)
	}
	r.await("webhook.test", func(d map[string]any) bool { return fmt.Sprint(d["endpoint_id"]) == fmt.Sprint(id) })

	// Rotation: the new secret verifies at once, and the old one still
	// does for a day (both signatures are sent).
	old := r.secret
	res = f.Do(t, http.MethodPost, path+"/rotate-secret", f.keyA, "", idemKey(t))
	if res.Status != http.StatusOK {
		t.Fatalf("rotate: %d %s", res.Status, res.Body)
	}
	var rot endpointBody
	res.Decode(t, &rot)
	if rot.Data.Secret == old || !strings.HasPrefix(rot.Data.Secret, "whsec_") {
		t.Fatalf("rotated secret %q", rot.Data.Secret)
	}
	for _, secret := range []string{old, rot.Data.Secret} {
		r.mu.Lock()
		r.secret = secret
		r.mu.Unlock()
		f.Do(t, http.MethodPost, path+"/test", f.keyA, "")
		n := len(r.types())
		for deadline := time.Now().Add(20 * time.Second); len(r.types()) == n; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no ping verified with the %s secret", map[bool]string{true: "old", false: "new"}[secret == old])
			}
		}
	}

	// Disabled: no ping; enabled again.
	res = f.Do(t, http.MethodPatch, path, f.keyA, `{"enabled": false}`)
	if res.Status != http.StatusOK {
		t.Fatalf("disable: %d %s", res.Status, res.Body)
	}
	expectProblem(t, f.Do(t, http.MethodPost, path+"/test", f.keyA, ""), http.StatusConflict, "invalid_state")
	if res := f.Do(t, http.MethodDelete, path, f.keyA, ""); res.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", res.Status, res.Body)
	}
	expectProblem(t, f.Get(t, path, f.keyA), http.StatusNotFound, "not_found")
	expectProblem(t, f.Do(t, http.MethodPost, "/v1/webhook-events/evt_nope/redeliver", f.keyA, ""), http.StatusNotFound, "not_found")
}

// An endpoint that fails every delivery for the whole retry window is
// disabled, and the partner reads why; its deliveries are failed. (The
// window is seconds here; the workflow test runs the real three days.)
func TestFailingEndpointIsDisabledWithItsReason(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Config.WebhookGiveUpAfter = 3 * time.Second
	f.StartWorker(t)
	r := newReceiver(t)
	r.status = http.StatusInternalServerError
	id := f.subscribe(t, f.keyA, r)
	f.paidOrder(t, f.keyA, "parterre-3-1")
	var e endpointBody
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		f.Get(t, fmt.Sprintf("/v1/webhook-endpoints/%d", id), f.keyA).Decode(t, &e)
		if !e.Data.Enabled || time.Now().After(deadline) {
			break
		}
	}
	if e.Data.Enabled || !strings.Contains(e.Data.DisabledReason, "HTTP 500") {
		t.Fatalf("endpoint after failing the window: %+v", e.Data)
	}
	var l listBody[struct {
		Status    string `json:"status"`
		LastError string `json:"last_error"`
	}]
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		f.Get(t, fmt.Sprintf("/v1/webhook-endpoints/%d/deliveries?filter.status=pending", id), f.keyA).Decode(t, &l)
		if l.Meta.Total == 0 || time.Now().After(deadline) {
			break
		}
	}
	if l.Meta.Total != 0 {
		t.Fatalf("deliveries still pending after the endpoint was disabled: %+v", l.Data)
	}
	f.Get(t, fmt.Sprintf("/v1/webhook-endpoints/%d/deliveries?filter.status=failed", id), f.keyA).Decode(t, &l)
	if l.Meta.Total < 2 || l.Data[0].LastError == "" {
		t.Fatalf("failed deliveries: %+v", l)
	}
	// Enabled again, the reason is gone.
	res := f.Do(t, http.MethodPatch, fmt.Sprintf("/v1/webhook-endpoints/%d", id), f.keyA, `{"enabled": true}`)
	var again endpointBody
	res.Decode(t, &again)
	if !again.Data.Enabled || again.Data.DisabledReason != "" {
		t.Fatalf("re-enabled: %+v", again.Data)
	}
}

package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/test/testenv"
	"github.com/ticketsales/ticketsales/test/testenv/fakegateway"
)

// oneConnClient sends every request over a single keep-alive connection and
// tells, per request, whether that connection was reused.
type oneConnClient struct{ c *http.Client }

func newOneConnClient(t *testing.T) *oneConnClient {
	tr := &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}
	t.Cleanup(tr.CloseIdleConnections)
	return &oneConnClient{c: &http.Client{Transport: tr, Timeout: time.Minute}}
}

func (c *oneConnClient) do(t *testing.T, method, url, key, body string, headers ...string) (res *testenv.Response, reused bool, err error) {
	req := testenv.NewRequest(t, method, url, key, body, headers...)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(),
		&httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}))
	res, err = testenv.Send(c.c, req)
	return res, reused, err
}

// A confirm waits for the order workflow; with no worker for a while it
// takes longer than Huma's 5 s body read timeout. The body was read long
// before, so that timeout must neither cancel the request nor break the
// keep-alive connection it came on.
func TestSlowConfirmKeepsItsConnection(t *testing.T) {
	f := newFixture(t)
	stopWorker := f.StartWorker(t)
	o := f.externalOrder(t, f.keyA, "parterre-3-1")
	stopWorker() // the confirm's update now waits for a worker

	client := newOneConnClient(t)
	type result struct {
		res *testenv.Response
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		res, _, err := client.do(t, http.MethodPost, fmt.Sprintf("%s/v1/orders/%d/confirm", f.URL, o.ID), f.keyA,
			fmt.Sprintf(`{"external_payment_id": "slow-1", "paid_amount": %d}`, o.Amount.Amount), idemKey(t))
		done <- result{res, err}
	}()
	time.Sleep(6 * time.Second)
	f.StartWorker(t)
	got := <-done
	if got.err != nil {
		t.Fatalf("confirm: %v", got.err)
	}
	var paid orderBody
	if got.res.Status != http.StatusOK {
		t.Fatalf("confirm after %v: %d %s", time.Since(start).Round(time.Millisecond), got.res.Status, got.res.Body)
	}
	got.res.Decode(t, &paid)
	if paid.Data.Status != "paid" {
		t.Fatalf("confirm answered order %+v", paid.Data)
	}
	if took := time.Since(start); took < 5*time.Second {
		t.Fatalf("confirm took only %v: the test did not outlast the body read timeout", took)
	}

	res, reused, err := client.do(t, http.MethodGet, fmt.Sprintf("%s/v1/orders/%d", f.URL, o.ID), f.keyA, "")
	if err != nil {
		t.Fatalf("request after the slow confirm: %v", err)
	}
	if !reused {
		t.Fatal("the request after the slow confirm did not reuse its keep-alive connection")
	}
	if res.Status != http.StatusOK {
		t.Fatalf("request on the connection of the slow confirm: %d %s", res.Status, res.Body)
	}
}

// A full refund has no body, as the API guide shows; its operation still
// declares an optional one, so Huma sets its body read timeout for it too. A
// gateway that takes longer than that to return the money must neither
// cancel the refund nor the requests that follow on its connection.
func TestSlowBodilessRefundKeepsItsConnection(t *testing.T) {
	provider := fakegateway.Start(t, testenv.GatewaySecret)
	f := newFixture(t, testenv.Options{Production: true, HostedGatewayURL: provider.URL})
	f.StartWorker(t)
	prod, _ := f.Key(t, f.companyA, apikey.Production)
	o := f.gatewayOrder(t, prod, "parterre-3-2")
	if code := provider.Pay(t, provider.PaymentOf(o.ID)); code != http.StatusNoContent {
		t.Fatalf("callback: %d", code)
	}
	f.awaitOrderStatus(t, prod, o.ID, "paid")
	provider.SetRefundDelay(6 * time.Second)

	client := newOneConnClient(t)
	start := time.Now()
	res, _, err := client.do(t, http.MethodPost, fmt.Sprintf("%s/v1/orders/%d/refund", f.URL, o.ID), prod, "", idemKey(t))
	if err != nil {
		t.Fatalf("refund: %v", err)
	}
	var rb refundBody
	if res.Status != http.StatusCreated {
		t.Fatalf("bodiless refund after %v: %d %s", time.Since(start).Round(time.Millisecond), res.Status, res.Body)
	}
	res.Decode(t, &rb)
	if rb.Data.Status != "completed" || rb.Data.OrderStatus != "refunded" {
		t.Fatalf("refund answered %s", res.Body)
	}
	if took := time.Since(start); took < 5*time.Second {
		t.Fatalf("refund took only %v: the test did not outlast the body read timeout", took)
	}

	for _, path := range []string{"/v1/refunds/" + rb.Data.ID, fmt.Sprintf("/v1/orders/%d", o.ID)} {
		res, reused, err := client.do(t, http.MethodGet, f.URL+path, prod, "")
		if err != nil {
			t.Fatalf("GET %s after the slow refund: %v", path, err)
		}
		if !reused {
			t.Fatalf("GET %s after the slow refund did not reuse its keep-alive connection", path)
		}
		if res.Status != http.StatusOK {
			t.Fatalf("GET %s on the connection of the slow refund: %d %s", path, res.Status, res.Body)
		}
	}
}

// The body is read once, before the operation: what is wrong with it is
// still answered as a problem.
func TestOversizedAndNULBodies(t *testing.T) {
	f := newFixture(t)
	big := `{"event_id": 1, "seats": [], "x": "` + strings.Repeat("x", 2<<20) + `"}`
	expectProblem(t, f.Do(t, http.MethodPost, "/v1/reservations", f.keyA, big, idemKey(t)),
		http.StatusRequestEntityTooLarge, "request_too_large")
	nul := fmt.Sprintf(`{"event_id": %d, "seats": [{"zone_id": "parterre\u0000", "seat_id": "parterre-1-1"}]}`, f.ids["swan-lake"])
	res := f.Do(t, http.MethodPost, "/v1/reservations", f.keyA, nul, idemKey(t))
	expectProblem(t, res, http.StatusUnprocessableEntity, "validation_error")
	if !strings.Contains(string(res.Body), "NUL character") {
		t.Fatalf("NUL in the body: %s", res.Body)
	}
}

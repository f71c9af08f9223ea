package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"ticketsales/test/testenv"
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
	var r reservationBody
	if res := f.reserve(t, f.keyA, "parterre-3-1"); res.Status != http.StatusCreated {
		t.Fatalf("reserve: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &r)
	}
	var ob orderBody
	if res := f.orderFromReservation(t, f.keyA, r.Data.ID, "external"); res.Status != http.StatusCreated {
		t.Fatalf("order: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &ob)
	}
	stopWorker() // the confirm's update now waits for a worker

	client := newOneConnClient(t)
	type result struct {
		res *testenv.Response
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		res, _, err := client.do(t, http.MethodPost, fmt.Sprintf("%s/v1/orders/%d/confirm", f.URL, ob.Data.ID), f.keyA,
			fmt.Sprintf(`{"external_payment_id": "slow-1", "paid_amount": %d}`, ob.Data.Amount.Amount), idemKey(t))
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

	res, reused, err := client.do(t, http.MethodGet, fmt.Sprintf("%s/v1/orders/%d", f.URL, ob.Data.ID), f.keyA, "")
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

package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"ticketsales/test/testenv"
)

// TestCreatesAnswerWhatIsStored: the created_at a create answers with is the
// one every later read returns (Postgres keeps microseconds); a refund with
// no body refunds the whole order; a body sent as anything but JSON gets 415
// saying what to send.
func TestCreatesAnswerWhatIsStored(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	type created struct {
		Data struct {
			ID        any       `json:"id"`
			CreatedAt time.Time `json:"created_at"`
		} `json:"data"`
	}
	same := func(what string, res *testenv.Response, path string) {
		t.Helper()
		var c, g created
		res.Decode(t, &c)
		f.Get(t, fmt.Sprintf(path, c.Data.ID), f.keyA).Decode(t, &g)
		if c.Data.CreatedAt.IsZero() || !c.Data.CreatedAt.Equal(g.Data.CreatedAt) {
			t.Fatalf("%s created_at: created %v, read %v", what, c.Data.CreatedAt, g.Data.CreatedAt)
		}
	}
	res := f.reserve(t, f.keyA, "parterre-1-4")
	same("reservation", res, "/v1/reservations/%v")
	var r reservationBody
	res.Decode(t, &r)
	res = f.orderFromReservation(t, f.keyA, r.Data.ID, "external")
	same("order", res, "/v1/orders/%.0f")

	id := f.paidOrder(t, f.keyA, "parterre-1-1", "parterre-1-2")
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded"} {
		res := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/refund", id), f.keyA, "reason=x", "Content-Type: "+ct, idemKey(t))
		p := expectProblem(t, res, http.StatusUnsupportedMediaType, "unsupported_media_type")
		if !strings.Contains(p.Detail, "Content-Type: application/json") {
			t.Fatalf("415 detail %q", p.Detail)
		}
	}
	res = f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/refund", id), f.keyA, "", idemKey(t))
	if res.Status != http.StatusCreated {
		t.Fatalf("refund without a body: %d %s", res.Status, res.Body)
	}
	var rb refundBody
	res.Decode(t, &rb)
	if rb.Data.OrderStatus != "refunded" || len(rb.Data.Tickets) != 2 {
		t.Fatalf("refund without a body is not a full refund: %s", res.Body)
	}
	same("refund", res, "/v1/refunds/%v")
}

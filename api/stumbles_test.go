package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/test/testenv"
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

// TestMessagesSayWhatIsWrong: errors a partner meets while integrating name
// the cause in the words of the interface they used.
func TestMessagesSayWhatIsWrong(t *testing.T) {
	f := newFixture(t)
	type detailed struct {
		Detail string `json:"detail"`
		Errors []struct {
			Location string `json:"location"`
			Message  string `json:"message"`
		} `json:"errors"`
		AggSeats []string `json:"unavailableSeats"`
	}
	read := func(res *testenv.Response, status int, code string) detailed {
		t.Helper()
		expectProblem(t, res, status, code)
		var d detailed
		res.Decode(t, &d)
		return d
	}
	// A general-admission event has no seating scheme.
	d := read(f.Get(t, fmt.Sprintf("/v1/events/%d/scheme", f.ids["standup"]), f.keyA), http.StatusNotFound, "not_found")
	if !strings.Contains(d.Detail, "no seating scheme") {
		t.Fatalf("scheme of a general-admission event: %q", d.Detail)
	}
	// An order naming a reservation of another event (both seated).
	if _, err := f.DB.ExecContext(context.Background(), "UPDATE events SET status = 'published' WHERE slug = 'nutcracker'"); err != nil {
		t.Fatal(err)
	}
	var nutcracker int64
	if err := f.DB.NewRaw("SELECT id FROM events WHERE slug = 'nutcracker'").Scan(context.Background(), &nutcracker); err != nil {
		t.Fatal(err)
	}
	var r reservationBody
	f.reserve(t, f.keyA, "parterre-2-1").Decode(t, &r)
	res := f.Do(t, http.MethodPost, "/v1/orders", f.keyA, fmt.Sprintf(`{"event_id": %d, "reservation_id": %q, "payment": "external",
		"customer": {"email": "a@example.com", "first_name": "A", "last_name": "B", "phone": "+79991234567"}}`, nutcracker, r.Data.ID), idemKey(t))
	d = read(res, http.StatusUnprocessableEntity, "validation_error")
	if len(d.Errors) != 1 || d.Errors[0].Location != "body.reservation_id" || !strings.Contains(d.Errors[0].Message, "belongs to another event") {
		t.Fatalf("reservation of another event: %s", res.Body)
	}
	// The aggregator adapter: a taken seat as reserve takes it, and a
	// general-admission session, in its own field names.
	d = read(f.aggReserve(t, "parterre|parterre-2-1"), http.StatusConflict, "seat_taken")
	if len(d.AggSeats) != 1 || d.AggSeats[0] != "parterre|parterre-2-1" {
		t.Fatalf("aggregator seat_taken seats: %v", d.AggSeats)
	}
	res = f.Do(t, http.MethodPost, "/aggregator/v1/reserve", f.keyA,
		fmt.Sprintf(`{"sessionId": "%d", "seats": ["floor|floor-1"]}`, f.ids["standup"]))
	d = read(res, http.StatusUnprocessableEntity, "validation_error")
	if len(d.Errors) != 1 || d.Errors[0].Location != "body.sessionId" || !strings.Contains(d.Errors[0].Message, "hasSeats: false") {
		t.Fatalf("aggregator reserve on a general-admission session: %s", res.Body)
	}
}

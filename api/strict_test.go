package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// A request means one thing: each body below was once validated as one
// request and used as another (a member in another letter case passed the
// schema's check of its twin, and Go's decoding kept the last match), or
// was read differently by the idempotency check. Each is refused with 422
// naming the member, and nothing is held, ordered or recorded.
func TestMembersMeanOneThing(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	swan, standup := f.ids["swan-lake"], f.ids["standup"]
	var body struct{ Data []category }
	f.Get(t, fmt.Sprintf("/v1/events/%d/categories", standup), f.keyA).Decode(t, &body)
	cats := body.Data
	customer := `{"email": "anna@example.com", "first_name": "Анна", "last_name": "Павлова", "phone": "+7 999 123-45-67"}`
	order := func(items string) string {
		return fmt.Sprintf(`{"event_id": %d, "items": %s, "customer": %s, "payment": "external"}`, standup, items, customer)
	}
	paid, ts := f.paidTickets(t, f.keyA, "parterre-3-1")

	for _, c := range []struct {
		name, path, key, body, location string
	}{
		{"an aggregator ttl of a year beside a valid one", "/aggregator/v1/reserve", f.keyA,
			fmt.Sprintf(`{"sessionId": "%d", "quantity": 2, "ttl": 900, "TTL": 31536000}`, swan), "body.TTL"},
		{"an aggregator ttl in another case alone", "/aggregator/v1/reserve", f.keyA,
			fmt.Sprintf(`{"sessionId": "%d", "quantity": 2, "TTL": 31536000}`, swan), "body.TTL"},
		{"an aggregator quantity of 22 beside 1", "/aggregator/v1/reserve", f.keyA,
			fmt.Sprintf(`{"sessionId": "%d", "quantity": 1, "Quantity": 22}`, swan), "body.Quantity"},
		{"best available of 22 beside 1", "/v1/reservations", f.keyA,
			fmt.Sprintf(`{"event_id": %d, "best_available": {"quantity": 1, "Quantity": 22}}`, swan), "body.best_available.Quantity"},
		{"a ttl_minutes of a year beside 15", "/v1/reservations", f.keyA,
			fmt.Sprintf(`{"event_id": %d, "seats": %s, "ttl_minutes": 15, "TTL_minutes": 525600}`, swan, seatsJSON("parterre-3-5")), "body.TTL_minutes"},
		{"the same member twice", "/v1/reservations", f.keyA,
			fmt.Sprintf(`{"event_id": %d, "seats": %s, "ttl_minutes": 15, "ttl_minutes": 60}`, swan, seatsJSON("parterre-3-6")), "body.ttl_minutes"},
		{"24 tickets of a category beside 1", "/v1/orders", f.keyA,
			order(fmt.Sprintf(`[{"ticket_category_id": %d, "quantity": 1, "Quantity": 24}]`, cats[0].ID)), "body.items[0].Quantity"},
		{"-3 tickets of a category beside 1", "/v1/orders", f.keyA,
			order(fmt.Sprintf(`[{"ticket_category_id": %d, "quantity": 1, "Quantity": -3}]`, cats[0].ID)), "body.items[0].Quantity"},
		{"a buyer's e-mail with a line break", "/v1/orders", f.keyA,
			fmt.Sprintf(`{"event_id": %d, "items": [{"ticket_category_id": %d, "quantity": 1}], "payment": "external",
			  "customer": {"email": "anna@example.com", "Email": "anna@example.com\r\nBcc: all@example.com", "first_name": "Анна", "last_name": "Павлова", "phone": "+7 999 123-45-67"}}`,
				standup, cats[0].ID), "body.customer.Email"},
		{"a 200 KB barcode", "/v1/check-ins", door,
			fmt.Sprintf(`{"barcode": %q, "Barcode": %q, "event_id": %d, "gate": "North"}`, ts[0].Barcode, strings.Repeat("7", 200<<10), swan), "body.Barcode"},
		{"a 5,000-character gate", "/v1/check-ins", door,
			fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "North", "Gate": %q}`, ts[0].Barcode, swan, strings.Repeat("Ворота ", 715)), "body.Gate"},
		{"a refund's reason in another case", fmt.Sprintf("/v1/orders/%d/refund", paid), f.keyA,
			fmt.Sprintf(`{"reason": "x", "Reason": %q}`, strings.Repeat("й", 5000)), "body.Reason"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := f.Do(t, http.MethodPost, c.path, c.key, c.body, idemKey(t))
			if res.Status != http.StatusUnprocessableEntity {
				t.Fatalf("want 422, got %d %.300s", res.Status, res.Body)
			}
			p := expectProblem(t, res, http.StatusUnprocessableEntity, "validation_error")
			if len(p.Errors) == 0 || p.Errors[0].Location != c.location {
				t.Fatalf("want the error at %s, got %.300s", c.location, res.Body)
			}
			if len(res.Body) > 2000 {
				t.Fatalf("the problem echoes the body: %.300s… (%d bytes)", res.Body, len(res.Body))
			}
		})
	}
	// Nothing above made anything: no hold but the paid order's, no other
	// order, no scan, no refund.
	for table, want := range map[string]int{"reservations": 1, "orders": 1, "check_ins": 0, "refunds": 0} {
		var n int
		if err := f.DB.NewRaw("SELECT count(*) FROM "+table).Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("%s: %d rows, want %d", table, n, want)
		}
	}
}

// A body that is not one plain JSON value of UTF-8 is refused before
// anything reads it: invalid UTF-8 (Go's decoder would store U+FFFD),
// nesting past 32 levels; an unknown member is named, not echoed with the
// whole body.
func TestBodiesAreReadStrictly(t *testing.T) {
	f := newFixture(t)
	swan := f.ids["swan-lake"]
	res := f.Do(t, http.MethodPost, "/v1/reservations", f.keyA,
		fmt.Sprintf(`{"event_id": %d, "seats": [{"zone_id": "parterre%s", "seat_id": "parterre-1-1"}]}`, swan, "\xff"), idemKey(t))
	expectProblem(t, res, http.StatusBadRequest, "malformed_request")

	deep := strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40)
	res = f.Do(t, http.MethodPost, "/v1/reservations", f.keyA,
		fmt.Sprintf(`{"event_id": %d, "seats": %s, "x": %s}`, swan, seatsJSON("parterre-1-1"), deep), idemKey(t))
	expectProblem(t, res, http.StatusUnprocessableEntity, "validation_error")

	res = f.Do(t, http.MethodPost, "/v1/reservations", f.keyA,
		fmt.Sprintf(`{"event_id": %d, "seats": %s, "Event_id": 1}`, swan, seatsJSON("parterre-1-1")), idemKey(t))
	var p struct {
		Errors []struct {
			Location string `json:"location"`
			Value    any    `json:"value"`
		} `json:"errors"`
	}
	expectProblem(t, res, http.StatusUnprocessableEntity, "validation_error")
	res.Decode(t, &p)
	if len(p.Errors) != 1 || p.Errors[0].Location != "body.Event_id" || p.Errors[0].Value != nil {
		t.Fatalf("an unknown member: %s", res.Body)
	}
	if s := f.seatStates(t)["parterre-1-1"]; s != "free" {
		t.Fatalf("parterre-1-1 is %s after refused holds", s)
	}
}

// A replay answers only the request it was stored for: two bodies whose
// members differ only in order of a name's case twins once had the same
// canonical form but different meanings (the last match counted), so the
// second was answered with the first's hold.
func TestReplayIsOfTheSameRequest(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	swan := f.ids["swan-lake"]
	key := idemKey(t)
	first := f.Do(t, http.MethodPost, "/aggregator/v1/reserve", f.keyA,
		fmt.Sprintf(`{"sessionId": "%d", "quantity": 1, "Quantity": 3}`, swan), key)
	second := f.Do(t, http.MethodPost, "/aggregator/v1/reserve", f.keyA,
		fmt.Sprintf(`{"sessionId": "%d", "Quantity": 3, "quantity": 1}`, swan), key)
	for i, res := range []*testenv.Response{first, second} {
		expectProblem(t, res, http.StatusUnprocessableEntity, "validation_error")
		if res.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("request %d was answered by a replay: %s", i+1, res.Body)
		}
	}
	// The key is still free for the request the partner meant.
	ok := f.Do(t, http.MethodPost, "/aggregator/v1/reserve", f.keyA, fmt.Sprintf(`{"sessionId": "%d", "quantity": 3}`, swan), key)
	if ok.Status != http.StatusCreated {
		t.Fatalf("the meant request: %d %s", ok.Status, ok.Body)
	}
}

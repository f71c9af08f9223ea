package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ticketsales/ticketsales/test/testenv"
)

func TestAggregatorLifecycle(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)

	var sessions []struct{ SessionID string }
	f.Get(t, "/aggregator/v1/sessions", f.keyA).Decode(t, &sessions)
	if len(sessions) != 3 {
		t.Fatalf("sessions on sale: %+v", sessions)
	}
	var seats []struct {
		ID    string
		Price struct{ Value int64 }
	}
	f.Get(t, fmt.Sprintf("/aggregator/v1/sessions/%d/available-seats", f.ids["swan-lake"]), f.keyA).Decode(t, &seats)
	if len(seats) != 96 || seats[0].ID != "balcony|balcony-1-1" || seats[0].Price.Value != 150000 {
		t.Fatalf("available seats: %d, first %+v", len(seats), seats[0])
	}

	// RESERVED → APPROVED with tickets.
	res := f.aggReserve(t, "parterre|parterre-1-1", "parterre|parterre-1-2")
	var o aggOrder
	res.Decode(t, &o)
	if res.Status != 201 || o.Status != "RESERVED" || o.Amount.Value != 660000 || o.Amount.Currency != "RUB" {
		t.Fatalf("reserve: %d %s", res.Status, res.Body)
	}
	// The 201 says where the order is read.
	if loc := res.Header.Get("Location"); loc != "/aggregator/v1/orders/"+o.OrderID {
		t.Fatalf("reserve's Location %q", loc)
	}
	f.Get(t, fmt.Sprintf("/aggregator/v1/sessions/%d/available-seats", f.ids["swan-lake"]), f.keyA).Decode(t, &seats)
	if len(seats) != 94 {
		t.Fatalf("held seats still offered: %d", len(seats))
	}
	// A taken seat is refused, as in /v1.
	expectProblem(t, f.aggReserve(t, "parterre|parterre-1-2"), http.StatusConflict, "seat_taken")

	confirm := func() aggOrder {
		res := f.Do(t, http.MethodPost, "/aggregator/v1/orders/"+o.OrderID+"/confirm", f.keyA,
			`{"customer": {"email": "ivan@example.com", "name": "Ivan Petrov"}, "paymentId": "agg-pay-1"}`)
		var c aggOrder
		res.Decode(t, &c)
		if res.Status != 200 {
			t.Fatalf("confirm: %d %s", res.Status, res.Body)
		}
		return c
	}
	c := confirm()
	if c.Status != "APPROVED" || c.ExternalOrderID == "" || len(c.Tickets) != 2 || c.Tickets[0].Sector != "parterre" ||
		c.Tickets[0].Row != "1" || c.Tickets[0].Seat != "1" || len(c.Tickets[0].Barcode) != 13 {
		t.Fatalf("confirmed: %+v", c)
	}
	again := confirm()
	if again.ExternalOrderID != c.ExternalOrderID || again.Tickets[0].Barcode != c.Tickets[0].Barcode {
		t.Fatalf("a repeated confirm changed the result: %+v vs %+v", again, c)
	}
	if got := f.aggGet(t, o.OrderID); got.Status != "APPROVED" {
		t.Fatalf("status after confirm: %s", got.Status)
	}
	// The same sale is visible through /v1.
	var ob orderBody
	f.Get(t, "/v1/orders/"+c.ExternalOrderID, f.keyA).Decode(t, &ob)
	if ob.Data.Status != "paid" {
		t.Fatalf("/v1 sees the aggregator order as %q", ob.Data.Status)
	}
	expectProblem(t, f.Do(t, http.MethodPost, "/aggregator/v1/orders/"+o.OrderID+"/clear-reservation", f.keyA, ""),
		http.StatusConflict, "order_paid")

	// RESERVED → CANCELLED by clear-reservation: the seat is free again.
	var r2 aggOrder
	f.aggReserve(t, "balcony|balcony-1-3").Decode(t, &r2)
	for i := 0; i < 2; i++ {
		res := f.Do(t, http.MethodPost, "/aggregator/v1/orders/"+r2.OrderID+"/clear-reservation", f.keyA, "")
		var cl aggOrder
		res.Decode(t, &cl)
		if res.Status != 200 || cl.Status != "CANCELLED" {
			t.Fatalf("clear-reservation #%d: %d %s", i+1, res.Status, res.Body)
		}
	}
	if st := f.seatStates(t)["balcony-1-3"]; st != "free" {
		t.Fatalf("cleared seat: %s", st)
	}

	// RESERVED → CANCELLED by expiry.
	var r3 aggOrder
	f.aggReserve(t, "balcony|balcony-1-4").Decode(t, &r3)
	if _, err := f.DB.ExecContext(context.Background(), "UPDATE reservations SET expires_at = now() - interval '1 second' WHERE id = ?", r3.OrderID); err != nil {
		t.Fatal(err)
	}
	if got := f.aggGet(t, r3.OrderID); got.Status != "CANCELLED" {
		t.Fatalf("expired hold shows %s", got.Status)
	}

	// Validation and errors are problem+json with a code.
	expectProblem(t, f.Do(t, http.MethodPost, "/aggregator/v1/reserve", f.keyA, `{"sessionId": "x", "seats": ["a|b"]}`),
		http.StatusUnprocessableEntity, "validation_error")
	expectProblem(t, f.Do(t, http.MethodPost, "/aggregator/v1/reserve", f.keyA,
		fmt.Sprintf(`{"sessionId": "%d", "seats": ["parterre-1-5"]}`, f.ids["swan-lake"])), http.StatusUnprocessableEntity, "validation_error")
	expectProblem(t, f.Do(t, http.MethodPost, "/aggregator/v1/reserve", f.keyA,
		fmt.Sprintf(`{"sessionId": "%d", "seats": ["parterre|parterre-1-5"], "ttl": 30}`, f.ids["swan-lake"])), http.StatusUnprocessableEntity, "validation_error")
	expectProblem(t, f.Get(t, "/aggregator/v1/orders/rsv_nope", f.keyA), http.StatusNotFound, "not_found")
	expectProblem(t, f.Get(t, "/aggregator/v1/orders/"+o.OrderID, f.keyB), http.StatusNotFound, "not_found")
	expectProblem(t, f.Get(t, "/aggregator/v1/sessions", ""), http.StatusUnauthorized, "api_key_missing")
}

// TestAggregatorChargesTheQuotedAmount: confirm charges what reserve quoted,
// even after the organizer changed the event's fee in between.
func TestAggregatorChargesTheQuotedAmount(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Holds.CacheSaleContext(0) // every request reads the event: the fee change below is seen at once
	f.StartWorker(t)
	var o aggOrder
	if res := f.aggReserve(t, "parterre|parterre-1-7", "parterre|parterre-1-8"); res.Status != 201 {
		t.Fatalf("reserve: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &o)
	}
	if _, err := f.DB.ExecContext(context.Background(), "UPDATE events SET fee_rate_bp = 2500, min_fee = 200000 WHERE id = ?",
		f.ids["swan-lake"]); err != nil {
		t.Fatal(err)
	}
	res := f.aggConfirm(t, o.OrderID, "agg-pay-quoted")
	var c aggOrder
	res.Decode(t, &c)
	if res.Status != 200 || c.Status != "APPROVED" {
		t.Fatalf("confirm: %d %s", res.Status, res.Body)
	}
	if c.Amount.Value != o.Amount.Value {
		t.Fatalf("confirm charged %d; reserve quoted %d", c.Amount.Value, o.Amount.Value)
	}
	var amount int64
	var channel string
	if err := f.DB.NewRaw("SELECT amount, channel FROM orders WHERE id = ?", c.ExternalOrderID).Scan(context.Background(), &amount, &channel); err != nil {
		t.Fatal(err)
	}
	if amount != o.Amount.Value {
		t.Fatalf("the order's amount is %d; reserve quoted %d", amount, o.Amount.Value)
	}
	// The organizer's report tells the adapter's sales from /v1's.
	if channel != "aggregator" {
		t.Fatalf("an order of the aggregator adapter has channel %q", channel)
	}
}

// TestAggregatorConcurrentConfirms: an aggregator retrying confirm while its
// first attempt still runs gets the same APPROVED order from every attempt,
// including one that finds the order before its creator started its saga.
func TestAggregatorConcurrentConfirms(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	for round := 0; round < 6; round++ {
		var r aggOrder
		if res := f.aggReserve(t, fmt.Sprintf("parterre|parterre-3-%d", round+1)); res.Status != 201 {
			t.Fatalf("reserve: %d %s", res.Status, res.Body)
		} else {
			res.Decode(t, &r)
		}
		results := make([]*testenv.Response, 4)
		var wg sync.WaitGroup
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = f.aggConfirm(t, r.OrderID, "agg-pay-"+r.OrderID)
			}()
		}
		wg.Wait()
		var first aggOrder
		for i, res := range results {
			if res.Status != 200 {
				t.Fatalf("round %d confirm %d: %d %s", round, i, res.Status, res.Body)
			}
			var c aggOrder
			res.Decode(t, &c)
			if c.Status != "APPROVED" {
				t.Fatalf("round %d confirm %d: %s", round, i, res.Body)
			}
			if i == 0 {
				first = c
			} else if c.ExternalOrderID != first.ExternalOrderID {
				t.Fatalf("round %d: confirms answered orders %s and %s", round, first.ExternalOrderID, c.ExternalOrderID)
			}
		}
	}
}

// TestAggregatorConfirmWithAnotherPayment: a confirm repeated with the same
// paymentId returns the same result; with another paymentId it is refused,
// also when both race, and the order keeps the payment that paid it.
func TestAggregatorConfirmWithAnotherPayment(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	var o aggOrder
	f.aggReserve(t, "parterre|parterre-2-9").Decode(t, &o)
	var first aggOrder
	if res := f.aggConfirm(t, o.OrderID, "agg-pay-1"); res.Status != 200 {
		t.Fatalf("confirm: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &first)
	}
	p := expectProblem(t, f.aggConfirm(t, o.OrderID, "agg-pay-2"), http.StatusConflict, "invalid_state")
	if !strings.Contains(p.Detail, "another payment id") {
		t.Fatalf("the refusal does not say why: %+v", p)
	}
	var again aggOrder
	res := f.aggConfirm(t, o.OrderID, "agg-pay-1")
	res.Decode(t, &again)
	if res.Status != 200 || again.Status != "APPROVED" || again.ExternalOrderID != first.ExternalOrderID ||
		again.Tickets[0].Barcode != first.Tickets[0].Barcode {
		t.Fatalf("repeat with the same paymentId: %d %s", res.Status, res.Body)
	}
	var paymentID string
	if err := f.DB.NewRaw("SELECT payment_id FROM orders WHERE id = ?", first.ExternalOrderID).Scan(context.Background(), &paymentID); err != nil {
		t.Fatal(err)
	}
	if paymentID != "agg-pay-1" {
		t.Fatalf("payment_id %q after confirm", paymentID)
	}

	// Racing confirms with different payments: one pays, the others are refused.
	var r aggOrder
	f.aggReserve(t, "parterre|parterre-2-10").Decode(t, &r)
	statuses := make([]int, 4)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = f.aggConfirm(t, r.OrderID, fmt.Sprintf("agg-race-%d", i)).Status
		}()
	}
	wg.Wait()
	won := -1
	for i, st := range statuses {
		switch {
		case st == 200 && won < 0:
			won = i
		case st != 409:
			t.Fatalf("racing confirms answered %v", statuses)
		}
	}
	if won < 0 {
		t.Fatalf("no racing confirm won: %v", statuses)
	}
	var paid struct {
		Status    string
		PaymentID string
	}
	if err := f.DB.NewRaw("SELECT status, payment_id FROM orders WHERE reservation_id = ?", r.OrderID).Scan(context.Background(), &paid); err != nil {
		t.Fatal(err)
	}
	if paid.Status != "paid" || paid.PaymentID != fmt.Sprintf("agg-race-%d", won) {
		t.Fatalf("order %+v; the confirm with agg-race-%d was answered APPROVED", paid, won)
	}
}

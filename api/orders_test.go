package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/payment"
	"github.com/ticketsales/ticketsales/test/testenv"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// TestSandboxFullCheck is the contract's "full sandbox check": reserve,
// order with external payment, confirm, fetch tickets; plus the error checks.
func TestSandboxFullCheck(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)

	res := f.reserve(t, f.keyA, "parterre-1-1", "balcony-1-1")
	var r reservationBody
	res.Decode(t, &r)
	if res.Status != 201 {
		t.Fatalf("reserve: %d %s", res.Status, res.Body)
	}
	// A taken seat: 409 seat_taken.
	expectProblem(t, f.reserve(t, f.keyA, "parterre-1-1"), http.StatusConflict, "seat_taken")

	res = f.orderFromReservation(t, f.keyA, r.Data.ID, "external")
	if res.Status != 201 {
		t.Fatalf("order: %d %s", res.Status, res.Body)
	}
	var ob orderBody
	res.Decode(t, &ob)
	o := ob.Data
	// 3000.00 + 1500.00, fee 10% = 450.00 (over the 50.00 minimum), separate.
	if o.Status != "pending_payment" || !o.IsTest || o.Total.Amount != 450000 || o.ServiceFee.Amount != 45000 ||
		o.Amount.Amount != 495000 || o.Amount.Currency != "RUB" || o.PaymentURL != "" {
		t.Fatalf("order: %+v", o)
	}
	var rb reservationBody
	f.Get(t, "/v1/reservations/"+r.Data.ID, f.keyA).Decode(t, &rb)
	if rb.Data.Status != "ordered" {
		t.Fatalf("reservation after order: %s", rb.Data.Status)
	}
	// Tickets do not exist before payment.
	var none struct{ Data []ticket }
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", o.ID), f.keyA).Decode(t, &none)
	if len(none.Data) != 0 {
		t.Fatalf("tickets before payment: %+v", none.Data)
	}

	// A different paid_amount: 422 amount_mismatch naming the amount to
	// pay, nothing changes.
	mismatch := f.confirm(t, f.keyA, o.ID, o.Amount.Amount-1)
	expectProblem(t, mismatch, http.StatusUnprocessableEntity, "amount_mismatch")
	var expected struct {
		ExpectedAmount struct {
			Amount   int64  `json:"amount"`
			Currency string `json:"currency"`
		} `json:"expected_amount"`
	}
	mismatch.Decode(t, &expected)
	if expected.ExpectedAmount.Amount != o.Amount.Amount || expected.ExpectedAmount.Currency != "RUB" {
		t.Fatalf("amount_mismatch names %+v, want %d RUB: %s", expected.ExpectedAmount, o.Amount.Amount, mismatch.Body)
	}
	var still orderBody
	f.Get(t, fmt.Sprintf("/v1/orders/%d", o.ID), f.keyA).Decode(t, &still)
	if still.Data.Status != "pending_payment" {
		t.Fatalf("after a mismatch the order is %s", still.Data.Status)
	}

	res = f.confirm(t, f.keyA, o.ID, o.Amount.Amount)
	var paid orderBody
	res.Decode(t, &paid)
	if res.Status != 200 || paid.Data.Status != "paid" || paid.Data.PaidAt == nil {
		t.Fatalf("confirm: %d %s", res.Status, res.Body)
	}
	// The same payment again: the same paid order; another payment is
	// refused, so the partner knows to give that money back.
	if res := f.confirm(t, f.keyA, o.ID, o.Amount.Amount); res.Status != 200 {
		t.Fatalf("repeated confirm: %d %s", res.Status, res.Body)
	}
	other := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/confirm", o.ID), f.keyA,
		fmt.Sprintf(`{"external_payment_id": "another", "paid_amount": %d}`, o.Amount.Amount), idemKey(t))
	expectProblem(t, other, http.StatusConflict, "invalid_state")
	// Tickets are available as soon as confirm answers.
	var tb struct{ Data []ticket }
	tres := f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", o.ID), f.keyA)
	tres.Decode(t, &tb)
	if tres.Status != 200 || len(tb.Data) != 2 {
		t.Fatalf("tickets: %d %s", tres.Status, tres.Body)
	}
	seen := map[string]bool{}
	for _, tk := range tb.Data {
		if len(tk.Barcode) != 13 || tk.Status != "active" || tk.Seat == nil || tk.Number == "" || seen[tk.Barcode] ||
			!strings.Contains(tk.OrderURL, fmt.Sprintf("/o/%d?access_token=", o.ID)) {
			t.Fatalf("ticket: %+v", tk)
		}
		seen[tk.Barcode] = true
	}
	if tb.Data[0].Seat.Label != "Balcony, row 1, seat 1" || tb.Data[0].Price.Amount != 150000 {
		t.Fatalf("first ticket: %+v", tb.Data[0])
	}
	states := f.seatStates(t)
	if states["parterre-1-1"] != "sold" || states["balcony-1-1"] != "sold" {
		t.Fatalf("seats after payment: %v", states)
	}

	// The safe repeat: a new confirm returns the same paid order, no new tickets.
	again := f.confirm(t, f.keyA, o.ID, o.Amount.Amount)
	var ab orderBody
	again.Decode(t, &ab)
	if again.Status != 200 || ab.Data.Status != "paid" || !ab.Data.PaidAt.Equal(*paid.Data.PaidAt) {
		t.Fatalf("repeated confirm: %d %s", again.Status, again.Body)
	}
	var count int
	if err := f.DB.NewRaw("SELECT count(*) FROM tickets WHERE order_id = ?", o.ID).Scan(context.Background(), &count); err != nil || count != 2 {
		t.Fatalf("tickets after a repeated confirm: %d %v", count, err)
	}
	// A paid order cannot be cancelled.
	expectProblem(t, f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/cancel", o.ID), f.keyA, ""), http.StatusConflict, "order_paid")

	// Another company, or the production key of the same company, sees nothing.
	expectProblem(t, f.Get(t, fmt.Sprintf("/v1/orders/%d", o.ID), f.keyB), http.StatusNotFound, "not_found")
	prod, _ := f.Key(t, f.companyA, "production")
	expectProblem(t, f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", o.ID), prod), http.StatusNotFound, "not_found")

	var list struct {
		Data []order
		Meta struct{ Total int }
	}
	f.Get(t, "/v1/orders?filter.status=paid", f.keyA).Decode(t, &list)
	if list.Meta.Total != 1 || list.Data[0].ID != o.ID {
		t.Fatalf("list paid orders: %+v", list)
	}
	// Creation bounds take a plain date as the event filters do.
	today := time.Now().UTC().Format(time.DateOnly)
	f.Get(t, "/v1/orders?filter.status=paid&filter.created_from="+today+"&filter.created_to="+today, f.keyA).Decode(t, &list)
	if list.Meta.Total != 1 {
		t.Fatalf("paid orders created today: %+v", list)
	}
	tomorrow := time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	f.Get(t, "/v1/orders?filter.created_from="+tomorrow, f.keyA).Decode(t, &list)
	if list.Meta.Total != 0 {
		t.Fatalf("orders created from tomorrow: %+v", list)
	}
	expectProblem(t, f.Get(t, "/v1/orders?filter.created_from=23.11.2026", f.keyA), http.StatusUnprocessableEntity, "validation_error")
	countWorkflows(t, f.Stack, fmt.Sprintf("OrderStatus = 'paid' AND EventId = %d", f.ids["swan-lake"]), 1)
}

func TestCancelUnpaidOrderFreesSeats(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	var r reservationBody
	f.reserve(t, f.keyA, "parterre-2-5").Decode(t, &r)
	var ob orderBody
	f.orderFromReservation(t, f.keyA, r.Data.ID, "external").Decode(t, &ob)
	for i := 0; i < 2; i++ { // cancelling again answers the same
		res := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/cancel", ob.Data.ID), f.keyA, "")
		var c orderBody
		res.Decode(t, &c)
		if res.Status != 200 || c.Data.Status != "cancelled" || c.Data.CancelReason == nil || *c.Data.CancelReason != "partner" {
			t.Fatalf("cancel #%d: %d %s", i+1, res.Status, res.Body)
		}
	}
	if st := f.seatStates(t)["parterre-2-5"]; st != "free" {
		t.Fatalf("seat after cancel: %s", st)
	}
	expectProblem(t, f.confirm(t, f.keyA, ob.Data.ID, ob.Data.Amount.Amount), http.StatusConflict, "invalid_state")
	// The workflow ends with the order cancelled.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f.Orders.Settings.SandboxLifetime = 0
	var st contract.OrderStatus
	v, err := f.Temporal.QueryWorkflow(ctx, contract.OrderWorkflowID(ob.Data.ID), "", contract.StatusQuery)
	if err != nil || v.Get(&st) != nil || st.Status != "cancelled" {
		t.Fatalf("order workflow status: %+v %v", st, err)
	}
}

func TestPaymentWindowClosesOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Orders.Settings.PaymentWindow = 2 * time.Second
	f.StartWorker(t)
	var r reservationBody
	f.reserve(t, f.keyA, "parterre-2-6").Decode(t, &r)
	var ob orderBody
	f.orderFromReservation(t, f.keyA, r.Data.ID, "external").Decode(t, &ob)
	deadline := time.Now().Add(20 * time.Second)
	var o orderBody
	for time.Now().Before(deadline) {
		f.Get(t, fmt.Sprintf("/v1/orders/%d", ob.Data.ID), f.keyA).Decode(t, &o)
		if o.Data.Status != "pending_payment" {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if o.Data.Status != "cancelled" || o.Data.CancelReason == nil || *o.Data.CancelReason != "payment_timeout" {
		t.Fatalf("after the window: %+v", o.Data)
	}
	if st := f.seatStates(t)["parterre-2-6"]; st != "free" {
		t.Fatalf("seat after timeout: %s", st)
	}
	expectProblem(t, f.confirm(t, f.keyA, ob.Data.ID, ob.Data.Amount.Amount), http.StatusConflict, "order_expired")
}

func TestGeneralAdmissionAndSlots(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	var cats struct{ Data []category }
	f.Get(t, fmt.Sprintf("/v1/events/%d/categories", f.ids["standup"]), f.keyA).Decode(t, &cats)
	ga := cats.Data[0].ID
	post := func(body string) *testenv.Response {
		return f.Do(t, http.MethodPost, "/v1/orders", f.keyA, body, idemKey(t))
	}
	res := post(fmt.Sprintf(`{"event_id": %d, "items": [{"ticket_category_id": %d, "quantity": 3}], "customer": %s, "payment": "external"}`,
		f.ids["standup"], ga, customer))
	var ob orderBody
	res.Decode(t, &ob)
	// Included fee: the buyer pays the prices; fee 8% inside.
	if res.Status != 201 || ob.Data.Amount.Amount != 360000 || ob.Data.ServiceFee.Amount != 28800 {
		t.Fatalf("GA order: %d %s", res.Status, res.Body)
	}
	f.Get(t, fmt.Sprintf("/v1/events/%d/categories", f.ids["standup"]), f.keyA).Decode(t, &cats)
	if *cats.Data[0].Available != 197 {
		t.Fatalf("GA left after 3 ordered: %d", *cats.Data[0].Available)
	}
	if res := f.confirm(t, f.keyA, ob.Data.ID, ob.Data.Amount.Amount); res.Status != 200 {
		t.Fatalf("confirm GA: %d %s", res.Status, res.Body)
	}
	var tb struct{ Data []ticket }
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", ob.Data.ID), f.keyA).Decode(t, &tb)
	if len(tb.Data) != 3 || tb.Data[0].Seat != nil {
		t.Fatalf("GA tickets: %+v", tb.Data)
	}

	// The scheduled exhibition sells by slot, 50 per slot.
	var sessions struct {
		Data []struct{ ID int64 }
	}
	f.Get(t, fmt.Sprintf("/v1/sessions?filter.event_id=%d", f.ids["expo"]), f.keyA).Decode(t, &sessions)
	f.Get(t, fmt.Sprintf("/v1/events/%d/categories", f.ids["expo"]), f.keyA).Decode(t, &cats)
	adult := cats.Data[0].ID
	expo := func(slot int64, qty int) *testenv.Response {
		return post(fmt.Sprintf(`{"event_id": %d, "schedule_slot_id": %d, "items": [{"ticket_category_id": %d, "quantity": %d}], "customer": %s, "payment": "external"}`,
			f.ids["expo"], slot, adult, qty, customer))
	}
	for i := 0; i < 2; i++ {
		if res := expo(sessions.Data[0].ID, 20); res.Status != 201 {
			t.Fatalf("slot order %d: %d %s", i, res.Status, res.Body)
		}
	}
	soldOut := expo(sessions.Data[0].ID, 11)
	expectProblem(t, soldOut, http.StatusConflict, "sold_out")
	if !strings.Contains(string(soldOut.Body), `"slot_sold_out":true`) {
		t.Fatalf("sold_out without the slot: %s", soldOut.Body)
	}
	if res := expo(sessions.Data[0].ID, 10); res.Status != 201 {
		t.Fatalf("the last 10 of the slot: %d %s", res.Status, res.Body)
	}
	if res := expo(sessions.Data[1].ID, 11); res.Status != 201 {
		t.Fatalf("the other slot: %d", res.Status)
	}
	p := expectProblem(t, post(fmt.Sprintf(`{"event_id": %d, "items": [{"ticket_category_id": %d, "quantity": 1}], "customer": %s, "payment": "external"}`,
		f.ids["expo"], adult, customer)), http.StatusUnprocessableEntity, "validation_error")
	if p.Errors[0].Location != "body.schedule_slot_id" {
		t.Fatalf("missing slot: %+v", p.Errors)
	}
	for _, bad := range []string{
		`{"event_id": %d, "items": [{"ticket_category_id": 1, "quantity": 1}], "customer": {"email": "nope", "first_name": "A", "last_name": "B", "phone": "+7 999 1234567"}, "payment": "external"}`,
		`{"event_id": %d, "items": [{"ticket_category_id": 1, "quantity": 1}], "customer": {"email": "a@b.c", "first_name": "A", "last_name": "B", "phone": "call me"}, "payment": "external"}`,
		`{"event_id": %d, "items": [{"ticket_category_id": 1, "quantity": 1}], "customer": {"email": "a@b.c", "first_name": "A", "last_name": "B", "phone": "+7 999 1234567"}, "payment": "cash"}`,
	} {
		expectProblem(t, post(fmt.Sprintf(bad, f.ids["standup"])), http.StatusUnprocessableEntity, "validation_error")
	}
}

func TestSandboxOrderIsDeletedAfterItsLifetime(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Orders.Settings.SandboxLifetime = 3 * time.Second // one day in production
	f.StartWorker(t)
	id := f.paidOrder(t, f.keyA, "parterre-3-30")
	if st := f.seatStates(t)["parterre-3-30"]; st != "sold" {
		t.Fatalf("seat of the paid test order: %s", st)
	}
	deadline := time.Now().Add(30 * time.Second)
	var res *testenv.Response
	for time.Now().Before(deadline) {
		if res = f.Get(t, fmt.Sprintf("/v1/orders/%d", id), f.keyA); res.Status == http.StatusNotFound {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	expectProblem(t, res, http.StatusNotFound, "not_found")
	expectProblem(t, f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", id), f.keyA), http.StatusNotFound, "not_found")
	if st := f.seatStates(t)["parterre-3-30"]; st != "free" {
		t.Fatalf("seat after the test order's deletion: %s", st)
	}
}

func TestGatewayCallbackNeedsItsSignature(t *testing.T) {
	t.Parallel()
	s := testenv.NewStack(t, testenv.Options{HostedGatewayURL: "http://127.0.0.1:1"})
	body := []byte(`{"payment_id": "pay_x", "order_id": 1, "status": "paid", "amount": 100, "currency": "RUB"}`)
	for _, path := range []string{payment.CallbackPath, payment.TestCallbackPath} {
		// The other gateway's key is as wrong as none: neither speaks for the other.
		otherKey := payment.TestCallbackKey(testenv.GatewaySecret)
		if path == payment.TestCallbackPath {
			otherKey = testenv.GatewaySecret
		}
		for _, sig := range []string{"", "sha256=00", "sha256=" + strings.Repeat("ab", 32), payment.Sign(otherKey, body)} {
			res := s.Do(t, http.MethodPost, path, "", string(body), "X-Gateway-Signature: "+sig)
			if res.Status != http.StatusUnauthorized && res.Status != http.StatusUnprocessableEntity {
				t.Fatalf("%s, signature %q: %d %s", path, sig, res.Status, res.Body)
			}
			if res.Header.Get("Content-Type") != "application/problem+json" {
				t.Fatalf("%s, signature %q: not a problem: %s", path, sig, res.Body)
			}
		}
	}
	var n int
	if err := s.DB.NewRaw("SELECT count(*) FROM payments").Scan(context.Background(), &n); err != nil || n != 0 {
		t.Fatalf("%d payments recorded from unsigned callbacks (%v)", n, err)
	}
}

// TestRepeatedOrderCreateReturnsTheOrder: a create repeated after its first
// attempt committed but never answered (a new Idempotency-Key, or the first
// attempt's process died) gets the order, not an error.
func TestRepeatedOrderCreateReturnsTheOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	var r reservationBody
	f.reserve(t, f.keyA, "parterre-3-25").Decode(t, &r)
	var first, second orderBody
	f.orderFromReservation(t, f.keyA, r.Data.ID, "external").Decode(t, &first)
	res := f.orderFromReservation(t, f.keyA, r.Data.ID, "external")
	res.Decode(t, &second)
	if res.Status != 201 || second.Data.ID != first.Data.ID || first.Data.ID == 0 {
		t.Fatalf("repeat: %d, order %d vs %d", res.Status, second.Data.ID, first.Data.ID)
	}
	// A different request for the same reservation is still refused.
	expectProblem(t, f.orderFromReservation(t, f.keyA, r.Data.ID, "gateway"), http.StatusConflict, "invalid_state")
}

// TestOrderKeepsTheQuotedPrice: an order from a reservation charges what the
// reservation quoted (at hold time, or at its last replace), even after the
// organizer changed the event's fee.
func TestOrderKeepsTheQuotedPrice(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Holds.CacheSaleContext(0) // every request reads the event: the fee change below is seen at once
	f.StartWorker(t)
	setFee := func(rateBP, minFee int64) {
		t.Helper()
		if _, err := f.DB.ExecContext(context.Background(), "UPDATE events SET fee_rate_bp = ?, min_fee = ? WHERE id = ?",
			rateBP, minFee, f.ids["swan-lake"]); err != nil {
			t.Fatal(err)
		}
	}

	// Held at 10% (min 50.00): 3000.00 + 300.00.
	var r reservationBody
	f.reserve(t, f.keyA, "parterre-2-1").Decode(t, &r)
	if r.Data.TotalToPay.Amount != 330000 {
		t.Fatalf("quote: %+v", r.Data)
	}
	setFee(2000, 100000)
	var o orderBody
	if res := f.orderFromReservation(t, f.keyA, r.Data.ID, "external"); res.Status != 201 {
		t.Fatalf("order: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &o)
	}
	if o.Data.Amount.Amount != r.Data.TotalToPay.Amount || o.Data.ServiceFee.Amount != r.Data.ServiceFee.Amount ||
		o.Data.Total.Amount != r.Data.Total.Amount {
		t.Fatalf("order amount %d, fee %d, total %d; the reservation quoted %d, %d, %d", o.Data.Amount.Amount,
			o.Data.ServiceFee.Amount, o.Data.Total.Amount, r.Data.TotalToPay.Amount, r.Data.ServiceFee.Amount, r.Data.Total.Amount)
	}

	// A replace quotes again at the fee of its time, and the order follows it.
	var r2 reservationBody
	f.reserve(t, f.keyA, "parterre-2-2").Decode(t, &r2)
	setFee(1000, 5000)
	var replaced reservationBody
	res := f.Do(t, http.MethodPatch, "/v1/reservations/"+r2.Data.ID, f.keyA, `{"seats": `+seatsJSON("parterre-2-3")+`}`)
	res.Decode(t, &replaced)
	if res.Status != 200 || replaced.Data.TotalToPay.Amount != 330000 {
		t.Fatalf("replace: %d %s", res.Status, res.Body)
	}
	setFee(500, 0)
	var o2 orderBody
	f.orderFromReservation(t, f.keyA, r2.Data.ID, "external").Decode(t, &o2)
	if o2.Data.Amount.Amount != replaced.Data.TotalToPay.Amount {
		t.Fatalf("order amount %d; the replaced reservation quoted %d", o2.Data.Amount.Amount, replaced.Data.TotalToPay.Amount)
	}
	if res := f.confirm(t, f.keyA, o2.Data.ID, replaced.Data.TotalToPay.Amount); res.Status != 200 {
		t.Fatalf("confirm at the quoted amount: %d %s", res.Status, res.Body)
	}
}

package api_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/app"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/test/testenv"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// acceptedOrder is an order as a confirm answers it.
type acceptedOrder struct {
	Data struct {
		order
		PaymentAcceptedAt *time.Time `json:"payment_accepted_at"`
	} `json:"data"`
}

func (f *fixture) confirmWith(t *testing.T, o order, paymentID, idem string) *testenv.Response {
	t.Helper()
	return f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/confirm", o.ID), f.keyA,
		fmt.Sprintf(`{"external_payment_id": %q, "paid_amount": %d}`, paymentID, o.Amount.Amount), idem)
}

// A confirm whose order workflow does not answer (no worker) never claims
// that nothing happened: the payment is accepted in Postgres with the
// request, the answer is 202 with the order still pending_payment and
// payment_accepted_at, and the order is paid with that payment once the
// worker is back — even though its payment window ended meanwhile, and
// nobody could take its seats in between.
func TestConfirmWithoutAWorkerIsAccepted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	stopWorker := f.StartWorker(t)
	f.Orders.Settings.PaymentWindow, f.Orders.Settings.ConfirmWait = 4*time.Second, 2*time.Second
	o := f.externalOrder(t, f.keyA, "parterre-3-25", "parterre-3-26")
	stopWorker()

	key := idemKey(t)
	res := f.confirmWith(t, o, "pay-accepted", key)
	if res.Status != http.StatusAccepted {
		t.Fatalf("confirm with no worker: %d %s", res.Status, res.Body)
	}
	var acc acceptedOrder
	res.Decode(t, &acc)
	if acc.Data.Status != "pending_payment" || acc.Data.PaymentAcceptedAt == nil {
		t.Fatalf("202 body: %s", res.Body)
	}
	if loc := res.Header.Get("Location"); loc != fmt.Sprintf("/v1/orders/%d", o.ID) {
		t.Errorf("Location %q", loc)
	}
	if res.Header.Get("Retry-After") == "" {
		t.Error("202 without Retry-After")
	}
	// The same request again asks again: a 202 is not replayed.
	if again := f.confirmWith(t, o, "pay-accepted", key); again.Status != http.StatusAccepted || again.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("repeat under the same key: %d replayed=%q", again.Status, again.Header.Get("Idempotent-Replayed"))
	}
	// Another payment is not accepted beside it; the order says which was.
	if other := f.confirmWith(t, o, "pay-other", idemKey(t)); other.Status != http.StatusConflict || other.JSON(t)["code"] != "invalid_state" {
		t.Errorf("confirm with another payment: %d %s", other.Status, other.Body)
	}
	if got := f.orderStatus(t, o.ID); got.PaymentID == nil || *got.PaymentID != "pay-accepted" {
		t.Errorf("the order's payment_id after a refused second payment: %v, want pay-accepted", got.PaymentID)
	}
	// A partner cannot cancel it: its payment pays it.
	if c := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/cancel", o.ID), f.keyA, ""); c.Status != http.StatusConflict {
		t.Errorf("cancel of an order whose payment is accepted: %d %s", c.Status, c.Body)
	}

	// Past its payment window, with no worker: the seats stay the order's.
	time.Sleep(time.Until(o.ExpiresAt.Add(time.Second)))
	if r := f.reserve(t, f.keyA, "parterre-3-25"); r.Status != http.StatusConflict {
		t.Fatalf("hold of an accepted order's seat after its window: %d %s", r.Status, r.Body)
	}
	if st := f.seatStates(t)["parterre-3-26"]; st != "reserved" {
		t.Errorf("the accepted order's seat shows %q", st)
	}

	f.StartWorker(t)
	var paid orderBody
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		f.Get(t, fmt.Sprintf("/v1/orders/%d", o.ID), f.keyA).Decode(t, &paid)
		if paid.Data.Status == "paid" || time.Now().After(deadline) {
			break
		}
	}
	if paid.Data.Status != "paid" {
		t.Fatalf("order after the worker came back: %+v", paid.Data)
	}
	var tickets struct{ Data []ticket }
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", o.ID), f.keyA).Decode(t, &tickets)
	if len(tickets.Data) != 2 {
		t.Fatalf("tickets of the paid order: %+v", tickets.Data)
	}
	// A repeat with the same payment, under any key, returns the paid order.
	if r := f.confirmWith(t, o, "pay-accepted", idemKey(t)); r.Status != http.StatusOK || r.JSON(t)["data"].(map[string]any)["status"] != "paid" {
		t.Errorf("repeat after paid: %d %s", r.Status, r.Body)
	}
	if r := f.confirmWith(t, o, "pay-accepted", key); r.Status != http.StatusOK {
		t.Errorf("repeat under the first key after paid: %d %s", r.Status, r.Body)
	}
}

// After its window a confirm is refused and records nothing.
func TestConfirmAfterTheWindowRecordsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Orders.Settings.PaymentWindow = time.Second
	o := f.externalOrder(t, f.keyA, "parterre-3-27")
	time.Sleep(time.Until(o.ExpiresAt.Add(200 * time.Millisecond)))
	res := f.confirmWith(t, o, "too-late", idemKey(t))
	if res.Status != http.StatusConflict || res.JSON(t)["code"] != "order_expired" {
		t.Fatalf("late confirm: %d %s", res.Status, res.Body)
	}
	var got acceptedOrder
	f.Get(t, fmt.Sprintf("/v1/orders/%d", o.ID), f.keyA).Decode(t, &got)
	if got.Data.PaymentAcceptedAt != nil {
		t.Errorf("a refused confirm accepted its payment: %+v", got.Data)
	}
	if r := f.reserve(t, f.keyA, "parterre-3-27"); r.Status != http.StatusCreated {
		t.Errorf("the lapsed order's seat: %d %s", r.Status, r.Body)
	}
}

// The aggregator's confirm gives the same guarantee in its contract: 202,
// still RESERVED with paymentAccepted, then APPROVED with that payment.
func TestAggregatorConfirmWithoutAWorkerIsAccepted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	stopWorker := f.StartWorker(t)
	f.Orders.Settings.ConfirmWait = 2 * time.Second
	var r aggOrder
	f.aggReserve(t, "parterre|parterre-3-28").Decode(t, &r)
	stopWorker()
	res := f.aggConfirm(t, r.OrderID, "agg-pay-1")
	if res.Status != http.StatusAccepted {
		t.Fatalf("aggregator confirm with no worker: %d %s", res.Status, res.Body)
	}
	body := res.JSON(t)
	if body["status"] != "RESERVED" || body["paymentAccepted"] != true {
		t.Fatalf("202 body: %s", res.Body)
	}
	if loc := res.Header.Get("Location"); loc != "/aggregator/v1/orders/"+r.OrderID {
		t.Errorf("Location %q", loc)
	}
	f.StartWorker(t)
	var got aggOrder
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if got = f.aggGet(t, r.OrderID); got.Status == "APPROVED" || time.Now().After(deadline) {
			break
		}
	}
	if got.Status != "APPROVED" || len(got.Tickets) != 1 {
		t.Fatalf("aggregator order after the worker came back: %+v", got)
	}
	if again := f.aggConfirm(t, r.OrderID, "agg-pay-1"); again.Status != http.StatusOK || again.JSON(t)["status"] != "APPROVED" {
		t.Errorf("repeat: %d %s", again.Status, again.Body)
	}
}

// A retry of an accepted aggregator confirm while Temporal is unreachable
// still says the payment is accepted (202), never 503 "nothing was
// changed": the payment stands, and the order will be paid with it.
func TestAggregatorConfirmRetryWithTemporalDownIsAccepted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	stopWorker := f.StartWorker(t)
	f.Orders.Settings.ConfirmWait = 2 * time.Second
	var r aggOrder
	f.aggReserve(t, "parterre|parterre-3-29").Decode(t, &r)
	stopWorker()
	if res := f.aggConfirm(t, r.OrderID, "agg-pay-2"); res.Status != http.StatusAccepted {
		t.Fatalf("first confirm: %d %s", res.Status, res.Body)
	}
	down, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1", Logger: app.TemporalLogger(testenv.Log())})
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	f.Config.ConfirmWait = 2 * time.Second
	cut := f.APIWithTemporal(t, down)
	res := testenv.Do(t, cut, http.MethodPost, "/aggregator/v1/orders/"+r.OrderID+"/confirm", f.keyA,
		`{"customer": {"email": "ivan@example.com", "name": "Ivan Petrov"}, "paymentId": "agg-pay-2"}`)
	if res.Status != http.StatusAccepted || res.JSON(t)["paymentAccepted"] != true {
		t.Fatalf("retry with Temporal down: %d %s", res.Status, res.Body)
	}
}

// TestConfirmedOrderHistoryIsLean: a confirmed production order's saga
// costs Temporal only what its guarantees need (docs/decisions.md, "An
// order's history"): no version marker and no TemporalChangeVersion upsert
// (a new order starts at contract.OrderRevision), one local activity that
// pays and issues the tickets, and the e-mail: at most 19 events where it
// had 22 (fewer when the confirm arrives during the first workflow task).
func TestConfirmedOrderHistoryIsLean(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	mailer, err := mail.New("", t.TempDir(), "tickets@ticketsales.test")
	if err != nil {
		t.Fatal(err)
	}
	f.Mailer = mailer
	f.StartWorker(t)
	prod, _ := f.Key(t, f.companyA, apikey.Production)
	id := f.paidOrder(t, prod, "parterre-3-5", "parterre-3-6")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var st contract.OrderStatus
	if err := f.Temporal.GetWorkflow(ctx, contract.OrderWorkflowID(id), "").Get(ctx, &st); err != nil {
		t.Fatalf("the order's saga: %v", err)
	}
	if st.TicketsIssued != 2 || !st.Emailed {
		t.Fatalf("saga result %+v, want 2 tickets issued and e-mailed", st)
	}
	var events, localActivities, activities int
	it := f.Temporal.GetWorkflowHistory(ctx, contract.OrderWorkflowID(id), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		events++
		switch e.GetEventType() {
		case enums.EVENT_TYPE_MARKER_RECORDED:
			switch name := e.GetMarkerRecordedEventAttributes().GetMarkerName(); name {
			case "LocalActivity":
				localActivities++
			default:
				t.Errorf("event %d: a %q marker", e.GetEventId(), name)
			}
		case enums.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			if _, ok := e.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes().GetIndexedFields()["TemporalChangeVersion"]; ok {
				t.Errorf("event %d: a TemporalChangeVersion upsert", e.GetEventId())
			}
		case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			activities++
		}
	}
	if localActivities != 1 || activities != 1 || events > 19 {
		t.Fatalf("%d events, %d local activities, %d activities; want at most 19, 1 (paid and issued) and 1 (the e-mail)", events, localActivities, activities)
	}
}

// TestSandboxSimulations: with a sandbox key, Sandbox-Simulate makes the
// slow paths happen now: payment_timeout gives the order a 10-second
// window, so it expires as an unpaid order does (cancelled,
// payment_timeout, seats back); confirm_accepted answers 202 at once
// (payment accepted, still pending), and the order is paid right after. A
// production key asking for either, or an unknown simulation, is 422 and
// nothing is made.
func TestSandboxSimulations(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	event := f.ids["swan-lake"]
	order := func(key, seat string, headers ...string) *testenv.Response {
		t.Helper()
		var r reservationBody
		if res := f.reserve(t, key, seat); res.Status != http.StatusCreated {
			t.Fatalf("reserve %s: %d %s", seat, res.Status, res.Body)
		} else {
			res.Decode(t, &r)
		}
		return f.Do(t, http.MethodPost, "/v1/orders", key, fmt.Sprintf(`{"event_id": %d, "reservation_id": %q, "payment": "external",
		  "customer": {"email": "sim@shop.test", "first_name": "Sim", "last_name": "Ulation", "phone": "+7 900 000-00-00"}}`, event, r.Data.ID),
			append(headers, idemKey(t))...)
	}

	// payment_timeout: expires in seconds, not minutes.
	res := order(f.keyA, "parterre-1-1", "Sandbox-Simulate: payment_timeout")
	if res.Status != http.StatusCreated {
		t.Fatalf("order with payment_timeout: %d %s", res.Status, res.Body)
	}
	var ob orderBody
	res.Decode(t, &ob)
	created := time.Now()
	if w := time.Until(ob.Data.ExpiresAt); w > 15*time.Second || w < 0 {
		t.Fatalf("a payment_timeout order expires in %s", w)
	}
	got := f.awaitOrderStatus(t, f.keyA, ob.Data.ID, "cancelled")
	if got.CancelReason == nil || *got.CancelReason != "payment_timeout" {
		t.Fatalf("the simulated timeout: %+v", got)
	}
	if st := f.awaitSeatStatus(t, f.URL, "parterre-1-1", "reserved"); st != "free" {
		t.Fatalf("the timed-out order's seat is %s", st)
	}
	t.Logf("the simulated payment timeout cancelled the order %s after it was made", time.Since(created).Round(time.Second))

	// confirm_accepted: 202 now, paid next.
	res = order(f.keyA, "parterre-1-2")
	res.Decode(t, &ob)
	conf := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/confirm", ob.Data.ID), f.keyA,
		fmt.Sprintf(`{"external_payment_id": "sim-pay-1", "paid_amount": %d}`, ob.Data.Amount.Amount), "Sandbox-Simulate: confirm_accepted", idemKey(t))
	var acc acceptedOrder
	conf.Decode(t, &acc)
	if conf.Status != http.StatusAccepted || acc.Data.Status != "pending_payment" || acc.Data.PaymentAcceptedAt == nil || conf.Header.Get("Location") == "" {
		t.Fatalf("confirm with confirm_accepted: %d %s", conf.Status, conf.Body)
	}
	if paid := f.awaitOrderStatus(t, f.keyA, ob.Data.ID, "paid"); paid.PaymentID == nil || *paid.PaymentID != "sim-pay-1" {
		t.Fatalf("after confirm_accepted the order is %+v", paid)
	}

	// Production keys and unknown simulations: refused, nothing made.
	prod, _ := f.Key(t, f.companyA, apikey.Production)
	countOrders := func() (n int) {
		if err := f.DB.NewRaw("SELECT count(*) FROM orders WHERE company_id = ?", f.companyA).Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := countOrders()
	p := expectProblem(t, order(prod, "parterre-1-3", "Sandbox-Simulate: payment_timeout"), http.StatusUnprocessableEntity, "validation_error")
	if len(p.Errors) == 0 || p.Errors[0].Location != "header.Sandbox-Simulate" {
		t.Fatalf("a production simulation: %+v", p)
	}
	expectProblem(t, order(f.keyA, "parterre-1-4", "Sandbox-Simulate: gateway_down"), http.StatusUnprocessableEntity, "validation_error")
	if after := countOrders(); after != before {
		t.Fatalf("refused simulations made %d orders", after-before)
	}
}

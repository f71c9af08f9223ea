package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

func (d *demo) events(t *testing.T) map[states.WebhookEventType]int {
	t.Helper()
	var rows []struct {
		Type states.WebhookEventType
		N    int
	}
	if err := d.DB.NewRaw("SELECT type, count(*) AS n FROM webhook_events GROUP BY type").Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	out := map[states.WebhookEventType]int{}
	for _, r := range rows {
		out[r.Type] = r.N
	}
	return out
}

func (d *demo) endpoint(t *testing.T) *store.WebhookEndpoint {
	t.Helper()
	e := &store.WebhookEndpoint{CompanyID: d.company, IsTest: true, URL: "http://127.0.0.1:1/hook", Enabled: true, Secret: "whsec_AAAA"}
	if err := store.CreateWebhookEndpoint(context.Background(), d.DB, e, 10); err != nil {
		t.Fatal(err)
	}
	return e
}

// The outbox row is written by the transaction of the change: a change that
// rolls back writes none, one that commits always has one, and an
// environment without an endpoint gets none at all.
func TestOutboxFollowsTheChange(t *testing.T) {
	d := newDemo(t)
	ctx := context.Background()
	d.gaOrder(t, 1, time.Now().Add(time.Hour))
	if ev := d.events(t); len(ev) != 0 {
		t.Fatalf("events without an endpoint: %v", ev)
	}
	d.endpoint(t)
	o, _ := d.gaOrder(t, 2, time.Now().Add(time.Hour))
	if ev := d.events(t); ev[states.EventOrderCreated] != 1 {
		t.Fatalf("after an order: %v", ev)
	}
	// Paid inside a transaction that then fails: no order.paid.
	boom := errors.New("boom")
	err := d.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, changed, err := store.MarkOrderPaid(ctx, tx, o.ID, ""); err != nil || !changed {
			t.Fatalf("pay: %v %v", changed, err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if ev := d.events(t); ev[states.EventOrderPaid] != 0 {
		t.Fatalf("a rolled-back payment left an event: %v", ev)
	}
	// A cancel that changes nothing (deadline not passed) writes nothing.
	if _, changed, err := store.CancelOrder(ctx, d.DB, o.ID, states.CancelPaymentTimeout); err != nil || changed {
		t.Fatalf("early timeout: %v %v", changed, err)
	}
	if _, changed, err := store.CancelOrder(ctx, d.DB, o.ID, states.CancelBuyer); err != nil || !changed {
		t.Fatalf("cancel: %v %v", changed, err)
	}
	if _, changed, _ := store.CancelOrder(ctx, d.DB, o.ID, states.CancelBuyer); changed {
		t.Fatal("cancelled twice")
	}
	ev := d.events(t)
	if ev[states.EventOrderCancelled] != 1 || ev[states.EventOrderPaid] != 0 {
		t.Fatalf("after the cancel: %v", ev)
	}
	// The event keeps the order as the change left it.
	var e store.WebhookEvent
	if err := d.DB.NewSelect().Model(&e).Where("type = ?", states.EventOrderCancelled).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err := store.GetEventOrder(ctx, d.DB, &e)
	if err != nil || snap.ID != o.ID || snap.Status != states.OrderCancelled || snap.CancelReason == nil || *snap.CancelReason != states.CancelBuyer {
		t.Fatalf("snapshot %+v %v", snap, err)
	}
	if len(snap.AccessTokenHash) != 0 {
		t.Fatal("the page token's hash is in the event")
	}
	// A sold-out order (rolled back) writes nothing.
	before := d.events(t)[states.EventOrderCreated]
	o2 := &store.Order{CompanyID: d.company, APIKeyID: d.keyID, IsTest: true, EventID: o.EventID, Status: states.OrderPendingPayment,
		Payment: "external", AccessTokenHash: []byte{1}, ExpiresAt: time.Now().Add(time.Hour)}
	var cat int64
	_ = d.DB.NewRaw("SELECT id FROM ticket_categories WHERE event_id = ?", o.EventID).Scan(ctx, &cat)
	err = store.CreateOrderFromItems(ctx, d.DB, o2, []store.ItemQuantity{{CategoryID: cat, Quantity: 100000, Price: 1}},
		func(p []int64) (int64, int64, int64) { return 0, 0, 0 }, 0)
	var so *errs.SoldOutError
	if !errors.As(err, &so) {
		t.Fatalf("sold out: %v", err)
	}
	if d.events(t)[states.EventOrderCreated] != before {
		t.Fatal("a refused order left an event")
	}
	// Retention: events not sent yet stay, sent ones past the cutoff go.
	if n, err := store.DeleteWebhookEventsBefore(ctx, d.DB, time.Now().Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("deleted unsent events: %d %v", n, err)
	}
	if _, err := d.DB.NewRaw("UPDATE webhook_events SET dispatched_at = now()").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := store.DeleteWebhookEventsBefore(ctx, d.DB, time.Now().Add(time.Hour)); err != nil || n != 2 {
		t.Fatalf("deleted %d sent events: %v", n, err)
	}
}

// An endpoint whose every delivery failed for the whole window is disabled
// with the reason; a success in between starts the count again.
func TestEndpointDisabledAfterFailingTheWholeWindow(t *testing.T) {
	d := newDemo(t)
	ctx := context.Background()
	e := d.endpoint(t)
	if _, err := d.DB.NewRaw(`INSERT INTO webhook_events (id, type, company_id, is_test, payload) VALUES ('evt_x', 'webhook.test', ?, true, '{}');
		INSERT INTO webhook_deliveries (event_id, endpoint_id) VALUES ('evt_x', ?)`, d.company, e.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-80 * time.Hour)
	status := 500
	attempt := func(n int, at time.Time, ok bool) store.AttemptOutcome {
		t.Helper()
		a := &store.WebhookAttempt{EventID: "evt_x", EndpointID: e.ID, RunID: "r", Attempt: n, AttemptedAt: at, StatusCode: &status}
		out, err := store.RecordAttempt(ctx, d.DB, a, 0, ok, 72*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if attempt(1, t0, false).Disabled || attempt(2, t0.Add(40*time.Hour), false).Disabled {
		t.Fatal("disabled too early")
	}
	attempt(3, t0.Add(41*time.Hour), true) // one success: the streak ends
	if attempt(4, t0.Add(42*time.Hour), false).Disabled || attempt(4, t0.Add(42*time.Hour), false).Disabled {
		t.Fatal("disabled though a delivery succeeded within the window")
	}
	got, _ := store.GetWebhookEndpointByID(ctx, d.DB, e.ID)
	if got.FailingSince == nil || !got.FailingSince.Equal(t0.Add(42*time.Hour).Truncate(time.Microsecond)) {
		t.Fatalf("failing since %v", got.FailingSince)
	}
	if !attempt(5, t0.Add(42*time.Hour+72*time.Hour), false).Disabled {
		t.Fatal("not disabled after failing for the whole window")
	}
	got, _ = store.GetWebhookEndpointByID(ctx, d.DB, e.ID)
	if got.Enabled || got.DisabledReason == nil {
		t.Fatalf("endpoint %+v", got)
	}
	t.Log(*got.DisabledReason)
	var n int
	_ = d.DB.NewRaw("SELECT count(*) FROM webhook_attempts").Scan(ctx, &n)
	if n != 5 {
		t.Fatalf("attempt 4 recorded twice: %d rows", n)
	}
}

// A payment recorded while the relay holds the order's order.created
// event (it locks a batch while it renders the bodies) does not wait for
// the relay: the event goes as it was.
func TestPaymentDoesNotWaitOnTheRelaysLock(t *testing.T) {
	d := newDemo(t)
	ctx := context.Background()
	d.endpoint(t)
	o, _ := d.gaOrder(t, 2, time.Now().Add(time.Hour))
	relay, err := d.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Rollback() //nolint:errcheck // the relay's batch never commits here
	var locked int
	if err := relay.NewRaw("SELECT count(*) FROM (SELECT id FROM webhook_events WHERE order_id = ? FOR UPDATE) l", o.ID).Scan(ctx, &locked); err != nil || locked != 1 {
		t.Fatalf("lock the event: %d %v", locked, err)
	}
	// Without SKIP LOCKED this waits for the relay's transaction, here
	// for ever: the deadline turns that into a failure.
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := store.SetOrderPayment(pctx, d.DB, o, "pay_1", "https://pay.example/1"); err != nil {
		t.Fatalf("payment while the relay holds the event: %v", err)
	}
	if o.PaymentID == nil || *o.PaymentID != "pay_1" {
		t.Fatalf("payment not recorded: %+v", o.PaymentID)
	}
}

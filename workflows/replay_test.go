package workflows_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/internal/window"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
	"github.com/ticketsales/ticketsales/workflows"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// TestReplayRecordedHistories replays histories recorded from real runs: a
// change to workflow code that is not deterministic fails here.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories in testdata (%v)", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflow(workflows.Reservation)
			r.RegisterWorkflow(workflows.EventHolds)
			r.RegisterWorkflow(workflows.Order)
			r.RegisterWorkflow(workflows.Refund)
			r.RegisterWorkflow(workflows.ResendTickets)
			r.RegisterWorkflowWithOptions(workflows.AllocationRelease, workflow.RegisterOptions{Name: contract.AllocationReleaseWorkflow})
			r.RegisterWorkflowWithOptions(workflows.WebhookDelivery, workflow.RegisterOptions{Name: contract.WebhookWorkflow})
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}

// TestRecordHistories runs each workflow scenario on the dev server with a
// real worker and writes the histories testdata lacks (RECORD_HISTORIES=all:
// every one). Run it after a deliberate, versioned workflow change:
//
//	RECORD_HISTORIES=1 go test -run TestRecordHistories ./workflows/
func TestRecordHistories(t *testing.T) {
	if os.Getenv("RECORD_HISTORIES") == "" {
		t.Skip("set RECORD_HISTORIES=1 to record workflow histories into testdata")
	}
	s := testenv.NewStack(t)
	s.Holds.TTLUnit = time.Second
	mailer, err := mail.New("", t.TempDir(), "tickets@ticketsales.test")
	if err != nil {
		t.Fatal(err)
	}
	s.Mailer = mailer
	s.StartWorker(t)
	company := s.Company(t, "Recorder")
	s.Import(t, company, catalogfile.Demo(time.Now()))
	key, _ := s.Key(t, company, apikey.Sandbox)
	var event int64
	if err := s.DB.NewRaw("SELECT id FROM events WHERE slug = 'swan-lake'").Scan(context.Background(), &event); err != nil {
		t.Fatal(err)
	}
	// A channel's timed release, moved once before it ran: the run of
	// the new time replaced the first (TERMINATE_EXISTING) and released.
	channel, err := store.UpsertChannel(context.Background(), s.DB, company, "recorded", "Recorded")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.AllocateSeats(context.Background(), s.DB, company, event, channel.ID, []string{"parterre-2-1"}); err != nil {
		t.Fatal(err)
	}
	dist := distribution.New(s.DB, nil, nil, distribution.Settings{Temporal: s.Temporal, TaskQueue: s.TaskQueue})
	for _, in := range []time.Duration{time.Hour, 3 * time.Second} {
		at := time.Now().Add(in)
		if err := dist.SetTerms(context.Background(), company, event, channel.ID, window.Window{}, &at); err != nil {
			t.Fatal(err)
		}
	}
	keyOf := map[string]string{}
	reserve := func(seat string, k ...string) string {
		use := key
		if len(k) > 0 {
			use = k[0]
		}
		res := s.Do(t, http.MethodPost, "/v1/reservations", use,
			fmt.Sprintf(`{"event_id": %d, "seats": [{"zone_id": "parterre", "seat_id": %q}], "ttl_minutes": 1}`, event, seat),
			"Idempotency-Key: "+seat)
		var body struct{ Data struct{ ID string } }
		res.Decode(t, &body)
		if res.Status != 201 {
			t.Fatalf("reserve: %d %s", res.Status, res.Body)
		}
		keyOf[body.Data.ID] = use
		return body.Data.ID
	}
	// A webhook endpoint whose first answer is a 503: the order.paid
	// delivery below is retried once.
	var posts atomic.Int64
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if posts.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer hooks.Close()
	if res := s.Do(t, http.MethodPost, "/v1/webhook-endpoints", key, fmt.Sprintf(`{"url": %q, "event_types": ["order.paid"]}`, hooks.URL),
		"Idempotency-Key: hooks"); res.Status != 201 {
		t.Fatalf("webhook endpoint: %d %s", res.Status, res.Body)
	}
	expired := reserve("parterre-1-1")
	released := reserve("parterre-1-2")
	if res := s.Do(t, http.MethodDelete, "/v1/reservations/"+released, key, ""); res.Status != 200 {
		t.Fatalf("release: %d", res.Status)
	}
	// Orders: one paid then deleted as a sandbox order, one cancelled by the
	// payment window, and a production one paid on the gateway then refunded.
	s.Orders.Settings.SandboxLifetime = 2 * time.Second
	orderWith := func(rid, pay string) int64 {
		res := s.Do(t, http.MethodPost, "/v1/orders", keyOf[rid], fmt.Sprintf(`{"event_id": %d, "reservation_id": %q, "payment": %q,
			"customer": {"email": "a@example.com", "first_name": "A", "last_name": "B", "phone": "+79991234567"}}`, event, rid, pay),
			"Idempotency-Key: order-"+rid)
		var o struct {
			Data struct {
				ID     int64
				Amount struct{ Amount int64 }
			}
		}
		res.Decode(t, &o)
		if res.Status != 201 {
			t.Fatalf("order: %d %s", res.Status, res.Body)
		}
		return o.Data.ID
	}
	order := func(seat string) int64 { return orderWith(reserve(seat), "external") }
	paid := order("parterre-1-3")
	var amount int64
	if err := s.DB.NewRaw("SELECT amount FROM orders WHERE id = ?", paid).Scan(context.Background(), &amount); err != nil {
		t.Fatal(err)
	}
	if res := s.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/confirm", paid), key,
		fmt.Sprintf(`{"external_payment_id": "x", "paid_amount": %d}`, amount), "Idempotency-Key: confirm"); res.Status != 200 {
		t.Fatalf("confirm: %d %s", res.Status, res.Body)
	}
	// A gateway order paid on the test gateway's page, then refunded
	// through the gateway.
	prodKey, _ := s.Key(t, company, apikey.Production)
	gatewayPaid := orderWith(reserve("parterre-1-5", prodKey), "gateway")
	var payURL string
	if err := s.DB.NewRaw("SELECT payment_url FROM orders WHERE id = ?", gatewayPaid).Scan(context.Background(), &payURL); err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if res, err := browser.PostForm(payURL, url.Values{"action": {"pay"}}); err != nil || res.StatusCode != http.StatusSeeOther {
		t.Fatalf("pay: %v %v", res, err)
	}
	var refund struct{ Data struct{ ID, Status string } }
	for attempt, deadline := 0, time.Now().Add(20*time.Second); ; attempt++ {
		time.Sleep(100 * time.Millisecond)
		res := s.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/refund", gatewayPaid), prodKey, `{"reason": "recorded"}`,
			fmt.Sprintf("Idempotency-Key: refund-%d", attempt))
		if res.Status == 201 {
			res.Decode(t, &refund)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("refund: %d %s", res.Status, res.Body)
		}
	}
	// A production order confirmed by the partner: paid and its tickets
	// issued as local activities, then e-mailed.
	emailed := orderWith(reserve("parterre-1-6", prodKey), "external")
	if err := s.DB.NewRaw("SELECT amount FROM orders WHERE id = ?", emailed).Scan(context.Background(), &amount); err != nil {
		t.Fatal(err)
	}
	if res := s.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/confirm", emailed), prodKey,
		fmt.Sprintf(`{"external_payment_id": "y", "paid_amount": %d}`, amount), "Idempotency-Key: confirm-emailed"); res.Status != 200 {
		t.Fatalf("confirm: %d %s", res.Status, res.Body)
	}
	// The organizer sends the e-mailed order's tickets again (the back
	// office's resend) once the first e-mail went.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var sent bool
		if err := s.DB.NewRaw("SELECT emailed_at IS NOT NULL FROM orders WHERE id = ?", emailed).Scan(context.Background(), &sent); err != nil {
			t.Fatal(err)
		}
		if sent {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tickets e-mail was not sent")
		}
	}
	resendWID := contract.ResendTicketsWorkflowID(emailed, "recorded")
	if _, err := s.Temporal.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: resendWID, TaskQueue: s.TaskQueue},
		contract.ResendTicketsWorkflow, contract.ResendTicketsInput{OrderID: emailed, CompanyID: company, ResendID: "recorded"}); err != nil {
		t.Fatal(err)
	}
	s.Orders.Settings.PaymentWindow = time.Second
	timedOut := order("parterre-1-4")
	var paidEvent string
	var endpoint int64
	for deadline := time.Now().Add(20 * time.Second); paidEvent == ""; time.Sleep(100 * time.Millisecond) {
		err := s.DB.NewRaw("SELECT d.event_id, d.endpoint_id FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.order_id = ? AND e.type = 'order.paid'",
			paid).Scan(context.Background(), &paidEvent, &endpoint)
		if time.Now().After(deadline) {
			var evs []struct {
				ID, Type     string
				DispatchedAt *time.Time
			}
			_ = s.DB.NewRaw("SELECT id, type, dispatched_at FROM webhook_events").Scan(context.Background(), &evs)
			t.Fatalf("no order.paid delivery: %v %+v", err, evs)
		}
	}

	// The holds' deadlines passed (expired, released and ordered ones): the
	// holds workflow of the expired one's minute waits for its minute to
	// end; its history is recorded as it stands.
	var expiresAt time.Time
	if err := s.DB.NewRaw("SELECT expires_at FROM reservations WHERE id = ?", expired).Scan(context.Background(), &expiresAt); err != nil {
		t.Fatal(err)
	}
	holdsWID := contract.EventHoldsWorkflowID(event, expiresAt)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		v, err := s.Temporal.QueryWorkflow(context.Background(), holdsWID, "", contract.HoldsQuery)
		var sum contract.HoldsSummary
		if err == nil {
			err = v.Get(&sum)
		}
		if err == nil && sum.Pending == 0 && sum.Finished >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("holds of %s not all finalised: %+v %v", holdsWID, sum, err)
		}
	}
	t.Logf("holds recorded: %s expired, %s released", expired, released)
	writeIfMissing := func(name, wid string) {
		path := filepath.Join("testdata", name+".json")
		if _, err := os.Stat(path); err == nil && os.Getenv("RECORD_HISTORIES") != "all" {
			return
		}
		writeHistory(t, s.Temporal, wid, path)
	}
	writeIfMissing("event-holds", holdsWID)

	// (reservation-expired and reservation-released were recorded when each
	// hold had a workflow of its own; they stay, replayed above.)
	ids := map[string]string{
		"order-paid-deleted": contract.OrderWorkflowID(paid), "order-payment-timeout": contract.OrderWorkflowID(timedOut),
		"order-gateway-paid": contract.OrderWorkflowID(gatewayPaid), "refund-gateway": contract.RefundWorkflowID(refund.Data.ID),
		"webhook-retried-delivered": contract.WebhookWorkflowID(paidEvent, endpoint),
		// Recorded after the confirm's activities became local ones; the
		// two above (paid-deleted) are from before.
		"order-paid-locally-deleted": contract.OrderWorkflowID(paid), "order-paid-locally-emailed": contract.OrderWorkflowID(emailed),
		"resend-tickets": resendWID,
		// Recorded at contract.OrderRevision 1: the newest paths without
		// version markers, the tickets issued with the payment.
		"order-current-deleted": contract.OrderWorkflowID(paid), "order-current-emailed": contract.OrderWorkflowID(emailed),
		"order-current-gateway-paid": contract.OrderWorkflowID(gatewayPaid), "order-current-payment-timeout": contract.OrderWorkflowID(timedOut),
		"allocation-release-moved": contract.AllocationReleaseWorkflowID(event, channel.ID)}
	for name, wid := range ids {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := s.Temporal.GetWorkflow(ctx, wid, "").Get(ctx, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cancel()
		// Histories recorded by earlier code stay: replaying them is what
		// proves a change keeps running workflows working.
		writeIfMissing(name, wid)
	}
}

func writeHistory(t *testing.T, c client.Client, wid, path string) {
	t.Helper()
	h := &historypb.History{}
	it := c.GetWorkflowHistory(context.Background(), wid, "", false, 0)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, e)
	}
	b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

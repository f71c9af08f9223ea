package activities_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/internal/webhooks"
	"github.com/ticketsales/ticketsales/store"
)

// A redelivery asked while the replaced run's attempt is still under way
// goes out: that attempt's late 2xx is kept in the history but does not
// mark the delivery delivered, so the new run POSTs instead of finding the
// work done. (Before, the second redelivery of a ping sometimes never
// arrived.)
func TestRedeliveryDuringAnAttemptStillSends(t *testing.T) {
	s, company, _, acts := demoStore(t)
	ctx := context.Background()
	acts.Webhooks = activities.WebhookSettings{Rules: webhooks.Rules{Development: true, AnyAddress: true}}

	var mu sync.Mutex
	posts := 0
	inFirst, releaseFirst := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		posts++
		n := posts
		mu.Unlock()
		if n == 1 {
			close(inFirst)
			<-releaseFirst
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	release := sync.OnceFunc(func() { close(releaseFirst) })
	defer release()

	s.KeyIn(t, company, "sandbox", "Shop")
	var app int64
	if err := s.DB.NewRaw("SELECT id FROM applications WHERE company_id = ? AND name = 'Shop'", company).Scan(ctx, &app); err != nil {
		t.Fatal(err)
	}
	ep := &store.WebhookEndpoint{ApplicationID: app, CompanyID: company, IsTest: true, URL: srv.URL + "/hooks",
		Enabled: true, Secret: "whsec_AAAA"}
	if err := store.CreateWebhookEndpoint(ctx, s.DB, ep, 10); err != nil {
		t.Fatal(err)
	}
	ev, err := store.CreatePingEvent(ctx, s.DB, ep, states.EventPing, func(string, time.Time) ([]byte, error) {
		return []byte(`{"type":"webhook.test"}`), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.DispatchEvents(ctx, s.DB, 10, func(context.Context, *store.WebhookEvent) ([]byte, error) {
		return ev.Payload, nil
	}); err != nil {
		t.Fatal(err)
	}
	in := activities.WebhookAttemptInput{EventID: ev.ID, EndpointID: ep.ID, Attempt: 1, DisableAfter: 72 * time.Hour}
	status := func() states.DeliveryStatus {
		t.Helper()
		var st states.DeliveryStatus
		if err := s.DB.NewRaw("SELECT status FROM webhook_deliveries WHERE event_id = ? AND endpoint_id = ?", ev.ID, ep.ID).
			Scan(ctx, &st); err != nil {
			t.Fatal(err)
		}
		return st
	}

	// The first run's attempt is in its POST when the redelivery is asked.
	first := make(chan activities.WebhookAttemptResult, 1)
	go func() {
		res, err := acts.DeliverWebhook(ctx, in)
		if err != nil {
			t.Error(err)
		}
		first <- res
	}()
	<-inFirst
	if _, err := store.Redeliver(ctx, s.DB, ev, &ep.ID); err != nil {
		t.Fatal(err)
	}
	release()
	if res := <-first; res.Outcome != activities.WebhookDelivered {
		t.Fatalf("the first run's attempt: %+v", res)
	}
	if st := status(); st != states.DeliveryPending {
		t.Fatalf("after the replaced run's late answer the redelivery is %s, want pending", st)
	}

	// The redelivery's run sends, and that marks it delivered.
	if res, err := acts.DeliverWebhook(ctx, in); err != nil || res.Outcome != activities.WebhookDelivered {
		t.Fatalf("the redelivery's attempt: %+v %v", res, err)
	}
	mu.Lock()
	n := posts
	mu.Unlock()
	if n != 2 {
		t.Fatalf("%d POSTs, want 2: the redelivery sent nothing", n)
	}
	if st := status(); st != states.DeliveryDelivered {
		t.Fatalf("after the redelivery's 2xx the delivery is %s", st)
	}
	// The same activity run again (a retry) sends nothing more.
	if res, err := acts.DeliverWebhook(ctx, in); err != nil || res.Outcome != activities.WebhookDelivered {
		t.Fatalf("a retried attempt: %+v %v", res, err)
	}
	if mu.Lock(); posts != 2 {
		t.Fatalf("a retried attempt after delivery sent again: %d POSTs", posts)
	}
	mu.Unlock()
}

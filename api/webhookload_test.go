package api_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	"github.com/ticketsales/ticketsales/internal/app"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/internal/webhooks"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// slowReceiver is a partner's endpoint that answers every POST with 200
// after delay, counting the deliveries waiting on it and those answered.
type slowReceiver struct {
	delay    time.Duration
	srv      *http.Server
	url      string
	mu       sync.Mutex
	waiting  int // POSTs received, not yet answered
	most     int // the most ever waiting at once
	answered int
}

func newSlowReceiver(t *testing.T, delay time.Duration) *slowReceiver {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &slowReceiver{delay: delay, url: "http://" + ln.Addr().String() + "/hooks"}
	r.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.waiting++
		r.most = max(r.most, r.waiting)
		r.mu.Unlock()
		select {
		case <-time.After(r.delay):
		case <-req.Context().Done(): // the receiver closes
		}
		r.mu.Lock()
		r.waiting--
		if req.Context().Err() == nil {
			r.answered++
		}
		r.mu.Unlock()
	})}
	go func() { _ = r.srv.Serve(ln) }()
	return r
}

// close stops the receiver: deliveries waiting on it end at once.
func (r *slowReceiver) close() { _ = r.srv.Close() }

func (r *slowReceiver) counts() (waiting, most, answered int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waiting, r.most, r.answered
}

// A flood of deliveries to a receiver that answers after 9 s fills the
// webhook worker's slots and leaves hundreds more queued; sagas started
// then (reserve → order → confirm → tickets → refund, and a gateway payment
// and refund) finish while every delivery is still waiting for its answer.
// Deliveries behind the sagas' own queue would not allow that: a slot frees
// only when a delivery is answered, 9 s after it began, and the sagas'
// activities would queue behind the deliveries waiting for one.
func TestSlowWebhooksNeverDelaySagas(t *testing.T) {
	f := newFixture(t)
	// The webhook worker's slots: the flood fills them and queues the rest.
	f.Config.WebhookWorkerActivities = 50
	slow := newSlowReceiver(t, 9*time.Second)
	// Closed before the worker stops (a cleanup), so that its attempts in
	// flight end at once.
	defer slow.close()
	res := f.createEndpoint(t, f.keyA, fmt.Sprintf(`{"url": %q}`, slow.url))
	if res.Status != http.StatusCreated {
		t.Fatalf("create endpoint: %d %s", res.Status, res.Body)
	}
	var eb endpointBody
	res.Decode(t, &eb)
	ctx := context.Background()
	ep, err := store.GetWebhookEndpoint(ctx, f.DB, f.companyA, true, eb.Data.ID)
	if err != nil {
		t.Fatal(err)
	}

	// The flood: more deliveries than a worker takes at once (the SDK's
	// default is 1,000 activities), queued in Temporal before any worker
	// polls, as a burst of events bigger than the workers can take is.
	const flood = 1200
	began := time.Now()
	errs := make(chan error, flood)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < flood; i += 8 {
				_, err := store.CreatePingEvent(ctx, f.DB, ep, states.EventPing, func(id string, at time.Time) ([]byte, error) {
					return webhooks.Body(id, states.EventPing, at, map[string]any{"endpoint_id": ep.ID, "message": "A test event of the load.", "n": i})
				})
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n, err := f.Relay(t).Once(ctx); err != nil || n != flood {
		t.Fatalf("relay started %d deliveries of %d: %v", n, flood, err)
	}
	queued := time.Since(began)
	f.StartWorker(t)
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if waiting, _, _ := slow.counts(); waiting >= f.Config.WebhookWorkerActivities {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deliveries never filled the webhook worker's %d slots: %d waiting", f.Config.WebhookWorkerActivities, slow.waiting)
		}
	}
	saturated := time.Since(began) - queued

	start := time.Now()
	sagas := map[string]time.Duration{}
	var mu sync.Mutex
	t.Run("sagas", func(t *testing.T) {
		t.Run("external", func(t *testing.T) {
			t.Parallel()
			began := time.Now()
			id := f.paidOrder(t, f.keyA, "parterre-3-21", "parterre-3-22")
			ts := f.tickets(t, id)
			if len(ts) != 2 || ts[0].Status != "active" {
				t.Fatalf("tickets: %+v", ts)
			}
			var rb refundBody
			if res := f.refund(t, id, ts[0].ID); res.Status != http.StatusCreated {
				t.Fatalf("refund: %d %s", res.Status, res.Body)
			} else if res.Decode(t, &rb); rb.Data.Status != "completed" {
				t.Fatalf("refund: %s", res.Body)
			}
			mu.Lock()
			sagas["external"] = time.Since(began)
			mu.Unlock()
		})
		t.Run("gateway", func(t *testing.T) {
			t.Parallel()
			began := time.Now()
			o := f.gatewayOrder(t, f.keyA, "parterre-3-25")
			payOnTestGateway(t, o.PaymentURL, "pay")
			f.awaitOrderStatus(t, f.keyA, o.ID, "paid")
			ts := f.tickets(t, o.ID)
			if len(ts) != 1 {
				t.Fatalf("tickets: %+v", ts)
			}
			// The money goes back through the gateway in the refund's
			// workflow, which the request waits for.
			var rb refundBody
			if res := f.refund(t, o.ID); res.Status != http.StatusCreated {
				t.Fatalf("refund: %d %s", res.Status, res.Body)
			} else if res.Decode(t, &rb); rb.Data.Status != "completed" || rb.Data.MoneyReturnedBy != "gateway" {
				t.Fatalf("refund: %s", res.Body)
			}
			mu.Lock()
			sagas["gateway"] = time.Since(began)
			mu.Unlock()
		})
	})
	waiting, most, answered := slow.counts()
	var pending int
	if err := f.DB.NewRaw("SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'").Scan(ctx, &pending); err != nil {
		t.Fatal(err)
	}
	t.Logf("flood of %d queued in %s, the webhook worker's slots full %s later; sagas took %v (all done %s after they began); "+
		"%d deliveries waiting on the receiver (at most %d), %d answered, %d pending",
		flood, queued.Round(time.Millisecond), saturated.Round(time.Millisecond), sagas, time.Since(start).Round(time.Millisecond),
		waiting, most, answered, pending)
	if t.Failed() {
		return
	}
	if answered > 0 {
		t.Fatalf("the sagas finished only after %d deliveries were answered: they waited behind the deliveries", answered)
	}
	if most > f.Config.WebhookWorkerActivities {
		t.Fatalf("%d deliveries ran at once; the webhook worker's limit is %d", most, f.Config.WebhookWorkerActivities)
	}
	if pending < flood-f.Config.WebhookWorkerActivities {
		t.Fatalf("only %d deliveries pending: the flood was over before the sagas", pending)
	}
}

// Deliveries run on the webhook task queue, the relay's and the api's
// redeliveries alike; a delivery whose workflow was started on the main
// queue before deliveries had their own (running across the deploy) is
// still delivered, by the main queue's worker.
func TestDeliveriesRunOnTheirOwnTaskQueue(t *testing.T) {
	f := newFixture(t)
	r := newReceiver(t)
	id := f.subscribe(t, f.keyA, r)
	ctx := context.Background()
	ep, err := store.GetWebhookEndpoint(ctx, f.DB, f.companyA, true, id)
	if err != nil {
		t.Fatal(err)
	}
	ping := func(id string, at time.Time) ([]byte, error) {
		return webhooks.Body(id, states.EventPing, at, webhooks.Ping{EndpointID: ep.ID, Message: "A test event, made as the relay made it before."})
	}
	// Made and started as the relay did before: on the main queue.
	before, err := store.CreatePingEvent(ctx, f.DB, ep, states.EventPing, ping)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.DispatchEvents(ctx, f.DB, 10, nil); err != nil {
		t.Fatal(err)
	}
	if err := webhooks.StartDelivery(ctx, f.Temporal, f.TaskQueue, app.WebhookRetry(f.Config), before.ID, ep.ID, false); err != nil {
		t.Fatal(err)
	}
	f.StartWorker(t)
	res := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/webhook-endpoints/%d/test", ep.ID), f.keyA, "")
	var sent struct {
		Data struct {
			EventID string `json:"event_id"`
		}
	}
	res.Decode(t, &sent)
	after := sent.Data.EventID
	queueOf := func(eventID string) string {
		t.Helper()
		wid := contract.WebhookWorkflowID(eventID, ep.ID)
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			d, err := f.Temporal.DescribeWorkflowExecution(ctx, wid, "")
			if err == nil && d.WorkflowExecutionInfo.Status == enums.WORKFLOW_EXECUTION_STATUS_COMPLETED {
				return d.WorkflowExecutionInfo.TaskQueue
			}
			if time.Now().After(deadline) {
				t.Fatalf("delivery %s did not complete: %v %v", wid, d, err)
			}
		}
	}
	if q := queueOf(before.ID); q != f.TaskQueue {
		t.Fatalf("the delivery started before ran on %q", q)
	}
	if q := queueOf(after); q != f.Config.WebhookTaskQueue || q == f.TaskQueue {
		t.Fatalf("a delivery ran on %q; the webhook queue is %q", q, f.Config.WebhookTaskQueue)
	}
	r.mu.Lock()
	_, gotBefore := r.byID[before.ID]
	_, gotAfter := r.byID[after]
	r.mu.Unlock()
	if !gotBefore || !gotAfter {
		t.Fatalf("received the delivery started before: %v, after: %v", gotBefore, gotAfter)
	}
	// A redelivery, which the api starts, goes to the webhook queue too,
	// that of a delivery first run on the main queue included.
	if res := f.Do(t, http.MethodPost, "/v1/webhook-events/"+before.ID+"/redeliver", f.keyA, ""); res.Status != http.StatusAccepted {
		t.Fatalf("redeliver: %d %s", res.Status, res.Body)
	}
	if q := queueOf(before.ID); q != f.Config.WebhookTaskQueue {
		t.Fatalf("the redelivery ran on %q; the webhook queue is %q", q, f.Config.WebhookTaskQueue)
	}
}

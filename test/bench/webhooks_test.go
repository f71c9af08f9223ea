package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/ticketsales/ticketsales/test/testenv"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// benchWebhooks measures webhook deliveries end to end: test events sent
// through the API at the saga benchmark's concurrency for the run's
// duration, each written to the outbox, moved to Temporal by the relay,
// POSTed by its delivery workflow, verified by the receiver with the
// reference library and recorded; deliveries/s counts from the first
// request to the last event received.
func benchWebhooks(t *testing.T, s *testenv.Stack, key string) map[string]any {
	conc := 8
	out := map[string]any{"concurrency": conc}
	var mu sync.Mutex
	sent := map[string]time.Time{}
	var lat []time.Duration
	var secret string
	var bad atomic.Int64
	var lastAt atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		wh, err := standardwebhooks.NewWebhook(secret)
		if err == nil {
			err = wh.Verify(body, r.Header)
		}
		if err != nil {
			bad.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		id := r.Header.Get("webhook-id")
		if at, ok := sent[id]; ok {
			lat = append(lat, time.Since(at))
			delete(sent, id)
		}
		lastAt.Store(time.Now())
	}))
	defer srv.Close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
	do := func(method, path, body string, headers ...string) (int, map[string]any) {
		req, _ := http.NewRequest(method, s.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		for _, h := range headers {
			k, v, _ := strings.Cut(h, ": ")
			req.Header.Set(k, v)
		}
		res, err := hc.Do(req)
		if err != nil {
			return 0, nil
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return res.StatusCode, m
	}
	st, e := do(http.MethodPost, "/v1/webhook-endpoints", fmt.Sprintf(`{"url": %q}`, srv.URL+"/hooks"), "Idempotency-Key: bench-hooks")
	if st != http.StatusCreated {
		t.Fatalf("create endpoint: %d %v", st, e)
	}
	ep := e["data"].(map[string]any)
	// Deleted when the part ends (before the receiver closes): the later
	// parts' sandbox events would otherwise queue deliveries to a closed
	// receiver, retried for three days, beside the benchmarks that follow.
	defer do(http.MethodDelete, fmt.Sprintf("/v1/webhook-endpoints/%v", ep["id"]), "")
	mu.Lock()
	secret = ep["secret"].(string)
	mu.Unlock()
	path := fmt.Sprintf("/v1/webhook-endpoints/%v/test", ep["id"])
	var pings, fails atomic.Int64
	var lastEvent atomic.Value
	start := time.Now()
	workers(conc, benchDur, func() bool {
		at := time.Now()
		st, p := do(http.MethodPost, path, "")
		if st != http.StatusAccepted {
			fails.Add(1)
			return true
		}
		id := p["data"].(map[string]any)["event_id"].(string)
		mu.Lock()
		sent[id] = at
		mu.Unlock()
		pings.Add(1)
		lastEvent.Store(id)
		return true
	})
	// Wait for the rest to arrive.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		mu.Lock()
		left := len(sent)
		mu.Unlock()
		if left == 0 || time.Now().After(deadline) {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	delivered := len(lat)
	end, _ := lastAt.Load().(time.Time)
	rate := float64(delivered) / end.Sub(start).Seconds()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[int(float64(len(lat)-1)*p)].Microseconds()) / 1000
	}
	out["events"], out["delivered"], out["lost"], out["request_failures"], out["unverified"] =
		pings.Load(), delivered, len(sent), fails.Load(), bad.Load()
	out["deliveries_per_s"], out["latency_p50_ms"], out["latency_p99_ms"] = rate, pct(0.5), pct(0.99)
	// Where the time went, on average: outbox to dispatched, dispatched to
	// workflow started, started to the POST.
	var stages struct {
		Dispatch, Start, Post float64
	}
	_ = s.DB.NewRaw(`SELECT avg(extract(epoch FROM e.dispatched_at - e.created_at)) AS dispatch,
		avg(extract(epoch FROM d.started_at - d.created_at)) AS start,
		avg(extract(epoch FROM d.last_attempt_at - d.started_at)) AS post
		FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id`).Scan(context.Background(), &stages.Dispatch, &stages.Start, &stages.Post)
	out["avg_outbox_to_dispatch_s"], out["avg_dispatch_to_start_s"], out["avg_start_to_post_s"] = stages.Dispatch, stages.Start, stages.Post
	t.Logf("webhooks: %v", out)
	if id, ok := lastEvent.Load().(string); ok && len(sent) == 0 {
		var epID int64
		fmt.Sscan(fmt.Sprint(ep["id"]), &epID)
		out["events_per_delivery"] = historyLen(t, s.Temporal, contract.WebhookWorkflowID(id, epID))
	}
	t.Logf("webhooks: %v", out)
	return out
}

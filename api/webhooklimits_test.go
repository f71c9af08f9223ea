package api_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/api"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/ratelimit"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// webhookAPI serves another api instance of the stack whose webhooks have
// these per-minute caps, counted by limiter (as NewProcess gives it the
// request limiter: Redis or memory).
func (f *fixture) webhookAPI(t *testing.T, testsPerMinute, redeliveriesPerMinute int, limiter ratelimit.Limiter) string {
	t.Helper()
	return f.APIWith(t, func(d *api.Deps) {
		w := *d.Webhooks
		w.Limits.TestsPerMinute, w.Limits.RedeliveriesPerMinute, w.Limiter = testsPerMinute, redeliveriesPerMinute, limiter
		d.Webhooks = &w
	})
}

// endpointAt adds an endpoint through the api at base.
func endpointAt(t *testing.T, base, key, url, idem string) (*testenv.Response, error) {
	t.Helper()
	return testenv.Send(http.DefaultClient, testenv.NewRequest(t, http.MethodPost, base+"/v1/webhook-endpoints", key,
		fmt.Sprintf(`{"url": %q}`, url), "Idempotency-Key: "+idem))
}

// An environment has at most 10 endpoints (the default): creations racing
// for the last places never go past it; one more is 409 limit_reached,
// saying the limit, and changes nothing; another environment counts its
// own; a deleted endpoint frees its place.
func TestWebhookEndpointsAreCappedPerEnvironment(t *testing.T) {
	f := newFixture(t)
	const url = "http://127.0.0.1:9/hooks" // sandbox, development: any address
	for i := range 8 {
		if res, err := endpointAt(t, f.URL, f.keyA, url, fmt.Sprintf("cap-%d", i)); err != nil || res.Status != http.StatusCreated {
			t.Fatalf("endpoint %d: %v %v", i+1, res, err)
		}
	}
	// Six creations race for the last two places.
	results := make([]*testenv.Response, 6)
	errs := make([]error, 6)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = endpointAt(t, f.URL, f.keyA, url, fmt.Sprintf("race-%d", i))
		}()
	}
	wg.Wait()
	created := 0
	for i, res := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		switch res.Status {
		case http.StatusCreated:
			created++
		default:
			p := expectProblem(t, res, http.StatusConflict, "limit_reached")
			if !strings.Contains(p.Detail, "already has 10 webhook endpoints") {
				t.Fatalf("detail %q", p.Detail)
			}
		}
	}
	var eps listBody[struct{ ID int64 }]
	f.Get(t, "/v1/webhook-endpoints", f.keyA).Decode(t, &eps)
	if created != 2 || eps.Meta.Total != 10 {
		t.Fatalf("%d of the racing creations succeeded, %d endpoints listed; the cap is 10", created, eps.Meta.Total)
	}
	res, _ := endpointAt(t, f.URL, f.keyA, url, "one-more")
	expectProblem(t, res, http.StatusConflict, "limit_reached")

	// The company's production environment has its own ten.
	prod, _ := f.Key(t, f.companyA, apikey.Production)
	if res, err := endpointAt(t, f.URL, prod, "https://93.184.215.14/hooks", "prod"); err != nil || res.Status != http.StatusCreated {
		t.Fatalf("production endpoint: %v %v", res, err)
	}
	// Deleting one makes room for one.
	if res := f.Do(t, http.MethodDelete, fmt.Sprintf("/v1/webhook-endpoints/%d", eps.Data[0].ID), f.keyA, ""); res.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", res.Status, res.Body)
	}
	if res, err := endpointAt(t, f.URL, f.keyA, url, "after-delete"); err != nil || res.Status != http.StatusCreated {
		t.Fatalf("after a deletion: %v %v", res, err)
	}
}

// expectRateLimited checks a 429 of a webhook cap: rate_limited, the cap in
// the detail, and a Retry-After within the cap's minute.
func expectRateLimited(t *testing.T, res *testenv.Response, detail string) {
	t.Helper()
	p := expectProblem(t, res, http.StatusTooManyRequests, "rate_limited")
	if !strings.Contains(p.Detail, detail) {
		t.Fatalf("detail %q, want %q", p.Detail, detail)
	}
	if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
		t.Fatalf("Retry-After %q", res.Header.Get("Retry-After"))
	}
}

func (f *fixture) eventCount(t *testing.T, typ string) int {
	t.Helper()
	var n int
	if err := f.DB.NewRaw("SELECT count(*) FROM webhook_events WHERE type = ?", typ).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Test pings and redeliveries are capped per company and environment and
// minute, whichever key asks: past the cap, 429 rate_limited with
// Retry-After, and nothing is sent; another environment has its own.
func TestWebhookTestsAndRedeliveriesAreCappedPerMinute(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	url := f.webhookAPI(t, 3, 2, ratelimit.NewMemory())
	r := newReceiver(t)
	ep := f.subscribe(t, f.keyA, r)
	other, _ := f.Key(t, f.companyA, apikey.Sandbox) // another key of the same environment
	ping := func(key string) *testenv.Response {
		return testenv.Do(t, url, http.MethodPost, fmt.Sprintf("/v1/webhook-endpoints/%d/test", ep), key, "")
	}
	var first string
	for i, key := range []string{f.keyA, other, f.keyA} {
		res := ping(key)
		if res.Status != http.StatusAccepted {
			t.Fatalf("ping %d: %d %s", i+1, res.Status, res.Body)
		}
		// The 202 says where the ping's delivery shows.
		if loc := res.Header.Get("Location"); loc != fmt.Sprintf("/v1/webhook-endpoints/%d/deliveries", ep) {
			t.Fatalf("ping's Location %q", loc)
		}
		if i == 0 {
			var sent struct {
				Data struct {
					EventID string `json:"event_id"`
				}
			}
			res.Decode(t, &sent)
			first = sent.Data.EventID
		}
	}
	expectRateLimited(t, ping(other), "At most 3 test events per minute")
	expectRateLimited(t, ping(f.keyA), "At most 3 test events per minute")
	if n := f.eventCount(t, "webhook.test"); n != 3 {
		t.Fatalf("%d test events written; 3 were allowed", n)
	}

	// Redeliveries have a cap of their own.
	r.await("webhook.test", func(map[string]any) bool { return true })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var dispatched *time.Time
		if err := f.DB.NewRaw("SELECT dispatched_at FROM webhook_events WHERE id = ?", first).Scan(context.Background(), &dispatched); err == nil && dispatched != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first ping was never dispatched")
		}
	}
	posts := func() int {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.posts
	}
	// Every ping arrived before the redeliveries are counted.
	for deadline := time.Now().Add(20 * time.Second); posts() < 3; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 3 pings arrived", posts())
		}
	}
	redeliver := func(key string) *testenv.Response {
		return testenv.Do(t, url, http.MethodPost, "/v1/webhook-events/"+first+"/redeliver", key, "")
	}
	for i, key := range []string{f.keyA, other} {
		if res := redeliver(key); res.Status != http.StatusAccepted {
			t.Fatalf("redelivery %d: %d %s", i+1, res.Status, res.Body)
		}
		// Each arrives before the next is asked for (a redelivery
		// replaces a run still going).
		for deadline := time.Now().Add(20 * time.Second); posts() < 4+i; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("redelivery %d never arrived", i+1)
			}
		}
	}
	expectRateLimited(t, redeliver(f.keyA), "At most 2 redeliveries per minute")
	time.Sleep(2 * time.Second) // a redelivery arrives well within this
	if n := posts(); n != 5 {
		t.Fatalf("%d POSTs; the refused redelivery sent one more", n)
	}

	// The production environment of the same company is not held back.
	prod, _ := f.Key(t, f.companyA, apikey.Production)
	res := testenv.Do(t, url, http.MethodPost, "/v1/webhook-endpoints", prod, `{"url": "https://93.184.215.14/hooks"}`, idemKey(t))
	var pe endpointBody
	res.Decode(t, &pe)
	if res := testenv.Do(t, url, http.MethodPost, fmt.Sprintf("/v1/webhook-endpoints/%d/test", pe.Data.ID), prod, ""); res.Status != http.StatusAccepted {
		t.Fatalf("production ping: %d %s", res.Status, res.Body)
	}
}

// With REDIS_URL the caps hold across api instances: two instances share
// one environment's test pings of the minute.
func TestWebhookCapsHoldAcrossInstancesThroughRedis(t *testing.T) {
	redisURL := os.Getenv("REDIS_URL")
	if redisURL == "" {
		redisURL = "redis://127.0.0.1:6379/0"
	}
	f := newFixture(t)
	var urls []string
	for range 2 {
		// this test's own keys in a shared Redis
		rl, err := ratelimit.NewRedis(redisURL, ratelimit.RedisOptions{Prefix: fmt.Sprintf("test:%s:", f.TaskQueue)})
		if err != nil {
			t.Fatal(err)
		}
		urls = append(urls, f.webhookAPI(t, 3, 0, rl))
	}
	res := f.createEndpoint(t, f.keyA, `{"url": "http://127.0.0.1:9/hooks"}`)
	var e endpointBody
	res.Decode(t, &e)
	allowed := 0
	for i := range 6 {
		res := testenv.Do(t, urls[i%2], http.MethodPost, fmt.Sprintf("/v1/webhook-endpoints/%d/test", e.Data.ID), f.keyA, "")
		switch res.Status {
		case http.StatusAccepted:
			allowed++
		case http.StatusTooManyRequests:
			expectRateLimited(t, res, "At most 3 test events per minute")
		default:
			t.Fatalf("ping %d: %d %s (is Redis running? make test starts it)", i+1, res.Status, res.Body)
		}
	}
	if allowed != 3 {
		t.Fatalf("two instances sent %d of 6 pings; one budget allows 3", allowed)
	}
}

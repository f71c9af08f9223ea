package ticketsales

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// seen is what a test server received, one entry per request.
type seen struct {
	method, path, auth, agent, key, body string
	keyed                                bool
}

// recorder is a test server answering with answers[i] to request i (the
// last one again once they run out), recording every request.
type recorder struct {
	mu   sync.Mutex
	reqs []seen
}

type answer struct {
	status  int
	headers map[string]string
	body    string
}

func serve(t *testing.T, answers ...answer) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, keyed := r.Header["Idempotency-Key"]
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, seen{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("User-Agent"),
			r.Header.Get("Idempotency-Key"), string(b), keyed})
		a := answers[min(len(rec.reqs), len(answers))-1]
		rec.mu.Unlock()
		for k, v := range a.headers {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

func (r *recorder) all() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.reqs...)
}

// testClient is New's client with the waits recorded instead of slept.
func testClient(t *testing.T, url string, d *Doer) (*ClientWithResponses, *[]time.Duration) {
	t.Helper()
	var waits []time.Duration
	d.sleep = func(ctx context.Context, w time.Duration) error {
		waits = append(waits, w)
		return ctx.Err()
	}
	c, err := New(url, "tk_sandbox_test", WithHTTPClient(d))
	if err != nil {
		t.Fatal(err)
	}
	return c, &waits
}

var anOrder = CreateOrderInputBody{EventId: 1, Payment: CreateOrderInputBodyPaymentExternal,
	Customer: Customer{Email: "anna@example.com", FirstName: "Anna", LastName: "Pavlova", Phone: "+7 999 123-45-67"}}

const orderJSON = `{"data": {"id": 7, "status": %q, "event_id": 1, "payment": "external", "is_test": true}, "request_id": "req_1"}`

func problemAnswer(status int, code string, headers map[string]string) answer {
	if headers == nil {
		headers = map[string]string{}
	}
	headers["Content-Type"] = "application/problem+json"
	return answer{status, headers, fmt.Sprintf(`{"type": "about:blank", "title": %q, "status": %d, "code": %q, "detail": "try later", "request_id": "req_9"}`,
		http.StatusText(status), status, code)}
}

// A partner's create call with zero params: authenticated, named, given a
// key; throttled twice (Retry-After in seconds, then as a date), it is
// sent again with the same key and body after the waits the service asked
// for, and succeeds once.
func TestWritesGetAKeyKeptAcrossRetries(t *testing.T) {
	srv, rec := serve(t,
		problemAnswer(http.StatusTooManyRequests, "rate_limited", map[string]string{"Retry-After": "2"}),
		problemAnswer(http.StatusServiceUnavailable, "unavailable", map[string]string{"Retry-After": time.Now().Add(4 * time.Second).UTC().Format(http.TimeFormat)}),
		answer{http.StatusCreated, nil, fmt.Sprintf(orderJSON, "pending_payment")},
	)
	c, waits := testClient(t, srv.URL, &Doer{})
	res, err := Check(c.CreateOrderWithResponse(context.Background(), &CreateOrderParams{},
		anOrder))
	if err != nil {
		t.Fatal(err)
	}
	if res.JSON201 == nil || res.JSON201.Data.Id != 7 {
		t.Fatalf("created: %s", res.Body)
	}
	reqs := rec.all()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	first := reqs[0]
	if first.auth != "Bearer tk_sandbox_test" || !strings.HasPrefix(first.agent, "ticketsales-go/"+Version) || len(first.key) < 20 ||
		!strings.Contains(first.body, `"event_id":1`) {
		t.Fatalf("first request: %+v", first)
	}
	for _, r := range reqs[1:] {
		if r.key != first.key || r.body != first.body || r.auth != first.auth {
			t.Fatalf("a retry differs from the first request: %+v, first %+v", r, first)
		}
	}
	if len(*waits) != 2 || (*waits)[0] != 2*time.Second || (*waits)[1] < 2*time.Second || (*waits)[1] > 4*time.Second {
		t.Fatalf("waits %v, want 2s then about 4s (the date's)", *waits)
	}

	// Another call is another key; a key the caller chose is kept.
	if _, err := c.CreateOrderWithResponse(context.Background(), &CreateOrderParams{IdempotencyKey: "mine-1"}, anOrder); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateOrderWithResponse(context.Background(), &CreateOrderParams{}, anOrder); err != nil {
		t.Fatal(err)
	}
	reqs = rec.all()
	if reqs[3].key != "mine-1" || reqs[4].key == "" || reqs[4].key == first.key {
		t.Fatalf("keys %q, %q after %q", reqs[3].key, reqs[4].key, first.key)
	}
	// A read gets no key.
	if _, err := c.GetOrderWithResponse(context.Background(), 7); err != nil {
		t.Fatal(err)
	}
	if r := rec.all()[5]; r.method != http.MethodGet || r.key != "" {
		t.Fatalf("read: %+v", r)
	}
}

// flaky fails the first n requests before an answer, like a connection
// refused or reset, then sends the rest on.
type flaky struct {
	n    int
	next HttpRequestDoer
}

func (f *flaky) Do(req *http.Request) (*http.Response, error) {
	if f.n > 0 {
		f.n--
		return nil, errors.New("connection reset by peer")
	}
	return f.next.Do(req)
}

// A lost connection is retried for a read and a keyed write (the service
// runs the key once), never for a write whose operation takes no key (the
// key would be ignored: it might run twice); a 503 (nothing done) is
// retried for any of them.
func TestConnectionErrorsRetriedOnlyWhenSafe(t *testing.T) {
	srv, rec := serve(t, answer{http.StatusOK, nil, fmt.Sprintf(orderJSON, "cancelled")})
	f := &flaky{n: 1, next: http.DefaultClient}
	c, waits := testClient(t, srv.URL, &Doer{Next: f})
	ctx := context.Background()
	if _, err := Check(c.GetOrderWithResponse(ctx, 7)); err != nil {
		t.Fatalf("read after a lost connection: %v", err)
	}
	f.n = 1
	if _, err := Check(c.ConfirmOrderWithResponse(ctx, 7, &ConfirmOrderParams{}, ConfirmInputBody{ExternalPaymentId: "p", PaidAmount: 100})); err != nil {
		t.Fatalf("keyed write after a lost connection: %v", err)
	}
	f.n = 1
	if _, err := c.CancelOrderWithResponse(ctx, 7); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("cancel (no key in its operation) after a lost connection: %v, want the error", err)
	}
	if n := len(rec.all()); n != 2 || len(*waits) != 2 {
		t.Fatalf("%d requests arrived, %d waits; want 2 and 2", n, len(*waits))
	}
	if r := rec.all()[1]; !r.keyed || r.key == "" {
		t.Fatalf("confirm: %+v", r)
	}

	srv2, rec2 := serve(t, problemAnswer(http.StatusServiceUnavailable, "unavailable", nil), answer{http.StatusOK, nil, fmt.Sprintf(orderJSON, "cancelled")})
	c2, waits2 := testClient(t, srv2.URL, &Doer{})
	if _, err := Check(c2.CancelOrderWithResponse(ctx, 7)); err != nil {
		t.Fatalf("cancel after a 503: %v", err)
	}
	reqs := rec2.all()
	if len(reqs) != 2 || reqs[0].key == "" || reqs[1].key != reqs[0].key || len(*waits2) != 1 || (*waits2)[0] < 500*time.Millisecond {
		t.Fatalf("cancel: %+v, waits %v", reqs, *waits2)
	}
}

// The bounds: attempts run out (the last answer is the caller's), a
// Retry-After beyond MaxWait is not waited for, and a context cancelled
// while waiting ends the call.
func TestRetriesAreBounded(t *testing.T) {
	ctx := context.Background()
	srv, rec := serve(t, problemAnswer(http.StatusTooManyRequests, "rate_limited", map[string]string{"Retry-After": "1"}))
	c, waits := testClient(t, srv.URL, &Doer{MaxAttempts: 3})
	_, err := Check(c.GetOrderWithResponse(ctx, 7))
	var p *Problem
	if !errors.As(err, &p) || p.Code != ProblemCodeRateLimited || p.Status != 429 || len(rec.all()) != 3 || len(*waits) != 2 {
		t.Fatalf("after 3 attempts: %v; %d requests, waits %v", err, len(rec.all()), *waits)
	}

	srv, rec = serve(t, problemAnswer(http.StatusTooManyRequests, "rate_limited", map[string]string{"Retry-After": "3600"}))
	c, waits = testClient(t, srv.URL, &Doer{})
	if _, err := Check(c.GetOrderWithResponse(ctx, 7)); !errors.As(err, &p) || len(rec.all()) != 1 || len(*waits) != 0 {
		t.Fatalf("an hour's Retry-After: %v; %d requests, waits %v", err, len(rec.all()), *waits)
	}

	srv, _ = serve(t, problemAnswer(http.StatusServiceUnavailable, "unavailable", map[string]string{"Retry-After": "5"}))
	c, err = New(srv.URL, "k") // the real sleep
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := c.GetOrderWithResponse(ctx, 7); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("cancelled while waiting: %v after %s", err, time.Since(start))
	}
}

// A body that is not a bytes reader (a caller's own request) is still sent
// whole on a retry.
func TestStreamedBodyReplayed(t *testing.T) {
	srv, rec := serve(t, problemAnswer(http.StatusServiceUnavailable, "unavailable", map[string]string{"Retry-After": "0"}), answer{http.StatusOK, nil, "{}"})
	d := &Doer{APIKey: "k"}
	d.sleep = func(context.Context, time.Duration) error { return nil }
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/x", io.MultiReader(strings.NewReader(`{"a":`), strings.NewReader(`1}`)))
	res, err := d.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("%v %v", res, err)
	}
	reqs := rec.all()
	if len(reqs) != 2 || reqs[1].body != `{"a":1}` || reqs[0].key != reqs[1].key || reqs[0].key == "" {
		t.Fatalf("%+v", reqs)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"5", 5 * time.Second, true},
		{"0", 0, true},
		{"Thu, 26 Nov 2026 10:00:30 GMT", 30 * time.Second, true},
		{"Thu, 26 Nov 2026 09:59:00 GMT", 0, true}, // past: at once
		{"", 0, false},
		{"-1", 0, false},
		{"soon", 0, false},
	} {
		got, ok := retryAfter(c.in, now)
		if got != c.want || ok != c.ok {
			t.Errorf("retryAfter(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// A keyed request that meets its own first attempt still running (409
// with Retry-After) is sent again after the wait; a 409 without
// Retry-After (a conflict of state) is the caller's.
func TestInProgressRetried(t *testing.T) {
	srv, rec := serve(t, problemAnswer(http.StatusConflict, "idempotency_request_in_progress", map[string]string{"Retry-After": "1"}),
		answer{http.StatusCreated, nil, fmt.Sprintf(orderJSON, "pending_payment")})
	c, waits := testClient(t, srv.URL, &Doer{})
	if _, err := Check(c.CreateOrderWithResponse(context.Background(), &CreateOrderParams{}, anOrder)); err != nil || len(rec.all()) != 2 || (*waits)[0] != time.Second {
		t.Fatalf("%v; %d requests, waits %v", err, len(rec.all()), *waits)
	}
	srv, rec = serve(t, problemAnswer(http.StatusConflict, "order_paid", nil))
	c, _ = testClient(t, srv.URL, &Doer{})
	var p *Problem
	if _, err := Check(c.CancelOrderWithResponse(context.Background(), 7)); !errors.As(err, &p) || p.Code != ProblemCodeOrderPaid || len(rec.all()) != 1 {
		t.Fatalf("%v; %d requests", err, len(rec.all()))
	}
}

// TestDefaultClientHasATimeout: a client of New without an HTTP client of
// its own, and a Doer without Next, bound each attempt by DefaultTimeout,
// so a connection gone silent does not hang the partner's request forever.
func TestDefaultClientHasATimeout(t *testing.T) {
	c, err := New("http://127.0.0.1:1", "tk_sandbox_x")
	if err != nil {
		t.Fatal(err)
	}
	d, ok := c.ClientInterface.(*Client).Client.(*Doer)
	if !ok {
		t.Fatalf("New's client sends through %T, want a *Doer", c.ClientInterface.(*Client).Client)
	}
	hc, ok := d.Next.(*http.Client)
	if !ok || hc.Timeout != DefaultTimeout || DefaultTimeout <= 15*time.Second {
		t.Fatalf("New's HTTP client: %#v, want a timeout of DefaultTimeout (%s) above the service's longest wait", d.Next, DefaultTimeout)
	}
	if defaultHTTPClient.Timeout != DefaultTimeout {
		t.Fatalf("a Doer without Next sends with timeout %s", defaultHTTPClient.Timeout)
	}
}

package testenv

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"ticketsales/activities"
	"ticketsales/api"
	"ticketsales/apikey"
	"ticketsales/catalog"
	"ticketsales/catalogfile"
	"ticketsales/gateway"
	"ticketsales/mail"
	"ticketsales/metrics"
	"ticketsales/ratelimit"
	"ticketsales/requestlog"
	"ticketsales/sales"
	"ticketsales/store"
	"ticketsales/worker"
)

// Stack is the real HTTP API over a fresh database and the Temporal dev
// server, served on a loopback port.
type Stack struct {
	DB         *bun.DB
	DBURL      string
	URL        string
	Temporal   client.Client
	RequestLog *requestlog.Writer
	Sales      *sales.Service
	Catalog    *catalog.Service
	Gateway    *gateway.TestGateway
	Mailer     mail.Sender // nil: production orders cannot be mailed
	Now        func() time.Time
	// TaskQueue is this stack's own, so parallel test packages sharing the
	// dev server never run each other's workflows.
	TaskQueue string

	deps api.Deps
}

// ProductionLikeAPI serves an api instance configured as in production: keys
// cached for 10 s, the availability cache kept fresh by notifications, its
// own seat changes announced by a batched notifier rather than the seat
// triggers, events cached for holds for a second, the default rate limit
// raised out of the way of load.
func (s *Stack) ProductionLikeAPI(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := store.OpenAppNotifying(ctx, s.DBURL)
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	deps := s.deps
	deps.DB = db
	deps.Auth = apikey.NewAuthenticator(db, 10*time.Second)
	deps.Catalog = catalog.New(db, s.Now)
	go deps.Catalog.Listen(ctx, s.DBURL, log)
	for deadline := time.Now().Add(5 * time.Second); !deps.Catalog.Listening(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("availability cache listener did not connect")
		}
	}
	notifier := store.NewNotifier(deps.Bookkeeping, log, 50*time.Millisecond)
	go notifier.Run(ctx)
	sl := sales.New(db, s.Temporal, log, func() time.Time { return s.Now() })
	sl.TaskQueue, sl.Metrics, sl.Orders, sl.Starter = s.Sales.TaskQueue, s.Sales.Metrics, s.Sales.Orders, s.Sales.Starter
	sl.CacheSaleContext(time.Second)
	sl.SeatsChanged = func(eventID int64) {
		deps.Catalog.Invalidate(eventID)
		notifier.Changed(eventID)
	}
	deps.Sales = sl
	deps.Limiter, deps.DefaultLimit = ratelimit.NewMemory(), ratelimit.Limit{Rate: 1e9, Burst: 1e9}
	hs := httptest.NewServer(api.New(deps))
	t.Cleanup(hs.Close)
	return hs.URL
}

// AnotherAPI serves a second api instance over the same database and
// Temporal, with its own limiter: two instances of one deployment.
func (s *Stack) AnotherAPI(t testing.TB, limiter ratelimit.Limiter, l ratelimit.Limit) string {
	t.Helper()
	deps := s.deps
	deps.Limiter, deps.DefaultLimit = limiter, l
	hs := httptest.NewServer(api.New(deps))
	t.Cleanup(hs.Close)
	return hs.URL
}

// NewStack starts the API for one test.
func NewStack(t testing.TB) *Stack {
	t.Helper()
	db, dbURL := DB(t)
	reg := metrics.New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	tc, err := client.NewLazyClient(client.Options{HostPort: TemporalAddress(t), MetricsHandler: reg.TemporalHandler()})
	if err != nil {
		t.Fatalf("temporal client: %v", err)
	}
	t.Cleanup(tc.Close)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	bookkeeping, err := store.OpenBookkeeping(context.Background(), dbURL)
	if err != nil {
		t.Fatalf("bookkeeping pool: %v", err)
	}
	t.Cleanup(func() { _ = bookkeeping.Close() })
	rl := requestlog.NewWriter(bookkeeping, log, 20*time.Millisecond)
	s := &Stack{DB: db, DBURL: dbURL, Temporal: tc, RequestLog: rl, Now: time.Now, TaskQueue: "test-" + randomHex(6)}
	now := func() time.Time { return s.Now() }
	s.Sales = sales.New(db, tc, log, now)
	s.Sales.TaskQueue = s.TaskQueue
	s.Sales.Metrics = reg
	// Workflows of holds are started off the request path, as in production.
	starter := sales.NewStarter(bookkeeping, tc, log, s.TaskQueue, 10_000, 4)
	starter.Run()
	t.Cleanup(func() { starter.Close(10 * time.Second) })
	s.Sales.Starter = starter
	reg.CollectOrders(db)
	secret := []byte("test-gateway-secret")
	s.Gateway = &gateway.TestGateway{DB: db, Secret: secret, Log: log}
	s.Sales.Orders.TokenSecret = []byte("test-token-secret")
	s.Sales.Orders.Gateway = s.Gateway
	s.Catalog = catalog.New(db, now)
	s.Sales.SeatsChanged = s.Catalog.Invalidate
	s.deps = api.Deps{DB: db, Bookkeeping: bookkeeping, Temporal: tc, Auth: apikey.NewAuthenticator(db, 0),
		Catalog: s.Catalog, Sales: s.Sales, RequestLog: rl, Log: log, Gateway: s.Gateway, GatewaySecret: secret,
		// Generous, so that only the rate-limit tests meet the limit.
		Limiter: ratelimit.NewMemory(), DefaultLimit: ratelimit.Limit{Rate: 10_000, Burst: 10_000}, Metrics: reg}
	hs := httptest.NewServer(api.New(s.deps))
	t.Cleanup(func() { hs.Close(); rl.Close() })
	s.URL = hs.URL
	// Links point at this test server.
	s.Sales.Orders.PublicBaseURL = hs.URL
	s.Gateway.BaseURL, s.Gateway.CallbackURL = hs.URL, hs.URL+"/gateway/callback"
	return s
}

// StartWorker runs a real worker for this stack's task queue until the test
// ends (or the returned stop is called).
func (s *Stack) StartWorker(t testing.TB) (stop func()) {
	t.Helper()
	w := worker.New(s.Temporal, s.TaskQueue, &activities.Activities{DB: s.DB, Mailer: s.Mailer, Links: s.Sales.Links(), Gateway: s.Gateway})
	if err := w.Start(); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	var once sync.Once
	stop = func() { once.Do(w.Stop) }
	t.Cleanup(stop)
	return stop
}

// Company creates a company and returns its id.
func (s *Stack) Company(t testing.TB, name string) int64 {
	t.Helper()
	c, err := store.CreateCompany(context.Background(), s.DB, name)
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// Key creates an API key and returns it with its id.
func (s *Stack) Key(t testing.TB, companyID int64, env string, scopes ...string) (string, int64) {
	t.Helper()
	if len(scopes) == 0 {
		scopes = apikey.AllScopes
	}
	key, hash, prefix := apikey.Generate(env)
	k, err := store.CreateAPIKey(context.Background(), s.DB, companyID, env, "test", hash, prefix, scopes)
	if err != nil {
		t.Fatal(err)
	}
	return key, k.ID
}

// Import loads a catalog file for the company.
func (s *Stack) Import(t testing.TB, companyID int64, file []byte) store.ImportResult {
	t.Helper()
	res, err := catalogfile.Import(context.Background(), s.DB, companyID, file)
	if err != nil {
		t.Fatalf("import catalog: %v", err)
	}
	return res
}

// Response is a decoded HTTP response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map.
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("decode body %q: %v", r.Body, err)
	}
	return m
}

// Decode decodes the body into v.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode body %q: %v", r.Body, err)
	}
}

// Do sends a request with the key (if any) and extra headers as "K: V".
func (s *Stack) Do(t testing.TB, method, path, key string, body string, headers ...string) *Response {
	t.Helper()
	return Do(t, s.URL, method, path, key, body, headers...)
}

// Do sends a request to the server at base.
func Do(t testing.TB, base, method, path, key string, body string, headers ...string) *Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// Get is Do with GET and no body.
func (s *Stack) Get(t testing.TB, path, key string, headers ...string) *Response {
	t.Helper()
	return s.Do(t, http.MethodGet, path, key, "", headers...)
}

// AwaitWorkflow waits until the workflow exists: holds start theirs off the
// request path, a moment after the answer.
func (s *Stack) AwaitWorkflow(t testing.TB, workflowID string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, err := s.Temporal.DescribeWorkflowExecution(context.Background(), workflowID, "")
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("workflow %s never started: %v", workflowID, err)
		}
	}
}

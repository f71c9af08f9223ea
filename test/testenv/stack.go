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
	"ticketsales/internal/apikey"
	"ticketsales/internal/catalog"
	"ticketsales/internal/catalog/catalogfile"
	"ticketsales/internal/delivery"
	"ticketsales/internal/mail"
	"ticketsales/internal/metrics"
	"ticketsales/internal/payment"
	"ticketsales/internal/ratelimit"
	"ticketsales/internal/requestlog"
	"ticketsales/internal/sales"
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
	Gateway    *payment.TestGateway // nil: not mounted
	Gateways   payment.Set
	Mailer     mail.Sender // nil: production orders cannot be mailed
	// Metrics is the registry the api records into; cmd/api serves it on
	// a listener of its own, not on URL.
	Metrics *metrics.Registry
	Now     func() time.Time
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
	return s.APIWith(t, func(d *api.Deps) { d.Limiter, d.DefaultLimit = limiter, l })
}

// APIWith serves another api instance over this stack's dependencies as
// edit changes them.
func (s *Stack) APIWith(t testing.TB, edit func(*api.Deps)) string {
	t.Helper()
	deps := s.deps
	edit(&deps)
	hs := httptest.NewServer(api.New(deps))
	t.Cleanup(hs.Close)
	return hs.URL
}

// Options shape a test stack; the zero value is a development deployment
// (APP_ENV=development): sandbox on, the test gateway for every key.
type Options struct {
	// Production is a deployment outside development: production keys
	// never pay on the test gateway.
	Production bool
	// HostedGatewayURL configures a hosted-payment-page provider (see
	// testenv/fakegateway) for production payments.
	HostedGatewayURL string
	// SandboxDisabled refuses sandbox keys and unmounts the test gateway.
	SandboxDisabled bool
}

// GatewaySecret is the test stacks' GATEWAY_SECRET.
var GatewaySecret = []byte("test-gateway-secret-0123456789abcdef")

// APIWithTemporal serves another api instance over the same database whose
// sales go through tc, e.g. a client that cannot reach Temporal.
func (s *Stack) APIWithTemporal(t testing.TB, tc client.Client) string {
	t.Helper()
	deps := s.deps
	sl := sales.New(s.DB, tc, deps.Log, func() time.Time { return s.Now() })
	sl.TaskQueue, sl.Metrics, sl.Orders, sl.SeatsChanged = s.Sales.TaskQueue, s.Sales.Metrics, s.Sales.Orders, s.Sales.SeatsChanged
	deps.Sales, deps.Temporal = sl, tc
	hs := httptest.NewServer(api.New(deps))
	t.Cleanup(hs.Close)
	return hs.URL
}

// NewStack starts the API for one test.
func NewStack(t testing.TB, opts ...Options) *Stack {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
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
	// The server's address is known before it serves: links, the test
	// gateway's page and the callbacks point at it.
	hs := httptest.NewUnstartedServer(nil)
	base := "http://" + hs.Listener.Addr().String()
	rl := requestlog.NewWriter(bookkeeping, log, 20*time.Millisecond)
	s := &Stack{DB: db, DBURL: dbURL, Temporal: tc, RequestLog: rl, Now: time.Now, TaskQueue: "test-" + randomHex(6), Metrics: reg}
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
	keys, err := delivery.NewKeyring("test-token-secret")
	if err != nil {
		t.Fatal(err)
	}
	s.Gateways, s.Gateway = payment.NewSet(db, log, payment.Settings{PublicBaseURL: base, Secret: GatewaySecret,
		HostedURL: o.HostedGatewayURL, HostedAPIKey: "test-provider-key", WithTest: !o.SandboxDisabled || !o.Production})
	s.Sales.Orders.Links = delivery.Links{BaseURL: base, Keys: keys}
	s.Sales.Orders.Gateways = s.Gateways
	s.Sales.Orders.TestGatewayForProduction = !o.Production
	s.Catalog = catalog.New(db, now)
	s.Sales.SeatsChanged = s.Catalog.Invalidate
	s.deps = api.Deps{DB: db, Bookkeeping: bookkeeping, Temporal: tc, Auth: apikey.NewAuthenticator(db, 0),
		Catalog: s.Catalog, Sales: s.Sales, RequestLog: rl, Log: log, Gateway: s.Gateway, HostedGateway: o.HostedGatewayURL != "",
		GatewaySecret: GatewaySecret, SandboxEnabled: !o.SandboxDisabled,
		// Generous, so that only the rate-limit tests meet the limit.
		Limiter: ratelimit.NewMemory(), DefaultLimit: ratelimit.Limit{Rate: 10_000, Burst: 10_000}, Metrics: reg}
	hs.Config.Handler = api.New(s.deps)
	hs.Start()
	t.Cleanup(func() { hs.Close(); rl.Close() })
	s.URL = hs.URL
	return s
}

// StartWorker runs a real worker for this stack's task queue until the test
// ends (or the returned stop is called).
func (s *Stack) StartWorker(t testing.TB) (stop func()) {
	t.Helper()
	w := worker.New(s.Temporal, s.TaskQueue, &activities.Activities{DB: s.DB, Mailer: s.Mailer, Links: s.Sales.Links(),
		Gateways: s.Gateways, Metrics: s.Metrics, Log: s.deps.Log})
	if err := w.Start(); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	var once sync.Once
	stop = func() { once.Do(w.Stop) }
	t.Cleanup(stop)
	return stop
}

// StartReaper runs the worker's reaper for this stack every interval, acting
// on work older than grace and resuming failed refunds after resumeAfter,
// until the test ends.
func (s *Stack) StartReaper(t testing.TB, interval, grace, resumeAfter time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		worker.Reap(ctx, worker.Reaper{DB: s.DB, Temporal: s.Temporal, TaskQueue: s.TaskQueue, Log: s.deps.Log,
			Interval: interval, Grace: grace, Payments: sales.PaymentSweep{DB: s.DB, Temporal: s.Temporal, Gateways: s.Gateways},
			Refunds: s.Sales, RefundResumeAfter: resumeAfter})
	}()
	t.Cleanup(func() { cancel(); <-done })
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

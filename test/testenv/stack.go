package testenv

import (
	"context"
	"encoding/json"
	"fmt"
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
	"go.temporal.io/sdk/converter"

	"github.com/ticketsales/ticketsales/api"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/app"
	"github.com/ticketsales/ticketsales/internal/catalog"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/config"
	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/internal/metrics"
	"github.com/ticketsales/ticketsales/internal/orders"
	"github.com/ticketsales/ticketsales/internal/payment"
	"github.com/ticketsales/ticketsales/internal/ratelimit"
	"github.com/ticketsales/ticketsales/internal/refunds"
	"github.com/ticketsales/ticketsales/internal/requestlog"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/internal/webhooks"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/worker"
	wfcontract "github.com/ticketsales/ticketsales/workflows/contract"
)

// Stack is the real HTTP API over a fresh database and the Temporal dev
// server, served on a loopback port, built by api.NewProcess as cmd/api
// builds it (and its worker by worker.NewProcess).
type Stack struct {
	DB         *bun.DB
	DBURL      string
	URL        string
	Temporal   client.Client
	RequestLog *requestlog.Writer
	Holds      *holds.Service
	Orders     *orders.Service
	Refunds    *refunds.Service
	Catalog    *catalog.Service
	Gateway    *payment.TestGateway // nil: not mounted
	Gateways   payment.Set
	Mailer     mail.Sender // nil: production orders cannot be mailed
	// Metrics is the registry the api records into; a running api
	// (api.Process.Run) serves it on a listener of its own, not on URL.
	Metrics *metrics.Registry
	Now     func() time.Time
	// TaskQueue is this stack's own, so parallel test packages sharing the
	// dev server never run each other's workflows; webhook deliveries run
	// on Config.WebhookTaskQueue, derived from it.
	TaskQueue string
	// Config is the settings the stack was built from.
	Config config.Config

	deps  api.Deps
	conns app.Conns
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

// Log is the test processes' logger, the Temporal SDK's included: silent
// unless TEST_LOG is set, then on stderr at INFO, or at DEBUG with
// TEST_LOG=debug (what LOG_LEVEL=debug shows in a deployment).
func Log() *slog.Logger {
	switch v := os.Getenv("TEST_LOG"); {
	case v == "":
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	case strings.EqualFold(v, "debug"):
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	default:
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
}

// NewStack starts the API for one test.
func NewStack(t testing.TB, opts ...Options) *Stack {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	db, dbURL := DB(t)
	// The server's address is known before it serves: links, the test
	// gateway's page and the callbacks point at it.
	hs := httptest.NewUnstartedServer(nil)
	cfg := config.Defaults()
	cfg.DatabaseURL, cfg.PublicBaseURL, cfg.TaskQueue = dbURL, "http://"+hs.Listener.Addr().String(), "test-"+randomHex(6)
	cfg.TemporalAddress = TemporalAddress(t)
	cfg.WebhookTaskQueue = cfg.TaskQueue + "-webhooks"
	cfg.OrderTokenSecret, cfg.GatewaySecret = "test-token-secret", string(GatewaySecret)
	cfg.GatewayURL, cfg.GatewayAPIKey, cfg.SandboxEnabled = o.HostedGatewayURL, "test-provider-key", !o.SandboxDisabled
	if o.Production {
		cfg.AppEnv = "production"
	}
	// Keys looked up every time, limits out of the way of all but the
	// tests of limits, the request log written at once.
	cfg.AuthCacheTTL, cfg.RateLimitRPS, cfg.RateLimitBurst, cfg.AuthFailureRPS = 0, 10_000, 10_000, 0
	cfg.RequestLogFlush, cfg.StartQueue, cfg.StartWorkers, cfg.SaleCacheTTL = 20*time.Millisecond, 10_000, 4, 0
	// Webhook retries in a second or two, the outbox moved every 100 ms;
	// test pings and redeliveries not capped.
	cfg.WebhookRetryInitial, cfg.WebhookRetryMax, cfg.WebhookRelayInterval = 500*time.Millisecond, 2*time.Second, 100*time.Millisecond
	cfg.WebhookTestsPerMinute, cfg.WebhookRedeliveriesPerMinute = 0, 0
	s := &Stack{DB: db, DBURL: dbURL, Now: time.Now, TaskQueue: cfg.TaskQueue, Config: cfg}
	// The test's database, and the test's logger (the Temporal SDK's too:
	// left without one it writes its DEBUG lines to stdout); the process
	// opens the rest as cmd/api does, and Stop closes it once every
	// instance and worker of the stack, stopped before it, is done.
	a, err := api.NewProcess(context.Background(), cfg, api.ProcessOptions{Now: s.now, Conns: app.Conns{DB: db, Log: Log()}})
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	s.conns = a.Conns()
	s.Temporal, s.Metrics = s.conns.Temporal, s.conns.Metrics
	s.Holds, s.Orders, s.Refunds, s.Catalog, s.Gateway, s.Gateways, s.RequestLog, s.deps = a.Holds, a.Orders, a.Refunds, a.Catalog,
		a.TestGateway, a.Orders.Settings.Gateways, a.Deps.RequestLog, a.Deps
	hs.Config = api.NewHTTPServer("", a.Handler) // the timeouts Process.Run serves with
	hs.Start()
	t.Cleanup(func() { hs.Close(); a.Stop(10 * time.Second) })
	s.URL = hs.URL
	return s
}

// now lets tests move the stack's clock after it is built.
func (s *Stack) now() time.Time { return s.Now() }

// ProductionLikeAPI serves another api instance configured as in
// production: keys cached for 10 s, the availability cache kept fresh by
// notifications, its own seat changes announced by a batched notifier
// rather than the seat triggers, events cached for holds for a second, the
// default rate limit raised out of the way of load.
func (s *Stack) ProductionLikeAPI(t testing.TB) string {
	t.Helper()
	return s.ProductionLikeInstance(t).URL
}

// Instance is an api instance a test runs beside the stack's own.
type Instance struct {
	URL     string
	Holds   *holds.Service
	Catalog *catalog.Service
}

// ProductionLikeInstance is ProductionLikeAPI with the instance's services,
// for tests that change them (a shorter TTLUnit).
func (s *Stack) ProductionLikeInstance(t testing.TB) *Instance {
	t.Helper()
	cfg := s.Config
	cfg.AuthCacheTTL, cfg.SaleCacheTTL, cfg.RateLimitRPS, cfg.RateLimitBurst = 10*time.Second, time.Second, 1e9, 1e9
	conns := s.conns
	conns.DB = nil // its own pool, opened as an announcing deployment's (store.OpenAppNotifying)
	a, err := api.NewProcess(context.Background(), cfg, api.ProcessOptions{Now: s.now, Announce: true, Conns: conns})
	if err != nil {
		t.Fatal(err)
	}
	// Tests tune the stack's sale settings after NewStack: this instance
	// sells by the same.
	a.Orders.Settings, a.Refunds.Settings = s.Orders.Settings, s.Refunds.Settings
	a.Start()
	t.Cleanup(func() { a.Stop(10 * time.Second) })
	for deadline := time.Now().Add(5 * time.Second); !a.Catalog.Listening(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("availability cache listener did not connect")
		}
	}
	hs := httptest.NewServer(a.Handler)
	t.Cleanup(hs.Close)
	return &Instance{URL: hs.URL, Holds: a.Holds, Catalog: a.Catalog}
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

// APIWithTemporal serves another api instance over the same database whose
// sales go through tc, e.g. a client that cannot reach Temporal.
func (s *Stack) APIWithTemporal(t testing.TB, tc client.Client) string {
	t.Helper()
	conns := s.conns
	conns.Temporal = tc
	a, err := api.NewProcess(context.Background(), s.Config, api.ProcessOptions{Now: s.now, Conns: conns})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(a.Handler)
	t.Cleanup(hs.Close)
	return hs.URL
}

// Instance serves another api process built from this stack's settings,
// as edit changes them, over the same database and Temporal: another
// instance of the deployment (opt.Now defaults to the stack's clock). It
// returns the instance's URL and process.
func (s *Stack) Instance(t testing.TB, edit func(*config.Config), opt api.ProcessOptions) (string, *api.Process) {
	t.Helper()
	cfg := s.Config
	if edit != nil {
		edit(&cfg)
	}
	if opt.Now == nil {
		opt.Now = s.now
	}
	opt.Conns = s.conns
	a, err := api.NewProcess(context.Background(), cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(a.Handler)
	t.Cleanup(func() { hs.Close(); a.Stop(10 * time.Second) })
	return hs.URL, a
}

// RedisURL is the Redis tests share: REDIS_URL (make test sets it), else
// the usual local one. A Redis that does not answer fails the test: only
// -short skips it. prefix is a key prefix of the test's own.
func RedisURL(t testing.TB) (url, prefix string) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Redis")
	}
	url = os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	rdb, err := ratelimit.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("no Redis at %s (make test starts one; or set REDIS_URL): %v", url, err)
	}
	return url, "test:" + randomHex(6) + ":"
}

// worker builds the worker process's parts over this stack.
func (s *Stack) worker(t testing.TB) *worker.Process {
	t.Helper()
	w, err := worker.NewProcess(context.Background(), s.Config, worker.ProcessOptions{Conns: s.conns, Mailer: s.Mailer, NoMailer: s.Mailer == nil})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// StartWorker runs the worker process's Temporal workers for this stack's
// task queues (the main one and the webhook deliveries' own), with the
// webhook relay beside them as the worker process runs it, until the test
// ends (or the returned stop is called).
func (s *Stack) StartWorker(t testing.TB) (stop func()) {
	t.Helper()
	p := s.worker(t)
	ws := p.Workers()
	for _, w := range ws {
		if err := w.Start(); err != nil {
			t.Fatalf("start worker: %v", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Relay.Run(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
			var wg sync.WaitGroup
			for _, w := range ws {
				wg.Add(1)
				go func() { defer wg.Done(); w.Stop() }()
			}
			wg.Wait()
		})
	}
	t.Cleanup(stop)
	return stop
}

// Relay is the worker process's webhook relay over this stack, not
// running: a test moves the outbox to Temporal with Once, e.g. before any
// worker polls.
func (s *Stack) Relay(t testing.TB) *webhooks.Relay {
	t.Helper()
	return s.worker(t).Relay
}

// StartReaper runs the worker's reaper for this stack every interval, acting
// on work older than grace and resuming failed refunds after resumeAfter,
// until the test ends.
func (s *Stack) StartReaper(t testing.TB, interval, grace, resumeAfter time.Duration) {
	t.Helper()
	r := s.worker(t).Reaper
	r.Interval, r.Grace, r.RefundResumeAfter = interval, grace, resumeAfter
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		worker.Reap(ctx, r)
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

// Key creates an API key and returns it with its id; with no scopes named,
// a partner's (apikey.PartnerScopes: no checkin).
func (s *Stack) Key(t testing.TB, companyID int64, env string, scopes ...string) (string, int64) {
	t.Helper()
	if len(scopes) == 0 {
		scopes = apikey.PartnerScopes
	}
	key, hash, prefix := apikey.Generate(env)
	k, err := store.CreateAPIKey(context.Background(), s.DB, companyID, env, "test", hash, prefix, scopes, store.DoorLimits{}, store.KeyClaim{})
	if err != nil {
		t.Fatal(err)
	}
	return key, k.ID
}

// KeyIn creates a partner key of the company's application of that name
// in env (made if new), with the partner scopes.
func (s *Stack) KeyIn(t testing.TB, companyID int64, env, application string) string {
	t.Helper()
	key, hash, prefix := apikey.Generate(env)
	if _, err := store.CreateAPIKeyIn(context.Background(), s.DB, companyID, env, application, "test", hash, prefix,
		apikey.PartnerScopes, store.DoorLimits{}, store.KeyClaim{}); err != nil {
		t.Fatal(err)
	}
	return key
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

// HallCatalog is a catalog with one published event, "show", in a hall of
// rows × seats seats, all of one category.
func HallCatalog(rows, seats int) []byte {
	var b strings.Builder
	b.WriteString(`{"cities": [{"ref": "c", "name": "City"}], "venues": [{"ref": "arena", "name": "Arena", "city": "c",
	  "timezone": "UTC", "schemes": [{"ref": "s", "name": "Bowl", "zones": [{"id": "a", "name": "Bowl", "rows": [`)
	for r := 1; r <= rows; r++ {
		if r > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"row": "%d", "seats": %d}`, r, seats)
	}
	b.WriteString(`]}]}]}], "events": [{"ref": "show", "title": "Show", "slug": "show", "status": "published",
	  "starts_at": "2030-01-01T19:00:00Z", "venue": "arena", "scheme": "s", "fee": {"mode": "separate", "rate_bp": 1000, "min_fee": 0},
	  "categories": [{"ref": "all", "name": "All", "price": 100000, "zones": ["a"]}]}]}`)
	return []byte(b.String())
}

// ZonedHallCatalog is a catalog with one published event, "hall", in a
// hall of zones × rows × seats seats: zones named in Russian ("Сектор
// Восточный 1", …), two to a column of a grid of five, the front zones in
// a dearer category. 10 × 40 × 25 is the 10,000-seat hall of the tests of
// the maps.
func ZonedHallCatalog(zones, rows, seats int) []byte {
	names := []string{"Восточный", "Западный", "Северный", "Южный", "Центральный"}
	var b strings.Builder
	b.WriteString(`{"cities": [{"ref": "msk", "name": "Москва"}], "venues": [{"ref": "arena", "name": "Арена «Северное сияние»", "city": "msk",
	  "timezone": "Europe/Moscow", "schemes": [{"ref": "big", "name": "Большая арена", "zones": [`)
	var front, back []string
	for z := 0; z < zones; z++ {
		if z > 0 {
			b.WriteString(",")
		}
		col, line := z%5, z/5
		fmt.Fprintf(&b, `{"id": "z%d", "name": "Сектор %s %d", "origin": [%d, %d], "rows": [`,
			z+1, names[col], line+1, (col-2)*(seats+5), line*(rows*6/5+6))
		for r := 1; r <= rows; r++ {
			if r > 1 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"row": "%d", "seats": %d}`, r, seats)
		}
		b.WriteString("]}")
		if line == 0 {
			front = append(front, fmt.Sprintf("%q", fmt.Sprintf("z%d", z+1)))
		} else {
			back = append(back, fmt.Sprintf("%q", fmt.Sprintf("z%d", z+1)))
		}
	}
	// A stage as wide as the front line of zones.
	half := float64(min(zones, 5)*(seats+5)) / 2
	fmt.Fprintf(&b, `], "stage": {"label": "Сцена", "outline": [[%g, -8], [%g, -8], [%g, -3], [%g, -3]]}`, -half, half, half-4, -half+4)
	b.WriteString(`}]}], "events": [{"ref": "hall", "title": "Гала-концерт «Десять тысяч голосов»", "slug": "hall", "status": "published",
	  "starts_at": "2030-01-01T19:00:00Z", "venue": "arena", "scheme": "big", "fee": {"mode": "separate", "rate_bp": 1000, "min_fee": 0},
	  "categories": [{"ref": "front", "name": "Партер", "price": 500000, "zones": [` + strings.Join(front, ",") + `]}`)
	if len(back) > 0 {
		b.WriteString(`, {"ref": "back", "name": "Трибуна", "price": 250000, "zones": [` + strings.Join(back, ",") + `]}`)
	}
	b.WriteString(`]}]}`)
	return []byte(b.String())
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
	res, err := Send(http.DefaultClient, NewRequest(t, method, base+path, key, body, headers...))
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return res
}

// NewRequest builds a request with the key (if any), a JSON body (if any)
// and extra headers as "K: V".
func NewRequest(t testing.TB, method, url, key string, body string, headers ...string) *http.Request {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
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
	return req
}

// Send sends req with c and reads the whole answer.
func Send(c *http.Client, req *http.Request) (*Response, error) {
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if err := checkContract(c, req, res, b); err != nil {
		return nil, err
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: b}, nil
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

// AwaitHold waits until the holds workflow of the reservation's event and
// deadline minute owns the hold (status "") or has finalised it with that
// status; it returns what the workflow's hold query says.
func (s *Stack) AwaitHold(t testing.TB, reservationID string, status states.ReservationStatus, within time.Duration) wfcontract.HoldState {
	t.Helper()
	var r struct {
		EventID   int64     `bun:"event_id"`
		ExpiresAt time.Time `bun:"expires_at"`
	}
	if err := s.DB.NewRaw("SELECT event_id, expires_at FROM reservations WHERE id = ?", reservationID).Scan(context.Background(), &r); err != nil {
		t.Fatalf("reservation %s: %v", reservationID, err)
	}
	wid := wfcontract.EventHoldsWorkflowID(r.EventID, r.ExpiresAt)
	var last wfcontract.HoldState
	var err error
	for deadline := time.Now().Add(within); ; time.Sleep(50 * time.Millisecond) {
		var v converter.EncodedValue
		if v, err = s.Temporal.QueryWorkflow(context.Background(), wid, "", wfcontract.HoldQuery, reservationID); err == nil {
			if err = v.Get(&last); err == nil && last.Known && (status == "" || last.Status == status) {
				return last
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("hold %s in %s: want status %q, have %+v (%v)", reservationID, wid, status, last, err)
		}
	}
}

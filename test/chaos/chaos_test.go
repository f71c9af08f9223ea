// Package chaos runs sandbox-style sagas against real api and worker
// processes while killing them with SIGKILL and while Postgres, Temporal
// and Redis fail under them, then checks from Postgres that nothing was
// sold twice, lost or left open.
package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	temporalclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/test/testenv"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// proc is a restartable child process.
type proc struct {
	mu   sync.Mutex
	bin  string
	env  []string
	cmd  *exec.Cmd
	logs *os.File
}

func (p *proc) start(t *testing.T) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && p.cmd.Process != nil {
		// Restarts may overlap: never leave two of a process running.
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	cmd := exec.Command(p.bin)
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		t.Errorf("start %s: %v", p.bin, err)
		return
	}
	p.cmd = cmd
	go func() { _ = cmd.Wait() }()
}

func (p *proc) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
}

// TestChaos runs sandbox-style sagas against two api and two worker
// processes behind a balancer, on a Postgres, a Temporal server and a Redis
// of its own. First the processes are killed with SIGKILL while sagas run
// (one api and one worker at a time, each restarted); then, with every
// process left running, Postgres is restarted, the Temporal server is
// killed and restarted, and Redis is stopped and started again. The sagas
// must all complete, every answer of the service must be a usable one (a
// 5xx only as 503 with Retry-After), and the invariants must hold.
func TestChaos(t *testing.T) {
	testenv.SkipInUnit(t)
	sagas, kills := envInt("CHAOS_SAGAS", 30), envInt("CHAOS_KILLS", 2)
	faultSagas := envInt("CHAOS_FAULT_SAGAS", 24)
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", dir+"/", "github.com/ticketsales/ticketsales/cmd/api", "github.com/ticketsales/ticketsales/cmd/worker")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	logs, _ := os.Create(filepath.Join(dir, "processes.log"))
	defer logs.Close()
	t.Cleanup(func() {
		if t.Failed() {
			// What the processes said last, for the failure's story.
			b, _ := os.ReadFile(logs.Name())
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			t.Logf("last lines of the processes' logs:\n%s", strings.Join(lines[max(0, len(lines)-80):], "\n"))
		}
	})
	pg := startPostgres(t)
	temporalSrv := startTemporal(t, logs)
	redisSrv := startRedis(t)
	s := &testenv.Stack{}
	s.DB, s.DBURL = testenv.DBOn(t, pg.admin)
	company := s.Company(t, "Chaos")
	key, _ := s.Key(t, company, apikey.Production)
	s.Import(t, company, testenv.HallCatalog(40, 30))
	var event int64
	if err := s.DB.NewRaw("SELECT id FROM events WHERE company_id = ?", company).Scan(context.Background(), &event); err != nil {
		t.Fatal(err)
	}
	apiAddrs := []string{freePort(t), freePort(t)}
	lb := newBalancer(t, apiAddrs...)
	outbox := filepath.Join(dir, "outbox")
	temporalAddr := temporalSrv.addr
	env := append(withoutEnv(os.Environ(), "DATABASE_URL", "TEMPORAL_ADDRESS", "REDIS_URL"), "DATABASE_URL="+s.DBURL,
		"TEMPORAL_ADDRESS="+temporalAddr, "REDIS_URL="+redisSrv.url(),
		"TASK_QUEUE=chaos-"+strconv.FormatInt(time.Now().UnixNano(), 36), "PUBLIC_BASE_URL="+lb.url,
		"RATE_LIMIT_RPS=100000", "RATE_LIMIT_BURST=100000", "WORKER_METRICS_ADDR=127.0.0.1:0", "METRICS_ADDR=127.0.0.1:0", "LOG_LEVEL=warn",
		"MAIL_OUTBOX="+outbox, "APP_ENV=development",
		// The reaper sweeps up the workflow starts a killed api still owed,
		// and the payments no workflow settled, within this test's span
		// rather than a minute later.
		"REAP_INTERVAL=1s", "REAP_GRACE=3s",
		// Gateway buyers pay around the end of this window.
		"PAYMENT_WINDOW="+paymentWindow.String(),
		// Webhooks go to this test's receiver on loopback, retried within
		// seconds.
		"WEBHOOK_ANY_ADDRESS=true", "WEBHOOK_RETRY_INITIAL=1s", "WEBHOOK_RETRY_MAX=3s", "WEBHOOK_RELAY_INTERVAL=200ms")
	var apis, workers []*proc
	for i := range 2 {
		apis = append(apis, &proc{bin: filepath.Join(dir, "api"), env: append(env[:len(env):len(env)], "HTTP_ADDR="+apiAddrs[i]), logs: logs})
		workers = append(workers, &proc{bin: filepath.Join(dir, "worker"), env: env, logs: logs})
	}
	for _, p := range append(apis, workers...) {
		p.start(t)
		defer p.kill()
	}
	hooks := newHookReceiver(t)
	hooks.subscribe(t, lb.url, key)

	// The killer: SIGKILL one api and one worker in turn, restart them.
	stop := make(chan struct{})
	var killed sync.WaitGroup
	var apiKills, workerKills atomic.Int64
	killed.Add(1)
	go func() {
		defer killed.Done()
		for i := 0; apiKills.Load() < int64(kills) || workerKills.Load() < int64(kills); i++ {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(800+rand.IntN(1500)) * time.Millisecond):
			}
			p, n := apis[rand.IntN(2)], &apiKills
			if i%2 == 1 {
				p, n = workers[rand.IntN(2)], &workerKills
			}
			p.kill()
			n.Add(1)
			time.Sleep(200 * time.Millisecond)
			p.start(t)
		}
	}()

	client := &http.Client{Timeout: 30 * time.Second}
	var answers answerLog
	// call retries one step with its idempotency key until it gets an
	// answer the saga can act on: through restarts, 5xx and in-progress.
	call := func(method, path, body, idem string) (int, map[string]any) {
		deadline := time.Now().Add(3 * time.Minute)
		for time.Now().Before(deadline) {
			req, _ := http.NewRequest(method, lb.url+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			if idem != "" {
				req.Header.Set("Idempotency-Key", idem)
			}
			res, err := client.Do(req)
			if err == nil {
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				answers.record(method, path, res, b)
				var m map[string]any
				_ = json.Unmarshal(b, &m)
				code, _ := m["code"].(string)
				if res.StatusCode < 500 && code != "idempotency_request_in_progress" {
					return res.StatusCode, m
				}
			}
			time.Sleep(300 * time.Millisecond)
		}
		return 0, nil
	}

	var done, failed, gatewayPaid atomic.Int64
	var nextSeat atomic.Int64
	var firstFailure atomic.Value
	var killWorkers atomic.Bool
	killWorkers.Store(true)
	runSagas := func(from, to int, more func() bool) {
		var wg sync.WaitGroup
		work := make(chan int)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range work {
					var err error
					if i%gatewayEvery == gatewayEvery-1 {
						err = gatewaySaga(call, event, i, &nextSeat, func() {
							if !killWorkers.Load() {
								return
							}
							// The worker dies as the payment arrives.
							p := workers[rand.IntN(2)]
							p.kill()
							workerKills.Add(1)
							time.Sleep(300 * time.Millisecond)
							p.start(t)
						}, &gatewayPaid)
					} else {
						err = saga(call, event, i, &nextSeat)
					}
					if err != nil {
						failed.Add(1)
						firstFailure.CompareAndSwap(nil, err.Error())
					} else {
						done.Add(1)
					}
				}
			}()
		}
		for i := from; i < to || more(); i++ {
			work <- i
		}
		close(work)
		wg.Wait()
	}

	// Phase one: processes killed.
	runSagas(0, sagas, func() bool { return false })
	close(stop)
	killed.Wait()

	// Phase two: the services under the processes fail, and the processes
	// (none restarted from here on) must ride it out.
	killWorkers.Store(false)
	var faultsDone atomic.Bool
	var faults sync.WaitGroup
	faults.Add(1)
	go func() {
		defer faults.Done()
		defer faultsDone.Store(true)
		time.Sleep(2 * time.Second)
		t.Log("fault: Postgres restarted")
		pg.restart(t)
		time.Sleep(4 * time.Second)
		t.Log("fault: Temporal server killed and restarted")
		temporalSrv.restart(t)
		time.Sleep(4 * time.Second)
		t.Log("fault: Redis down for 5 s")
		redisSrv.stop()
		time.Sleep(5 * time.Second)
		redisSrv.start(t)
		time.Sleep(2 * time.Second)
	}()
	total := sagas + faultSagas
	next := sagas + faultSagas
	runSagas(sagas, sagas+faultSagas, func() bool {
		// Keep selling until every fault has passed.
		if faultsDone.Load() || next >= 4*total {
			return false
		}
		next++
		return true
	})
	faults.Wait()
	sagas = int(done.Load() + failed.Load())

	if f := firstFailure.Load(); f != nil {
		t.Errorf("first saga failure: %v", f)
	}
	t.Logf("%d sagas done (%d paid through the gateway near the deadline), %d failed; api killed %d×, worker %d×",
		done.Load(), gatewayPaid.Load(), failed.Load(), apiKills.Load(), workerKills.Load())
	if done.Load() != int64(sagas) {
		t.Errorf("%d of %d sagas completed", done.Load(), sagas)
	}
	if apiKills.Load() < int64(kills) || workerKills.Load() < int64(kills) {
		t.Errorf("kills: api %d, worker %d, want %d each", apiKills.Load(), workerKills.Load(), kills)
	}
	bad, byStatus := answers.summary()
	t.Logf("answers: %v", byStatus)
	for _, b := range bad {
		t.Errorf("an unusable answer: %s", b)
	}
	// Every instance recovered by itself: ready, with Temporal reachable.
	for _, a := range apiAddrs {
		res, err := http.Get("http://" + a + "/readyz")
		var ready map[string]any
		if err == nil {
			_ = json.NewDecoder(res.Body).Decode(&ready)
			res.Body.Close()
		}
		if err != nil || res.StatusCode != http.StatusOK || ready["temporal"] != "ok" {
			t.Errorf("api %s after the faults: %v %v", a, err, ready)
		}
	}

	// The invariants, from Postgres. Give the restarted worker time to send
	// the last e-mails.
	ctx := context.Background()
	count := func(q string, args ...any) int {
		var n int
		if err := s.DB.NewRaw(q, args...).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	testenv.CheckSales(t, s.DB)
	checks := map[string]string{
		"reservation open past its deadline": `SELECT count(*) FROM reservations WHERE status = 'reserved' AND expires_at < now()`,
		"order open past its deadline":       `SELECT count(*) FROM orders WHERE status = 'pending_payment' AND expires_at < now()`,
	}
	for name, q := range checks {
		if n := count(q); n != 0 {
			t.Errorf("%s: %d", name, n)
		}
	}
	paid := count("SELECT count(*) FROM orders WHERE status = 'paid'")
	gatewaySagas := sagas / gatewayEvery
	if want := sagas - gatewaySagas + int(gatewayPaid.Load()); paid < want {
		t.Errorf("%d paid orders for %d sagas (%d paid through the gateway)", paid, sagas, gatewayPaid.Load())
	}
	// Every payment the gateway took is on record, applied to its order or
	// returned: Σ received = Σ paid orders' amounts + Σ refunded.
	testenv.CheckPayments(t, s.DB, time.Minute)
	t.Logf("payments: %d applied, %d returned", count("SELECT count(*) FROM payments WHERE status = 'applied'"),
		count("SELECT count(*) FROM payments WHERE status = 'refunded'"))
	// Every hold still held, and every hold handed over, is owned by its
	// event's holds workflow, including those whose hand-over was still
	// queued in an api that was killed: the sweep made them. (A hold that
	// ended before it was handed over — ordered, or given back because it
	// could not be handed over before answering — has no deadline left to
	// keep and rightly is not.)
	if n := count("SELECT count(*) FROM reservations WHERE status <> 'released'"); n < sagas {
		t.Errorf("%d reservations for %d sagas", n, sagas)
	}
	var holds []struct {
		ID        string    `bun:"id"`
		EventID   int64     `bun:"event_id"`
		ExpiresAt time.Time `bun:"expires_at"`
	}
	if err := s.DB.NewRaw("SELECT id, event_id, expires_at FROM reservations WHERE status = 'reserved' OR workflow_started").Scan(ctx, &holds); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d holds ended before their hand-over", count("SELECT count(*) FROM reservations WHERE status <> 'reserved' AND NOT workflow_started"))
	tc, err := temporalclient.Dial(temporalclient.Options{HostPort: temporalAddr, Logger: sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	missing := holds
	var lastErr error
	for deadline := time.Now().Add(30 * time.Second); len(missing) > 0 && time.Now().Before(deadline); time.Sleep(time.Second) {
		still := missing[:0:0]
		for _, h := range missing {
			var st contract.HoldState
			wid := contract.EventHoldsWorkflowID(h.EventID, h.ExpiresAt)
			v, err := tc.QueryWorkflow(ctx, wid, "", contract.HoldQuery, h.ID)
			if err == nil {
				err = v.Get(&st)
			}
			if err == nil && !st.Known {
				err = fmt.Errorf("hold %s unknown to %s", h.ID, wid)
			}
			if err != nil {
				still, lastErr = append(still, h), err
			}
		}
		missing = still
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d reservations are not owned by their event's holds workflow, e.g. %s: %v", len(missing), len(holds), missing[0].ID, lastErr)
	} else {
		t.Logf("%d reservations, each owned by its event's holds workflow", len(holds))
	}

	// No e-mail twice: one file per paid order at most, all of them in time.
	var mails int
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		entries, _ := os.ReadDir(outbox)
		if mails = len(entries); mails >= paid {
			break
		}
	}
	if mails != paid {
		t.Errorf("%d e-mails for %d paid orders", mails, paid)
	}

	// Webhooks: every event the outbox holds reached the receiver, verified,
	// whatever was killed meanwhile; repeats only share an id.
	var events []struct {
		ID, Type string
		OrderID  *int64
	}
	if err := s.DB.NewRaw("SELECT id, type, order_id FROM webhook_events WHERE company_id = ?", company).Scan(ctx, &events); err != nil {
		t.Fatal(err)
	}
	var lost []string
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		lost = lost[:0]
		for _, e := range events {
			if !hooks.got(e.ID) {
				lost = append(lost, e.Type+" "+e.ID)
			}
		}
		if len(lost) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d of %d webhook events never arrived, e.g. %s", len(lost), len(events), lost[0])
	}
	if n := count("SELECT count(*) FROM orders o WHERE o.status = 'paid' AND o.company_id = ? AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.order_id = o.id AND e.type = 'order.paid')", company); n != 0 {
		t.Errorf("%d paid orders without an order.paid event", n)
	}
	posts, unique, unverified := hooks.counts()
	if unverified != 0 {
		t.Errorf("%d webhook POSTs failed verification", unverified)
	}
	t.Logf("webhooks: %d events, %d received (%d POSTs: repeats are deduplicated by webhook-id)", len(events), unique, posts)
}

// hookReceiver is the partner's webhook endpoint: it verifies each POST
// with the Standard Webhooks reference library and records event ids.
type hookReceiver struct {
	url    string
	mu     sync.Mutex
	secret string
	seen   map[string]bool
	posts  int
	bad    int
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{seen: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		wh, err := standardwebhooks.NewWebhook(h.secret)
		if err == nil {
			err = wh.Verify(body, r.Header)
		}
		if err != nil {
			h.bad++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.posts++
		h.seen[r.Header.Get("webhook-id")] = true
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL + "/hooks"
	return h
}

// subscribe adds the receiver as an endpoint through the api.
func (h *hookReceiver) subscribe(t *testing.T, base, key string) {
	body := fmt.Sprintf(`{"url": %q}`, h.url)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(300 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/webhook-endpoints", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "hooks")
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			var e struct {
				Data struct{ Secret string } `json:"data"`
			}
			_ = json.NewDecoder(res.Body).Decode(&e)
			res.Body.Close()
			if res.StatusCode == http.StatusCreated {
				h.mu.Lock()
				h.secret = e.Data.Secret
				h.mu.Unlock()
				return
			}
			if res.StatusCode < 500 {
				t.Fatalf("create webhook endpoint: %d", res.StatusCode)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("create webhook endpoint: %v", err)
		}
	}
}

func (h *hookReceiver) got(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen[id]
}

func (h *hookReceiver) counts() (posts, unique, bad int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.posts, len(h.seen), h.bad
}

// Every gatewayEvery-th saga pays through the gateway, around the end of
// paymentWindow: some payments land before it (the order is paid), some
// after (the payment goes back).
const (
	gatewayEvery  = 3
	paymentWindow = 20 * time.Second
)

type caller func(method, path, body, idem string) (int, map[string]any)

// saga runs reserve → order → confirm → tickets for one buyer, moving to
// another seat if its own was taken by an attempt that a crash orphaned.
func saga(call caller, event int64, i int, next *atomic.Int64) error {
	for round := 0; ; round++ {
		oid, amount, _, err := reserveAndOrder(call, event, i, round, next, "external")
		if err != nil {
			return err
		}
		st, c := call(http.MethodPost, fmt.Sprintf("/v1/orders/%d/confirm", oid),
			fmt.Sprintf(`{"external_payment_id": "p-%d-%d", "paid_amount": %d}`, i, round, amount), fmt.Sprintf("c-%d-%d", i, round))
		for deadline := time.Now().Add(2 * time.Minute); st == http.StatusAccepted && time.Now().Before(deadline); {
			// Accepted, tickets follow (the worker was down): as a partner
			// would, ask again with the same payment until it is paid.
			time.Sleep(500 * time.Millisecond)
			st, c = call(http.MethodPost, fmt.Sprintf("/v1/orders/%d/confirm", oid),
				fmt.Sprintf(`{"external_payment_id": "p-%d-%d", "paid_amount": %d}`, i, round, amount), fmt.Sprintf("c-%d-%d", i, round))
		}
		if st == http.StatusConflict && c["code"] == "order_expired" && round < 2 {
			// Restarts held the order past its window: as a partner
			// would, start over with another seat.
			continue
		}
		if st != 200 {
			return fmt.Errorf("saga %d confirm: %d %v", i, st, c)
		}
		st, tk := call(http.MethodGet, fmt.Sprintf("/v1/orders/%d/tickets", oid), "", "")
		if st != 200 || len(tk["data"].([]any)) != 1 {
			return fmt.Errorf("saga %d tickets: %d %v", i, st, tk)
		}
		return nil
	}
}

// gatewaySaga orders with payment=gateway and pays on the gateway's page
// from three seconds before the payment deadline to one after, killing the
// worker as it does every other time. The order ends paid with its ticket, or cancelled (its payment
// is then returned: the invariants check that).
func gatewaySaga(call caller, event int64, i int, next *atomic.Int64, killWorker func(), paid *atomic.Int64) error {
	oid, _, od, err := reserveAndOrder(call, event, i, 0, next, "gateway")
	if err != nil {
		return err
	}
	expiresAt, _ := od["expires_at"].(string)
	expires, err := time.Parse(time.RFC3339Nano, expiresAt)
	if err != nil {
		return fmt.Errorf("saga %d: expires_at: %w", i, err)
	}
	time.Sleep(time.Until(expires.Add(time.Duration(rand.IntN(4000)-3000) * time.Millisecond)))
	if i%2 == 0 {
		go killWorker()
	}
	payURL, _ := od["payment_url"].(string)
	if st, _ := od["status"].(string); st == "cancelled" {
		// Restarts held the create up past the window: nothing to pay.
		return nil
	}
	if payURL == "" {
		// Only a pending order shows where to pay: say what it was instead.
		st, o := call(http.MethodGet, fmt.Sprintf("/v1/orders/%d", oid), "", "")
		return fmt.Errorf("saga %d: order %d came without payment_url (%v); now %d %v", i, oid, od, st, o)
	}
	browser := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(300 * time.Millisecond) {
		res, err := browser.PostForm(payURL, url.Values{"action": {"pay"}})
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusSeeOther {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("saga %d: pay: %v", i, err)
		}
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(300 * time.Millisecond) {
		st, o := call(http.MethodGet, fmt.Sprintf("/v1/orders/%d", oid), "", "")
		d, _ := o["data"].(map[string]any)
		status, _ := d["status"].(string)
		switch {
		case st == 200 && status == "paid":
			if st, tk := call(http.MethodGet, fmt.Sprintf("/v1/orders/%d/tickets", oid), "", ""); st != 200 || len(tk["data"].([]any)) != 1 {
				return fmt.Errorf("saga %d tickets: %d %v", i, st, tk)
			}
			paid.Add(1)
			return nil
		case st == 200 && status == "cancelled":
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("saga %d: order %d still %q", i, oid, status)
		}
	}
}

// reserveAndOrder holds a seat and orders it, and returns the order.
func reserveAndOrder(call caller, event int64, i, round int, next *atomic.Int64, payment string) (int64, int64, map[string]any, error) {
	seat := i
	if round > 0 {
		seat = 300 + int(next.Add(1)) // the spare half of the hall
	}
	var rid string
	for attempt := 0; ; attempt++ {
		id := fmt.Sprintf("a-%d-%d", seat/30+1, seat%30+1)
		st, r := call(http.MethodPost, "/v1/reservations",
			fmt.Sprintf(`{"event_id": %d, "seats": [{"zone_id": "a", "seat_id": %q}]}`, event, id), fmt.Sprintf("r-%d-%d-%d", i, round, attempt))
		if st == 201 {
			rid = r["data"].(map[string]any)["id"].(string)
			break
		}
		if st != 409 || attempt > 5 {
			return 0, 0, nil, fmt.Errorf("saga %d reserve: %d %v", i, st, r)
		}
		seat = 300 + int(next.Add(1)) // the spare half of the hall
	}
	st, o := call(http.MethodPost, "/v1/orders", fmt.Sprintf(`{"event_id": %d, "reservation_id": %q, "payment": %q,
		"customer": {"email": "c%d@example.com", "first_name": "C", "last_name": "D", "phone": "+79990000000"}}`, event, rid, payment, i),
		fmt.Sprintf("o-%d-%d", i, round))
	if st != 201 {
		return 0, 0, nil, fmt.Errorf("saga %d order: %d %v", i, st, o)
	}
	od := o["data"].(map[string]any)
	return int64(od["id"].(float64)), int64(od["amount"].(map[string]any)["amount"].(float64)), od, nil
}

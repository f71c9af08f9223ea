// Command loadgen is the sell-out benchmark's load, in a process of its own
// so that the api's and the worker's CPU per order is theirs alone
// (test/bench/sellout_test.go runs it; docs/performance.md).
//
//	loadgen sellout -url U -key K -event E [-buyers N -concurrency C -limit D]
//	loadgen empty-worker -temporal ADDR -queue Q
//	loadgen empty -temporal ADDR -queue Q [-concurrency C -duration D -shape empty|saga]
//
// sellout runs the buyers until the hall is sold out; empty-worker runs the
// no-op workflows (one that only starts and ends, and one of the order
// saga's shape) on a worker with the service's settings (worker.Options);
// empty starts and awaits one of them at the given concurrency (the saga's
// shape with its confirm update). sellout and empty print their figures as
// one JSON object on stdout.
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/ticketsales/ticketsales/internal/app"
	"github.com/ticketsales/ticketsales/internal/config"
	"github.com/ticketsales/ticketsales/worker"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: loadgen sellout|empty-worker|empty [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "sellout":
		err = sellout(os.Args[2:])
	case "empty-worker":
		err = emptyWorker(os.Args[2:])
	case "empty":
		err = emptyRun(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

// EmptyWorkflow is the baseline: started and completed, nothing else.
func EmptyWorkflow(workflow.Context) error { return nil }

const emptyName = "BenchEmpty"

// SagaShapeWorkflow has the order saga's shape and does nothing: the
// payment window's timer, a confirm update whose handler runs a local
// activity and upserts the status search attribute, then the e-mail's
// activity. Its rate is Temporal's limit for a saga of that shape, the
// service's own work (api, worker, Postgres) left out.
func SagaShapeWorkflow(ctx workflow.Context) error {
	paid := false
	if err := workflow.SetUpdateHandler(ctx, sagaPayUpdate, func(ctx workflow.Context) error {
		lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 10 * time.Second})
		if err := workflow.ExecuteLocalActivity(lctx, noopActivity).Get(ctx, nil); err != nil {
			return err
		}
		paid = true
		return workflow.UpsertTypedSearchAttributes(ctx, contract.OrderStatusAttr.ValueSet("paid"))
	}); err != nil {
		return err
	}
	window := workflow.NewTimer(ctx, 15*time.Minute) // left running at the end, as the order's
	if err := workflow.Await(ctx, func() bool { return paid || window.IsReady() }); err != nil || !paid {
		return err
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	return workflow.ExecuteActivity(actx, noopActivity).Get(ctx, nil)
}

func noopActivity(context.Context) error { return nil }

// freeSeats are the seat ids an availability answer shows free. The load
// generator shares the machine's cores with the service it measures:
// decoding a 10,000-seat answer with encoding/json cost it about 10 ms a
// time, a scan for the two fields a tenth of that. The answer is the
// service's own encoding (catalog.encodeAvailability), each seat's
// seat_id before its status.
func freeSeats(body []byte) []string {
	var free []string
	idKey, statusKey := []byte(`"seat_id":"`), []byte(`"status":"`)
	for {
		i := bytes.Index(body, idKey)
		if i < 0 {
			return free
		}
		body = body[i+len(idKey):]
		end := bytes.IndexByte(body, '"')
		j := bytes.Index(body, statusKey)
		if end < 0 || j < 0 {
			return free
		}
		if bytes.HasPrefix(body[j+len(statusKey):], []byte(`free"`)) {
			free = append(free, string(body[:end]))
		}
		body = body[j+len(statusKey):]
	}
}

// serviceClientOptions dial Temporal as the service's processes do with
// their default settings (gRPC compression included), so the workflows
// measured beside the sell-out pay what an order's calls pay.
func serviceClientOptions(addr string) client.Options {
	cfg := config.Defaults()
	cfg.TemporalAddress = addr
	o := app.TemporalClientOptions(cfg, slog.Default(), nil)
	o.Logger = quiet{}
	return o
}

const (
	sagaShapeName = "BenchSagaShape"
	sagaPayUpdate = "pay"
)

func emptyWorker(args []string) error {
	fs := flag.NewFlagSet("empty-worker", flag.ExitOnError)
	addr := fs.String("temporal", "127.0.0.1:7233", "Temporal address")
	queue := fs.String("queue", "", "task queue")
	_ = fs.Parse(args)
	c, err := client.Dial(serviceClientOptions(*addr))
	if err != nil {
		return fmt.Errorf("temporal: %w", err)
	}
	defer c.Close()
	w := sdkworker.New(c, *queue, worker.Options())
	w.RegisterWorkflowWithOptions(EmptyWorkflow, workflow.RegisterOptions{Name: emptyName})
	w.RegisterWorkflowWithOptions(SagaShapeWorkflow, workflow.RegisterOptions{Name: sagaShapeName})
	w.RegisterActivity(noopActivity)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	fmt.Println("ready")
	<-ctx.Done()
	w.Stop()
	return nil
}

func emptyRun(args []string) error {
	fs := flag.NewFlagSet("empty", flag.ExitOnError)
	addr := fs.String("temporal", "127.0.0.1:7233", "Temporal address")
	queue := fs.String("queue", "", "task queue")
	conc := fs.Int("concurrency", 64, "workflows at a time")
	dur := fs.Duration("duration", 10*time.Second, "how long")
	shape := fs.String("shape", "empty", "empty: a workflow that only starts and ends; saga: the order saga's shape, doing nothing")
	_ = fs.Parse(args)
	c, err := client.Dial(serviceClientOptions(*addr))
	if err != nil {
		return fmt.Errorf("temporal: %w", err)
	}
	defer c.Close()
	ctx := context.Background()
	var done, failed atomic.Int64
	var last atomic.Value
	start := time.Now()
	deadline := start.Add(*dur)
	var wg sync.WaitGroup
	for range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				var run client.WorkflowRun
				var err error
				if *shape == "saga" {
					run, err = sagaShape(ctx, c, *queue)
				} else {
					run, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: *queue}, emptyName)
				}
				if err == nil {
					err = run.Get(ctx, nil)
				}
				if err != nil {
					failed.Add(1)
					continue
				}
				done.Add(1)
				last.Store(run.GetID())
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	id, _ := last.Load().(string)
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"workflows": done.Load(), "failed": failed.Load(),
		"seconds": elapsed.Seconds(), "workflows_per_s": float64(done.Load()) / elapsed.Seconds(), "last_id": id, "concurrency": *conc})
}

// sagaShape starts a saga-shaped workflow and confirms it, waiting for
// the update's answer, as the api's order and confirm requests do.
func sagaShape(ctx context.Context, c client.Client, queue string) (client.WorkflowRun, error) {
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue,
		TypedSearchAttributes: temporal.NewSearchAttributes(contract.OrderStatusAttr.ValueSet("pending_payment"))}, sagaShapeName)
	if err != nil {
		return nil, err
	}
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(),
		UpdateName: sagaPayUpdate, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	return run, err
}

// quiet drops the SDK's log lines: the figures go to stdout.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}

// The sell-out: buyers in groups of 1–4, three in four asking for the best
// seats together, one in four picking seats from availability; each holds,
// orders and confirms, retrying on 409 as a partner would, and comes back
// for more until the hall is sold out.
type stats struct {
	mu                  sync.Mutex
	holdLatency         []time.Duration
	holdTimes           []holdTime // each hold call: when it started and how long it took
	holds, seats        int
	holdCalls, conflict int
	server5xx, failures int
	orders              int
	visits              int
	gaveUp              int
	statuses            map[string]int // every answer of the run, by step and status
	// confirmed is each confirmed order's confirm request start (Unix ns),
	// by order id: the start of the buyer's wait for tickets.
	confirmed map[int64]int64
	// firstConfirmed is when the first confirm was answered: from then
	// on, order sagas run beside the holds.
	firstConfirmed time.Time
	// confirmLatency is each confirm request's answer time.
	confirmLatency []time.Duration
}

func (st *stats) saw(step string, code int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.statuses[fmt.Sprintf("%s %d", step, code)]++
}

// holdTime is one hold call: its start and its answer time.
type holdTime struct {
	at time.Time
	d  time.Duration
}

func (st *stats) hold(at time.Time, d time.Duration, status int, seats int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.holdLatency = append(st.holdLatency, d)
	st.holdTimes = append(st.holdTimes, holdTime{at, d})
	st.holdCalls++
	switch {
	case status == http.StatusCreated:
		st.holds++
		st.seats += seats
	case status == http.StatusConflict:
		st.conflict++
	case status >= 500:
		st.server5xx++
	}
}

func (st *stats) add(n *int) {
	st.mu.Lock()
	*n++
	st.mu.Unlock()
}

func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return float64(sorted[int(float64(len(sorted)-1)*p)].Microseconds()) / 1000
}

func sellout(args []string) error {
	fs := flag.NewFlagSet("sellout", flag.ExitOnError)
	url := fs.String("url", "", "the api's base URL")
	key := fs.String("key", "", "a production API key")
	event := fs.Int64("event", 0, "the event to sell out")
	buyers := fs.Int("buyers", 2000, "distinct buyers (e-mail addresses)")
	conc := fs.Int("concurrency", 64, "buyers at a time")
	limit := fs.Duration("limit", 15*time.Minute, "give up after")
	_ = fs.Parse(args)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conc}, Timeout: time.Minute}
	st := &stats{statuses: map[string]int{}, confirmed: map[int64]int64{}}
	call := func(method, path, body string) (int, []byte, error) {
		req, _ := http.NewRequest(method, *url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+*key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", fmt.Sprintf("so-%d", rand.Int64()))
		}
		step := strings.SplitN(path[1:]+"/", "/", 3)[1]
		if strings.HasSuffix(path, "/confirm") {
			step = "confirm"
		}
		res, err := client.Do(req)
		if err != nil {
			st.saw(method+" "+step, 0)
			return 0, nil, err
		}
		defer res.Body.Close()
		st.saw(method+" "+step, res.StatusCode)
		b, err := io.ReadAll(res.Body)
		if res.StatusCode >= 500 {
			st.add(&st.server5xx)
		}
		return res.StatusCode, b, err
	}
	hold := func(body string, seats int) (string, int, []byte) {
		start := time.Now()
		code, b, err := call(http.MethodPost, "/v1/reservations", body)
		if err != nil {
			code = 0
		}
		st.hold(start, time.Since(start), code, seats)
		var r struct{ Data struct{ ID string } }
		_ = json.Unmarshal(b, &r)
		return r.Data.ID, code, b
	}
	// pick takes n free seats from availability, at random (the way a
	// buyer clicks on a seat map).
	pick := func(rng *rand.Rand, n int) ([]string, bool) {
		code, b, err := call(http.MethodGet, fmt.Sprintf("/v1/events/%d/availability", *event), "")
		if err != nil || code != 200 {
			return nil, false
		}
		free := freeSeats(b)
		rng.Shuffle(len(free), func(i, j int) { free[i], free[j] = free[j], free[i] })
		return free[:min(n, len(free))], true
	}
	// soldOut is set by the first buyer told that nothing is left.
	var soldOut atomic.Bool
	// buyer makes visit i of buyer i % buyers.
	buyer := func(i int) {
		st.add(&st.visits)
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		group := 1 + rng.IntN(4)
		byMap := rng.IntN(4) == 0
		together := true
		for attempt := 0; attempt < 8; attempt++ {
			var body string
			n := group
			if byMap {
				seats, ok := pick(rng, group)
				if !ok {
					st.add(&st.failures)
					return
				}
				if len(seats) == 0 {
					soldOut.Store(true)
					return
				}
				n = len(seats)
				refs := make([]string, len(seats))
				for k, id := range seats {
					refs[k] = fmt.Sprintf(`{"zone_id": "a", "seat_id": %q}`, id)
				}
				body = fmt.Sprintf(`{"event_id": %d, "seats": [%s]}`, *event, strings.Join(refs, ","))
			} else {
				body = fmt.Sprintf(`{"event_id": %d, "best_available": {"quantity": %d, "together": %v}}`, *event, group, together)
			}
			id, code, b := hold(body, n)
			if code == http.StatusConflict {
				var p struct {
					Code      string
					Available *int
				}
				_ = json.Unmarshal(b, &p)
				if p.Code == "sold_out" && p.Available != nil {
					switch {
					case *p.Available == 0:
						soldOut.Store(true)
						return
					case *p.Available < group:
						group = *p.Available // take what is left
					default:
						together = false // no group side by side left: apart
					}
				}
				continue
			}
			if code != http.StatusCreated {
				st.add(&st.failures)
				return
			}
			code, b, err := call(http.MethodPost, "/v1/orders", fmt.Sprintf(`{"event_id": %d, "reservation_id": %q, "payment": "external",
				"customer": {"email": "buyer%d@example.com", "first_name": "B", "last_name": "Uyer", "phone": "+7 999 123-45-67"}}`, *event, id, i%*buyers))
			var o struct {
				Data struct {
					ID     int64
					Amount struct{ Amount int64 }
				}
			}
			_ = json.Unmarshal(b, &o)
			confirmAt := time.Now()
			if err == nil && code == http.StatusCreated {
				code, _, err = call(http.MethodPost, fmt.Sprintf("/v1/orders/%d/confirm", o.Data.ID),
					fmt.Sprintf(`{"external_payment_id": "so-%d", "paid_amount": %d}`, i, o.Data.Amount.Amount))
			}
			st.mu.Lock()
			if err == nil && code == http.StatusOK {
				if st.firstConfirmed.IsZero() {
					st.firstConfirmed = time.Now()
				}
				st.orders++
				st.confirmed[o.Data.ID] = confirmAt.UnixNano()
				st.confirmLatency = append(st.confirmLatency, time.Since(confirmAt))
			} else {
				st.failures++
			}
			st.mu.Unlock()
			return
		}
		st.add(&st.gaveUp)
	}

	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !soldOut.Load() && time.Since(start) < *limit {
				buyer(int(next.Add(1)) - 1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(st.holdLatency)
	slices.Sort(st.confirmLatency)
	// Holds started once sagas run (after the first confirm's answer):
	// the first burst, on a cold api, is apart.
	var withSagas []time.Duration
	for _, h := range st.holdTimes {
		if !st.firstConfirmed.IsZero() && h.at.After(st.firstConfirmed) {
			withSagas = append(withSagas, h.d)
		}
	}
	slices.Sort(withSagas)
	// The slowest holds, by when they started: whether the tail is the
	// first seconds' cold caches and pools or spread over the sale.
	slices.SortFunc(st.holdTimes, func(a, b holdTime) int { return cmp.Compare(b.d, a.d) })
	var slowest []string
	for _, h := range st.holdTimes[:min(len(st.holdTimes), 10)] {
		slowest = append(slowest, fmt.Sprintf("%.0f ms at %.1f s", float64(h.d.Microseconds())/1000, h.at.Sub(start).Seconds()))
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"sold_out": soldOut.Load(), "started_ns": start.UnixNano(), "sell_out_s": elapsed.Seconds(),
		"buyers": *buyers, "visits": st.visits, "concurrency": *conc,
		"holds": st.holds, "seats_held": st.seats, "hold_calls": st.holdCalls,
		"hold_p50_ms":            percentile(st.holdLatency, 0.50),
		"hold_p99_ms":            percentile(st.holdLatency, 0.99),
		"hold_slowest":           slowest,
		"hold_with_sagas":        len(withSagas),
		"hold_with_sagas_p50_ms": percentile(withSagas, 0.50),
		"hold_with_sagas_p99_ms": percentile(withSagas, 0.99),
		"conflict_share":         float64(st.conflict) / float64(max(st.holdCalls, 1)),
		"confirm_p50_ms":         percentile(st.confirmLatency, 0.50),
		"confirm_p99_ms":         percentile(st.confirmLatency, 0.99),
		"orders_confirmed":       st.orders, "failures": st.failures, "server_5xx": st.server5xx, "gave_up": st.gaveUp,
		"answers": st.statuses, "confirmed_at_ns": st.confirmed,
	})
}

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// The sell-out: a 10,000-seat hall, 2,000 buyers in groups of 1–4, three in
// four asking for the best seats together, one in four picking seats from
// availability; each holds, orders and confirms, retrying on 409 as a
// partner would, and comes back for more until the hall is sold out (2,000
// buyers of 2.5 seats on average buy half of it in one visit each). Beside
// it, pgbench runs the service's own hold statement at the same
// concurrency on the same Postgres: the inventory's physical limit here.
const (
	selloutBuyers      = 2000
	selloutConcurrency = 64
	// selloutLimit ends a sell-out that does not sell out (a failed run).
	selloutLimit = 15 * time.Minute
	// pgbenchClients is as many connections as the service's own pool
	// holds (store.DefaultMaxConns): the same concurrency at the database,
	// and within max_connections beside the running stack.
	pgbenchClients = store.DefaultMaxConns
)

type selloutStats struct {
	mu                  sync.Mutex
	holdLatency         []time.Duration
	holds, seats        int
	holdCalls, conflict int
	server5xx, failures int
	orders              int
	visits              int
	gaveUp              int
	statuses            map[string]int // every answer of the run, by step and status
}

func (st *selloutStats) saw(step string, code int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.statuses == nil {
		st.statuses = map[string]int{}
	}
	st.statuses[fmt.Sprintf("%s %d", step, code)]++
}

func (st *selloutStats) hold(d time.Duration, status int, seats int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.holdLatency = append(st.holdLatency, d)
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

func benchSellout(t *testing.T, s *testenv.Stack, key string, event int64) map[string]any {
	url := s.ProductionLikeAPI(t)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: selloutConcurrency}, Timeout: time.Minute}
	st := &selloutStats{}
	call := func(method, path, body string) (int, []byte, error) {
		req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", fmt.Sprintf("so-%d", rand.Int64()))
		}
		res, err := client.Do(req)
		if err != nil {
			st.saw(method+" "+strings.SplitN(path[1:], "/", 3)[1], 0)
			return 0, nil, err
		}
		defer res.Body.Close()
		step := strings.SplitN(path[1:]+"/", "/", 3)[1]
		if strings.HasSuffix(path, "/confirm") {
			step = "confirm"
		}
		st.saw(method+" "+step, res.StatusCode)
		b, err := io.ReadAll(res.Body)
		if res.StatusCode >= 500 {
			st.mu.Lock()
			st.server5xx++
			st.mu.Unlock()
		}
		return res.StatusCode, b, err
	}
	hold := func(body string, seats int) (string, int, []byte) {
		start := time.Now()
		code, b, err := call(http.MethodPost, "/v1/reservations", body)
		if err != nil {
			code = 0
		}
		st.hold(time.Since(start), code, seats)
		var r struct{ Data struct{ ID string } }
		_ = json.Unmarshal(b, &r)
		return r.Data.ID, code, b
	}
	// pick takes n free seats from availability, at random (the way a buyer
	// clicks on a seat map).
	pick := func(rng *rand.Rand, n int) ([]string, bool) {
		code, b, err := call(http.MethodGet, fmt.Sprintf("/v1/events/%d/availability", event), "")
		if err != nil || code != 200 {
			return nil, false
		}
		var a struct {
			Data struct {
				Seats []struct {
					SeatID string `json:"seat_id"`
					Status string `json:"status"`
				} `json:"seats"`
			}
		}
		_ = json.Unmarshal(b, &a)
		var free []string
		for _, s := range a.Data.Seats {
			if s.Status == "free" {
				free = append(free, s.SeatID)
			}
		}
		rng.Shuffle(len(free), func(i, j int) { free[i], free[j] = free[j], free[i] })
		return free[:min(n, len(free))], true
	}
	// soldOut is set by the first buyer told that nothing is left.
	var soldOut atomic.Bool
	// buyer makes visit i of buyer i % selloutBuyers.
	buyer := func(i int) {
		st.mu.Lock()
		st.visits++
		st.mu.Unlock()
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
					st.mu.Lock()
					st.failures++
					st.mu.Unlock()
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
				body = fmt.Sprintf(`{"event_id": %d, "seats": [%s]}`, event, strings.Join(refs, ","))
			} else {
				body = fmt.Sprintf(`{"event_id": %d, "best_available": {"quantity": %d, "together": %v}}`, event, group, together)
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
				st.mu.Lock()
				st.failures++
				st.mu.Unlock()
				return
			}
			code, b, err := call(http.MethodPost, "/v1/orders", fmt.Sprintf(`{"event_id": %d, "reservation_id": %q, "payment": "external",
				"customer": {"email": "buyer%d@example.com", "first_name": "B", "last_name": "Uyer", "phone": "+7 999 123-45-67"}}`, event, id, i%selloutBuyers))
			var o struct {
				Data struct {
					ID     int64
					Amount struct{ Amount int64 }
				}
			}
			_ = json.Unmarshal(b, &o)
			if err == nil && code == http.StatusCreated {
				code, _, err = call(http.MethodPost, fmt.Sprintf("/v1/orders/%d/confirm", o.Data.ID),
					fmt.Sprintf(`{"external_payment_id": "so-%d", "paid_amount": %d}`, i, o.Data.Amount.Amount))
			}
			st.mu.Lock()
			if err == nil && code == http.StatusOK {
				st.orders++
			} else {
				st.failures++
			}
			st.mu.Unlock()
			return
		}
		st.mu.Lock()
		st.gaveUp++
		st.mu.Unlock()
	}

	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range selloutConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !soldOut.Load() && time.Since(start) < selloutLimit {
				buyer(int(next.Add(1)) - 1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if !soldOut.Load() {
		t.Errorf("the hall did not sell out in %v", selloutLimit)
	}

	// Every order's saga ends (production orders: paid, tickets e-mailed).
	ctx := context.Background()
	var running int
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		res, err := s.Temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
			// This run's only: a shared dev server may hold other runs' sagas.
			Query: fmt.Sprintf("WorkflowType = 'Order' AND ExecutionStatus = 'Running' AND EventId = %d AND StartTime >= '%s'",
				event, start.UTC().Format(time.RFC3339))})
		if err == nil {
			running = int(res.Count)
		}
		if running == 0 || time.Now().After(deadline) {
			break
		}
	}
	sagasDone := time.Since(start)

	var sold, free, oversold, outlived int
	_ = s.DB.NewRaw("SELECT count(*) FILTER (WHERE state = 'sold'), count(*) FILTER (WHERE state = 'free') FROM event_seats WHERE event_id = ?", event).Scan(ctx, &sold, &free)
	_ = s.DB.NewRaw(`SELECT count(*) FROM (SELECT oi.seat_id FROM order_items oi JOIN orders o ON o.id = oi.order_id
		WHERE o.event_id = ? AND o.status = 'paid' AND oi.seat_id IS NOT NULL GROUP BY oi.seat_id HAVING count(*) > 1) d`, event).Scan(ctx, &oversold)
	_ = s.DB.NewRaw("SELECT count(*) FROM reservations WHERE event_id = ? AND status = 'reserved' AND expires_at < now()", event).Scan(ctx, &outlived)

	if free != 0 {
		t.Errorf("sold out, yet %d seats are free at the end", free)
	}
	slices.Sort(st.holdLatency)
	out := map[string]any{
		"buyers": selloutBuyers, "visits": st.visits, "concurrency": selloutConcurrency, "seats": 10000,
		"sell_out_s": elapsed.Seconds(), "sagas_done_s": sagasDone.Seconds(),
		"holds": st.holds, "seats_held": st.seats, "hold_calls": st.holdCalls,
		"holds_per_s":      float64(st.holds) / sagasDone.Seconds(),
		"seats_per_s":      float64(st.seats) / sagasDone.Seconds(),
		"hold_p50_ms":      percentile(st.holdLatency, 0.50),
		"hold_p99_ms":      percentile(st.holdLatency, 0.99),
		"conflict_share":   float64(st.conflict) / float64(max(st.holdCalls, 1)),
		"orders_confirmed": st.orders, "failures": st.failures, "server_5xx": st.server5xx, "gave_up": st.gaveUp,
		"seats_sold": sold, "seats_free": free, "oversold": oversold, "holds_outliving_deadline": outlived,
		"order_workflows_running": running, "answers": st.statuses,
	}
	return out
}

// pgbenchHold runs the service's own hold statement (store.HoldSQL) under
// pgbench at conc clients for ten seconds, on a fresh 10,000-seat event,
// each transaction one single-seat hold of a random seat (won or refused,
// as in the rush); it returns the transactions per second.
func pgbenchHold(t *testing.T, s *testenv.Stack, company, keyID, event int64, conc int) float64 {
	bin, err := exec.LookPath("pgbench")
	if err != nil {
		t.Logf("pgbench not found: no comparison (Debian: postgresql-client)")
		return 0
	}
	sql := store.HoldSQL(store.NewHold{
		Reservation: store.Reservation{ID: "rsv_PGBENCH", CompanyID: company, APIKeyID: keyID, IsTest: false, EventID: event,
			ExpiresAt: time.Now().Add(time.Hour), Currency: "RUB", CreatedAt: time.Now()},
		SeatIDs: []string{"a-ROW-SEAT"}, Prices: map[string]int64{"a-ROW-SEAT": 100000},
	})
	sql = strings.ReplaceAll(sql, "rsv_PGBENCH", "rsv_pg-:client_id-:r")
	sql = strings.ReplaceAll(sql, "a-ROW-SEAT", "a-:row-:seat")
	// A lock refusal (NOWAIT) is an error, which ends a pgbench client; for
	// one seat SKIP LOCKED decides the same without one.
	sql = strings.Replace(sql, "FOR UPDATE NOWAIT", "FOR UPDATE SKIP LOCKED", 1)
	sql = regexp.MustCompile(`\s+`).ReplaceAllString(sql, " ")
	script := "\\set row random(1, 100)\n\\set seat random(1, 100)\n\\set r random(1, 1000000000)\n" + sql + ";\n"
	dir := t.TempDir()
	path := filepath.Join(dir, "hold.sql")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, "-n", "-M", "simple", "-c", fmt.Sprint(conc), "-j", "2", "-T", "10", "-f", path, s.DBURL)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Logf("pgbench: %v\n%s", err, out.String())
		return 0
	}
	m := regexp.MustCompile(`tps = ([0-9.]+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Logf("pgbench printed no tps:\n%s", out.String())
		return 0
	}
	var tps float64
	fmt.Sscan(m[1], &tps)
	return tps
}

// writeSellout writes the sell-out's figures to results/sellout.{json,md}.
func writeSellout(t *testing.T, when time.Time, cores int, r map[string]any) {
	b, _ := json.MarshalIndent(map[string]any{"when": when, "cores": cores, "sellout": r}, "", "  ")
	if err := os.WriteFile("results/sellout.json", append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# Sell-out benchmark\n\n%s, %d cores, loopback; the api, a worker, Postgres and the Temporal dev server on the same machine.\n"+
		"Regenerate with `BENCH_ONLY=sellout make bench` (or `make bench`).\n\n", when.Format(time.RFC3339), cores)
	fmt.Fprintf(&md, "%v buyers (groups of 1–4; 3 in 4 best-available together, 1 in 4 from availability), %v at a time, "+
		"a %v-seat hall; hold → order → confirm, retrying on 409, coming back until the hall is sold out (%v visits).\n\n",
		r["buyers"], r["concurrency"], r["seats"], r["visits"])
	md.WriteString("| | value |\n|---|---|\n")
	row := func(k string, v any) { fmt.Fprintf(&md, "| %s | %v |\n", k, v) }
	row("sold out: the last buyer done (s)", fmt.Sprintf("%.1f", r["sell_out_s"]))
	row("every order's saga done (s; 120 s wait at most)", fmt.Sprintf("%.1f", r["sagas_done_s"]))
	row("holds won / hold calls", fmt.Sprintf("%v / %v", r["holds"], r["hold_calls"]))
	row("holds/s over the whole run, sagas included", fmt.Sprintf("%.1f", r["holds_per_s"]))
	row("seats/s over the whole run", fmt.Sprintf("%.1f", r["seats_per_s"]))
	row("hold decision p50 / p99 ms", fmt.Sprintf("%.1f / %.1f", r["hold_p50_ms"], r["hold_p99_ms"]))
	row("409 share of hold calls", fmt.Sprintf("%.1f%%", 100*r["conflict_share"].(float64)))
	row("pgbench, the hold statement, tps", fmt.Sprintf("%.0f (%v clients)", r["pgbench_hold_tps"], r["pgbench_clients"]))
	row("holds/s vs pgbench", fmt.Sprintf("%.1f%%", 100*r["holds_vs_pgbench"].(float64)))
	row("orders confirmed", r["orders_confirmed"])
	row("seats sold / free", fmt.Sprintf("%v / %v", r["seats_sold"], r["seats_free"]))
	row("oversold seats", r["oversold"])
	row("5xx answers", r["server_5xx"])
	row("holds outliving expires_at", r["holds_outliving_deadline"])
	row("order sagas still running at the end", r["order_workflows_running"])
	row("visits failed / given up after 8 holds refused", fmt.Sprintf("%v / %v", r["failures"], r["gave_up"]))
	fmt.Fprintf(&md, "\nAnswers by step: %v\n", r["answers"])
	md.WriteString(rushBeforeAfter(t, nil, r))
	if err := os.WriteFile("results/sellout.md", []byte(md.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + md.String())
}

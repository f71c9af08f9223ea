package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// The sell-out: a 10,000-seat hall, 2,000 buyers in groups of 1–4, three in
// four asking for the best seats together, one in four picking seats from
// availability; each holds, orders and confirms, retrying on 409 as a
// partner would, and comes back for more until the hall is sold out (2,000
// buyers of 2.5 seats on average buy half of it in one visit each). The
// buyers are test/bench/cmd/loadgen, a process of its own. Beside
// it, pgbench runs the service's own hold statement at the same
// concurrency on the same Postgres: the inventory's physical limit here.
const (
	selloutConcurrency = 64
	// selloutLimit ends a sell-out that does not sell out (a failed run).
	selloutLimit = 15 * time.Minute
	// pgbenchClients is as many connections as the service's own pool
	// holds (store.DefaultMaxConns): the same concurrency at the database,
	// and within max_connections beside the running stack.
	pgbenchClients = store.DefaultMaxConns
)

// selloutRows is the sell-out hall's rows of 100 seats (SELLOUT_ROWS, for
// short runs while developing; 100 by default: 10,000 seats), its buyers
// 20 a row.
func selloutRows() int {
	if n, err := strconv.Atoi(os.Getenv("SELLOUT_ROWS")); err == nil && n > 0 {
		return n
	}
	return 100
}

// selloutEmptyDuration is how long the empty workflows run beside the
// sell-out (SELLOUT_EMPTY_DURATION, 20 s by default).
func selloutEmptyDuration() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("SELLOUT_EMPTY_DURATION")); err == nil && d > 0 {
		return d
	}
	return 20 * time.Second
}

// benchSellout sells the hall out through the service's own binaries: the
// api and the worker (cmd/api, cmd/worker) run as processes of their own,
// and so does the load (test/bench/cmd/loadgen), so that each one's CPU
// is read from /proc apart. Then, in the same run, the empty workflows at
// the same concurrency on a worker with the service's settings (the limit
// of one workflow per order), and workflows of the order saga's shape that
// do nothing (Temporal's limit for that saga).
func benchSellout(t *testing.T, s *testenv.Stack, key string, event int64, seats int) map[string]any {
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", dir+"/", "github.com/ticketsales/ticketsales/cmd/api",
		"github.com/ticketsales/ticketsales/cmd/worker", "github.com/ticketsales/ticketsales/test/bench/cmd/loadgen")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	apiAddr, apiMetrics, workerMetrics := freePort(t), freePort(t), freePort(t)
	queue := fmt.Sprintf("sellout-%d", time.Now().UnixNano())
	env := append(withoutEnv(os.Environ(), "DATABASE_URL", "TEMPORAL_ADDRESS", "REDIS_URL", "LOG_LEVEL", "TASK_QUEUE"),
		"DATABASE_URL="+s.DBURL, "TEMPORAL_ADDRESS="+testenv.TemporalAddress(t), "TASK_QUEUE="+queue,
		"HTTP_ADDR="+apiAddr, "PUBLIC_BASE_URL=http://"+apiAddr, "METRICS_ADDR="+apiMetrics, "WORKER_METRICS_ADDR="+workerMetrics,
		// As the stack's: a development deployment (production keys pay
		// externally), the rate limit out of the way of the load.
		"APP_ENV=development", "RATE_LIMIT_RPS=1000000000", "RATE_LIMIT_BURST=1000000000",
		"ORDER_TOKEN_SECRET=test-token-secret", "GATEWAY_SECRET="+string(testenv.GatewaySecret), "GATEWAY_API_KEY=test-provider-key",
		"MAIL_OUTBOX="+filepath.Join(dir, "outbox"), "LOG_LEVEL=warn")
	profiles := os.Getenv("SELLOUT_PROFILE")
	if profiles != "" {
		env = append(env, "DEBUG_PPROF=1")
	}
	workerLog := filepath.Join(dir, "worker.log")
	wk := startProc(t, filepath.Join(dir, "worker"), env, workerLog)
	ap := startProc(t, filepath.Join(dir, "api"), env, filepath.Join(dir, "api.log"))
	url := "http://" + apiAddr
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		res, err := http.Get(url + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the api did not get ready: %v", err)
		}
	}
	apiCPU0, workerCPU0 := procCPU(t, ap.Process.Pid), procCPU(t, wk.Process.Pid)
	temporalPID := temporalServerPID(testenv.TemporalAddress(t))
	temporalCPU0 := procCPU(t, temporalPID)

	busy0, total0 := machineCPU(t)
	postmaster := postmasterPID(t, s.DB)
	byKindMeasured := pgStatementsReset(t, s.DB)
	pg0 := pgSnap(t, s.DB, postmaster)
	if profiles != "" {
		// CPU profiles of both processes from the sell-out's first
		// seconds (SELLOUT_PROFILE: the folder they are written to).
		for name, addr := range map[string]string{"api": apiMetrics, "worker": workerMetrics} {
			go saveProfile(t, "http://"+addr+"/debug/pprof/profile?seconds=20", filepath.Join(profiles, name+".pprof"))
		}
	}
	buyers := seats / 5 // 2,000 for the 10,000-seat hall
	var lg map[string]any
	lgCPU := runLoadgen(t, filepath.Join(dir, "loadgen"), &lg, "sellout", "-url", url, "-key", key, "-event", fmt.Sprint(event),
		"-buyers", fmt.Sprint(buyers), "-concurrency", fmt.Sprint(selloutConcurrency), "-limit", selloutLimit.String())
	if lg["sold_out"] != true {
		t.Errorf("the hall did not sell out in %v", selloutLimit)
	}
	start := time.Unix(0, int64(num(lg, "started_ns")))

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
	apiCPU, workerCPU := procCPU(t, ap.Process.Pid)-apiCPU0, procCPU(t, wk.Process.Pid)-workerCPU0
	temporalCPU := procCPU(t, temporalPID) - temporalCPU0
	busy1, total1 := machineCPU(t)
	pg1 := pgSnap(t, s.DB, postmaster)
	taskFailures := scrapeCounter(t, "http://"+workerMetrics+"/metrics", "temporal_workflow_task_execution_failed")
	apiPeakMB, workerPeakMB := procPeakMB(t, ap.Process.Pid), procPeakMB(t, wk.Process.Pid)
	stopProc(ap)
	stopProc(wk)
	// The failures Temporal reports back, seen by either process, and the
	// worker's warnings and errors all told.
	workerLogged, _ := os.ReadFile(workerLog)
	apiLogged, _ := os.ReadFile(filepath.Join(dir, "api.log"))
	premature := strings.Count(string(workerLogged)+string(apiLogged), "premature end of stream")
	workerWarnings := strings.Count(string(workerLogged), "level=WARN") + strings.Count(string(workerLogged), "level=ERROR")

	var sold, free, oversold, outlived int
	_ = s.DB.NewRaw("SELECT count(*) FILTER (WHERE state = 'sold'), count(*) FILTER (WHERE state = 'free') FROM event_seats WHERE event_id = ?", event).Scan(ctx, &sold, &free)
	_ = s.DB.NewRaw(`SELECT count(*) FROM (SELECT oi.seat_id FROM order_items oi JOIN orders o ON o.id = oi.order_id
		WHERE o.event_id = ? AND o.status = 'paid' AND oi.seat_id IS NOT NULL GROUP BY oi.seat_id HAVING count(*) > 1) d`, event).Scan(ctx, &oversold)
	_ = s.DB.NewRaw("SELECT count(*) FROM reservations WHERE event_id = ? AND status = 'reserved' AND expires_at < now()", event).Scan(ctx, &outlived)
	// What buyers rely on fails the run; the timings are only recorded.
	if free != 0 {
		t.Errorf("sold out, yet %d seats are free at the end", free)
	}
	if oversold != 0 {
		t.Errorf("%d seats sold twice", oversold)
	}
	if n := num(lg, "server_5xx"); n != 0 {
		t.Errorf("%v answers were 5xx", n)
	}
	if running != 0 {
		t.Errorf("%d order sagas still running 2 minutes after the last buyer", running)
	}
	confirmP50, confirmP99, issued := confirmToTickets(t, s, lg["confirmed_at_ns"])
	eventsPerOrder, sampled := historyPerOrder(t, s, event, start)
	holdsEvents, holdsRuns := holdsHistory(t, s, event, start)

	orders := num(lg, "orders_confirmed")
	perOrder := func(cpu time.Duration) float64 {
		return float64(cpu.Microseconds()) / 1000 / max(orders, 1)
	}
	ordersPerS := orders / sagasDone.Seconds()
	out := map[string]any{
		"buyers": buyers, "visits": lg["visits"], "concurrency": selloutConcurrency, "seats": seats,
		"sell_out_s": lg["sell_out_s"], "sagas_done_s": sagasDone.Seconds(),
		"holds": lg["holds"], "seats_held": lg["seats_held"], "hold_calls": lg["hold_calls"],
		"holds_per_s":     num(lg, "holds") / sagasDone.Seconds(),
		"seats_per_s":     num(lg, "seats_held") / sagasDone.Seconds(),
		"orders_per_s":    ordersPerS,
		"hold_p50_ms":     lg["hold_p50_ms"],
		"hold_p99_ms":     lg["hold_p99_ms"],
		"hold_slowest":    lg["hold_slowest"],
		"hold_with_sagas": lg["hold_with_sagas"], "hold_with_sagas_p50_ms": lg["hold_with_sagas_p50_ms"], "hold_with_sagas_p99_ms": lg["hold_with_sagas_p99_ms"],
		"conflict_share":   lg["conflict_share"],
		"confirm_p50_ms":   lg["confirm_p50_ms"],
		"confirm_p99_ms":   lg["confirm_p99_ms"],
		"orders_confirmed": lg["orders_confirmed"], "failures": lg["failures"], "server_5xx": lg["server_5xx"], "gave_up": lg["gave_up"],
		"seats_sold": sold, "seats_free": free, "oversold": oversold, "holds_outliving_deadline": outlived,
		"order_workflows_running": running, "answers": lg["answers"],
		"api_cpu_s": apiCPU.Seconds(), "worker_cpu_s": workerCPU.Seconds(), "loadgen_cpu_s": lgCPU.Seconds(),
		"api_cpu_ms_per_order": perOrder(apiCPU), "worker_cpu_ms_per_order": perOrder(workerCPU),
		"api_worker_cpu_ms_per_order": perOrder(apiCPU + workerCPU), "loadgen_cpu_ms_per_order": perOrder(lgCPU),
		"temporal_cpu_ms_per_order": perOrder(temporalCPU),
		"api_peak_rss_mb":           apiPeakMB, "worker_peak_rss_mb": workerPeakMB,
		"machine_busy_share": float64(busy1-busy0) / float64(max(total1-total0, 1)),
		// The machine's busy time less the four processes measured: Postgres
		// mostly (its backends come and go with the pools), and this test.
		"rest_cpu_ms_per_order":     perOrder(time.Duration(busy1-busy0)*10*time.Millisecond - apiCPU - workerCPU - lgCPU - temporalCPU),
		"confirm_to_tickets_p50_ms": confirmP50, "confirm_to_tickets_p99_ms": confirmP99, "orders_with_tickets": issued,
		"history_events_per_order": eventsPerOrder, "history_sampled_orders": sampled,
		"holds_workflow_events": holdsEvents, "holds_workflow_runs": holdsRuns, "holds_workflow_events_per_order": float64(holdsEvents) / max(orders, 1),
		"workflow_task_failures": taskFailures, "premature_end_of_stream_logged": premature, "worker_warnings_logged": workerWarnings,
		"worker_warnings_by_message": logMessages(string(workerLogged), "WARN", "ERROR"),
	}

	maps.Copy(out, pgCost(t, s.DB, pg0, pg1, byKindMeasured, orders))
	// The rest of the machine less Postgres: the bench's own test process
	// and anything else running.
	out["other_cpu_ms_per_order"] = num(out, "rest_cpu_ms_per_order") - num(out, "postgres_cpu_ms_per_order")

	// The limit of one workflow per order, at the same concurrency, now
	// that the sagas are done and the api and the worker stopped.
	ew := startProc(t, filepath.Join(dir, "loadgen"), env, filepath.Join(dir, "empty-worker.log"),
		"empty-worker", "-temporal", testenv.TemporalAddress(t), "-queue", queue+"-empty")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(dir, "empty-worker.log"))
		if strings.Contains(string(b), "ready") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the empty workflows' worker did not start: %s", b)
		}
	}
	// Each shape on the same worker: the empty workflow, then one of the
	// order saga's shape that does nothing.
	shape := func(name string) (rate float64) {
		ewCPU0, temporalCPU0 := procCPU(t, ew.Process.Pid), procCPU(t, temporalPID)
		var em map[string]any
		emCPU := runLoadgen(t, filepath.Join(dir, "loadgen"), &em, "empty", "-temporal", testenv.TemporalAddress(t), "-queue", queue+"-empty",
			"-concurrency", fmt.Sprint(selloutConcurrency), "-duration", selloutEmptyDuration().String(), "-shape", name)
		ewCPU, temporalCPU := procCPU(t, ew.Process.Pid)-ewCPU0, procCPU(t, temporalPID)-temporalCPU0
		if num(em, "failed") > 0 {
			t.Errorf("%v of the %s workflows failed", em["failed"], name)
		}
		n := max(num(em, "workflows"), 1)
		out[name+"_workflows"], out[name+"_workflows_per_s"], out[name+"_failed"] = em["workflows"], em["workflows_per_s"], em["failed"]
		out[name+"_worker_cpu_ms_per_workflow"] = float64(ewCPU.Microseconds()) / 1000 / n
		out[name+"_starter_cpu_ms_per_workflow"] = float64(emCPU.Microseconds()) / 1000 / n
		out["temporal_cpu_ms_per_"+name+"_workflow"] = float64(temporalCPU.Microseconds()) / 1000 / n
		if id, _ := em["last_id"].(string); id != "" {
			out["events_per_"+name+"_workflow"] = historyLen(t, s.Temporal, id)
		}
		return num(em, "workflows_per_s")
	}
	out["orders_vs_empty"] = ratio(ordersPerS, shape("empty"))
	out["orders_vs_saga"] = ratio(ordersPerS, shape("saga"))
	stopProc(ew)
	return out
}

// startProc starts bin with env and args, its output to the file logPath;
// the test's end kills it if stopProc did not stop it before.
func startProc(t *testing.T, bin string, env []string, logPath string, args ...string) *exec.Cmd {
	t.Helper()
	logs, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logs.Close(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			t.Logf("last lines of %s:\n%s", filepath.Base(logPath), strings.Join(lines[max(0, len(lines)-30):], "\n"))
		}
	})
	return cmd
}

// stopProc asks a process to stop (SIGTERM) and waits up to 30 s for it.
func stopProc(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cmd.Process.Signal(syscall.Signal(0)) != nil {
			return
		}
	}
}

// runLoadgen runs the load generator to its end, decodes the JSON it
// prints into out, and returns the CPU time it took (user + system).
func runLoadgen(t *testing.T, bin string, out *map[string]any, args ...string) time.Duration {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("loadgen %s: %v\n%s", args[0], err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("loadgen %s printed: %v\n%s", args[0], err, stdout.String())
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// temporalServerPID is the process of the Temporal dev server listening
// at addr when it runs on this machine (scripts/temporal.sh starts it), or
// 0.
func temporalServerPID(addr string) int {
	_, port, _ := net.SplitHostPort(addr)
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		args := strings.Split(string(b), "\x00")
		if slices.Contains(args, "start-dev") && slices.Contains(args, "--port") &&
			slices.Index(args, "--port")+1 < len(args) && args[slices.Index(args, "--port")+1] == port {
			return pid
		}
	}
	return 0
}

// procCPU is the CPU time process pid has taken (utime + stime of
// /proc/<pid>/stat, in clock ticks of 1/100 s as Linux reports them); 0
// for pid 0 (a process not found).
func procCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("CPU of process %d: %v", pid, err)
	}
	// The command's name, in parentheses, may hold spaces: count after it.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// procPeakMB is the most memory process pid has had resident (VmHWM of
// /proc/<pid>/status), in MB.
func procPeakMB(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("memory of process %d: %v", pid, err)
	}
	for line := range strings.Lines(string(b)) {
		if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 64)
			return n / 1024
		}
	}
	return 0
}

// machineCPU is the machine's busy and total CPU time so far, in clock
// ticks, from the first line of /proc/stat: user, nice, system, idle,
// iowait, irq, softirq, steal (guest time is inside user and nice already).
// Busy leaves out idle, iowait and steal (time the host gave elsewhere).
func machineCPU(t *testing.T) (busy, total int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatalf("machine CPU: %v", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	for i, f := range strings.Fields(line)[1:] {
		if i > 7 {
			break
		}
		n, _ := strconv.ParseInt(f, 10, 64)
		total += n
		if i != 3 && i != 4 && i != 7 {
			busy += n
		}
	}
	return busy, total
}

// saveProfile writes what url answers (a pprof profile) to path.
func saveProfile(t *testing.T, url, path string) {
	res, err := http.Get(url)
	if err != nil {
		t.Logf("profile %s: %v", url, err)
		return
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Logf("profile %s: %v", path, err)
	}
}

// scrapeCounter sums the samples of a Prometheus counter at url (every
// label set); -1 if it cannot be read.
func scrapeCounter(t *testing.T, url, name string) float64 {
	res, err := http.Get(url)
	if err != nil {
		t.Logf("metrics %s: %v", url, err)
		return -1
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var sum float64
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") && !strings.HasPrefix(line, name+"_total") {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v); err == nil {
			sum += v
		}
	}
	return sum
}

// confirmToTickets is the buyer's wait from the confirm request to the
// order's tickets issued (its last ticket row written), p50 and p99 in ms,
// over the orders the load generator confirmed; and how many had tickets.
func confirmToTickets(t *testing.T, s *testenv.Stack, confirmed any) (p50, p99 float64, issued int) {
	at, _ := confirmed.(map[string]any)
	ids := make([]int64, 0, len(at))
	for k := range at {
		id, _ := strconv.ParseInt(k, 10, 64)
		ids = append(ids, id)
	}
	var rows []struct {
		OrderID int64     `bun:"order_id"`
		At      time.Time `bun:"at"`
	}
	if err := s.DB.NewRaw("SELECT order_id, max(created_at) AS at FROM tickets WHERE order_id IN (?) GROUP BY order_id",
		bun.In(ids)).Scan(context.Background(), &rows); err != nil && len(ids) > 0 {
		t.Fatalf("tickets issued: %v", err)
	}
	var waits []time.Duration
	for _, r := range rows {
		waits = append(waits, r.At.Sub(time.Unix(0, int64(num(at, strconv.FormatInt(r.OrderID, 10))))))
	}
	slices.Sort(waits)
	return percentile(waits, .50), percentile(waits, .99), len(waits)
}

// historyPerOrder is the mean history length of up to 50 of the event's
// order workflows started since start (DescribeWorkflowExecution), and
// how many it sampled.
func historyPerOrder(t *testing.T, s *testenv.Stack, event int64, start time.Time) (float64, int) {
	total, n := historyOf(t, s, fmt.Sprintf("WorkflowType = 'Order' AND EventId = %d AND StartTime >= '%s'",
		event, start.UTC().Format(time.RFC3339)), 50)
	return float64(total) / float64(max(n, 1)), n
}

// holdsHistory is the history length of the event's other workflows
// since start (its holds', every run of them), and how many runs: their
// share of an order's Temporal work.
func holdsHistory(t *testing.T, s *testenv.Stack, event int64, start time.Time) (events int64, runs int) {
	return historyOf(t, s, fmt.Sprintf("WorkflowType != 'Order' AND EventId = %d AND StartTime >= '%s'",
		event, start.UTC().Format(time.RFC3339)), 500)
}

// historyOf sums the history lengths of the workflow runs the visibility
// query finds, up to limit runs (a page or more), and counts the runs.
func historyOf(t *testing.T, s *testenv.Stack, query string, limit int) (events int64, runs int) {
	ctx := context.Background()
	req := &workflowservice.ListWorkflowExecutionsRequest{PageSize: int32(min(limit, 100)), Query: query}
	for {
		list, err := s.Temporal.ListWorkflow(ctx, req)
		if err != nil {
			t.Fatalf("workflows (%s): %v", query, err)
		}
		for _, e := range list.Executions {
			d, err := s.Temporal.DescribeWorkflowExecution(ctx, e.Execution.WorkflowId, e.Execution.RunId)
			if err != nil {
				t.Fatalf("describe %s: %v", e.Execution.WorkflowId, err)
			}
			events += d.WorkflowExecutionInfo.HistoryLength
			if runs++; runs >= limit {
				return events, runs
			}
		}
		if len(list.NextPageToken) == 0 {
			return events, runs
		}
		req.NextPageToken = list.NextPageToken
	}
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// withoutEnv is env without the variables named.
func withoutEnv(env []string, names ...string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !slices.Contains(names, strings.SplitN(kv, "=", 2)[0]) {
			out = append(out, kv)
		}
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
	// pgbench takes a statement on one line: the comments go first, or
	// the first would swallow the rest.
	sql = regexp.MustCompile(`--[^\n]*`).ReplaceAllString(sql, "")
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
	fmt.Fprintf(&md, "# Sell-out benchmark\n\n%s, %d cores, loopback; the api and the worker (cmd/api, cmd/worker), the load generator "+
		"(test/bench/cmd/loadgen), Postgres and the Temporal dev server on the same machine, each a process of its own.\n"+
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
	holdsWithSagas(row, r)
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
	md.WriteString(selloutAlone(r, "###", false))
	md.WriteString(pgCostSection(r, "###"))
	fmt.Fprintf(&md, "\nAnswers by step: %v\n", r["answers"])
	md.WriteString(rushBeforeAfter(t, nil, r))
	if err := os.WriteFile("results/sellout.md", []byte(md.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + md.String())
}

// holdsWithSagas writes the hold latency once sagas run, and the slowest
// holds with when they started.
func holdsWithSagas(row func(string, any), r map[string]any) {
	row("hold decision p50 / p99 ms while sagas run (holds started after the first confirm's answer; goal p99 ≤ 100)",
		fmt.Sprintf("%.1f / %.1f (%v holds)", r["hold_with_sagas_p50_ms"], r["hold_with_sagas_p99_ms"], r["hold_with_sagas"]))
	row("the slowest holds, by when they started", fmt.Sprint(r["hold_slowest"]))
}

// selloutAlone is the sell-out's measures of the service alone, under a
// heading of the level given; withSellout adds the sell-out's time and
// hold latency (for latest.md, which has no sell-out section of its own).
func selloutAlone(r map[string]any, heading string, withSellout bool) string {
	var md strings.Builder
	row := func(k string, v any) { fmt.Fprintf(&md, "| %s | %v |\n", k, v) }
	fmt.Fprintf(&md, "\n%s The service alone\n\n", heading)
	md.WriteString("The api, the worker and the load generator each a process of its own; " +
		"CPU from /proc (utime + stime) over the sell-out and its sagas, per confirmed order. Then, in the same run and at the " +
		"same concurrency, empty workflows on a worker with the service's settings: the limit of one workflow per order; " +
		"then workflows of the order saga's shape that do nothing: Temporal's limit for that saga, the service's own work left out.\n\n")
	md.WriteString("| | value |\n|---|---|\n")
	if withSellout {
		row("sold out: the last buyer done / every saga done (s)", fmt.Sprintf("%.1f / %.1f (%v seats, %v orders)",
			r["sell_out_s"], r["sagas_done_s"], r["seats"], r["orders_confirmed"]))
		row("hold decision p50 / p99 ms during the sell-out", fmt.Sprintf("%.1f / %.1f", r["hold_p50_ms"], r["hold_p99_ms"]))
		holdsWithSagas(row, r)
	}
	row("orders/s (confirmed orders until every saga done)", fmt.Sprintf("%.1f", r["orders_per_s"]))
	row("empty workflows/s beside it (same concurrency, same worker settings)", fmt.Sprintf("%.1f (%v events each)", r["empty_workflows_per_s"], r["events_per_empty_workflow"]))
	row("orders/s vs empty workflows/s", fmt.Sprintf("%.1f%% (goal ≥ 90%%)", 100*num(r, "orders_vs_empty")))
	row("CPU ms per order: api / worker / both (goal: both ≤ 15)", fmt.Sprintf("%.1f / %.1f / %.1f", r["api_cpu_ms_per_order"], r["worker_cpu_ms_per_order"], r["api_worker_cpu_ms_per_order"]))
	row("peak memory resident (MB): api / worker", fmt.Sprintf("%.0f / %.0f", r["api_peak_rss_mb"], r["worker_peak_rss_mb"]))
	row("CPU ms per order: the load generator, apart", fmt.Sprintf("%.1f", r["loadgen_cpu_ms_per_order"]))
	row("CPU ms per order: the Temporal dev server (0: not on this machine)", fmt.Sprintf("%.1f", r["temporal_cpu_ms_per_order"]))
	row("CPU ms per order: the rest of the machine (Postgres mostly, the bench's own test process, and anything else running)", fmt.Sprintf("%.1f", r["rest_cpu_ms_per_order"]))
	row("CPU ms per order: Postgres (its process tree) / the rest less Postgres", fmt.Sprintf("%.1f / %.1f", num(r, "postgres_cpu_ms_per_order"), num(r, "other_cpu_ms_per_order")))
	row("the machine's CPU busy over the sell-out and its sagas (all cores)", fmt.Sprintf("%.0f%%", 100*num(r, "machine_busy_share")))
	row("CPU ms per empty workflow: its worker / its starter / the Temporal dev server", fmt.Sprintf("%.2f / %.2f / %.2f",
		r["empty_worker_cpu_ms_per_workflow"], r["empty_starter_cpu_ms_per_workflow"], r["temporal_cpu_ms_per_empty_workflow"]))
	row("saga-shaped workflows/s beside it (the order's timer, update with a local activity and search attribute, and activity; doing nothing)",
		fmt.Sprintf("%.1f (%v events each)", r["saga_workflows_per_s"], r["events_per_saga_workflow"]))
	row("orders/s vs saga-shaped workflows/s", fmt.Sprintf("%.1f%%", 100*num(r, "orders_vs_saga")))
	row("CPU ms per saga-shaped workflow: its worker / its starter / the Temporal dev server", fmt.Sprintf("%.2f / %.2f / %.2f",
		r["saga_worker_cpu_ms_per_workflow"], r["saga_starter_cpu_ms_per_workflow"], r["temporal_cpu_ms_per_saga_workflow"]))
	row("history events per order (mean of a sample)", fmt.Sprintf("%.1f (%v orders)", r["history_events_per_order"], r["history_sampled_orders"]))
	row("the event's holds workflows: history events per order", fmt.Sprintf("%.1f (%v events in %v runs)",
		r["holds_workflow_events_per_order"], r["holds_workflow_events"], r["holds_workflow_runs"]))
	row("buyer's wait, confirm to tickets issued, p50 / p99 ms", fmt.Sprintf("%.0f / %.0f (%v orders)", r["confirm_to_tickets_p50_ms"], r["confirm_to_tickets_p99_ms"], r["orders_with_tickets"]))
	row("the confirm's answer, p50 / p99 ms", fmt.Sprintf("%.0f / %.0f", r["confirm_p50_ms"], r["confirm_p99_ms"]))
	row("workflow task failures (worker metric) / \"premature end of stream\" logged / worker warnings and errors logged",
		fmt.Sprintf("%v / %v / %v", r["workflow_task_failures"], r["premature_end_of_stream_logged"], r["worker_warnings_logged"]))
	row("the worker's warnings and errors, by message", fmt.Sprint(r["worker_warnings_by_message"]))
	return md.String()
}

// logMessages counts a slog text log's lines of the given levels by their
// msg (and the error's first words), most frequent first: what the
// worker warned of, named.
func logMessages(log string, levels ...string) []string {
	count := map[string]int{}
	for line := range strings.Lines(log) {
		lvl := ""
		for _, l := range levels {
			if strings.Contains(line, "level="+l+" ") {
				lvl = l
			}
		}
		if lvl == "" {
			continue
		}
		msg := logField(line, "msg")
		for _, k := range []string{"error", "Error", "err"} {
			if e := logField(line, k); e != "" {
				msg += ": " + strings.Join(strings.Fields(e)[:min(len(strings.Fields(e)), 8)], " ")
				break
			}
		}
		count[lvl+" "+msg]++
	}
	out := make([]string, 0, len(count))
	for m, n := range count {
		out = append(out, fmt.Sprintf("%d× %s", n, m))
	}
	slices.SortFunc(out, func(a, b string) int {
		var na, nb int
		fmt.Sscan(a, &na)
		fmt.Sscan(b, &nb)
		return nb - na
	})
	return out[:min(len(out), 10)]
}

// logField is a key's value in a slog text line (quoted or not).
func logField(line, key string) string {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		return ""
	}
	v := line[i+len(key)+2:]
	if strings.HasPrefix(v, `"`) {
		if s, err := strconv.QuotedPrefix(v); err == nil {
			u, _ := strconv.Unquote(s)
			return u
		}
	}
	v, _, _ = strings.Cut(v, " ")
	return strings.TrimSpace(v)
}

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// The door (issue 28): 20 gates scanning one 10,000-ticket event online,
// 5% of the tickets presented twice (a copy at another gate), at 500 scans a
// second offered; every ticket admitted exactly once, every copy refused
// with already_checked_in, p99 ≤ 20 ms.
const (
	doorTickets = 10000
	doorGates   = 20
	// doorCopies is 5% of the tickets, each scanned a second time at
	// another gate; doorRacing of them at the same instant as the original
	// (exactly one of the two is admitted), the others 1–3 s after it.
	doorCopies = doorTickets / 20
	doorRacing = 50
	// doorOrderSeats is how many tickets each of the fixture's orders has.
	doorOrderSeats = 4
)

// doorRate is the offered load in scans/s (BENCH_CHECKIN_RATE sets it).
func doorRate() float64 {
	if r, err := strconv.ParseFloat(os.Getenv("BENCH_CHECKIN_RATE"), 64); err == nil && r > 0 {
		return r
	}
	return 500
}

// doorEvent is a sold-out 10,000-seat event: paid orders of four seats,
// their tickets issued by store.IssueTickets with the service's own
// barcodes, and one door key per gate (scope checkin, limited to the event
// and its gate). Each part that scans builds its own (a scan changes the
// tickets).
type doorEvent struct {
	EventID  int64
	Barcodes []string // every ticket's, in seat order
	Gates    []string
	Keys     []string // Keys[i] is the door key of Gates[i]
}

func newDoorEvent(t *testing.T, s *testenv.Stack, company, keyID int64, ref string) *doorEvent {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	s.Import(t, company, hall(ref, 100, 100))
	fx := &doorEvent{EventID: eventID(t, s, company, ref)}
	orders := doorTickets / doorOrderSeats
	// Paid orders, their items and their sold seats, as a confirmed
	// external payment leaves them, in one transaction.
	err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for _, q := range []string{
			`INSERT INTO orders (company_id, api_key_id, is_test, event_id, status, payment, payment_id, currency, total, service_fee,
				amount, customer_email, customer_first_name, customer_last_name, customer_phone, access_token_hash, expires_at, paid_at)
			SELECT ?0, ?1, false, e.id, 'paid', 'external', 'door-' || g, e.currency, ?3 * 100000, ?3 * 10000, ?3 * 110000,
				'door' || g || '@example.test', 'Door', 'Bench', '+79990000000', sha256(g::text::bytea), now() + interval '15 minutes', now()
			FROM events e CROSS JOIN generate_series(1, ?4) g WHERE e.id = ?2 ORDER BY g`,
			`INSERT INTO order_items (order_id, position, category_id, seat_id, price)
			SELECT o.id, s.n % ?3, s.category_id, s.seat_id, c.base_price
			FROM (SELECT seat_id, category_id, row_number() OVER (ORDER BY row::int, number::int) - 1 AS n
				FROM event_seats WHERE event_id = ?2) s
			JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM orders WHERE event_id = ?2) o ON o.k = s.n / ?3
			JOIN ticket_categories c ON c.id = s.category_id`,
			`UPDATE event_seats s SET state = 'sold', order_id = i.order_id, version = nextval('seat_change_seq')
			FROM order_items i JOIN orders o ON o.id = i.order_id
			WHERE o.event_id = ?2 AND s.event_id = ?2 AND s.seat_id = i.seat_id`,
			`UPDATE ticket_categories c SET sold = sold + (SELECT count(*) FROM event_seats s WHERE s.category_id = c.id AND s.state = 'sold')
			WHERE c.event_id = ?2`,
		} {
			if _, err := tx.NewRaw(q, company, keyID, fx.EventID, doorOrderSeats, orders).Exec(ctx); err != nil {
				return fmt.Errorf("%s: %w", q[:40], err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("door event: %v", err)
	}
	var ids []int64
	if err := s.DB.NewRaw("SELECT id FROM orders WHERE event_id = ? ORDER BY id", fx.EventID).Scan(ctx, &ids); err != nil {
		t.Fatal(err)
	}
	// The tickets, as the order saga issues them.
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(ids); i += 8 {
				if _, err := store.IssueTickets(ctx, s.DB, ids[i], delivery.NewBarcode); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		t.Fatalf("issue tickets: %v", err)
	}
	if err := s.DB.NewRaw(`SELECT t.barcode FROM tickets t JOIN orders o ON o.id = t.order_id WHERE o.event_id = ?
		ORDER BY t.order_id, t.position`, fx.EventID).Scan(ctx, &fx.Barcodes); err != nil {
		t.Fatal(err)
	}
	if len(fx.Barcodes) != doorTickets {
		t.Fatalf("door event: %d tickets, want %d", len(fx.Barcodes), doorTickets)
	}
	for g := range doorGates {
		gate := fmt.Sprintf("Gate %02d", g+1)
		key, id := s.Key(t, company, apikey.Production, apikey.ScopeCheckin)
		if _, err := s.DB.NewRaw("UPDATE api_keys SET checkin_event_id = ?, checkin_gate = ? WHERE id = ?", fx.EventID, gate, id).
			Exec(ctx); err != nil {
			t.Fatal(err)
		}
		fx.Gates, fx.Keys = append(fx.Gates, gate), append(fx.Keys, key)
	}
	if _, err := s.DB.ExecContext(ctx, "ANALYZE tickets, orders, order_items, event_seats, api_keys"); err != nil {
		t.Fatal(err)
	}
	t.Logf("door event %d: %d tickets, %d door keys in %s", fx.EventID, len(fx.Barcodes), len(fx.Keys), time.Since(start).Round(time.Millisecond))
	return fx
}

// doorScan is one scan of the online run: when it is due, at which gate,
// and what it is.
type doorScan struct {
	due     time.Duration // from the run's start
	gate    int
	ticket  int
	copy    bool // the ticket's second presentation
	racing  bool // sent at the same instant as the other presentation
	outcome string
	first   string // first_check_in.gate of the answer
	status  int
	latency time.Duration // from sending to the answer
	late    time.Duration // from when it was due to the answer
}

// doorPlan lays the scans out: every ticket once at a gate of its own
// (tickets in random order, gates in turn), a copy of doorCopies of them at
// another gate, all at rate scans/s overall.
func doorPlan(rate float64, rng *rand.Rand) []*doorScan {
	order := rng.Perm(doorTickets)
	slot := time.Duration(float64(time.Second) / rate)
	var plan []*doorScan
	for i, tk := range order {
		plan = append(plan, &doorScan{gate: i % doorGates, ticket: tk})
	}
	// The copies: at another gate, some racing the original, the others a
	// little later, each in a slot of its own.
	copied := rng.Perm(doorTickets)[:doorCopies]
	at := make(map[int]int, doorTickets) // ticket → index of its original in plan
	for i, sc := range plan {
		at[sc.ticket] = i
	}
	type placed struct {
		after int // inserted after this original index
		scan  *doorScan
	}
	var copies []placed
	for n, tk := range copied {
		orig := at[tk]
		gate := (plan[orig].gate + 1 + rng.IntN(doorGates-1)) % doorGates
		c := &doorScan{gate: gate, ticket: tk, copy: true, racing: n < doorRacing}
		after := orig
		if !c.racing {
			after = min(orig+int(rate)+rng.IntN(2*int(rate)), len(plan)-1)
		}
		copies = append(copies, placed{after, c})
	}
	slices.SortStableFunc(copies, func(a, b placed) int { return a.after - b.after })
	var out []*doorScan
	c := 0
	for i, sc := range plan {
		sc.due = time.Duration(len(out)) * slot
		out = append(out, sc)
		for ; c < len(copies) && copies[c].after == i; c++ {
			cp := copies[c].scan
			if cp.racing {
				cp.due, sc.racing = sc.due, true
			} else {
				cp.due = time.Duration(len(out)) * slot
				out = append(out, cp)
				continue
			}
			out = append(out, cp)
		}
	}
	return out
}

// benchCheckin sends the plan's scans from 20 gate workers, each scanning
// its own queue in turn on its own connection (a gate scans the next person
// when the door has answered), and checks every ticket was admitted once.
func benchCheckin(t *testing.T, s *testenv.Stack, fx *doorEvent) map[string]any {
	url := s.ProductionLikeAPI(t)
	ctx := context.Background()
	rate := doorRate()
	plan := doorPlan(rate, rand.New(rand.NewPCG(28, 2026)))
	queues := make([][]*doorScan, doorGates)
	for _, sc := range plan {
		queues[sc.gate] = append(queues[sc.gate], sc)
	}
	// Warm each gate's connection and key (one unknown barcode each), as a
	// door does before the doors open; these scans are not counted.
	clients := make([]*http.Client, doorGates)
	for g := range doorGates {
		clients[g] = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 30 * time.Second}
		scanOnce(clients[g], url, fx.Keys[g], fx.EventID, "0000000000000", fmt.Sprintf("warm-%d", g), fx.Gates[g])
	}
	procBefore, pgBefore := processCPU(), postgresCPU(t, s)
	start := time.Now()
	var wg sync.WaitGroup
	for g := range doorGates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n, sc := range queues[g] {
				if d := time.Until(start.Add(sc.due)); d > 0 {
					time.Sleep(d)
				}
				t0 := time.Now()
				sc.status, sc.outcome, sc.first = scanOnce(clients[g], url, fx.Keys[g], fx.EventID, fx.Barcodes[sc.ticket],
					fmt.Sprintf("door-%d-%d", g, n), fx.Gates[g])
				done := time.Now()
				sc.latency, sc.late = done.Sub(t0), done.Sub(start.Add(sc.due))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	procCPU, pgCPU := processCPU()-procBefore, postgresCPU(t, s)-pgBefore

	// What the doors were told.
	var lat, late []time.Duration
	outcomes := map[string]int{}
	failures := 0
	var firstFailure string
	byTicket := map[int][]*doorScan{}
	for _, sc := range plan {
		lat, late = append(lat, sc.latency), append(late, sc.late)
		outcomes[sc.outcome]++
		if sc.status != http.StatusOK {
			failures++
			if firstFailure == "" {
				firstFailure = fmt.Sprintf("%s at %s: %d", fx.Barcodes[sc.ticket], fx.Gates[sc.gate], sc.status)
			}
		}
		byTicket[sc.ticket] = append(byTicket[sc.ticket], sc)
	}
	// Of each ticket's scans exactly one admitted it, and every other was
	// refused as inside with the admitting gate: a racing pair may admit
	// the copy and refuse the original, the copy is then the other one.
	wrong, copiesRefused := 0, 0
	for _, scans := range byTicket {
		admitted := slices.IndexFunc(scans, func(sc *doorScan) bool { return sc.outcome == "admitted" })
		ok := admitted >= 0
		for i, sc := range scans {
			if ok && i != admitted && (sc.outcome != "already_checked_in" || sc.first != fx.Gates[scans[admitted].gate]) {
				ok = false
			}
		}
		switch {
		case !ok:
			wrong++
		case len(scans) > 1:
			copiesRefused += len(scans) - 1
		}
	}
	lateCopiesRefused := countIf(plan, func(sc *doorScan) bool {
		return sc.copy && !sc.racing && sc.outcome == "already_checked_in"
	})

	// What Postgres holds.
	var db struct {
		CheckedIn     int `bun:"checked_in"`
		Inside        int `bun:"inside"`
		Admitted      int `bun:"admitted"`
		Refused       int `bun:"refused"`
		Scans         int `bun:"scans"`
		TwiceAdmitted int `bun:"twice_admitted"`
	}
	if err := s.DB.NewRaw(`SELECT
			(SELECT count(*) FROM tickets t JOIN orders o ON o.id = t.order_id WHERE o.event_id = ?0 AND t.checked_in_at IS NOT NULL) AS checked_in,
			(SELECT count(*) FROM tickets t JOIN orders o ON o.id = t.order_id WHERE o.event_id = ?0 AND t.inside) AS inside,
			(SELECT count(*) FROM check_ins WHERE event_id = ?0 AND outcome = 'admitted' AND barcode <> '0000000000000') AS admitted,
			(SELECT count(*) FROM check_ins WHERE event_id = ?0 AND outcome = 'already_checked_in') AS refused,
			(SELECT count(*) FROM check_ins WHERE event_id = ?0 AND barcode <> '0000000000000') AS scans,
			(SELECT count(*) FROM (SELECT ticket_id FROM check_ins WHERE event_id = ?0 AND outcome = 'admitted'
				GROUP BY ticket_id HAVING count(*) > 1) x) AS twice_admitted`, fx.EventID).Scan(ctx, &db); err != nil {
		t.Fatal(err)
	}

	r := summarise(slices.Clone(lat), elapsed, 0, failures)
	slices.Sort(lat)
	slices.Sort(late)
	out := map[string]any{
		"tickets": doorTickets, "gates": doorGates, "copies": doorCopies, "racing_copies": doorRacing,
		"scans": len(plan), "offered_per_s": rate, "seconds": elapsed.Seconds(), "scans_per_s": r.RPS,
		"p50_ms": percentile(lat, .50), "p95_ms": percentile(lat, .95), "p99_ms": percentile(lat, .99), "max_ms": percentile(lat, 1),
		"due_p50_ms": percentile(late, .50), "due_p99_ms": percentile(late, .99),
		"outcomes": outcomes, "failures": failures,
		"tickets_wrong": wrong, "copies_refused": copiesRefused, "late_copies_refused": lateCopiesRefused,
		"db_checked_in": db.CheckedIn, "db_inside": db.Inside, "db_admitted": db.Admitted, "db_already_checked_in": db.Refused,
		"db_scans": db.Scans, "db_twice_admitted": db.TwiceAdmitted,
		// CPU per scan: this process (the api, the worker and the 20
		// gates' clients) and the Postgres backends of this database.
		"process_cpu_ms_per_scan": ms(procCPU) / float64(len(plan)), "postgres_cpu_ms_per_scan": ms(pgCPU) / float64(len(plan)),
		"load_average": loadAverage(),
	}
	if firstFailure != "" {
		out["first_failure"] = firstFailure
	}
	for _, c := range []struct {
		what      string
		got, want int
	}{
		{"failed scans", failures, 0},
		{"tickets not admitted exactly once (answers)", wrong, 0},
		{"copies refused with already_checked_in", copiesRefused, doorCopies},
		{"tickets with checked_in_at", db.CheckedIn, doorTickets},
		{"admitted check_ins rows", db.Admitted, doorTickets},
		{"already_checked_in check_ins rows", db.Refused, doorCopies},
		{"check_ins rows", db.Scans, doorTickets + doorCopies},
		{"tickets admitted twice", db.TwiceAdmitted, 0},
	} {
		if c.got != c.want {
			t.Errorf("check-in: %s = %d, want %d", c.what, c.got, c.want)
		}
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// processCPU is the CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// postgresCPU is the CPU time the Postgres backends connected to the
// stack's database have used (Linux, Postgres on this machine: 0 if their
// /proc is out of reach).
func postgresCPU(t *testing.T, s *testenv.Stack) time.Duration {
	var pids []int
	if err := s.DB.NewRaw("SELECT pid FROM pg_stat_activity WHERE datname = current_database()").Scan(context.Background(), &pids); err != nil {
		t.Fatal(err)
	}
	var ticks int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis: utime and stime
		// are the 12th and 13th.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			st, _ := strconv.ParseInt(f[12], 10, 64)
			ticks += u + st
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ 100
}

// loadAverage is the machine's 1-minute load average, for reading a run's
// latencies (other work on the same cores).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func countIf[T any](s []T, f func(T) bool) int {
	n := 0
	for _, v := range s {
		if f(v) {
			n++
		}
	}
	return n
}

// scanOnce posts one scan with a gate's door key (the gate left to the
// key) and returns the status, the outcome and the first admission's gate.
func scanOnce(c *http.Client, url, key string, event int64, barcode, idem, device string) (int, string, string) {
	body := fmt.Sprintf(`{"barcode": %q, "event_id": %d, "device_id": %q}`, barcode, event, device)
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/check-ins", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idem)
	res, err := c.Do(req)
	if err != nil {
		return 0, "", ""
	}
	b, _ := readAll(res)
	var out struct {
		Data struct {
			Outcome      string `json:"outcome"`
			FirstCheckIn *struct {
				Gate string `json:"gate"`
			} `json:"first_check_in"`
		} `json:"data"`
	}
	_ = json.Unmarshal(b, &out)
	first := ""
	if out.Data.FirstCheckIn != nil {
		first = out.Data.FirstCheckIn.Gate
	}
	return res.StatusCode, out.Data.Outcome, first
}

// writeCheckin writes results/checkin.{md,json}: the door's part, online
// and offline, written by `BENCH_ONLY=checkin make bench` too.
func writeCheckin(t *testing.T, when time.Time, cores int, online, offline map[string]any) {
	b, _ := json.MarshalIndent(map[string]any{"when": when, "cores": cores, "checkin": online, "checkin_offline": offline}, "", "  ")
	if err := os.WriteFile("results/checkin.json", append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# Check-in benchmark\n\n%s, %d cores, loopback; the api, a worker, Postgres and the Temporal dev server on the same machine.\n"+
		"Regenerate with `BENCH_ONLY=checkin make bench` (or `make bench`). Timings are measured, not asserted: "+
		"✔/✘ says whether this run met the target; what a door relies on (one admission per ticket, every copy refused, "+
		"every code verified, every conflict listed) fails the run.\n\n", when.Format(time.RFC3339), cores)
	md.WriteString(checkinSection(online))
	md.WriteString("\n" + checkinOfflineSection(offline))
	if err := os.WriteFile("results/checkin.md", []byte(md.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + md.String())
}

// met marks a measure against its target.
func met(ok bool, target string) string {
	if ok {
		return target + " ✔"
	}
	return target + " ✘"
}

// checkinSection is the check-in part's online table, for checkin.md and latest.md.
func checkinSection(r map[string]any) string {
	var md strings.Builder
	fmt.Fprintf(&md, "## Check-in at the door, online (issue 28)\n\n%v gates, each with its own door key and connection, scanning one "+
		"%v-ticket event in turn at %.0f scans/s offered overall; %v tickets presented twice at another gate (%v of them at the same "+
		"instant as the original, the others 1–3 s later).\n\n", r["gates"], r["tickets"], num(r, "offered_per_s"), r["copies"], r["racing_copies"])
	md.WriteString("| measure | value | target |\n|---|---|---|\n")
	row := func(k, v, target string) { fmt.Fprintf(&md, "| %s | %s | %s |\n", k, v, target) }
	tickets, copies := num(r, "tickets"), num(r, "copies")
	row("scans / s", fmt.Sprintf("%.0f scans in %.1f s: %.0f/s", num(r, "scans"), num(r, "seconds"), num(r, "scans_per_s")),
		met(num(r, "scans_per_s") >= 495, "500/s"))
	row("scan latency p50 / p95 / p99 / max ms", fmt.Sprintf("%.2f / %.2f / %.2f / %.2f", num(r, "p50_ms"), num(r, "p95_ms"),
		num(r, "p99_ms"), num(r, "max_ms")), met(num(r, "p99_ms") <= 20, "p99 ≤ 20"))
	row("from when the scan was due, p50 / p99 ms", fmt.Sprintf("%.2f / %.2f", num(r, "due_p50_ms"), num(r, "due_p99_ms")), "")
	row("tickets admitted exactly once (answers)", fmt.Sprintf("%.0f of %.0f", tickets-num(r, "tickets_wrong"), tickets),
		met(num(r, "tickets_wrong") == 0, "all"))
	row("copies refused with already_checked_in", fmt.Sprintf("%.0f of %.0f (%.0f of the later ones)", num(r, "copies_refused"), copies,
		num(r, "late_copies_refused")), met(num(r, "copies_refused") == copies, "all"))
	row("tickets with checked_in_at / check_ins admitted rows", fmt.Sprintf("%.0f / %.0f", num(r, "db_checked_in"), num(r, "db_admitted")),
		met(num(r, "db_checked_in") == tickets && num(r, "db_admitted") == tickets, fmt.Sprintf("%.0f / %.0f", tickets, tickets)))
	row("tickets admitted twice (check_ins)", fmt.Sprintf("%.0f", num(r, "db_twice_admitted")), met(num(r, "db_twice_admitted") == 0, "0"))
	row("failed scans (not 200)", fmt.Sprintf("%.0f", num(r, "failures")), met(num(r, "failures") == 0, "0"))
	row("CPU per scan: the test process (api, worker, gates) / Postgres's backends, ms", fmt.Sprintf("%.2f / %.2f",
		num(r, "process_cpu_ms_per_scan"), num(r, "postgres_cpu_ms_per_scan")), "")
	row("the machine's load average during the run (1, 5, 15 min)", fmt.Sprint(r["load_average"]), "")
	fmt.Fprintf(&md, "\nOutcomes: %v\n", r["outcomes"])
	return md.String()
}

// checkinOfflineSection is the check-in part's offline table.
func checkinOfflineSection(r map[string]any) string {
	var md strings.Builder
	scans, copies := num(r, "scans"), num(r, "copies")
	tickets := scans - copies
	fmt.Fprintf(&md, "## Check-in at the door, offline (issue 28)\n\nA fresh %v-ticket event. A door downloads its list (gzip) and "+
		"verifies every ticket's signed code against it, %v times; then %v devices, each with its gate's door key, upload their "+
		"offline scans at once: %.0f tickets shared out, and %.0f of them scanned again a minute later by another device (copies "+
		"let in while both were offline).\n\n", r["tickets"], r["list_rounds"], r["devices"], tickets, copies)
	md.WriteString("| measure | value | target |\n|---|---|---|\n")
	row := func(k, v, target string) { fmt.Fprintf(&md, "| %s | %s | %s |\n", k, v, target) }
	row("door list, gzipped (JSON)", fmt.Sprintf("%.0f KB (%.0f KB)", num(r, "list_gzip_bytes")/1000, num(r, "list_json_bytes")/1000),
		met(num(r, "list_gzip_bytes") <= 1<<20, "≤ 1 MB"))
	row("list downloaded and every code verified, s: first / median / max", fmt.Sprintf("%.2f / %.2f / %.2f",
		num(r, "list_first_s"), num(r, "list_median_s"), num(r, "list_max_s")), met(num(r, "list_max_s") <= 1, "≤ 1 s"))
	row(fmt.Sprintf("%.0f offline scans from %v devices at once, settled in s", scans, r["devices"]),
		fmt.Sprintf("%.2f (%.0f scans/s)", num(r, "settle_s"), num(r, "scans_per_s")), met(num(r, "settle_s") <= 5, "≤ 5 s"))
	row("tickets admitted (answers) / admitted twice", fmt.Sprintf("%.0f / %.0f", num(r, "tickets_admitted"), num(r, "tickets_admitted_twice")),
		met(num(r, "tickets_admitted") == tickets && num(r, "tickets_admitted_twice") == 0, fmt.Sprintf("%.0f / 0", tickets)))
	row("copies answered conflict / other scans answered conflict", fmt.Sprintf("%.0f / %.0f", num(r, "copies_conflicting"), num(r, "other_conflicts")),
		met(num(r, "copies_conflicting") == copies && num(r, "other_conflicts") == 0, fmt.Sprintf("%.0f / 0", copies)))
	row("conflicts listed to the organizer", fmt.Sprintf("%.0f", num(r, "conflicts_listed")), met(num(r, "conflicts_listed") == copies, fmt.Sprintf("%.0f", copies)))
	row("tickets with checked_in_at / admitted rows / offline rows / admitted twice", fmt.Sprintf("%.0f / %.0f / %.0f / %.0f",
		num(r, "db_checked_in"), num(r, "db_admitted"), num(r, "db_offline_scans"), num(r, "db_twice_admitted")),
		met(num(r, "db_checked_in") == tickets && num(r, "db_admitted") == tickets && num(r, "db_offline_scans") == scans && num(r, "db_twice_admitted") == 0,
			fmt.Sprintf("%.0f / %.0f / %.0f / 0", tickets, tickets, scans)))
	row("back online: the changes since the list (tickets, of them inside), gzipped, s", fmt.Sprintf("%.0f (%.0f), %.0f KB, %.2f",
		num(r, "delta_tickets"), num(r, "delta_inside"), num(r, "delta_gzip_bytes")/1000, num(r, "delta_s")), "")
	row("the 10,000 signed codes read through GET /v1/orders/{id}/tickets (setup, not a target), s", fmt.Sprintf("%.2f (%.0f orders)",
		num(r, "codes_fetched_s"), num(r, "orders")), "")
	row("the machine's load average after the run (1, 5, 15 min)", fmt.Sprint(r["load_average"]), "")
	fmt.Fprintf(&md, "\nOutcomes: %v\n", r["outcomes"])
	return md.String()
}

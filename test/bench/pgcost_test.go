package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
)

// Postgres's own account of a run (issue 46): the server's CPU from its
// process tree, and from its statistics the commits, the WAL flushes and,
// with pg_stat_statements loaded (make bench's own cluster loads it), the
// statements by kind. Divided by the orders, they are the database's cost
// of an order.

// pgSnapshot is the counters at one moment.
type pgSnapshot struct {
	CPU                          time.Duration // the server's processes, reaped ones included
	Commits, Rollbacks           int64         // pg_stat_database, the run's database
	WALRecords, WALFPI, WALBytes int64         // pg_stat_wal, the whole cluster
	WALWrites, WALSyncs          int64         // WAL writes and flushes (fsyncs) to disk
}

// postmasterPID is the Postgres server's main process, found as the parent
// of this connection's backend; 0 when it is not on this machine (its
// CPU is then not measured).
func postmasterPID(t *testing.T, db *bun.DB) int {
	t.Helper()
	var backend int
	if err := db.NewRaw("SELECT pg_backend_pid()").Scan(context.Background(), &backend); err != nil {
		t.Fatal(err)
	}
	// A server in a container reports a pid of its own namespace: only a
	// postgres process whose parent is postgres is taken for it.
	isPostgres := func(pid int) bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		return err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), "postgres")
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", backend))
	if err != nil || !isPostgres(backend) {
		return 0 // another machine's (or a container's) server
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			if pid, _ := strconv.Atoi(strings.TrimSpace(v)); isPostgres(pid) {
				return pid
			}
		}
	}
	return 0
}

// treeCPU is the CPU time of the postmaster and every process it started:
// its own, its reaped children's (cutime, cstime: backends that ended) and
// its live children's. The sum only grows, so a difference of two readings
// is the server's CPU between them, however backends came and went.
func treeCPU(postmaster int) time.Duration {
	if postmaster == 0 {
		return 0
	}
	var ticks int64
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		ppid, _ := strconv.Atoi(f[1])
		if pid != postmaster && ppid != postmaster {
			continue
		}
		for _, i := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime
			n, _ := strconv.ParseInt(f[i], 10, 64)
			ticks += n
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

func pgSnap(t *testing.T, db *bun.DB, postmaster int) pgSnapshot {
	t.Helper()
	ctx := context.Background()
	s := pgSnapshot{CPU: treeCPU(postmaster)}
	if err := db.NewRaw(`SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = current_database()`).
		Scan(ctx, &s.Commits, &s.Rollbacks); err != nil {
		t.Fatal(err)
	}
	if err := db.NewRaw(`SELECT wal_records, wal_fpi, wal_bytes::bigint, wal_write, wal_sync FROM pg_stat_wal`).
		Scan(ctx, &s.WALRecords, &s.WALFPI, &s.WALBytes, &s.WALWrites, &s.WALSyncs); err != nil {
		t.Fatal(err)
	}
	return s
}

// pgStatementsReset empties pg_stat_statements; false when the server has
// not loaded it (then only the totals are measured).
func pgStatementsReset(t *testing.T, db *bun.DB) bool {
	t.Helper()
	ctx := context.Background()
	var loaded bool
	_ = db.NewRaw("SELECT current_setting('shared_preload_libraries') LIKE '%pg_stat_statements%'").Scan(ctx, &loaded)
	if !loaded {
		t.Log("pg_stat_statements is not loaded by this server: statements by kind are not measured (make bench's own cluster loads it)")
		return false
	}
	if _, err := db.ExecContext(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "SELECT pg_stat_statements_reset()"); err != nil {
		t.Fatal(err)
	}
	return true
}

// pgStatement is one statement of pg_stat_statements, the run's database's.
type pgStatement struct {
	Query    string  `bun:"query" json:"query"`
	Calls    int64   `bun:"calls" json:"calls"`
	ExecMS   float64 `bun:"exec_ms" json:"exec_ms"`
	PlanMS   float64 `bun:"plan_ms" json:"plan_ms"`
	Rows     int64   `bun:"rows" json:"rows"`
	WALBytes int64   `bun:"wal_bytes" json:"wal_bytes"`
}

func pgStatements(t *testing.T, db *bun.DB) []pgStatement {
	t.Helper()
	// Statements evicted past pg_stat_statements.max leave the counts
	// short: say so.
	var evicted int64
	if err := db.NewRaw("SELECT dealloc FROM pg_stat_statements_info").Scan(context.Background(), &evicted); err == nil && evicted > 0 {
		t.Logf("pg_stat_statements evicted statements %d times: the statements by kind are short (raise pg_stat_statements.max)", evicted)
	}
	var out []pgStatement
	if err := db.NewRaw(`SELECT s.query, s.calls, s.total_exec_time AS exec_ms, s.total_plan_time AS plan_ms, s.rows, s.wal_bytes::bigint AS wal_bytes
		FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
		WHERE d.datname = current_database() ORDER BY s.calls DESC`).Scan(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// statementKinds are the kinds of statement, each known by the
// tables it names (the first that matches wins, in this order), and what
// names none of them.
var statementKinds = []struct {
	Kind string
	Re   *regexp.Regexp
}{
	{"transaction control (BEGIN, COMMIT, ROLLBACK, SAVEPOINT)", regexp.MustCompile(`^\s*(begin|commit|rollback|start transaction|savepoint|release)\b`)},
	{"request log", regexp.MustCompile(`\brequest_log\b`)},
	{"idempotency records", regexp.MustCompile(`\bidempotency_keys\b`)},
	{"webhooks", regexp.MustCompile(`\bwebhook_(events|deliveries|attempts|endpoints)\b`)},
	{"ticket issue", regexp.MustCompile(`\b(insert into|update)\s+"?tickets\b`)},
	{"confirm (payment)", regexp.MustCompile(`\bpayments\b`)},
	{"order", regexp.MustCompile(`\b(orders|order_items)\b`)},
	{"hold", regexp.MustCompile(`\b(reservations|reservation_seats|event_seats)\b`)},
	{"notify", regexp.MustCompile(`\bpg_notify\b|^\s*(notify|listen)\b`)},
	{"keys and catalog reads", regexp.MustCompile(`\b(api_keys|applications|companies|events|ticket_categories|channels|channel_\w+|venues|schemes|scheme_seats)\b`)},
}

func statementKind(query string) string {
	q := strings.ToLower(query)
	for _, k := range statementKinds {
		if k.Re.MatchString(q) {
			return k.Kind
		}
	}
	return "other"
}

// kindCost is one kind's statements per order.
type kindCost struct {
	Kind          string  `json:"kind"`
	Statements    int     `json:"statements"` // distinct normalized statements
	CallsPerOrder float64 `json:"calls_per_order"`
	ExecMSPerOrd  float64 `json:"exec_ms_per_order"`
	WALBytesPerOr float64 `json:"wal_bytes_per_order"`
}

// byKind sums the statements by kind, per order, most called first.
func byKind(stmts []pgStatement, orders float64) []kindCost {
	m := map[string]*kindCost{}
	for _, s := range stmts {
		k := statementKind(s.Query)
		c := m[k]
		if c == nil {
			c = &kindCost{Kind: k}
			m[k] = c
		}
		c.Statements++
		c.CallsPerOrder += float64(s.Calls) / orders
		c.ExecMSPerOrd += (s.ExecMS + s.PlanMS) / orders
		c.WALBytesPerOr += float64(s.WALBytes) / orders
	}
	out := make([]kindCost, 0, len(m))
	for _, c := range m {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b kindCost) int { return int(b.CallsPerOrder*1000) - int(a.CallsPerOrder*1000) })
	return out
}

// pgCost is the database's cost per order between two snapshots.
func pgCost(t *testing.T, db *bun.DB, before, after pgSnapshot, measured bool, orders float64) map[string]any {
	t.Helper()
	orders = max(orders, 1)
	per := func(a, b int64) float64 { return float64(b-a) / orders }
	out := map[string]any{
		"postgres_cpu_ms_per_order":   float64((after.CPU - before.CPU).Microseconds()) / 1000 / orders,
		"pg_commits_per_order":        per(before.Commits, after.Commits),
		"pg_rollbacks_per_order":      per(before.Rollbacks, after.Rollbacks),
		"pg_wal_records_per_order":    per(before.WALRecords, after.WALRecords),
		"pg_wal_fpi_per_order":        per(before.WALFPI, after.WALFPI),
		"pg_wal_bytes_per_order":      per(before.WALBytes, after.WALBytes),
		"pg_wal_writes_per_order":     per(before.WALWrites, after.WALWrites),
		"pg_wal_flushes_per_order":    per(before.WALSyncs, after.WALSyncs),
		"pg_statements_by_kind_known": measured,
	}
	if measured {
		stmts := pgStatements(t, db)
		kinds := byKind(stmts, orders)
		var calls float64
		for _, k := range kinds {
			calls += k.CallsPerOrder
		}
		out["pg_statements_per_order"] = calls
		out["pg_statements_by_kind"] = kinds
		top := stmts[:min(len(stmts), 25)]
		for i := range top {
			top[i].Query = strings.Join(strings.Fields(top[i].Query), " ")
			if len(top[i].Query) > 300 {
				top[i].Query = top[i].Query[:300] + "…"
			}
		}
		out["pg_top_statements"] = top
	}
	return out
}

// pgCostSection is the markdown of pgCost's figures.
func pgCostSection(r map[string]any, heading string) string {
	var md strings.Builder
	fmt.Fprintf(&md, "\n%s Postgres per order\n\n", heading)
	md.WriteString("From Postgres's own statistics over the sell-out and its sagas, per confirmed order: the server's CPU " +
		"(its process tree in /proc, ended backends included), commits (`pg_stat_database`), WAL flushes and bytes " +
		"(`pg_stat_wal`), and the statements by kind (`pg_stat_statements`; a statement's kind is the tables it names; " +
		"COMMIT and BEGIN are statements of their own).\n\n")
	md.WriteString("| | per order |\n|---|---|\n")
	row := func(k string, v any) { fmt.Fprintf(&md, "| %s | %v |\n", k, v) }
	row("Postgres CPU ms (goal ≤ 12)", fmt.Sprintf("%.1f", num(r, "postgres_cpu_ms_per_order")))
	row("commits / rollbacks", fmt.Sprintf("%.1f / %.2f", num(r, "pg_commits_per_order"), num(r, "pg_rollbacks_per_order")))
	row("WAL flushes (fsync) / writes", fmt.Sprintf("%.1f / %.1f", num(r, "pg_wal_flushes_per_order"), num(r, "pg_wal_writes_per_order")))
	row("WAL records / full-page images / bytes", fmt.Sprintf("%.0f / %.1f / %.0f", num(r, "pg_wal_records_per_order"), num(r, "pg_wal_fpi_per_order"), num(r, "pg_wal_bytes_per_order")))
	row("api + worker + Postgres CPU ms vs Temporal's (goal: ≤)", fmt.Sprintf("%.1f vs %.1f",
		num(r, "api_worker_cpu_ms_per_order")+num(r, "postgres_cpu_ms_per_order"), num(r, "temporal_cpu_ms_per_order")))
	// In memory from this run, or as read back from a results file.
	var kinds []kindCost
	if b, err := json.Marshal(r["pg_statements_by_kind"]); err == nil {
		_ = json.Unmarshal(b, &kinds)
	}
	if len(kinds) == 0 {
		md.WriteString("\nStatements by kind: not measured (the server had not loaded pg_stat_statements).\n")
		return md.String()
	}
	fmt.Fprintf(&md, "\n%.1f statements per order:\n\n| kind | statements per order | execution + planning ms per order | WAL bytes per order | distinct statements |\n|---|---|---|---|---|\n",
		num(r, "pg_statements_per_order"))
	for _, k := range kinds {
		fmt.Fprintf(&md, "| %s | %.2f | %.2f | %.0f | %d |\n", k.Kind, k.CallsPerOrder, k.ExecMSPerOrd, k.WALBytesPerOr, k.Statements)
	}
	return md.String()
}

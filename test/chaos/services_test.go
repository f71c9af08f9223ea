package chaos

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	temporalclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
)

// The chaos run's own services: a Postgres cluster, a Temporal dev server
// and a Redis that it restarts or stops mid-run (the shared ones serve the
// other test packages running beside it).

// repoRoot is the repository, two levels above this package.
func repoRoot(t *testing.T) string {
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// pgCluster is a private Postgres started by scripts/postgres.sh.
type pgCluster struct {
	script string
	env    []string
	admin  string
}

func startPostgres(t *testing.T) *pgCluster {
	// The server runs as the postgres OS user when the tests run as root:
	// its directory must be reachable by it (t.TempDir is private).
	dir, err := os.MkdirTemp("", "chaos-pg-")
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(dir, 0o755)
	port := freePort(t)
	_, port, _ = strings.Cut(port, ":")
	c := &pgCluster{script: filepath.Join(repoRoot(t), "scripts", "postgres.sh"),
		env: append(withoutEnv(os.Environ(), "DATABASE_URL"), "PG_FORCE_PRIVATE=1", "PG_PRIVATE_PORT="+port, "PG_DATA_DIR="+dir)}
	t.Cleanup(func() { c.stop(t); _ = os.RemoveAll(dir) })
	c.start(t)
	return c
}

func (c *pgCluster) start(t *testing.T) {
	cmd := exec.Command(c.script)
	cmd.Env = c.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("start the chaos run's Postgres: %v\n%s", err, stderr.String())
	}
	c.admin = strings.TrimSpace(string(out))
}

func (c *pgCluster) stop(t *testing.T) {
	cmd := exec.Command(c.script, "stop")
	cmd.Env = c.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("stop the chaos run's Postgres: %v\n%s", err, out)
	}
}

// restart stops Postgres (fast: open transactions are rolled back, every
// connection is cut) and starts it again.
func (c *pgCluster) restart(t *testing.T) {
	c.stop(t)
	c.start(t)
}

// temporalServer is a Temporal CLI dev server keeping its state in a file,
// so that a restart keeps every workflow.
type temporalServer struct {
	bin, addr, db string
	logs          io.Writer
	mu            sync.Mutex
	cmd           *exec.Cmd
}

func startTemporal(t *testing.T, logs io.Writer) *temporalServer {
	bin := os.Getenv("TEMPORAL_CLI")
	if bin == "" {
		out, err := exec.Command("go", "env", "GOPATH").Output()
		if err != nil {
			t.Fatal(err)
		}
		bin = filepath.Join(strings.Split(strings.TrimSpace(string(out)), string(os.PathListSeparator))[0], "bin", "temporal")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no Temporal CLI at %s: run `make test` (it builds it)", bin)
	}
	s := &temporalServer{bin: bin, addr: freePort(t), db: filepath.Join(t.TempDir(), "temporal.db"), logs: logs}
	t.Cleanup(s.kill)
	s.start(t)
	return s
}

func (s *temporalServer) start(t *testing.T) {
	s.mu.Lock()
	host, port, _ := strings.Cut(s.addr, ":")
	cmd := exec.Command(s.bin, "server", "start-dev", "--ip", host, "--port", port, "--headless",
		"--db-filename", s.db, "--log-level", "error",
		"--search-attribute", "CompanyId=Int", "--search-attribute", "EventId=Int",
		"--search-attribute", "OrderStatus=Keyword", "--search-attribute", "IsTest=Bool")
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		t.Fatalf("start Temporal: %v", err)
	}
	s.cmd = cmd
	go func() { _ = cmd.Wait() }()
	s.mu.Unlock()
	quiet := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := temporalclient.DialContext(ctx, temporalclient.Options{HostPort: s.addr, Logger: quiet})
		if err == nil {
			_, err = c.CheckHealth(ctx, nil)
			c.Close()
		}
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Temporal did not come up on %s: %v", s.addr, err)
		}
	}
}

func (s *temporalServer) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGKILL)
		_, _ = s.cmd.Process.Wait()
		s.cmd = nil
	}
}

// restart kills the server and starts it again on its state file.
func (s *temporalServer) restart(t *testing.T) {
	s.kill()
	s.start(t)
}

// redisServer is a redis-server of the run's own.
type redisServer struct {
	addr, dir string
	mu        sync.Mutex
	cmd       *exec.Cmd
}

func startRedis(t *testing.T) *redisServer {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("the chaos run needs redis-server (scripts/test.sh installs it): %v", err)
	}
	r := &redisServer{addr: freePort(t), dir: t.TempDir()}
	t.Cleanup(r.stop)
	r.start(t)
	return r
}

func (r *redisServer) url() string { return "redis://" + r.addr + "/0" }

func (r *redisServer) start(t *testing.T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	host, port, _ := strings.Cut(r.addr, ":")
	cmd := exec.Command("redis-server", "--bind", host, "--port", port, "--save", "", "--appendonly", "no", "--dir", r.dir)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	r.cmd = cmd
	go func() { _ = cmd.Wait() }()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", r.addr, time.Second); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("redis-server did not listen on %s", r.addr)
}

func (r *redisServer) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Signal(syscall.SIGKILL)
		_, _ = r.cmd.Process.Wait()
		r.cmd = nil
	}
}

// balancer spreads requests over the api instances in turn, as the load
// balancer in front of production does. An instance that does not answer
// gets the balancer's own 502, marked so the run can tell it from the
// service's answers.
type balancer struct {
	url      string
	backends []*url.URL
	next     atomic.Uint64
}

const balancerHeader = "X-Chaos-Balancer"

func newBalancer(t *testing.T, addrs ...string) *balancer {
	b := &balancer{}
	for _, a := range addrs {
		u, _ := url.Parse("http://" + a)
		b.backends = append(b.backends, u)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(b.backends[b.next.Add(1)%uint64(len(b.backends))])
			r.Out.Host = r.In.Host
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			w.Header().Set(balancerHeader, "upstream-down")
			http.Error(w, err.Error(), http.StatusBadGateway)
		},
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	b.url = srv.URL
	return b
}

func withoutEnv(env []string, names ...string) []string {
	out := env[:0:0]
next:
	for _, kv := range env {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// answerLog keeps what the service answered: counts by status, and every
// answer a partner could not act on — a 5xx other than 503 with
// Retry-After (the balancer's own 502 for an instance that is down aside).
type answerLog struct {
	mu       sync.Mutex
	byStatus map[int]int
	bad      []string
}

func (a *answerLog) record(method, path string, res *http.Response, body []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byStatus == nil {
		a.byStatus = map[int]int{}
	}
	a.byStatus[res.StatusCode]++
	switch {
	case res.StatusCode < 500, res.Header.Get(balancerHeader) != "":
	case res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != "":
	default:
		if len(body) > 300 {
			body = body[:300]
		}
		a.bad = append(a.bad, method+" "+path+": "+res.Status+" "+string(body))
	}
}

func (a *answerLog) summary() (bad []string, byStatus map[int]int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bad, a.byStatus
}

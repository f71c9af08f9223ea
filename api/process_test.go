package api_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/api"
	"github.com/ticketsales/ticketsales/internal/app"
	"github.com/ticketsales/ticketsales/internal/config"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// freeAddr is a loopback address nothing listens on, for a listener a
// process opens itself.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// get answers a GET's status and body, or fails the test.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return res.StatusCode, string(b)
}

// The api as cmd/api runs it: the process opens its own connections from
// the settings, serves the API and /metrics on listeners of their own, and
// on the signal stops and closes what it opened.
func TestProcessRunOpensServesAndCloses(t *testing.T) {
	_, dbURL := testenv.DB(t)
	cfg := config.Defaults()
	cfg.DatabaseURL, cfg.TemporalAddress = dbURL, testenv.TemporalAddress(t)
	cfg.TaskQueue = fmt.Sprintf("test-run-%d", time.Now().UnixNano())
	cfg.HTTPAddr, cfg.MetricsAddr, cfg.MailOutbox = freeAddr(t), freeAddr(t), t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := api.NewProcess(ctx, cfg, api.ProcessOptions{Announce: true, Conns: app.Conns{Log: testenv.Log()}})
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- a.Run(ctx) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		res, err := http.Get("http://" + cfg.HTTPAddr + "/healthz")
		if err == nil {
			res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the api never answered: %v", err)
		}
	}
	if status, _ := get(t, "http://"+cfg.HTTPAddr+"/metrics"); status == http.StatusOK {
		t.Error("/metrics served on the public port")
	}
	// The registry the process made, with the requests above counted.
	if status, body := get(t, "http://"+cfg.MetricsAddr+"/metrics"); status != http.StatusOK || !strings.Contains(body, "ticketsales_http_requests_total") {
		t.Errorf("metrics listener: %d, without the api's request counts", status)
	}
	cancel()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the api did not stop")
	}
	if err := a.Conns().DB.Ping(); err == nil {
		t.Error("the database pool it opened is still open")
	}
	if err := a.Conns().Bookkeeping.Ping(); err == nil {
		t.Error("the bookkeeping pool it opened is still open")
	}
	if _, err := http.Get("http://" + cfg.MetricsAddr + "/metrics"); err == nil {
		t.Error("the metrics listener still answers")
	}
}

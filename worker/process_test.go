package worker_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/app"
	"github.com/ticketsales/ticketsales/internal/config"
	"github.com/ticketsales/ticketsales/test/testenv"
	"github.com/ticketsales/ticketsales/worker"
)

// The worker as cmd/worker runs it: the process opens its own connections
// from the settings, polls both task queues with /metrics on a listener of
// its own, and on the signal stops and closes what it opened.
func TestProcessRunOpensPollsAndCloses(t *testing.T) {
	_, dbURL := testenv.DB(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr := ln.Addr().String()
	ln.Close()
	cfg := config.Defaults()
	cfg.DatabaseURL, cfg.TemporalAddress = dbURL, testenv.TemporalAddress(t)
	cfg.TaskQueue = fmt.Sprintf("test-run-%d", time.Now().UnixNano())
	cfg.WebhookTaskQueue = cfg.TaskQueue + "-webhooks"
	cfg.WorkerMetricsAddr, cfg.MailOutbox = metricsAddr, t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := worker.NewProcess(ctx, cfg, worker.ProcessOptions{Conns: app.Conns{Log: testenv.Log()}})
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- p.Run(ctx) }()
	// The SDK's pollers of the webhook queue (its own worker polls it),
	// counted in the registry the process made; metric labels have "_"
	// for "-".
	want := `task_queue="` + strings.ReplaceAll(cfg.WebhookTaskQueue, "-", "_") + `"`
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var body string
		if res, err := http.Get("http://" + metricsAddr + "/metrics"); err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			body = string(b)
		}
		if strings.Contains(body, "temporal_num_pollers{") && strings.Contains(body, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pollers of %s on the metrics listener:\n%s", cfg.WebhookTaskQueue, body)
		}
	}
	cancel()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("the worker did not stop")
	}
	if _, err := http.Get("http://" + metricsAddr + "/metrics"); err == nil {
		t.Error("the metrics listener still answers")
	}
}

// Command worker runs the Temporal workflows and activities of the service.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/ticketsales/ticketsales/internal/app"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/internal/metrics"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/worker"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := app.Settings()
	if err != nil {
		return err
	}
	logger := cfg.Logger()
	app.TuneGC()
	// Before the work starts: threads started later inherit the priority.
	if err := app.LowerPriority(cfg.WorkerNice); err != nil {
		logger.Warn("worker priority", "nice", cfg.WorkerNice, "err", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	// The worker's own /metrics: the SDK's worker and activity metrics.
	reg := metrics.New(logger)
	metricsSrv := &http.Server{Addr: cfg.WorkerMetricsAddr, Handler: app.MetricsMux(reg.Handler(), cfg.DebugPprof), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := metricsSrv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Warn("worker metrics server", "err", err)
		}
	}()
	defer metricsSrv.Close()
	var c client.Client
	// Temporal may still be starting: retry the dial for a while.
	for attempt := 0; ; attempt++ {
		c, err = client.DialContext(ctx, app.TemporalClientOptions(cfg, logger, reg.TemporalHandler()))
		if err == nil {
			break
		}
		if attempt >= 30 || ctx.Err() != nil {
			return fmt.Errorf("connect to temporal at %s: %w", cfg.TemporalAddress, err)
		}
		time.Sleep(time.Second)
	}
	defer c.Close()

	mailer, err := mail.New(cfg.SMTPURL, cfg.MailOutbox, cfg.MailFrom)
	if err != nil {
		return fmt.Errorf("mailer: %w", err)
	}
	parts, err := worker.NewProcess(cfg, app.Conns{DB: db, Temporal: c, Metrics: reg, Log: logger}, mailer)
	if err != nil {
		return err
	}
	// The main queue's worker and the webhook queue's: they stop together
	// on SIGINT/SIGTERM, or when either fails, letting running activities
	// finish.
	workers := parts.Workers(c)
	interrupt := make(chan any)
	go func() { <-ctx.Done(); close(interrupt) }()
	ended := make(chan error, len(workers))
	for _, w := range workers {
		go func() { ended <- w.Run(interrupt) }()
	}
	go worker.Reap(ctx, parts.Reaper)
	go parts.Relay.Run(ctx)
	logger.Info("worker running", "temporal", cfg.TemporalAddress, "task_queue", cfg.TaskQueue,
		"webhook_task_queue", cfg.WebhookTaskQueue)
	var errs []error
	for range workers {
		if err := <-ended; err != nil {
			errs = append(errs, err)
			stop()
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("run worker: %w", err)
	}
	logger.Info("worker stopped")
	return nil
}

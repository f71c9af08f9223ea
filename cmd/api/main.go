// Command api serves the partner HTTP API (/v1 and /aggregator/v1), the
// OpenAPI document and docs, the buyers' order pages and the test gateway.
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
	_ "time/tzdata" // venue time zones on minimal images

	"go.temporal.io/sdk/client"

	"github.com/ticketsales/ticketsales/api"
	"github.com/ticketsales/ticketsales/internal/app"
	"github.com/ticketsales/ticketsales/internal/metrics"
	"github.com/ticketsales/ticketsales/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "api:", err)
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// The api announces its seat changes itself, batched, after commit.
	db, err := store.OpenAppNotifying(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	bookkeeping, err := store.OpenBookkeeping(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer bookkeeping.Close()
	reg := metrics.New(logger)
	reg.CollectOrders(db)
	// A lazy client lets the API start, and serve the catalog, while
	// Temporal is still coming up; /readyz/temporal reports it.
	tc, err := client.NewLazyClient(app.TemporalClientOptions(cfg, logger, reg.TemporalHandler()))
	if err != nil {
		return fmt.Errorf("temporal client: %w", err)
	}
	defer tc.Close()

	a, err := api.NewProcess(cfg, app.Conns{DB: db, Bookkeeping: bookkeeping, Temporal: tc, Metrics: reg, Log: logger},
		api.ProcessOptions{Announce: true})
	if err != nil {
		return err
	}
	a.Start()
	httpSrv := api.NewHTTPServer(cfg.HTTPAddr, a.Handler)
	// /metrics on its own listener, for the scraper only: the public port
	// must not show internals. Like the worker's, a failure to listen is
	// logged and the api serves on without it.
	metricsSrv := &http.Server{Addr: cfg.MetricsAddr, Handler: app.MetricsMux(reg.Handler(), cfg.DebugPprof), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := metricsSrv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Warn("metrics server", "addr", cfg.MetricsAddr, "err", err)
		}
	}()
	defer metricsSrv.Close()

	errc := make(chan error, 1)
	go func() { errc <- httpSrv.ListenAndServe() }()
	logger.Info("api listening", "addr", cfg.HTTPAddr, "docs", cfg.PublicBaseURL+"/docs", "metrics", cfg.MetricsAddr)
	select {
	case err := <-errc:
		a.Stop(10 * time.Second)
		return fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
	}
	// Let in-flight requests finish, then the work beside them.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := httpSrv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Error("http shutdown", "err", err)
	}
	a.Stop(10 * time.Second)
	logger.Info("api stopped")
	return nil
}

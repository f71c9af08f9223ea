// Command api serves the partner HTTP API (/v1), the OpenAPI document and docs.
package main

import (
	"log/slog"

	"context"
	"errors"
	"fmt"
	"github.com/uptrace/bun"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
	_ "time/tzdata" // venue time zones on minimal images

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"ticketsales/api"
	"ticketsales/internal/apikey"
	"ticketsales/internal/catalog"
	"ticketsales/internal/config"
	"ticketsales/internal/delivery"
	"ticketsales/internal/metrics"
	"ticketsales/internal/payment"
	"ticketsales/internal/ratelimit"
	"ticketsales/internal/requestlog"
	"ticketsales/internal/sales"
	"ticketsales/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "api:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	if err := cfg.CheckSecrets(); err != nil {
		return err
	}
	tokenKeys, err := delivery.NewKeyring(cfg.OrderTokenSecret, cfg.OrderTokenPreviousSecret...)
	if err != nil {
		return err
	}
	logger := cfg.Logger()
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
	// A lazy client lets the API start, and serve the catalog, while
	// Temporal is still coming up; /readyz/temporal reports it.
	reg := metrics.New(logger)
	reg.CollectOrders(db)
	tc, err := client.NewLazyClient(client.Options{HostPort: cfg.TemporalAddress, Namespace: cfg.TemporalNamespace,
		Logger: log.NewStructuredLogger(logger), MetricsHandler: reg.TemporalHandler()})
	if err != nil {
		return fmt.Errorf("temporal client: %w", err)
	}
	defer tc.Close()

	rl := requestlog.NewWriter(bookkeeping, logger, cfg.RequestLogFlush)
	cat := catalog.New(db, time.Now)
	go cat.Listen(ctx, cfg.DatabaseURL, logger)
	sl := sales.New(db, tc, logger, time.Now)
	// The notifier outlives the shutdown signal: requests still finishing
	// after it announce their changes too (stopped last, below).
	notifier := store.NewNotifier(bookkeeping, logger, 50*time.Millisecond)
	notifyCtx, stopNotifier := context.WithCancel(context.Background())
	defer stopNotifier()
	notifierDone := make(chan struct{})
	go func() { notifier.Run(notifyCtx); close(notifierDone) }()
	sl.SeatsChanged = func(eventID int64) {
		cat.Invalidate(eventID)
		notifier.Changed(eventID)
	}
	sl.TaskQueue = cfg.TaskQueue
	sl.Metrics = reg
	sl.Starter = sales.NewStarter(bookkeeping, tc, logger, cfg.TaskQueue, cfg.StartQueue, cfg.StartWorkers)
	sl.Starter.Run()
	sl.CacheSaleContext(cfg.SaleCacheTTL)
	gateways, testGateway := payment.NewSet(db, logger, cfg.Gateways())
	sl.Orders = sales.OrderSettings{PaymentWindow: cfg.PaymentWindow, SandboxLifetime: cfg.SandboxLifetime,
		Links: delivery.Links{BaseURL: cfg.PublicBaseURL, Keys: tokenKeys}, Gateways: gateways,
		TestGatewayForProduction: cfg.Development(), RefundRetryBudget: cfg.RefundRetryBudget}
	var limiter ratelimit.Limiter = ratelimit.NewMemory()
	if cfg.RedisURL != "" {
		// Several api instances share one budget per key through Redis.
		if limiter, err = ratelimit.NewRedis(cfg.RedisURL); err != nil {
			return err
		}
	}
	var authFailures *ratelimit.Failures
	if cfg.AuthFailureRPS > 0 {
		authFailures = ratelimit.NewFailures(ratelimit.Limit{Rate: cfg.AuthFailureRPS, Burst: cfg.AuthFailureBurst})
	}
	srv := api.New(api.Deps{DB: db, Bookkeeping: bookkeeping, Temporal: tc, Auth: apikey.NewAuthenticator(db, cfg.AuthCacheTTL),
		Catalog: cat, Sales: sl, RequestLog: rl, Log: logger,
		Gateway: testGateway, HostedGateway: cfg.GatewayURL != "", GatewaySecret: []byte(cfg.GatewaySecret), SandboxEnabled: cfg.SandboxEnabled,
		Metrics: reg, Limiter: limiter, DefaultLimit: ratelimit.Limit{Rate: cfg.RateLimitRPS, Burst: cfg.RateLimitBurst},
		AuthFailures: authFailures, ClientIPHeader: cfg.ClientIPHeader})
	go housekeeping(ctx, db, logger, cfg.RequestLogRetention)
	if testGateway != nil {
		go testGateway.Redeliver(ctx, 5*time.Second)
	}
	httpSrv := &http.Server{Addr: cfg.HTTPAddr, Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	// /metrics on its own listener, for the scraper only: the public port
	// must not show internals. Like the worker's, a failure to listen is
	// logged and the api serves on without it.
	metricsMux := http.NewServeMux()
	metricsMux.Handle("GET /metrics", reg.Handler())
	metricsSrv := &http.Server{Addr: cfg.MetricsAddr, Handler: metricsMux, ReadHeaderTimeout: 5 * time.Second}
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
		return fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
	}
	// Let in-flight requests finish, then write the queued request log.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := httpSrv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Error("http shutdown", "err", err)
	}
	sl.Starter.Close(10 * time.Second)
	stopNotifier()
	<-notifierDone
	rl.Close()
	logger.Info("api stopped")
	return nil
}

// housekeeping deletes idempotency records past their 24 hours and request
// log entries past their retention, every ten minutes, until ctx ends.
func housekeeping(ctx context.Context, db *bun.DB, logger *slog.Logger, retention time.Duration) {
	t := time.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		now := time.Now()
		if n, err := store.DeleteExpiredIdempotencyKeys(ctx, db, now); err != nil {
			logger.Warn("idempotency cleanup", "err", err)
		} else if n > 0 {
			logger.Info("idempotency cleanup", "deleted", n)
		}
		if n, err := store.DeleteRequestLogBefore(ctx, db, now.Add(-retention)); err != nil {
			logger.Warn("request log cleanup", "err", err)
		} else if n > 0 {
			logger.Info("request log cleanup", "deleted", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Package app builds the service from its settings, in one place: the api
// process, the worker process and the test stack all come from here, so
// what runs in tests is wired as what runs in production.
package app

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"ticketsales/activities"
	"ticketsales/api"
	"ticketsales/internal/apikey"
	"ticketsales/internal/catalog"
	"ticketsales/internal/config"
	"ticketsales/internal/delivery"
	"ticketsales/internal/mail"
	"ticketsales/internal/metrics"
	"ticketsales/internal/payment"
	"ticketsales/internal/ratelimit"
	"ticketsales/internal/requestlog"
	"ticketsales/internal/sales"
	"ticketsales/store"
	"ticketsales/worker"
)

// Settings reads the settings from the environment, refusing outside
// development the secrets a process must not run with: both processes start
// here.
func Settings() (config.Config, error) {
	cfg, err := config.Load()
	if err != nil {
		return cfg, err
	}
	return cfg, cfg.CheckSecrets()
}

// Orders are the order saga's settings: the order page links with their
// token keyring, and the deployment's gateways (the test gateway is
// returned too: the api serves its pages).
func Orders(cfg config.Config, db *bun.DB, log *slog.Logger) (sales.OrderSettings, *payment.TestGateway, error) {
	keys, err := delivery.NewKeyring(cfg.OrderTokenSecret, cfg.OrderTokenPreviousSecret...)
	if err != nil {
		return sales.OrderSettings{}, nil, err
	}
	if !cfg.Development() {
		// Links of old orders derived from the public development secret
		// are forgeable: they open nothing and are replaced when shown.
		keys.Refuse(config.DevelopmentOrderTokenSecret)
	}
	gateways, test := payment.NewSet(db, log, cfg.Gateways())
	return sales.OrderSettings{PaymentWindow: cfg.PaymentWindow, SandboxLifetime: cfg.SandboxLifetime,
		Links: delivery.Links{BaseURL: cfg.PublicBaseURL, Keys: keys}, Gateways: gateways,
		TestGatewayForProduction: cfg.Development(), RefundRetryBudget: cfg.RefundRetryBudget}, test, nil
}

// Conns are the connections a process works over.
type Conns struct {
	DB *bun.DB
	// Bookkeeping is the api's pool for records that need no WAL flush of
	// their own (store.OpenBookkeeping).
	Bookkeeping *bun.DB
	Temporal    client.Client
	Metrics     *metrics.Registry
	Log         *slog.Logger
}

// APIOptions are what a test varies beyond the settings.
type APIOptions struct {
	Now func() time.Time // nil: time.Now
	// Announce: the api announces its seat changes after commit (a batched
	// notifier; open DB with store.OpenAppNotifying) and keeps its
	// availability cache fresh from notifications, as a deployment of
	// several instances must. Off: it only drops its own cache entries.
	Announce bool
	// Limiter replaces the one the settings choose (Redis or memory).
	Limiter ratelimit.Limiter
}

// API is the api process: its handler and the work beside it.
type API struct {
	Handler     http.Handler
	Deps        api.Deps // what Handler serves from, for a variant of it
	Sales       *sales.Service
	Catalog     *catalog.Service
	TestGateway *payment.TestGateway // nil: not mounted
	cfg         config.Config
	conns       Conns
	starter     *sales.Starter
	notifier    *store.Notifier
	announce    bool
	stop        context.CancelFunc
	background  sync.WaitGroup
	// The notifier outlives the other work: requests still finishing after
	// the shutdown signal announce their changes too (Stop ends it last).
	stopNotifier context.CancelFunc
	notifierEnd  chan struct{}
}

// NewAPI builds the api from its settings.
func NewAPI(cfg config.Config, c Conns, opt APIOptions) (*API, error) {
	orders, test, err := Orders(cfg, c.DB, c.Log)
	if err != nil {
		return nil, err
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	a := &API{cfg: cfg, conns: c, TestGateway: test, announce: opt.Announce, notifierEnd: make(chan struct{})}
	a.Catalog = catalog.New(c.DB, opt.Now)
	a.starter = sales.NewStarter(c.Bookkeeping, c.Temporal, c.Log, cfg.TaskQueue, cfg.StartQueue, cfg.StartWorkers)
	changed := a.Catalog.Invalidate
	if opt.Announce {
		a.notifier = store.NewNotifier(c.Bookkeeping, c.Log, 50*time.Millisecond)
		changed = func(eventID int64) {
			a.Catalog.Invalidate(eventID)
			a.notifier.Changed(eventID)
		}
	}
	a.Sales = sales.New(sales.Deps{DB: c.DB, Temporal: c.Temporal, Log: c.Log, Now: opt.Now, Metrics: c.Metrics,
		SeatsChanged: changed, Starter: a.starter},
		sales.Settings{TaskQueue: cfg.TaskQueue, Orders: orders, SaleCacheTTL: cfg.SaleCacheTTL})
	limiter := opt.Limiter
	if limiter == nil {
		limiter = ratelimit.NewMemory()
		if cfg.RedisURL != "" {
			// Several api instances share one budget per key through Redis.
			if limiter, err = ratelimit.NewRedis(cfg.RedisURL); err != nil {
				return nil, err
			}
		}
	}
	var authFailures *ratelimit.Failures
	if cfg.AuthFailureRPS > 0 {
		authFailures = ratelimit.NewFailures(ratelimit.Limit{Rate: cfg.AuthFailureRPS, Burst: cfg.AuthFailureBurst})
	}
	a.Deps = api.Deps{DB: c.DB, Bookkeeping: c.Bookkeeping, Temporal: c.Temporal, Auth: apikey.NewAuthenticator(c.DB, cfg.AuthCacheTTL),
		Catalog: a.Catalog, Sales: a.Sales, RequestLog: requestlog.NewWriter(c.Bookkeeping, c.Log, cfg.RequestLogFlush), Log: c.Log,
		Gateway: test, HostedGateway: cfg.GatewayURL != "", GatewaySecret: []byte(cfg.GatewaySecret), SandboxEnabled: cfg.SandboxEnabled,
		Metrics: c.Metrics, Limiter: limiter, DefaultLimit: ratelimit.Limit{Rate: cfg.RateLimitRPS, Burst: cfg.RateLimitBurst},
		AuthFailures: authFailures, ClientIPHeader: cfg.ClientIPHeader}
	a.Handler = api.New(a.Deps)
	return a, nil
}

// Start runs the work beside the handler: the workflow starter, the
// availability listener and the change notifier (when announcing), the
// test gateway's redelivery, and housekeeping.
func (a *API) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	a.stop = cancel
	a.starter.Run()
	notifyCtx, stopNotifier := context.WithCancel(context.Background())
	a.stopNotifier = stopNotifier
	if a.announce {
		go func() { a.notifier.Run(notifyCtx); close(a.notifierEnd) }()
		a.spawn(func() { a.Catalog.Listen(ctx, a.cfg.DatabaseURL, a.conns.Log) })
	} else {
		close(a.notifierEnd)
	}
	if a.TestGateway != nil {
		a.spawn(func() { a.TestGateway.Redeliver(ctx, 5*time.Second) })
	}
	a.spawn(func() { housekeeping(ctx, a.conns.DB, a.conns.Log, a.cfg.RequestLogRetention) })
}

func (a *API) spawn(f func()) {
	a.background.Add(1)
	go func() { defer a.background.Done(); f() }()
}

// Stop ends the work Start began, once the HTTP server stopped taking
// requests: queued workflow starts are made, the last changes announced,
// the queued request log written.
func (a *API) Stop(timeout time.Duration) {
	if a.stop == nil { // never started
		a.Deps.RequestLog.Close()
		return
	}
	a.stop()
	a.background.Wait()
	a.starter.Close(timeout)
	a.stopNotifier()
	<-a.notifierEnd
	a.Deps.RequestLog.Close()
}

// housekeeping deletes idempotency records past their 24 hours and request
// log entries past their retention, every ten minutes, until ctx ends.
func housekeeping(ctx context.Context, db *bun.DB, logger *slog.Logger, retention time.Duration) {
	t := time.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		now := time.Now()
		if n, err := store.DeleteExpiredIdempotencyKeys(ctx, db, now); err != nil && ctx.Err() == nil {
			logger.Warn("idempotency cleanup", "err", err)
		} else if n > 0 {
			logger.Info("idempotency cleanup", "deleted", n)
		}
		if n, err := store.DeleteRequestLogBefore(ctx, db, now.Add(-retention)); err != nil && ctx.Err() == nil {
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

// Worker is the worker process: the activities its Temporal worker runs and
// the reaper beside it.
type Worker struct {
	Activities *activities.Activities
	Reaper     worker.Reaper
}

// NewWorker builds the worker from its settings; mailer sends production
// orders their tickets.
func NewWorker(cfg config.Config, c Conns, mailer mail.Sender) (*Worker, error) {
	orders, _, err := Orders(cfg, c.DB, c.Log)
	if err != nil {
		return nil, err
	}
	// The reaper restarts refunds through the same sales rules as the api.
	refunds := sales.New(sales.Deps{DB: c.DB, Temporal: c.Temporal, Log: c.Log},
		sales.Settings{TaskQueue: cfg.TaskQueue, Orders: orders})
	return &Worker{
		Activities: &activities.Activities{DB: c.DB, Mailer: mailer, Links: orders.Links, Gateways: orders.Gateways,
			Metrics: c.Metrics, Log: c.Log},
		Reaper: worker.Reaper{DB: c.DB, Temporal: c.Temporal, TaskQueue: cfg.TaskQueue, Log: c.Log,
			Interval: cfg.ReapInterval, Grace: cfg.ReapGrace,
			Payments: sales.PaymentSweep{DB: c.DB, Temporal: c.Temporal, Gateways: orders.Gateways},
			Refunds:  refunds, RefundResumeAfter: cfg.RefundResumeAfter},
	}, nil
}

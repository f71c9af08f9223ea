package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"github.com/ticketsales/ticketsales/api/cabinet"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/app"
	"github.com/ticketsales/ticketsales/internal/catalog"
	"github.com/ticketsales/ticketsales/internal/checkin"
	"github.com/ticketsales/ticketsales/internal/config"
	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/internal/metrics"
	"github.com/ticketsales/ticketsales/internal/orders"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/internal/payment"
	"github.com/ticketsales/ticketsales/internal/ratelimit"
	"github.com/ticketsales/ticketsales/internal/refunds"
	"github.com/ticketsales/ticketsales/internal/requestlog"
	"github.com/ticketsales/ticketsales/internal/seatmap"
	"github.com/ticketsales/ticketsales/internal/webhooks"
	"github.com/ticketsales/ticketsales/store"
)

// ProcessOptions are what a test varies beyond the settings.
type ProcessOptions struct {
	Now func() time.Time // nil: time.Now
	// Announce: the api announces its seat changes after commit (a batched
	// notifier, over a pool from store.OpenAppNotifying) and keeps its
	// availability cache fresh from notifications, as a deployment of
	// several instances must. Off: it only drops its own cache entries.
	Announce bool
	// Limiter replaces the one the settings choose (Redis or memory).
	Limiter ratelimit.Limiter
	// RedisPrefix starts the process's keys in Redis ("": "ratelimit:");
	// tests sharing one Redis give each deployment its own.
	RedisPrefix string
	// Conns are connections the caller opened and closes: tests share one
	// database and Temporal client among instances. Each one left nil the
	// process opens from the settings and closes in Stop: DB (with
	// store.OpenAppNotifying when announcing, else store.Open),
	// Bookkeeping (store.OpenBookkeeping), a lazy Temporal client, a
	// metrics registry that also counts DB's orders, and cfg.Logger().
	Conns app.Conns
}

// Process is the api process: its handler and the work beside it.
type Process struct {
	Handler http.Handler
	Deps    Deps // what Handler serves from, for a variant of it
	Holds   *holds.Service
	Orders  *orders.Service
	Refunds *refunds.Service
	// Distribution: channels, allocations, windows, releases.
	Distribution *distribution.Service
	Catalog      *catalog.Service
	Users        *organizer.Service   // the cabinet's users and sign-in limits
	TestGateway  *payment.TestGateway // nil: not mounted
	cfg          config.Config
	redis        *redis.Client // nil: no REDIS_URL
	conns        app.Conns
	opened       []func() // closes what NewProcess opened, newest first
	starter      *holds.Starter
	notifier     *store.Notifier
	announce     bool
	stop         context.CancelFunc
	background   sync.WaitGroup
	// The notifier outlives the other work: requests still finishing after
	// the shutdown signal announce their changes too (Stop ends it last).
	stopNotifier context.CancelFunc
	notifierEnd  chan struct{}
}

// NewProcess builds the api process from its settings: the one place it
// is assembled, for cmd/api and for the tests' instances alike. It opens
// the connections opt.Conns leaves nil; ctx bounds the opening only.
func NewProcess(ctx context.Context, cfg config.Config, opt ProcessOptions) (_ *Process, err error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	a := &Process{cfg: cfg, announce: opt.Announce, notifierEnd: make(chan struct{})}
	defer func() {
		if err != nil {
			if a.redis != nil {
				_ = a.redis.Close()
			}
			a.closeConns()
		}
	}()
	if a.conns, err = a.open(ctx, opt.Conns); err != nil {
		return nil, err
	}
	c := a.conns
	a.Catalog = catalog.New(c.DB, opt.Now)
	a.starter = holds.NewStarter(c.Bookkeeping, c.Temporal, c.Log, cfg.TaskQueue, cfg.StartQueue, cfg.StartWorkers)
	changed := a.Catalog.Invalidate
	if opt.Announce {
		a.notifier = store.NewNotifier(c.Bookkeeping, c.Log, 50*time.Millisecond)
		changed = func(eventID int64) {
			a.Catalog.Invalidate(eventID)
			a.notifier.Changed(eventID)
		}
	}
	var noticesComing func() bool // refusals from memory need the listener (Start runs it when announcing)
	if opt.Announce {
		noticesComing = a.Catalog.Listening
	}
	sv, err := app.NewServices(cfg, c, holds.Deps{Now: opt.Now, Metrics: c.Metrics,
		SeatsChanged: changed, Starter: a.starter, NoticesComing: noticesComing})
	if err != nil {
		return nil, err
	}
	a.Holds, a.Orders, a.Refunds, a.Distribution, a.TestGateway = sv.Holds, sv.Orders, sv.Refunds, sv.Distribution, sv.TestGateway
	// With REDIS_URL the instances of a deployment share one request
	// budget per key and one failure budget per client through Redis;
	// without it each instance has its own.
	var budgets *ratelimit.Shared // nil: budgets in memory
	prefix := opt.RedisPrefix
	if prefix == "" {
		prefix = "ratelimit:"
	}
	if cfg.RedisURL != "" {
		if a.redis, err = ratelimit.Connect(cfg.RedisURL); err != nil {
			return nil, err
		}
		budgets = ratelimit.NewShared(a.redis, prefix, func(budget string, err error) {
			c.Metrics.RedisFallback(budget)
			if err != nil {
				c.Log.Warn("failure budget decided in this instance's memory until Redis answers", "budget", budget, "err", err)
			}
		})
	}
	limiter := opt.Limiter
	if limiter == nil {
		limiter = ratelimit.NewMemory()
		if a.redis != nil {
			limiter = ratelimit.RedisLimiter(a.redis, ratelimit.RedisOptions{Prefix: prefix, OnFallback: func(err error) {
				c.Metrics.RedisFallback("rate_limits")
				if err != nil {
					c.Log.Warn("request limits decided in this instance's memory until Redis answers", "err", err)
				}
			}})
		}
	}
	var authFailures ratelimit.Budget
	if cfg.AuthFailureRPS > 0 {
		authFailures = budgets.Budget("auth", ratelimit.Limit{Rate: cfg.AuthFailureRPS, Burst: cfg.AuthFailureBurst})
	}
	// Authenticators' secrets are sealed under the order token secret (a
	// key derived for that use alone), as events' signing keys are.
	a.Users = organizer.New(c.DB, opt.Now, organizer.Limits{Budgets: budgets, PasswordChecks: cfg.CabinetPasswordChecks,
		SealSecrets: append([]string{cfg.OrderTokenSecret}, cfg.OrderTokenPreviousSecret...)})
	auth := apikey.NewAuthenticator(c.DB, cfg.AuthCacheTTL)
	hooks := &webhooks.Service{DB: c.DB, Temporal: c.Temporal, TaskQueue: cfg.WebhookTaskQueue, Rules: app.WebhookRules(cfg),
		Retry: app.WebhookRetry(cfg), Limits: app.WebhookLimits(cfg), Limiter: limiter, Log: c.Log}
	// The cabinet sends the team's invitations itself (the worker sends
	// tickets): the same SMTP server, or the outbox in development.
	mailer, err := mail.New(cfg.SMTPURL, cfg.MailOutbox, cfg.MailFrom)
	if err != nil {
		return nil, fmt.Errorf("cabinet mail: %w", err)
	}
	cab := cabinet.New(cabinet.Deps{DB: c.DB, Users: a.Users, Auth: auth,
		CatalogChanged: changed, PublicBaseURL: cfg.PublicBaseURL, ClientIPHeader: cfg.ClientIPHeader, Log: c.Log, Now: opt.Now,
		Orders: a.Orders, Refunds: a.Refunds, Webhooks: hooks, Temporal: c.Temporal,
		TemporalNamespace: cfg.TemporalNamespace, TemporalUIURL: cfg.TemporalUIURL, Mail: mailer,
		Distribution: a.Distribution})
	// Seat map tokens are signed under the order token secret too (a key
	// derived for that use alone), verified under the previous ones.
	seatMapTokens, err := seatmap.NewSigner(cfg.OrderTokenSecret, cfg.OrderTokenPreviousSecret...)
	if err != nil {
		return nil, err
	}
	a.Deps = Deps{SeatMapTokens: seatMapTokens, SeatMapLimit: ratelimit.Limit{Rate: cfg.SeatMapRateRPS, Burst: cfg.SeatMapRateBurst},
		DB: c.DB, Bookkeeping: c.Bookkeeping, Temporal: c.Temporal, Auth: auth,
		Catalog: a.Catalog, Holds: a.Holds, Orders: a.Orders, Refunds: a.Refunds, Distribution: a.Distribution, RequestLog: requestlog.NewWriter(c.Bookkeeping, c.Log, cfg.RequestLogFlush, c.Metrics), Log: c.Log,
		Gateway: a.TestGateway, HostedGateway: cfg.GatewayURL != "", GatewaySecret: []byte(cfg.GatewaySecret), SandboxEnabled: cfg.SandboxEnabled,
		Metrics: c.Metrics, Limiter: limiter, DefaultLimit: ratelimit.Limit{Rate: cfg.RateLimitRPS, Burst: cfg.RateLimitBurst},
		AuthFailures: authFailures, ClientIPHeader: cfg.ClientIPHeader, PublicBaseURL: cfg.PublicBaseURL,
		CheckIn: &checkin.Service{DB: c.DB}, Offline: &checkin.Offline{DB: c.DB, Codes: a.Orders.Links().Codes},
		Webhooks: hooks, Cabinet: cab}
	a.Handler = New(a.Deps)
	return a, nil
}

// open opens the connections c leaves nil and records how to close each
// one it opened.
func (a *Process) open(ctx context.Context, c app.Conns) (app.Conns, error) {
	if c.Log == nil {
		c.Log = a.cfg.Logger()
	}
	var err error
	if c.DB == nil {
		// An announcing api tells of its own seat changes, batched, after
		// commit: the seat triggers stay silent for its pool.
		openDB := store.Open
		if a.announce {
			openDB = store.OpenAppNotifying
		}
		if c.DB, err = openDB(ctx, a.cfg.DatabaseURL); err != nil {
			return c, err
		}
		a.opened = append(a.opened, func() { _ = c.DB.Close() })
	}
	if c.Bookkeeping == nil {
		if c.Bookkeeping, err = store.OpenBookkeeping(ctx, a.cfg.DatabaseURL); err != nil {
			return c, err
		}
		a.opened = append(a.opened, func() { _ = c.Bookkeeping.Close() })
	}
	if c.Metrics == nil {
		c.Metrics = metrics.New(c.Log)
		c.Metrics.CollectOrders(c.DB)
	}
	if c.Temporal == nil {
		// A lazy client lets the api start, and serve the catalog, while
		// Temporal is still coming up; /readyz/temporal reports it.
		if c.Temporal, err = client.NewLazyClient(app.TemporalClientOptions(a.cfg, c.Log, c.Metrics.TemporalHandler())); err != nil {
			return c, fmt.Errorf("temporal client: %w", err)
		}
		a.opened = append(a.opened, c.Temporal.Close)
	}
	return c, nil
}

// Conns are the connections the process works over, the ones it opened
// included: another instance or a worker of the same deployment may share
// them while this process runs.
func (a *Process) Conns() app.Conns { return a.conns }

// Run is the api process as cmd/api runs it: the API on HTTP_ADDR and
// /metrics on METRICS_ADDR (a failure to listen there is logged, and the
// api serves on), until ctx ends or the API's listener fails. Then
// in-flight requests finish (20 s), the work beside them stops, and the
// connections the process opened close.
func (a *Process) Run(ctx context.Context) error {
	log := a.conns.Log
	a.Start()
	metricsSrv := app.ServeMetrics(a.cfg.MetricsAddr, a.conns.Metrics.Handler(), a.cfg.DebugPprof, log)
	httpSrv := NewHTTPServer(a.cfg.HTTPAddr, a.Handler)
	errc := make(chan error, 1)
	go func() { errc <- httpSrv.ListenAndServe() }()
	log.Info("api listening", "addr", a.cfg.HTTPAddr, "docs", a.cfg.PublicBaseURL+"/docs", "metrics", a.cfg.MetricsAddr)
	var err error
	select {
	case err = <-errc:
		err = fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
		// Let in-flight requests finish, then the work beside them.
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if err := httpSrv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http shutdown", "err", err)
		}
		cancel()
	}
	a.stopWork(10 * time.Second)
	_ = metricsSrv.Close()
	a.closeConns()
	if err == nil {
		log.Info("api stopped")
	}
	return err
}

// Start runs the work beside the handler: the workflow starter, the
// availability listener and the change notifier (when announcing), the
// test gateway's redelivery, and housekeeping.
func (a *Process) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	a.stop = cancel
	a.starter.Run()
	notifyCtx, stopNotifier := context.WithCancel(context.Background())
	a.stopNotifier = stopNotifier
	if a.announce {
		go func() { a.notifier.Run(notifyCtx); close(a.notifierEnd) }()
		// Other processes' seat changes: the holds forget the seats they
		// saw taken in that event. The catalog and the holds each need the
		// other, so the hook is Listen's, not the catalog's constructor's.
		a.spawn(func() { a.Catalog.Listen(ctx, a.cfg.DatabaseURL, a.conns.Log, a.Holds.SeatsChangedElsewhere) })
	} else {
		close(a.notifierEnd)
	}
	if a.TestGateway != nil {
		a.spawn(func() { a.TestGateway.Redeliver(ctx, 5*time.Second) })
	}
	a.spawn(func() { housekeeping(ctx, a.conns.DB, a.conns.Log, a.cfg.RequestLogRetention, a.cfg.WebhookRetention) })
}

func (a *Process) spawn(f func()) {
	a.background.Add(1)
	go func() { defer a.background.Done(); f() }()
}

// Stop ends the work Start began, once the HTTP server stopped taking
// requests: queued workflow starts are made, the last changes announced,
// the queued request log written. Then it closes the connections
// NewProcess opened.
func (a *Process) Stop(timeout time.Duration) {
	a.stopWork(timeout)
	a.closeConns()
}

func (a *Process) stopWork(timeout time.Duration) {
	if a.redis != nil {
		defer a.redis.Close()
	}
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

// closeConns closes what NewProcess opened, the newest first.
func (a *Process) closeConns() {
	for i := len(a.opened) - 1; i >= 0; i-- {
		a.opened[i]()
	}
	a.opened = nil
}

// housekeeping deletes idempotency records past their 24 hours, expired
// cabinet sessions, sign-in addresses not used for KnownAddressLifetime,
// request log entries and webhook events past their retention, every ten
// minutes, until ctx ends.
func housekeeping(ctx context.Context, db *bun.DB, logger *slog.Logger, retention, webhookRetention time.Duration) {
	t := time.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		now := time.Now()
		if n, err := store.DeleteExpiredIdempotencyKeys(ctx, db, now); err != nil && ctx.Err() == nil {
			logger.Warn("idempotency cleanup", "err", err)
		} else if n > 0 {
			logger.Info("idempotency cleanup", "deleted", n)
		}
		if n, err := store.DeleteExpiredCabinetSessions(ctx, db, now); err != nil && ctx.Err() == nil {
			logger.Warn("cabinet session cleanup", "err", err)
		} else if n > 0 {
			logger.Info("cabinet session cleanup", "deleted", n)
		}
		if err := store.ClearStaleAPIKeyReveals(ctx, db, apikey.RevealMaxAge); err != nil && ctx.Err() == nil {
			logger.Warn("new key reveal cleanup", "err", err)
		}
		if n, err := store.DeleteCabinetAddressesBefore(ctx, db, now.Add(-organizer.KnownAddressLifetime)); err != nil && ctx.Err() == nil {
			logger.Warn("cabinet sign-in address cleanup", "err", err)
		} else if n > 0 {
			logger.Info("cabinet sign-in address cleanup", "deleted", n)
		}
		if n, err := store.DeleteRequestLogBefore(ctx, db, now.Add(-retention)); err != nil && ctx.Err() == nil {
			logger.Warn("request log cleanup", "err", err)
		} else if n > 0 {
			logger.Info("request log cleanup", "deleted", n)
		}
		if n, err := store.DeleteWebhookEventsBefore(ctx, db, now.Add(-webhookRetention)); err != nil && ctx.Err() == nil {
			logger.Warn("webhook events cleanup", "err", err)
		} else if n > 0 {
			logger.Info("webhook events cleanup", "deleted", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

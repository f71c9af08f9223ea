package worker

import (
	"context"
	"errors"
	"fmt"

	sdkworker "go.temporal.io/sdk/worker"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/internal/app"
	"github.com/ticketsales/ticketsales/internal/config"
	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/internal/metrics"
	"github.com/ticketsales/ticketsales/internal/orders"
	"github.com/ticketsales/ticketsales/internal/webhooks"
	"github.com/ticketsales/ticketsales/store"
)

// ProcessOptions are what a test varies beyond the settings.
type ProcessOptions struct {
	// Conns are connections the caller opened and closes: the test stack
	// shares its api's. Each one left nil the process opens from the
	// settings and closes in Close: DB (store.Open), a Temporal client
	// dialled as DialTemporal does, a metrics registry of its own, and
	// cfg.Logger(). Bookkeeping is the api's alone.
	Conns app.Conns
	// Mailer sends the tickets e-mails (nil: the settings' SMTP_URL, else
	// MAIL_OUTBOX), unless NoMailer: then none is sent, and a production
	// order's e-mail fails for good (tests that send none).
	Mailer   mail.Sender
	NoMailer bool
}

// Process is the worker process: the activities its Temporal workers run,
// the reaper beside them, and the webhook relay that moves the outbox to
// Temporal.
type Process struct {
	Activities *activities.Activities
	Reaper     Reaper
	Relay      *webhooks.Relay
	// TaskQueue is the main queue; WebhookTaskQueue the deliveries' own,
	// polled within WebhookLimits.
	TaskQueue, WebhookTaskQueue string
	WebhookLimits               WebhookLimits
	cfg                         config.Config
	conns                       app.Conns
	opened                      []func() // closes what NewProcess opened, newest first
}

// NewProcess builds the worker process from its settings: the one place
// it is assembled, for cmd/worker and for the test stack alike. It opens
// the connections opt.Conns leaves nil; ctx bounds the opening only (the
// dial to Temporal waits up to 30 s for it to come up).
func NewProcess(ctx context.Context, cfg config.Config, opt ProcessOptions) (_ *Process, err error) {
	p := &Process{cfg: cfg}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	if p.conns, err = p.open(ctx, opt.Conns); err != nil {
		return nil, err
	}
	c := p.conns
	mailer := opt.Mailer
	if mailer == nil && !opt.NoMailer {
		if mailer, err = mail.New(cfg.SMTPURL, cfg.MailOutbox, cfg.MailFrom); err != nil {
			return nil, fmt.Errorf("mailer: %w", err)
		}
	}
	// The reaper and the webhook relay work through the same selling rules
	// as the api.
	sv, err := app.NewServices(cfg, c, holds.Deps{})
	if err != nil {
		return nil, err
	}
	sale := sv.Orders.Settings
	payloads := webhooks.Payloads{DB: c.DB, Orders: sv.Orders, Refunds: sv.Refunds, Holds: sv.Holds}
	p.Activities = &activities.Activities{DB: c.DB, Mailer: mailer, Links: sale.Links, Gateways: sale.Gateways,
		Metrics: c.Metrics, Log: c.Log, Webhooks: activities.WebhookSettings{Rules: app.WebhookRules(cfg)}}
	p.Relay = &webhooks.Relay{DB: c.DB, Temporal: c.Temporal, TaskQueue: cfg.WebhookTaskQueue, Render: payloads.Render,
		Retry: app.WebhookRetry(cfg),
		Log:   c.Log, Interval: cfg.WebhookRelayInterval, Grace: 10 * cfg.WebhookRelayInterval}
	p.Reaper = Reaper{DB: c.DB, Temporal: c.Temporal, TaskQueue: cfg.TaskQueue, Log: c.Log,
		Interval: cfg.ReapInterval, Grace: cfg.ReapGrace,
		Payments: orders.PaymentSweep{DB: c.DB, Temporal: c.Temporal, Gateways: sale.Gateways},
		Refunds:  sv.Refunds, RefundResumeAfter: cfg.RefundResumeAfter, Releases: sv.Distribution}
	p.TaskQueue, p.WebhookTaskQueue = cfg.TaskQueue, cfg.WebhookTaskQueue
	p.WebhookLimits = WebhookLimits{Activities: cfg.WebhookWorkerActivities, WorkflowTasks: cfg.WebhookWorkerWorkflowTasks,
		Pollers: cfg.WebhookWorkerPollers, AttemptsPerSecond: cfg.WebhookAttemptsPerSecond}
	return p, nil
}

// open opens the connections c leaves nil and records how to close each
// one it opened.
func (p *Process) open(ctx context.Context, c app.Conns) (app.Conns, error) {
	if c.Log == nil {
		c.Log = p.cfg.Logger()
	}
	var err error
	if c.DB == nil {
		if c.DB, err = store.Open(ctx, p.cfg.DatabaseURL); err != nil {
			return c, err
		}
		p.opened = append(p.opened, func() { _ = c.DB.Close() })
	}
	if c.Metrics == nil {
		// The worker's own /metrics: the SDK's worker and activity metrics.
		c.Metrics = metrics.New(c.Log)
	}
	if c.Temporal == nil {
		if c.Temporal, err = app.DialTemporal(ctx, p.cfg, c.Log, c.Metrics.TemporalHandler()); err != nil {
			return c, err
		}
		p.opened = append(p.opened, c.Temporal.Close)
	}
	return c, nil
}

// Workers are the process's Temporal workers, not started: the main one,
// and the webhook queue's own. A deployment that sets the webhook queue to
// the main one runs the main worker alone, deliveries beside the sagas.
func (p *Process) Workers() []sdkworker.Worker {
	c := p.conns.Temporal
	ws := []sdkworker.Worker{New(c, p.TaskQueue, p.Activities)}
	if p.WebhookTaskQueue != p.TaskQueue {
		ws = append(ws, NewWebhooks(c, p.WebhookTaskQueue, p.WebhookLimits, p.Activities))
	}
	return ws
}

// Run is the worker process as cmd/worker runs it: /metrics on
// WORKER_METRICS_ADDR (a failure to listen there is logged, and the worker
// runs on), the Temporal workers, the reaper and the webhook relay, until
// ctx ends or a worker fails. The workers stop together, letting running
// activities finish; then the connections the process opened close.
func (p *Process) Run(ctx context.Context) error {
	defer p.Close()
	log := p.conns.Log
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	metricsSrv := app.ServeMetrics(p.cfg.WorkerMetricsAddr, p.conns.Metrics.Handler(), p.cfg.DebugPprof, log)
	defer metricsSrv.Close()
	workers := p.Workers()
	interrupt := make(chan any)
	go func() { <-ctx.Done(); close(interrupt) }()
	ended := make(chan error, len(workers))
	for _, w := range workers {
		go func() { ended <- w.Run(interrupt) }()
	}
	go Reap(ctx, p.Reaper)
	go p.Relay.Run(ctx)
	log.Info("worker running", "temporal", p.cfg.TemporalAddress, "task_queue", p.TaskQueue,
		"webhook_task_queue", p.WebhookTaskQueue)
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
	log.Info("worker stopped")
	return nil
}

// Close closes the connections NewProcess opened, the newest first.
func (p *Process) Close() {
	for i := len(p.opened) - 1; i >= 0; i-- {
		p.opened[i]()
	}
	p.opened = nil
}

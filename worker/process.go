package worker

import (
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/internal/app"
	"github.com/ticketsales/ticketsales/internal/config"
	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/internal/orders"
	"github.com/ticketsales/ticketsales/internal/webhooks"
)

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
}

// NewProcess builds the worker process from its settings; mailer sends
// production orders their tickets.
func NewProcess(cfg config.Config, c app.Conns, mailer mail.Sender) (*Process, error) {
	// The reaper and the webhook relay work through the same selling rules
	// as the api.
	sv, err := app.NewServices(cfg, c, holds.Deps{})
	if err != nil {
		return nil, err
	}
	sale := sv.Orders.Settings
	payloads := webhooks.Payloads{DB: c.DB, Orders: sv.Orders, Refunds: sv.Refunds, Holds: sv.Holds}
	return &Process{
		Activities: &activities.Activities{DB: c.DB, Mailer: mailer, Links: sale.Links, Gateways: sale.Gateways,
			Metrics: c.Metrics, Log: c.Log, Webhooks: activities.WebhookSettings{Rules: app.WebhookRules(cfg)}},
		Relay: &webhooks.Relay{DB: c.DB, Temporal: c.Temporal, TaskQueue: cfg.WebhookTaskQueue, Render: payloads.Render,
			Retry: app.WebhookRetry(cfg),
			Log:   c.Log, Interval: cfg.WebhookRelayInterval, Grace: 10 * cfg.WebhookRelayInterval},
		Reaper: Reaper{DB: c.DB, Temporal: c.Temporal, TaskQueue: cfg.TaskQueue, Log: c.Log,
			Interval: cfg.ReapInterval, Grace: cfg.ReapGrace,
			Payments: orders.PaymentSweep{DB: c.DB, Temporal: c.Temporal, Gateways: sale.Gateways},
			Refunds:  sv.Refunds, RefundResumeAfter: cfg.RefundResumeAfter},
		TaskQueue: cfg.TaskQueue, WebhookTaskQueue: cfg.WebhookTaskQueue,
		WebhookLimits: WebhookLimits{Activities: cfg.WebhookWorkerActivities, WorkflowTasks: cfg.WebhookWorkerWorkflowTasks,
			Pollers: cfg.WebhookWorkerPollers, AttemptsPerSecond: cfg.WebhookAttemptsPerSecond},
	}, nil
}

// Workers are the process's Temporal workers, not started: the main one,
// and the webhook queue's own. A deployment that sets the webhook queue to
// the main one runs the main worker alone, deliveries beside the sagas.
func (p *Process) Workers(c client.Client) []sdkworker.Worker {
	ws := []sdkworker.Worker{New(c, p.TaskQueue, p.Activities)}
	if p.WebhookTaskQueue != p.TaskQueue {
		ws = append(ws, NewWebhooks(c, p.WebhookTaskQueue, p.WebhookLimits, p.Activities))
	}
	return ws
}

package worker

import (
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"ticketsales/activities"
	"ticketsales/internal/app"
	"ticketsales/internal/config"
	"ticketsales/internal/mail"
	"ticketsales/internal/sales"
	"ticketsales/internal/webhook"
)

// Process is the worker process: the activities its Temporal workers run,
// the reaper beside them, and the webhook relay that moves the outbox to
// Temporal.
type Process struct {
	Activities *activities.Activities
	Reaper     Reaper
	Relay      *webhook.Relay
	// TaskQueue is the main queue; WebhookTaskQueue the deliveries' own,
	// polled within WebhookLimits.
	TaskQueue, WebhookTaskQueue string
	WebhookLimits               WebhookLimits
}

// NewProcess builds the worker process from its settings; mailer sends
// production orders their tickets.
func NewProcess(cfg config.Config, c app.Conns, mailer mail.Sender) (*Process, error) {
	orders, _, err := app.Orders(cfg, c.DB, c.Log)
	if err != nil {
		return nil, err
	}
	// The reaper restarts refunds through the same sales rules as the api.
	refunds := sales.New(sales.Deps{DB: c.DB, Temporal: c.Temporal, Log: c.Log},
		sales.Settings{TaskQueue: cfg.TaskQueue, Orders: orders})
	return &Process{
		Activities: &activities.Activities{DB: c.DB, Mailer: mailer, Links: orders.Links, Gateways: orders.Gateways,
			Metrics: c.Metrics, Log: c.Log, Webhooks: activities.WebhookSettings{Rules: cfg.WebhookRules()}},
		Relay: &webhook.Relay{DB: c.DB, Temporal: c.Temporal, TaskQueue: cfg.WebhookTaskQueue, Render: refunds.WebhookData,
			Retry: cfg.WebhookRetry(),
			Log:   c.Log, Interval: cfg.WebhookRelayInterval, Grace: 10 * cfg.WebhookRelayInterval},
		Reaper: Reaper{DB: c.DB, Temporal: c.Temporal, TaskQueue: cfg.TaskQueue, Log: c.Log,
			Interval: cfg.ReapInterval, Grace: cfg.ReapGrace,
			Payments: sales.PaymentSweep{DB: c.DB, Temporal: c.Temporal, Gateways: orders.Gateways},
			Refunds:  refunds, RefundResumeAfter: cfg.RefundResumeAfter},
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

package worker

import (
	"ticketsales/activities"
	"ticketsales/internal/app"
	"ticketsales/internal/config"
	"ticketsales/internal/mail"
	"ticketsales/internal/sales"
	"ticketsales/internal/webhook"
)

// Process is the worker process: the activities its Temporal worker runs,
// the reaper beside it, and the webhook relay that moves the outbox to
// Temporal.
type Process struct {
	Activities *activities.Activities
	Reaper     Reaper
	Relay      *webhook.Relay
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
		Relay: &webhook.Relay{DB: c.DB, Temporal: c.Temporal, TaskQueue: cfg.TaskQueue, Render: refunds.WebhookData,
			Retry: cfg.WebhookRetry(),
			Log:   c.Log, Interval: cfg.WebhookRelayInterval, Grace: 10 * cfg.WebhookRelayInterval},
		Reaper: Reaper{DB: c.DB, Temporal: c.Temporal, TaskQueue: cfg.TaskQueue, Log: c.Log,
			Interval: cfg.ReapInterval, Grace: cfg.ReapGrace,
			Payments: sales.PaymentSweep{DB: c.DB, Temporal: c.Temporal, Gateways: orders.Gateways},
			Refunds:  refunds, RefundResumeAfter: cfg.RefundResumeAfter},
	}, nil
}

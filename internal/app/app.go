// Package app holds the constructors both processes share: their settings
// (with the secrets check), the selling services (with the order page
// keyring and the gateways), the connections a process works over and how
// it dials Temporal and serves its metrics. It assembles no process: each
// is assembled in one place, api.NewProcess and worker.NewProcess, which
// open their own connections unless a test passes its own; cmd/api,
// cmd/worker and the test stack all build through those, so tests run what
// production runs.
package app

import (
	"fmt"
	"log/slog"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"github.com/ticketsales/ticketsales/internal/config"
	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/metrics"
	"github.com/ticketsales/ticketsales/internal/orders"
	"github.com/ticketsales/ticketsales/internal/payment"
	"github.com/ticketsales/ticketsales/internal/refunds"
	"github.com/ticketsales/ticketsales/internal/webhooks"
	"github.com/ticketsales/ticketsales/workflows/contract"
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

// Services are the selling services a process works with, built the same
// way by both: holds, orders from them, refunds of orders.
type Services struct {
	Holds   *holds.Service
	Orders  *orders.Service
	Refunds *refunds.Service
	// Distribution: channels, allocations, windows, releases.
	Distribution *distribution.Service
	// TestGateway is the built-in test gateway, when configured: the api
	// serves its pages.
	TestGateway *payment.TestGateway
}

// NewServices builds the selling services over c. The holds' own
// dependencies (clock, seat-change announcements, the hand-over starter)
// are the process's: hd; its DB, Temporal and Log are c's.
func NewServices(cfg config.Config, c Conns, hd holds.Deps) (*Services, error) {
	if cfg.OrderRevision > contract.OrderRevision {
		// A revision no worker of this release knows would leave its
		// orders stuck at their first task.
		return nil, fmt.Errorf("ORDER_REVISION %d: this release's workers run revisions up to %d", cfg.OrderRevision, contract.OrderRevision)
	}
	keys, err := delivery.NewKeyring(cfg.OrderTokenSecret, cfg.OrderTokenPreviousSecret...)
	if err != nil {
		return nil, err
	}
	if !cfg.Development() {
		// Links of old orders derived from the public development secret
		// are forgeable: they open nothing and are replaced when shown.
		keys.Refuse(config.DevelopmentOrderTokenSecret)
	}
	codes, err := delivery.NewCodeSigner(cfg.OrderTokenSecret, cfg.OrderTokenPreviousSecret...)
	if err != nil {
		return nil, err
	}
	gateways, test := payment.NewSet(c.DB, c.Log, Gateways(cfg))
	hd.DB, hd.Temporal, hd.Log = c.DB, c.Temporal, c.Log
	h := holds.New(hd, holds.Settings{TaskQueue: cfg.TaskQueue, SaleCacheTTL: cfg.SaleCacheTTL})
	o := orders.New(orders.Deps{DB: c.DB, Temporal: c.Temporal, Log: c.Log, Holds: h}, cfg.TaskQueue, orders.Settings{
		PaymentWindow: cfg.PaymentWindow, SandboxLifetime: cfg.SandboxLifetime,
		Links: delivery.Links{BaseURL: cfg.PublicBaseURL, Keys: keys, Codes: codes}, Gateways: gateways,
		TestGatewayForProduction: cfg.Development(), ConfirmWait: cfg.ConfirmWait, Revision: cfg.OrderRevision})
	r := refunds.New(refunds.Deps{DB: c.DB, Temporal: c.Temporal, Log: c.Log, Holds: h, Orders: o}, cfg.TaskQueue,
		refunds.Settings{RetryBudget: cfg.RefundRetryBudget})
	d := distribution.New(c.DB, c.Log, h.TermsChanged, distribution.Settings{Temporal: c.Temporal, TaskQueue: cfg.TaskQueue})
	return &Services{Holds: h, Orders: o, Refunds: r, Distribution: d, TestGateway: test}, nil
}

// Conns are the connections a process works over. A process opens the
// ones its options leave nil (api.ProcessOptions, worker.ProcessOptions).
type Conns struct {
	DB *bun.DB
	// Bookkeeping is the api's pool for records that need no WAL flush of
	// their own (store.OpenBookkeeping).
	Bookkeeping *bun.DB
	Temporal    client.Client
	Metrics     *metrics.Registry
	Log         *slog.Logger
}

// Gateways are the payment gateway settings: the test gateway runs where
// sandbox keys are served, or in development.
func Gateways(c config.Config) payment.Settings {
	return payment.Settings{PublicBaseURL: c.PublicBaseURL, Secret: []byte(c.GatewaySecret), HostedURL: c.GatewayURL,
		HostedAPIKey: c.GatewayAPIKey, WithTest: c.SandboxEnabled || c.Development()}
}

// WebhookRetry is the schedule of webhook deliveries.
func WebhookRetry(c config.Config) contract.WebhookRetry {
	return contract.WebhookRetry{Initial: c.WebhookRetryInitial, Backoff: 2, Maximum: c.WebhookRetryMax, GiveUpAfter: c.WebhookGiveUpAfter}
}

// WebhookRules are the address rules of webhook endpoints.
func WebhookRules(c config.Config) webhooks.Rules {
	return webhooks.Rules{Development: c.Development(), AnyAddress: c.WebhookAnyAddress}
}

// WebhookLimits are the caps on a company's environment's webhooks.
func WebhookLimits(c config.Config) webhooks.Limits {
	return webhooks.Limits{Endpoints: c.WebhookEndpointsMax, TestsPerMinute: c.WebhookTestsPerMinute,
		RedeliveriesPerMinute: c.WebhookRedeliveriesPerMinute}
}

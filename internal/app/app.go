// Package app holds the wiring both processes share: their settings (with
// the secrets check), the order saga's settings (token keyring, gateways)
// and the connections a process works over. Each process assembles the rest
// next to its own code (api.NewProcess, worker.NewProcess); the mains and
// the test stack all build through those, so tests run what production runs.
package app

import (
	"log/slog"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"ticketsales/internal/config"
	"ticketsales/internal/delivery"
	"ticketsales/internal/metrics"
	"ticketsales/internal/payment"
	"ticketsales/internal/sales"
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
		TestGatewayForProduction: cfg.Development(), RefundRetryBudget: cfg.RefundRetryBudget, ConfirmWait: cfg.ConfirmWait}, test, nil
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

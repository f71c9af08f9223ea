// Package payment is the payment gateway seam: the service creates a payment
// for a gateway order (the buyer pays at its URL), the gateway reports the
// result in a signed callback, and money goes back through it. Two
// gateways: the built-in test gateway (sandbox orders; production orders
// only in development) and a hosted-payment-page provider reached over HTTP
// (production).
package payment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/uptrace/bun"
)

// Names of the gateways, as orders and payments record them.
const (
	Test   = "test"   // the built-in test gateway
	Hosted = "hosted" // the configured hosted-payment-page provider
)

// Request asks the gateway to collect an order's amount.
type Request struct {
	OrderID     int64
	Amount      int64
	Currency    string
	Description string
}

// Created is a payment the gateway created: the buyer is sent to URL.
type Created struct {
	ID  string
	URL string
}

// Gateway takes and returns money.
type Gateway interface {
	CreatePayment(ctx context.Context, req Request) (Created, error)
	// Refund returns amount of the payment; repeating a refund with the same
	// key returns money once. ErrRefused marks a refusal that retrying will
	// not change.
	Refund(ctx context.Context, paymentID, refundKey string, amount int64) error
}

// ErrRefused: the gateway refused a request for good (an unknown payment,
// a refund of more than was paid); retrying changes nothing.
var ErrRefused = errors.New("refused by the payment gateway")

// ErrRefundExceedsPayment: the refunds would return more than was paid.
var ErrRefundExceedsPayment = fmt.Errorf("refund exceeds the payment: %w", ErrRefused)

// ErrNotConfigured: no gateway of that name runs in this deployment.
var ErrNotConfigured = errors.New("payment gateway not configured")

// Set holds the deployment's gateways by name; a missing one is not
// configured here.
type Set map[string]Gateway

// Get returns the gateway of that name.
func (s Set) Get(name string) (Gateway, error) {
	if g := s[name]; g != nil {
		return g, nil
	}
	return nil, fmt.Errorf("gateway %q: %w", name, ErrNotConfigured)
}

// Settings configure a deployment's gateways.
type Settings struct {
	PublicBaseURL string // where the api serves the test gateway and the callbacks
	Secret        []byte // GATEWAY_SECRET
	HostedURL     string // GATEWAY_URL; empty: no hosted provider
	HostedAPIKey  string
	// WithTest mounts the test gateway (sandbox enabled, or development).
	WithTest bool
}

// NewSet builds the deployment's gateways; the test gateway is returned too
// (nil when not mounted), since the api serves its pages.
func NewSet(db *bun.DB, log *slog.Logger, cfg Settings) (Set, *TestGateway) {
	set := Set{}
	var test *TestGateway
	if cfg.WithTest {
		test = &TestGateway{DB: db, BaseURL: cfg.PublicBaseURL, CallbackURL: cfg.PublicBaseURL + TestCallbackPath,
			Secret: TestCallbackKey(cfg.Secret), Log: log}
		set[Test] = test
	}
	if cfg.HostedURL != "" {
		set[Hosted] = &HostedGateway{URL: cfg.HostedURL, APIKey: cfg.HostedAPIKey, CallbackURL: cfg.PublicBaseURL + CallbackPath}
	}
	return set, test
}

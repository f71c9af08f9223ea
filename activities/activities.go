// Package activities holds the workflows' side effects over the store and
// outside services, a file per concept: holds, orders (payment, tickets,
// e-mail), payments (gateway payments settled and returned), refunds,
// webhook deliveries. Every activity is a guarded state transition, safe to
// run twice.
package activities

import (
	"context"
	"errors"
	"log/slog"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/internal/metrics"
	"github.com/ticketsales/ticketsales/internal/payment"
)

// Activities holds the dependencies of every activity; it is registered once.
type Activities struct {
	DB     *bun.DB
	Mailer mail.Sender    // sends production orders their tickets
	Links  delivery.Links // the order page link in the e-mail
	// Gateways take back money of gateway orders, each through the gateway
	// that took it.
	Gateways payment.Set
	// Metrics counts money alerts (nil: none); Log reports them.
	Metrics *metrics.Registry
	Log     *slog.Logger
	// Webhooks shape partner webhook deliveries.
	Webhooks WebhookSettings
}

// Error types of activity failures that retrying cannot mend.
const (
	ErrTypeConstraintViolation = "constraint_violation"
	ErrTypeGatewayRefused      = "gateway_refused"
	ErrTypePaymentUnknown      = "payment_unknown"
)

// final makes errors that no retry can mend non-retryable: a violated
// constraint (bad input or a bug: the same statement fails again, and so
// does a payment reported again with other details) and a payment
// gateway's final refusal. Others pass unchanged.
func final(err error) error {
	var pg *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pg) && len(pg.Code) == 5 && pg.Code[:2] == "23":
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeConstraintViolation, err)
	case errors.Is(err, payment.ErrRefused):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeGatewayRefused, err)
	case errors.Is(err, errs.PaymentConflict):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeConstraintViolation, err)
	}
	return err
}

func (a *Activities) alert(ctx context.Context, kind, msg string, attrs ...slog.Attr) {
	a.Metrics.MoneyAlert(kind)
	log := a.Log
	if log == nil {
		log = slog.Default()
	}
	if activity.IsActivity(ctx) {
		info := activity.GetInfo(ctx)
		attrs = append(attrs, slog.String("workflow_id", info.WorkflowExecution.ID))
	}
	log.LogAttrs(ctx, slog.LevelError, "money alert: "+msg, append(attrs, slog.String("kind", kind))...)
}

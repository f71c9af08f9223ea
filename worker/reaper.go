package worker

import (
	"context"
	"log/slog"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/orders"
	"github.com/ticketsales/ticketsales/internal/refunds"
	"github.com/ticketsales/ticketsales/store"
)

// Reaper is the safety net for work whose workflow was never started
// because the api died between its commit and the start. Workflows do this
// work on time; the reaper only finds what nothing else would.
type Reaper struct {
	DB        *bun.DB
	Temporal  client.Client
	TaskQueue string
	Log       *slog.Logger
	// Interval between runs; Grace is how old an unstarted hold, or how
	// long past its deadline a hold or order, must be before the reaper
	// acts, so it never races the api's own starts.
	Interval, Grace time.Duration
	// Payments settles and returns gateway payments no workflow took care
	// of (received or due back longer than Grace; nil DB: not swept).
	Payments orders.PaymentSweep
	// Refunds restarts refunds whose money is not back: pending ones older
	// than Grace without a running workflow, failed ones after
	// RefundResumeAfter (nil: not swept).
	Refunds           *refunds.Service
	RefundResumeAfter time.Duration
	// Releases starts the workflows of timed releases overdue by more
	// than Grace and not done (nil: not swept).
	Releases *distribution.Service
}

// Once hands holds the api never handed over to their workflows, then finalises holds
// and orders still open past their deadline.
func (r Reaper) Once(ctx context.Context) {
	// Its own deadline: a Temporal outage must not hold back the
	// Postgres-only safety net below.
	sweepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	n, err := holds.Sweep(sweepCtx, r.DB, r.Temporal, r.TaskQueue, r.Grace)
	cancel()
	if err != nil {
		r.Log.Warn("holds sweep", "handed_over", n, "err", err)
	} else if n > 0 {
		r.Log.Warn("handed holds to their workflows the api never handed over", "reservations", n)
	}
	if res, err := store.ReapLapsed(ctx, r.DB, r.Grace, delivery.NewBarcode); err != nil {
		r.Log.Warn("reaper", "err", err)
	} else if res.Reservations+res.Orders > 0 {
		r.Log.Warn("reaper finalised work no workflow owned", "reservations", res.Reservations, "orders", res.Orders)
	}
	if r.Payments.DB != nil {
		res, err := r.Payments.Run(ctx, r.Grace)
		if err != nil {
			r.Log.Error("payment sweep", "signalled", res.Signalled, "settled", res.Settled, "returned", res.Returned, "err", err)
		} else if res.Settled+res.Returned > 0 {
			r.Log.Warn("reaper settled payments no workflow took", "signalled", res.Signalled, "settled", res.Settled, "returned", res.Returned)
		}
	}
	if r.Releases != nil {
		releaseCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		n, err := r.Releases.SweepReleases(releaseCtx, r.Grace)
		cancel()
		if err != nil {
			r.Log.Error("release sweep", "started", n, "err", err)
		} else if n > 0 {
			r.Log.Warn("reaper started workflows of overdue timed releases", "releases", n)
		}
	}
	if r.Refunds != nil {
		if n, err := r.Refunds.Resume(ctx, r.Grace, r.RefundResumeAfter); err != nil {
			r.Log.Error("refund sweep", "resumed", n, "err", err)
		} else if n > 0 {
			r.Log.Warn("reaper resumed refunds whose money was not back", "refunds", n)
		}
	}
}

// Reap runs Once every interval until ctx ends.
func Reap(ctx context.Context, r Reaper) {
	t := time.NewTicker(r.Interval)
	defer t.Stop()
	for {
		r.Once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

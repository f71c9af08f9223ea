package worker

import (
	"context"
	"log/slog"
	"time"

	"github.com/uptrace/bun"

	"ticketsales/store"
)

// Reap runs store.ReapLapsed every interval until ctx ends: the safety net
// for a hold or order whose workflow was never started because the api died
// between its commit and the start. Workflows do this work on time; the
// reaper only finds what nothing else would.
func Reap(ctx context.Context, db *bun.DB, log *slog.Logger, interval, grace time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if r, err := store.ReapLapsed(ctx, db, grace); err != nil {
			log.Warn("reaper", "err", err)
		} else if r.Reservations+r.Orders > 0 {
			log.Warn("reaper finalised work no workflow owned", "reservations", r.Reservations, "orders", r.Orders)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ticketsales/ticketsales/internal/states"

	"github.com/uptrace/bun"
)

// Reaped counts what ReapLapsed finalised.
type Reaped struct {
	Reservations int
	Orders       int
}

// ReapLapsed finalises holds and orders whose deadline passed more than
// grace ago and are still open: the ones whose workflow never started (the
// api died between its commit and the start). Each is the same guarded
// transition the workflows run, so racing a late workflow changes nothing
// twice.
func ReapLapsed(ctx context.Context, db bun.IDB, grace time.Duration, newBarcode func(sandbox bool) string) (Reaped, error) {
	var out Reaped
	// The cutoff is Postgres's: deadlines are decided by one clock.
	graceSecs := grace.Seconds()
	var rids []string
	if err := db.NewRaw("SELECT id FROM reservations WHERE status = 'reserved' AND expires_at < now() - make_interval(secs => ?) ORDER BY expires_at LIMIT 1000",
		graceSecs).Scan(ctx, &rids); err != nil {
		return out, fmt.Errorf("find lapsed reservations: %w", err)
	}
	// One row that fails (a constraint, a lock timeout) must not keep the
	// rest waiting: each is tried, the failures are returned together.
	var errs []error
	for _, id := range rids {
		changed, err := EndReservation(ctx, db, id, states.ReservationExpired)
		if err != nil {
			if ctx.Err() != nil {
				return out, err
			}
			errs = append(errs, err)
			continue
		}
		if changed {
			out.Reservations++
		}
	}
	var oids []int64
	if err := db.NewRaw("SELECT id FROM orders WHERE status = 'pending_payment' AND expires_at < now() - make_interval(secs => ?) ORDER BY expires_at LIMIT 1000",
		graceSecs).Scan(ctx, &oids); err != nil {
		return out, errors.Join(append(errs, fmt.Errorf("find lapsed orders: %w", err))...)
	}
	for _, id := range oids {
		_, changed, err := CloseLapsedOrder(ctx, db, id, newBarcode)
		if err != nil {
			if ctx.Err() != nil {
				return out, err
			}
			errs = append(errs, err)
			continue
		}
		if changed {
			out.Orders++
		}
	}
	return out, errors.Join(errs...)
}

// Package activities holds the workflows' side effects over the store and
// outside services. Every activity is a guarded state transition, safe to
// run twice.
package activities

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/temporal"

	"ticketsales/store"
)

// Activities holds the dependencies of every activity; it is registered once.
type Activities struct {
	DB *bun.DB
}

// ExpireResult says what expiring a reservation found.
type ExpireResult struct {
	Status  string // the reservation's status afterwards
	Changed bool   // this run made the change
}

// ExpireReservation ends a reservation whose deadline passed and frees its
// seats. If the reservation already ended (released, ordered, or expired by
// an earlier attempt) it changes nothing.
func (a *Activities) ExpireReservation(ctx context.Context, id string) (ExpireResult, error) {
	changed, err := store.EndReservation(ctx, a.DB, id, store.ReservationExpired)
	if err != nil {
		return ExpireResult{}, err
	}
	var status string
	if err := a.DB.NewRaw("SELECT status FROM reservations WHERE id = ?", id).Scan(ctx, &status); err != nil {
		return ExpireResult{}, fmt.Errorf("read reservation %s: %w", id, err)
	}
	if status == store.ReservationReserved {
		// The database clock is behind the workflow timer: retry shortly.
		return ExpireResult{}, temporal.NewApplicationError(fmt.Sprintf("reservation %s is not past its deadline yet", id), "not_yet_expired")
	}
	return ExpireResult{Status: status, Changed: changed}, nil
}

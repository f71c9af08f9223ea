package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// ExpireResult says what expiring a reservation found.
type ExpireResult struct {
	Status  states.ReservationStatus // the reservation's status afterwards
	Changed bool                     // this run made the change
}

// ExpireReservation ends a reservation whose deadline passed and frees its
// seats. If the reservation already ended (released, ordered, or expired by
// an earlier attempt) it changes nothing.
func (a *Activities) ExpireReservation(ctx context.Context, id string) (ExpireResult, error) {
	changed, err := store.EndReservation(ctx, a.DB, id, states.ReservationExpired)
	if err != nil {
		return ExpireResult{}, final(err)
	}
	status, err := store.GetReservationStatus(ctx, a.DB, id)
	if err != nil {
		return ExpireResult{}, err
	}
	if status == states.ReservationReserved {
		// The database clock is behind the workflow timer: retry shortly.
		return ExpireResult{}, temporal.NewApplicationError(fmt.Sprintf("reservation %s is not past its deadline yet", id), "not_yet_expired")
	}
	return ExpireResult{Status: status, Changed: changed}, nil
}

// ExpiredHold is what the deadline pass found for one hold.
type ExpiredHold struct {
	ReservationID string
	Status        states.ReservationStatus // "" when the reservation no longer exists
	Changed       bool
	// Retry: this hold could not be finalised now (Postgres's clock still
	// behind its deadline, or an error); the workflow tries it again soon.
	Retry bool
}

// ExpireReservations is the deadline pass of an event's holds workflow over
// the holds whose deadline came: each is expired by the same guarded
// transition as ExpireReservation (a hold that ended otherwise is left as
// it is), one transaction per hold so one bad row cannot hold back the
// others. Repeating it changes nothing.
func (a *Activities) ExpireReservations(ctx context.Context, ids []string) ([]ExpiredHold, error) {
	out := make([]ExpiredHold, 0, len(ids))
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("expire holds: %w", err)
		}
		res, err := a.ExpireReservation(ctx, id)
		switch {
		case errors.Is(err, errs.NotFound):
			out = append(out, ExpiredHold{ReservationID: id})
		case err != nil:
			activity.GetLogger(ctx).Warn("hold not finalised at its deadline; retried", "reservation_id", id, "err", err)
			out = append(out, ExpiredHold{ReservationID: id, Retry: true})
		default:
			out = append(out, ExpiredHold{ReservationID: id, Status: res.Status, Changed: res.Changed})
		}
	}
	return out, nil
}

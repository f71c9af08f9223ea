package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
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
		return ExpireResult{}, temporal.NewApplicationError(fmt.Sprintf("reservation %s is not past its deadline yet", id), notYetExpired)
	}
	return ExpireResult{Status: status, Changed: changed}, nil
}

// ExpiredHold is what the deadline pass found for one hold.
type ExpiredHold struct {
	ReservationID string
	Status        states.ReservationStatus // "" when the reservation no longer exists
	Changed       bool
	// Retry: this hold could not be finalised now (Postgres's clock still
	// behind its deadline, its deadline moved later within the workflow's
	// minute, or an error); the workflow tries it again soon.
	Retry bool
	// Moved: the hold was extended to a deadline in a later minute and
	// handed to that minute's holds workflow; Status is reserved. This
	// run is done with it.
	Moved bool
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
		var notYet *temporal.ApplicationError
		if errors.As(err, &notYet) && notYet.Type() == notYetExpired {
			moved, merr := a.passOn(ctx, id)
			switch {
			case merr != nil:
				err = merr
			case moved:
				out = append(out, ExpiredHold{ReservationID: id, Status: states.ReservationReserved, Moved: true})
				continue
			default:
				// Postgres's clock is behind, or the deadline moved within
				// this run's minute: the run tries again in a few seconds.
				out = append(out, ExpiredHold{ReservationID: id, Retry: true})
				continue
			}
		}
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

// notYetExpired is the error type of a hold still before its deadline.
const notYetExpired = "not_yet_expired"

// passOn hands a hold whose deadline was moved by an extension to the holds
// workflow of its new deadline's minute, when that is not the workflow
// running this pass; it reports whether it did. The extension hands it over
// too; this makes the hand-over whatever became of that one (a signal
// lost, an api that died), so a hold always reaches the run that makes it
// final. A hold due now (Postgres's clock behind the timer) or moved within
// this run's minute is left to the run's retry: it is due within a minute.
func (a *Activities) passOn(ctx context.Context, id string) (bool, error) {
	if !activity.IsActivity(ctx) {
		return false, nil
	}
	r, err := store.GetHold(ctx, a.DB, id)
	if err != nil {
		return false, err
	}
	info := activity.GetInfo(ctx)
	if r.Status != states.ReservationReserved || r.Lapsed ||
		contract.EventHoldsWorkflowID(r.EventID, r.ExpiresAt) == info.WorkflowExecution.ID {
		return false, nil
	}
	if err := holds.HandOverHolds(ctx, activity.GetClient(ctx), info.TaskQueue, []store.Reservation{*r}); err != nil {
		return false, fmt.Errorf("pass extended hold %s on: %w", id, err)
	}
	activity.GetLogger(ctx).Info("extended hold passed on to its new minute's workflow", "reservation_id", id, "expires_at", r.ExpiresAt)
	return true, nil
}

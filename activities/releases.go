package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// Error types of the release activity.
const (
	// ErrTypeReleaseGone: the channel or the event is no longer the
	// company's; no retry brings them back.
	ErrTypeReleaseGone = "release_gone"
	// ErrTypeReleaseEarly: the run's timer fired before release_at by
	// Postgres's clock (the clocks of Temporal and Postgres differ by a
	// little); retried, it finds the release due.
	ErrTypeReleaseEarly = "release_early"
)

// ReleaseAllocation returns the channel's unsold allocation on the event
// to general sale if its timed release is due by Postgres's clock and not
// done yet (store.Release.Due); otherwise it changes nothing and says
// NotDue, so running it again, or a run whose release was moved or
// removed since, is harmless.
func (a *Activities) ReleaseAllocation(ctx context.Context, in contract.AllocationReleaseInput) (contract.AllocationReleaseResult, error) {
	r := store.Release{EventID: in.EventID, ChannelID: in.ChannelID, Whole: true, Due: true}
	out, err := store.ReleaseAllocation(ctx, a.DB, in.CompanyID, r)
	if errors.Is(err, errs.NotFound) {
		return contract.AllocationReleaseResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeReleaseGone, err)
	}
	if err != nil {
		return contract.AllocationReleaseResult{}, final(err)
	}
	if out.NotDue {
		// Early by the clocks' difference, or stale? Only the run of the
		// release_at Postgres has waits on.
		t, err := store.GetChannelTerms(ctx, a.DB, in.EventID, in.ChannelID)
		if err != nil {
			return contract.AllocationReleaseResult{}, err
		}
		if t != nil && t.ReleasedAt == nil && t.ReleaseAt != nil && sameInstant(*t.ReleaseAt, in.ReleaseAt) {
			return contract.AllocationReleaseResult{}, temporal.NewApplicationError(
				fmt.Sprintf("release of channel %d on event %d is due at %s by the database's clock", in.ChannelID, in.EventID,
					t.ReleaseAt.UTC().Format(time.RFC3339Nano)), ErrTypeReleaseEarly)
		}
		return contract.AllocationReleaseResult{NotDue: true}, nil
	}
	res := contract.AllocationReleaseResult{Seats: len(out.Seats)}
	for _, k := range out.Quantities {
		res.Quantities += k
	}
	if a.Log != nil {
		a.Log.InfoContext(ctx, "allocation changed", "company_id", in.CompanyID, "event_id", in.EventID,
			"channel_id", in.ChannelID, "change", "released", "added", 0, "released", res.Seats+res.Quantities, "timed", true)
	}
	return res, nil
}

// sameInstant compares a time read back from Postgres (microseconds) with
// the one a run was started for.
func sameInstant(a, b time.Time) bool {
	d := a.Sub(b)
	return d > -time.Millisecond && d < time.Millisecond
}

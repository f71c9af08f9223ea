package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// AllocationRelease is a channel's timed release on an event, id
// "release/{event_id}/{channel_id}": a durable timer until ReleaseAt, then
// the release (activities.ReleaseAllocation), which Postgres does only if
// that release is still due. One run per release_at: moving release_at
// replaces the run under the same id (distribution.Service.SetTerms starts
// it with the conflict policy TERMINATE_EXISTING), removing it terminates
// the run, and a stale run that got there anyway finds nothing due.
func AllocationRelease(ctx workflow.Context, in contract.AllocationReleaseInput) (contract.AllocationReleaseResult, error) {
	if in.EventID == 0 || in.ChannelID == 0 || in.CompanyID == 0 || in.ReleaseAt.IsZero() {
		return contract.AllocationReleaseResult{}, temporal.NewNonRetryableApplicationError(
			"company, event, channel and release time are required", "invalid_input", nil)
	}
	st := contract.AllocationReleaseStatus{ReleaseAt: in.ReleaseAt}
	if err := workflow.SetQueryHandler(ctx, contract.StatusQuery, func() (contract.AllocationReleaseStatus, error) { return st, nil }); err != nil {
		return contract.AllocationReleaseResult{}, err
	}
	// workflow.Now is the history's clock: replays wait the same.
	if wait := in.ReleaseAt.Sub(workflow.Now(ctx)); wait > 0 {
		if err := workflow.Sleep(ctx, wait); err != nil {
			return contract.AllocationReleaseResult{}, err // cancelled: the release was removed
		}
	}
	var a *activities.Activities
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		// No overall budget: the allocation must go back, however long
		// Postgres is away.
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			NonRetryableErrorTypes: []string{activities.ErrTypeReleaseGone, activities.ErrTypeConstraintViolation}},
	})
	st.Releasing = true
	var out contract.AllocationReleaseResult
	err := workflow.ExecuteActivity(ctx, a.ReleaseAllocation, in).Get(ctx, &out)
	st.Releasing, st.Result = false, &out
	return out, err
}

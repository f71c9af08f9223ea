package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/workflows"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

func releaseEnv() (*testsuite.TestWorkflowEnvironment, *activities.Activities) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	var acts *activities.Activities
	env.RegisterWorkflow(workflows.AllocationRelease)
	env.RegisterActivity(acts)
	return env, acts
}

// A release three days out: the timer waits the three days (skipped), the
// release runs once, at its time.
func TestAllocationReleaseRunsOnceAtItsTime(t *testing.T) {
	env, acts := releaseEnv()
	start := env.Now()
	in := contract.AllocationReleaseInput{CompanyID: 1, EventID: 7, ChannelID: 3, ReleaseAt: start.UTC().Add(72 * time.Hour)}
	var ranAt []time.Time
	env.OnActivity(acts.ReleaseAllocation, mock.Anything, in).Return(
		func(context.Context, contract.AllocationReleaseInput) (contract.AllocationReleaseResult, error) {
			ranAt = append(ranAt, env.Now())
			return contract.AllocationReleaseResult{Seats: 12, Quantities: 5}, nil
		}).Once()
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(contract.StatusQuery)
		require.NoError(t, err)
		var st contract.AllocationReleaseStatus
		require.NoError(t, v.Get(&st))
		require.True(t, st.ReleaseAt.Equal(in.ReleaseAt))
		require.Nil(t, st.Result, "a day in, still waiting")
		require.Empty(t, ranAt)
	}, 24*time.Hour)
	env.ExecuteWorkflow(workflows.AllocationRelease, in)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out contract.AllocationReleaseResult
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Equal(t, contract.AllocationReleaseResult{Seats: 12, Quantities: 5}, out)
	require.Len(t, ranAt, 1)
	require.False(t, ranAt[0].Before(in.ReleaseAt), "released at %s, due %s", ranAt[0], in.ReleaseAt)
	require.Less(t, ranAt[0].Sub(in.ReleaseAt), time.Minute)
}

// A moved release is two runs under one id (the second replaces the
// first): the one of the old time finds nothing due in Postgres and
// changes nothing; only the one of the new time releases, at the new time.
func TestAllocationReleaseMovedReleasesOnlyAtTheNewTime(t *testing.T) {
	old, acts := releaseEnv()
	begin := old.Now()
	oldIn := contract.AllocationReleaseInput{CompanyID: 1, EventID: 7, ChannelID: 3, ReleaseAt: begin.UTC().Add(72 * time.Hour)}
	old.OnActivity(acts.ReleaseAllocation, mock.Anything, oldIn).Return(contract.AllocationReleaseResult{NotDue: true}, nil).Once()
	old.ExecuteWorkflow(workflows.AllocationRelease, oldIn)
	require.NoError(t, old.GetWorkflowError())
	var stale contract.AllocationReleaseResult
	require.NoError(t, old.GetWorkflowResult(&stale))
	require.True(t, stale.NotDue)
	old.AssertNumberOfCalls(t, "ReleaseAllocation", 1)

	moved, acts := releaseEnv()
	newIn := oldIn
	newIn.ReleaseAt = moved.Now().UTC().Add(120 * time.Hour)
	var ranAt []time.Time
	moved.OnActivity(acts.ReleaseAllocation, mock.Anything, newIn).Return(
		func(context.Context, contract.AllocationReleaseInput) (contract.AllocationReleaseResult, error) {
			ranAt = append(ranAt, moved.Now())
			return contract.AllocationReleaseResult{Seats: 4}, nil
		}).Once()
	moved.ExecuteWorkflow(workflows.AllocationRelease, newIn)
	require.NoError(t, moved.GetWorkflowError())
	require.Len(t, ranAt, 1)
	require.False(t, ranAt[0].Before(newIn.ReleaseAt))
	require.Less(t, ranAt[0].Sub(newIn.ReleaseAt), time.Minute)
}

// The timer fired a little before Postgres's clock reached release_at:
// the activity's early refusal is retried until the release is due.
func TestAllocationReleaseRetriesAnEarlyTimer(t *testing.T) {
	env, acts := releaseEnv()
	in := contract.AllocationReleaseInput{CompanyID: 1, EventID: 7, ChannelID: 3, ReleaseAt: env.Now().UTC().Add(time.Hour)}
	env.OnActivity(acts.ReleaseAllocation, mock.Anything, in).Return(contract.AllocationReleaseResult{},
		temporalEarly()).Once()
	env.OnActivity(acts.ReleaseAllocation, mock.Anything, in).Return(contract.AllocationReleaseResult{Seats: 1}, nil).Once()
	env.ExecuteWorkflow(workflows.AllocationRelease, in)
	require.NoError(t, env.GetWorkflowError())
	env.AssertNumberOfCalls(t, "ReleaseAllocation", 2)
}

// A release time already past (a sweep's start after a crash): no timer,
// the release runs at once.
func TestAllocationReleasePastRunsAtOnce(t *testing.T) {
	env, acts := releaseEnv()
	start := env.Now()
	in := contract.AllocationReleaseInput{CompanyID: 1, EventID: 7, ChannelID: 3, ReleaseAt: start.UTC().Add(-time.Hour)}
	env.OnActivity(acts.ReleaseAllocation, mock.Anything, in).Return(contract.AllocationReleaseResult{Seats: 2}, nil).Once()
	env.ExecuteWorkflow(workflows.AllocationRelease, in)
	require.NoError(t, env.GetWorkflowError())
	require.Less(t, env.Now().Sub(start), time.Minute)
}

func TestAllocationReleaseWantsItsIDs(t *testing.T) {
	env, _ := releaseEnv()
	env.ExecuteWorkflow(workflows.AllocationRelease, contract.AllocationReleaseInput{EventID: 7, ChannelID: 3})
	require.Error(t, env.GetWorkflowError())
}

func temporalEarly() error {
	return temporal.NewApplicationError("due in a moment by the database's clock", activities.ErrTypeReleaseEarly)
}

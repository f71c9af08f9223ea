package workflows_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/workflows"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

func resendEnv() (*testsuite.TestWorkflowEnvironment, *activities.Activities) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	var acts *activities.Activities
	env.RegisterWorkflow(workflows.ResendTickets)
	env.RegisterActivity(acts)
	return env, acts
}

func TestResendTicketsRetriesAnUnansweredMailServer(t *testing.T) {
	env, acts := resendEnv()
	env.OnActivity(acts.ResendTicketsEmail, mock.Anything, int64(42), "r1").Return(errors.New("connection refused")).Twice()
	env.OnActivity(acts.ResendTicketsEmail, mock.Anything, int64(42), "r1").Return(nil).Once()
	env.ExecuteWorkflow(workflows.ResendTickets, contract.ResendTicketsInput{OrderID: 42, CompanyID: 1, ResendID: "r1"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	env.AssertNumberOfCalls(t, "ResendTicketsEmail", 3)
	env.AssertNotCalled(t, "SendTicketsEmail", mock.Anything, mock.Anything)
}

func TestResendTicketsStopsAtARefusalForGood(t *testing.T) {
	env, acts := resendEnv()
	env.OnActivity(acts.ResendTicketsEmail, mock.Anything, int64(42), "r2").
		Return(temporal.NewNonRetryableApplicationError("mailbox unavailable", activities.ErrTypeMailRefused, nil))
	env.ExecuteWorkflow(workflows.ResendTickets, contract.ResendTicketsInput{OrderID: 42, CompanyID: 1, ResendID: "r2"})
	require.Error(t, env.GetWorkflowError())
	env.AssertNumberOfCalls(t, "ResendTicketsEmail", 1)
}

func TestResendTicketsWantsItsIDs(t *testing.T) {
	env, _ := resendEnv()
	env.ExecuteWorkflow(workflows.ResendTickets, contract.ResendTicketsInput{OrderID: 42})
	require.Error(t, env.GetWorkflowError())
}

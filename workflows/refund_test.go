package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/workflows"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

func refundEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *activities.Activities) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	var acts *activities.Activities
	env.RegisterWorkflow(workflows.Refund)
	env.RegisterActivity(acts)
	return env, acts
}

func TestGatewayRefundRetriedUntilDoneOnce(t *testing.T) {
	env, acts := refundEnv(t)
	env.OnActivity(acts.VoidTickets, mock.Anything, "rf_1", int64(42), []int64{7}).
		Return(activities.VoidResult{Amount: 300000, MoneyReturnedBy: "gateway", Status: "pending", OrderStatus: "partially_refunded"}, nil).Once()
	env.OnActivity(acts.ReturnMoney, mock.Anything, "rf_1").Return(errors.New("gateway unavailable")).Twice()
	env.OnActivity(acts.ReturnMoney, mock.Anything, "rf_1").Return(nil).Once()
	env.ExecuteWorkflow(workflows.Refund, contract.RefundInput{RefundID: "rf_1", OrderID: 42, TicketIDs: []int64{7}})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var st contract.RefundStatus
	require.NoError(t, env.GetWorkflowResult(&st))
	require.Equal(t, states.RefundCompleted, st.Status)
	require.Equal(t, int64(300000), st.Amount)
	env.AssertNumberOfCalls(t, "ReturnMoney", 3)
	env.AssertNumberOfCalls(t, "VoidTickets", 1)
}

func TestExternalRefundNeedsNoGateway(t *testing.T) {
	env, acts := refundEnv(t)
	env.OnActivity(acts.VoidTickets, mock.Anything, "rf_2", int64(42), mock.Anything).
		Return(activities.VoidResult{Amount: 825000, MoneyReturnedBy: "external", Status: "completed", OrderStatus: "refunded"}, nil)
	env.ExecuteWorkflow(workflows.Refund, contract.RefundInput{RefundID: "rf_2", OrderID: 42})
	require.NoError(t, env.GetWorkflowError())
	env.AssertNotCalled(t, "ReturnMoney", mock.Anything, mock.Anything)
}

// TestUnrecordedRefundIsNotRetried: the workflow only reads the refund its
// request recorded; a refund not on record ends the workflow at once (no
// retries, no gateway call), since nothing records refunds after starting
// their workflow.
func TestUnrecordedRefundIsNotRetried(t *testing.T) {
	env, acts := refundEnv(t)
	env.OnActivity(acts.VoidTickets, mock.Anything, "rf_3", int64(42), mock.Anything).
		Return(activities.VoidResult{}, temporal.NewNonRetryableApplicationError("refund rf_3 of order 42 is not recorded",
			activities.ErrTypeRefundNotRecorded, nil))
	env.ExecuteWorkflow(workflows.Refund, contract.RefundInput{RefundID: "rf_3", OrderID: 42})
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, env.GetWorkflowError(), &appErr)
	require.Equal(t, activities.ErrTypeRefundNotRecorded, appErr.Type())
	env.AssertNumberOfCalls(t, "VoidTickets", 1)
	env.AssertNotCalled(t, "ReturnMoney", mock.Anything, mock.Anything)
}

// TestRefundOutOfRetriesIsMarkedFailed: a gateway that will not return the
// money within the retry budget leaves the refund failed (operators
// alerted, the reaper resumes it), never a silently failed workflow.
func TestRefundOutOfRetriesIsMarkedFailed(t *testing.T) {
	env, acts := refundEnv(t)
	env.OnActivity(acts.VoidTickets, mock.Anything, "rf_4", int64(42), mock.Anything).
		Return(activities.VoidResult{Amount: 300000, MoneyReturnedBy: "gateway", Status: "pending", OrderStatus: "refunded"}, nil)
	env.OnActivity(acts.ReturnMoney, mock.Anything, "rf_4").Return(errors.New("gateway unavailable"))
	var cause string
	env.OnActivity(acts.MarkRefundFailed, mock.Anything, "rf_4", mock.Anything).Return(func(_ context.Context, _, c string) error {
		cause = c
		return nil
	}).Once()
	env.ExecuteWorkflow(workflows.Refund, contract.RefundInput{RefundID: "rf_4", OrderID: 42, MoneyRetryBudget: 2 * time.Hour})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var st contract.RefundStatus
	require.NoError(t, env.GetWorkflowResult(&st))
	require.Equal(t, states.RefundFailed, st.Status)
	require.Contains(t, cause, "gateway unavailable")
	// (The test environment caps retries at 10 attempts; the budget itself
	// is exercised by the api's refund tests.)
	env.AssertNumberOfCalls(t, "MarkRefundFailed", 1)
}

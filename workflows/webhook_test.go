package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/workflows"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

func webhookEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *activities.Activities) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	var acts *activities.Activities
	env.RegisterWorkflow(workflows.WebhookDelivery)
	env.RegisterActivity(acts)
	return env, acts
}

// An endpoint that never answers 2xx is tried with growing waits (15 s
// doubling, at most an hour apart) for three days of workflow time, and
// then the delivery is failed.
func TestWebhookDeliveryGivesUpAfterThreeDays(t *testing.T) {
	env, acts := webhookEnv(t)
	var attempts []time.Time
	env.OnActivity(acts.DeliverWebhook, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.WebhookAttemptInput) (activities.WebhookAttemptResult, error) {
			require.Equal(t, len(attempts)+1, in.Attempt)
			require.Equal(t, 72*time.Hour, in.DisableAfter)
			attempts = append(attempts, env.Now())
			return activities.WebhookAttemptResult{Outcome: activities.WebhookRetry, Status: 503, Error: "HTTP 503"}, nil
		})
	var reason string
	env.OnActivity(acts.FailWebhookDelivery, mock.Anything, "evt_1", int64(7), mock.Anything).Return(
		func(_ context.Context, _ string, _ int64, r string) error { reason = r; return nil }).Once()
	env.ExecuteWorkflow(workflows.WebhookDelivery, contract.WebhookInput{EventID: "evt_1", EndpointID: 7, Retry: contract.DefaultWebhookRetry})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var st contract.WebhookStatus
	require.NoError(t, env.GetWorkflowResult(&st))
	require.Equal(t, states.DeliveryFailed, st.Status)
	span := attempts[len(attempts)-1].Sub(attempts[0])
	require.Equal(t, 72*time.Hour, span, "retried for three days, the last attempt at their end")
	require.Equal(t, 15*time.Second, attempts[1].Sub(attempts[0]).Round(time.Second))
	require.Equal(t, 30*time.Second, attempts[2].Sub(attempts[1]).Round(time.Second))
	for i := 2; i < len(attempts); i++ {
		require.LessOrEqual(t, attempts[i].Sub(attempts[i-1]).Round(time.Second), time.Hour)
	}
	require.Len(t, attempts, st.Attempts)
	require.Contains(t, reason, "HTTP 503")
	t.Logf("%d attempts over %s", len(attempts), span)
}

// A 2xx ends the delivery; an infrastructure error of the activity is
// retried by Temporal without counting as an attempt of the endpoint.
func TestWebhookDeliveredAfterFailures(t *testing.T) {
	env, acts := webhookEnv(t)
	env.OnActivity(acts.DeliverWebhook, mock.Anything, mock.Anything).
		Return(activities.WebhookAttemptResult{Outcome: activities.WebhookRetry, Error: "connection refused"}, nil).Twice()
	env.OnActivity(acts.DeliverWebhook, mock.Anything, mock.Anything).
		Return(activities.WebhookAttemptResult{}, errors.New("postgres unreachable")).Once()
	env.OnActivity(acts.DeliverWebhook, mock.Anything, mock.Anything).
		Return(activities.WebhookAttemptResult{Outcome: activities.WebhookDelivered, Status: 204}, nil).Once()
	env.ExecuteWorkflow(workflows.WebhookDelivery, contract.WebhookInput{EventID: "evt_2", EndpointID: 7,
		Retry: contract.WebhookRetry{Initial: time.Second, Backoff: 2, Maximum: time.Minute, GiveUpAfter: time.Hour}})
	require.NoError(t, env.GetWorkflowError())
	var st contract.WebhookStatus
	require.NoError(t, env.GetWorkflowResult(&st))
	require.Equal(t, states.DeliveryDelivered, st.Status)
	require.Equal(t, 3, st.Attempts)
	env.AssertNotCalled(t, "FailWebhookDelivery", mock.Anything, mock.Anything, mock.Anything, mock.Anything)
}

// An endpoint disabled by this failure (three days of failing everything)
// stops the delivery at once; a deleted one ends it.
func TestWebhookDeliveryStopsWhenTheEndpointIsDisabled(t *testing.T) {
	env, acts := webhookEnv(t)
	env.OnActivity(acts.DeliverWebhook, mock.Anything, mock.Anything).
		Return(activities.WebhookAttemptResult{Outcome: activities.WebhookRetry, Status: 500, Error: "HTTP 500", Disabled: true}, nil).Once()
	env.OnActivity(acts.FailWebhookDelivery, mock.Anything, "evt_3", int64(7), mock.Anything).Return(nil).Once()
	env.ExecuteWorkflow(workflows.WebhookDelivery, contract.WebhookInput{EventID: "evt_3", EndpointID: 7})
	require.NoError(t, env.GetWorkflowError())
	var st contract.WebhookStatus
	require.NoError(t, env.GetWorkflowResult(&st))
	require.Equal(t, states.DeliveryFailed, st.Status)
	require.Equal(t, 1, st.Attempts)
}

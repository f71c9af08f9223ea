package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// WebhookDelivery is the workflow of one event's delivery to one endpoint,
// id "webhook/{event_id}/{endpoint_id}": POST until a 2xx answer, waiting
// longer after each failure (15 s doubling up to an hour by default), for
// three days; then the delivery is failed. A worker or api crash only
// delays it: the timers and the attempt count live in Temporal.
func WebhookDelivery(ctx workflow.Context, in contract.WebhookInput) (contract.WebhookStatus, error) {
	st := contract.WebhookStatus{EventID: in.EventID, EndpointID: in.EndpointID, Status: states.DeliveryPending}
	if err := workflow.SetQueryHandler(ctx, contract.StatusQuery, func() (contract.WebhookStatus, error) { return st, nil }); err != nil {
		return st, err
	}
	r := in.Retry
	if r.Initial <= 0 || r.GiveUpAfter <= 0 {
		r = contract.DefaultWebhookRetry
	}
	if r.Backoff < 1 {
		r.Backoff = 2
	}
	if r.Maximum < r.Initial {
		r.Maximum = r.Initial
	}
	var a *activities.Activities
	// The activity's own retries cover only its infrastructure (Postgres
	// unreachable); an endpoint's failure is an answer, retried below.
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
	})
	first := workflow.Now(ctx)
	deadline := first.Add(r.GiveUpAfter)
	wait := r.Initial
	for {
		st.Attempts++
		var res activities.WebhookAttemptResult
		err := workflow.ExecuteActivity(actx, a.DeliverWebhook, activities.WebhookAttemptInput{EventID: in.EventID,
			EndpointID: in.EndpointID, Attempt: st.Attempts, DisableAfter: r.GiveUpAfter}).Get(ctx, &res)
		if err != nil {
			return st, err
		}
		st.LastError = res.Error
		switch res.Outcome {
		case activities.WebhookDelivered:
			st.Status = states.DeliveryDelivered
			return st, nil
		case activities.WebhookGone:
			st.Status = states.DeliveryFailed
			return st, nil
		}
		if res.Disabled || !workflow.Now(ctx).Before(deadline) {
			reason := fmt.Sprintf("no 2xx answer in %d attempts over %s; the last: %s", st.Attempts,
				workflow.Now(ctx).Sub(first).Round(time.Second), res.Error)
			if res.Disabled {
				reason = "the endpoint was disabled after failing every delivery; the last: " + res.Error
			}
			if err := workflow.ExecuteActivity(actx, a.FailWebhookDelivery, in.EventID, in.EndpointID, reason).Get(ctx, nil); err != nil {
				return st, err
			}
			st.Status, st.LastError = states.DeliveryFailed, reason
			return st, nil
		}
		// The window's last attempt is at its very end, so an endpoint is
		// given the whole three days.
		if err := workflow.Sleep(ctx, min(wait, deadline.Sub(workflow.Now(ctx)))); err != nil {
			return st, err
		}
		wait = min(time.Duration(float64(wait)*r.Backoff), r.Maximum)
	}
}

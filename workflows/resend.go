package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// resendBudget is how long a resend keeps trying a mail server that does
// not answer: the buyer is waiting at the box office, a day later is no
// help (the organizer sends it again).
const resendBudget = time.Hour

// ResendTickets is the workflow of one resend of an order's tickets e-mail,
// id "resend-tickets/{order_id}/{resend_id}": the organizer's resend runs
// here on the worker, which holds the mailer, never in the api. A refusal
// for good ends it (the organizer reads the failure in the Temporal UI).
func ResendTickets(ctx workflow.Context, in contract.ResendTicketsInput) error {
	if in.OrderID == 0 || in.ResendID == "" {
		return temporal.NewNonRetryableApplicationError("order id and resend id are required", "invalid_input", nil)
	}
	var a *activities.Activities
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		ScheduleToCloseTimeout: resendBudget,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			NonRetryableErrorTypes: []string{activities.ErrTypeMailRefused}},
	})
	return workflow.ExecuteActivity(ctx, a.ResendTicketsEmail, in.OrderID, in.ResendID).Get(ctx, nil)
}

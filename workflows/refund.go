package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"ticketsales/activities"
)

// Refund is the workflow of one refund, id "refund/{id}": void the tickets
// and free their seats (one transaction), then, for gateway orders, return
// the money through the gateway, retrying until it succeeds.
func Refund(ctx workflow.Context, in RefundInput) (RefundStatus, error) {
	st := RefundStatus{RefundID: in.RefundID, Status: "pending"}
	if err := workflow.SetQueryHandler(ctx, StatusQuery, func() (RefundStatus, error) { return st, nil }); err != nil {
		return st, err
	}
	var a *activities.Activities
	// Voiding validates again inside its transaction: a refused request
	// (tickets refunded meanwhile) is final, not retried.
	vctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			NonRetryableErrorTypes: []string{activities.ErrTypeRefundRefused}},
	})
	var v activities.VoidResult
	if err := workflow.ExecuteActivity(vctx, a.VoidTickets, in.RefundID, in.OrderID, in.TicketIDs).Get(ctx, &v); err != nil {
		return st, err
	}
	st.Amount, st.MoneyReturnedBy, st.OrderStatus, st.Status = v.Amount, v.MoneyReturnedBy, v.OrderStatus, v.Status
	_ = workflow.UpsertTypedSearchAttributes(ctx, OrderStatusAttr.ValueSet(v.OrderStatus))
	if st.Status == "completed" {
		return st, nil
	}
	// The gateway may be down for a while: keep trying, a day at most.
	gctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		ScheduleToCloseTimeout: 24 * time.Hour,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute},
	})
	if err := workflow.ExecuteActivity(gctx, a.ReturnMoney, in.RefundID).Get(ctx, nil); err != nil {
		return st, err
	}
	st.Status = "completed"
	return st, nil
}

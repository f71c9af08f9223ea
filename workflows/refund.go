package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// Refund is the workflow of one refund, id "refund/{id}", started once the
// refund is recorded (tickets voided, seats freed: refunds.Service.Refund):
// read the record, then, for gateway orders, return the money through the
// gateway, retrying until it succeeds.
func Refund(ctx workflow.Context, in contract.RefundInput) (contract.RefundStatus, error) {
	st := contract.RefundStatus{RefundID: in.RefundID, Status: states.RefundPending}
	if err := workflow.SetQueryHandler(ctx, contract.StatusQuery, func() (contract.RefundStatus, error) { return st, nil }); err != nil {
		return st, err
	}
	var a *activities.Activities
	// The record is read, never made here: a refund not on record is final
	// (activities.ErrTypeRefundNotRecorded), not retried. The options are
	// those of the histories recorded when this activity voided tickets.
	vctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			NonRetryableErrorTypes: []string{activities.ErrTypeRefundRefused, activities.ErrTypeConstraintViolation}},
	})
	var v activities.VoidResult
	if err := workflow.ExecuteActivity(vctx, a.VoidTickets, in.RefundID, in.OrderID, in.TicketIDs).Get(ctx, &v); err != nil {
		return st, err
	}
	st.Amount, st.MoneyReturnedBy, st.OrderStatus, st.Status = v.Amount, v.MoneyReturnedBy, v.OrderStatus, v.Status
	_ = workflow.UpsertTypedSearchAttributes(ctx, contract.OrderStatusAttr.ValueSet(string(v.OrderStatus)))
	if st.Status == states.RefundCompleted {
		return st, nil
	}
	// The gateway may be down for a while: keep trying, a day by default.
	budget := in.MoneyRetryBudget
	if budget <= 0 {
		budget = contract.DefaultRefundRetryBudget
	}
	gctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		ScheduleToCloseTimeout: budget,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute,
			NonRetryableErrorTypes: []string{activities.ErrTypeGatewayRefused, activities.ErrTypeConstraintViolation}},
	})
	if err := workflow.ExecuteActivity(gctx, a.ReturnMoney, in.RefundID).Get(ctx, nil); err != nil {
		if workflow.GetVersion(ctx, refundFailedStatus, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			return st, err
		}
		// Never given up silently: the refund is marked failed, operators
		// are alerted, and the reaper's sweep starts it again later.
		if err := workflow.ExecuteActivity(vctx, a.MarkRefundFailed, in.RefundID, err.Error()).Get(ctx, nil); err != nil {
			return st, err
		}
		st.Status = states.RefundFailed
		return st, nil
	}
	st.Status = states.RefundCompleted
	return st, nil
}

// refundFailedStatus is the change that marks a refund failed when its
// money could not be returned; earlier histories failed the workflow.
const refundFailedStatus = "refund-failed-status"

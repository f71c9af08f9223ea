package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// reservationWorkflow keeps a hold alive until its deadline: a durable timer
// raced against the signal that the hold ended some other way. Postgres
// already treats a lapsed hold as free; the timer makes it final.
type reservationWorkflow struct {
	in     contract.ReservationInput
	status states.ReservationStatus
}

// Reservation is the workflow of one reservation, id "reservation/{id}".
// Nothing starts it since EventHolds owns the holds' deadlines; the worker
// runs it for runs an older api started.
//
// Deprecated: kept registered until no run of it is open, then unregistered
// and kept for the replay test only (docs/operating.md, "Retiring the
// Reservation workflow").
func Reservation(ctx workflow.Context, in contract.ReservationInput) (contract.ReservationStatus, error) {
	if in.ReservationID == "" || in.ExpiresAt.IsZero() {
		return contract.ReservationStatus{}, temporal.NewNonRetryableApplicationError("reservation id and deadline are required", "invalid_input", nil)
	}
	w := &reservationWorkflow{in: in, status: states.ReservationReserved}
	if err := workflow.SetQueryHandler(ctx, contract.StatusQuery, func() (contract.ReservationStatus, error) {
		return w.result(), nil
	}); err != nil {
		return contract.ReservationStatus{}, err
	}
	return w.run(ctx)
}

func (w *reservationWorkflow) result() contract.ReservationStatus {
	return contract.ReservationStatus{ReservationID: w.in.ReservationID, Status: w.status, ExpiresAt: w.in.ExpiresAt}
}

func (w *reservationWorkflow) run(ctx workflow.Context) (contract.ReservationStatus, error) {
	log := workflow.GetLogger(ctx)
	timerCtx, cancelTimer := workflow.WithCancel(ctx)
	timer := workflow.NewTimer(timerCtx, max(w.in.ExpiresAt.Sub(workflow.Now(ctx)), 0))
	ended := workflow.GetSignalChannel(ctx, contract.ReservationEndedSignal)

	expired := false
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(timer, func(f workflow.Future) { expired = f.Get(ctx, nil) == nil })
	sel.AddReceive(ended, func(c workflow.ReceiveChannel, _ bool) {
		var sig contract.ReservationEnded
		c.Receive(ctx, &sig)
		w.status = sig.Status
		cancelTimer()
	})
	sel.Select(ctx)
	if !expired {
		log.Info("reservation ended before its deadline", "status", w.status)
		return w.result(), nil
	}

	// The deadline passed: expire the hold in Postgres. The activity is a
	// guarded transition, so a retry or a race with a release is harmless.
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
	})
	var a *activities.Activities
	var res activities.ExpireResult
	if err := workflow.ExecuteActivity(actx, a.ExpireReservation, w.in.ReservationID).Get(ctx, &res); err != nil {
		return w.result(), err
	}
	w.status = res.Status
	log.Info("reservation deadline passed", "status", w.status, "changed", res.Changed)
	return w.result(), nil
}

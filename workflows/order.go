package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// orderWorkflow is the saga of one order: the payment window, payment by
// the gateway (signal) or by the partner (confirm update), ticket issue,
// e-mail for production orders, and the sandbox order's one-day deletion.
type orderWorkflow struct {
	in        contract.OrderInput
	state     contract.OrderStatus
	payments  []contract.PaymentEvent
	cancel    bool
	paying    bool
	localPay  bool            // pay runs its activities locally (localPayment)
	paidWith  string          // the payment that paid the order
	returning map[string]bool // gateway payments being given back
}

// recordedPayments is the change that made gateway payments recorded in
// Postgres and settled by SettlePayment; histories from before it apply
// them with MarkOrderPaid and return late ones with RefundLatePayment.
const recordedPayments = "recorded-gateway-payments"

// mailRefusalNotFatal is the change after which a mail server's final
// refusal of the tickets e-mail no longer fails the order's workflow.
const mailRefusalNotFatal = "mail-refusal-not-fatal"

// localPayment is the change after which a confirm marks the order paid and
// issues its tickets as local activities, inside the workflow task that
// accepts the update: two short guarded transactions no longer cost two
// activity tasks and two more workflow tasks on the server each (the
// sell-out's sagas were bound by the Temporal server's CPU).
const localPayment = "local-payment-activities"

// localOptions run a local activity in the worker that holds the workflow
// task; its retries back off as a regular activity's do.
// Its retries go on as long as a regular activity's would (left at zero,
// the whole retry would end with the first attempt's 10 s).
var localOptions = workflow.LocalActivityOptions{
	StartToCloseTimeout:    10 * time.Second,
	ScheduleToCloseTimeout: 30 * 24 * time.Hour,
	RetryPolicy:            activityOptions.RetryPolicy,
}

// returnOptions retry giving a payment back for an hour; the reaper goes on
// after that.
var returnOptions = workflow.ActivityOptions{
	StartToCloseTimeout:    30 * time.Second,
	ScheduleToCloseTimeout: time.Hour,
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute,
		NonRetryableErrorTypes: []string{activities.ErrTypeGatewayRefused, activities.ErrTypeConstraintViolation}},
}

var activityOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
}

// Order is the workflow of one order, id "order/{id}".
func Order(ctx workflow.Context, in contract.OrderInput) (contract.OrderStatus, error) {
	if in.OrderID == 0 || in.ExpiresAt.IsZero() {
		return contract.OrderStatus{}, temporal.NewNonRetryableApplicationError("order id and deadline are required", "invalid_input", nil)
	}
	w := &orderWorkflow{in: in, state: contract.OrderStatus{OrderID: in.OrderID, Status: states.OrderPendingPayment}}
	ctx = workflow.WithActivityOptions(ctx, activityOptions)
	if err := w.setup(ctx); err != nil {
		return w.state, err
	}
	return w.run(ctx)
}

func (w *orderWorkflow) setup(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, contract.StatusQuery, func() (contract.OrderStatus, error) { return w.state, nil }); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, contract.ConfirmUpdate, w.confirm, workflow.UpdateHandlerOptions{
		Validator: w.validateConfirm,
	}); err != nil {
		return err
	}
	workflow.Go(ctx, func(ctx workflow.Context) {
		ch := workflow.GetSignalChannel(ctx, contract.PaymentSignal)
		for {
			var p contract.PaymentEvent
			ch.Receive(ctx, &p)
			w.payments = append(w.payments, p)
		}
	})
	workflow.Go(ctx, func(ctx workflow.Context) {
		workflow.GetSignalChannel(ctx, contract.OrderCancelledSignal).Receive(ctx, nil)
		w.cancel = true
	})
	return nil
}

// validateConfirm rejects a wrong amount or a closed order before the
// update enters history.
func (w *orderWorkflow) validateConfirm(_ workflow.Context, in contract.ConfirmInput) error {
	switch {
	case in.PaidAmount != w.in.Amount:
		return temporal.NewApplicationError("paid_amount differs from the order amount", contract.ErrTypeAmountMismatch)
	case w.state.Status == states.OrderCancelled:
		return temporal.NewApplicationError("the order was cancelled", contract.ErrTypeOrderExpired)
	case w.state.Status != states.OrderPendingPayment && w.state.Status != states.OrderPaid:
		return temporal.NewApplicationError("the order is "+string(w.state.Status), contract.ErrTypeInvalidState)
	}
	return nil
}

// confirm pays the order; a repeat returns the paid order.
func (w *orderWorkflow) confirm(ctx workflow.Context, in contract.ConfirmInput) (contract.OrderStatus, error) {
	if err := w.pay(ctx, in.ExternalPaymentID); err != nil {
		return w.state, err
	}
	return w.state, nil
}

// pay marks the order paid and issues its tickets; callers arriving while a
// payment runs wait for it.
func (w *orderWorkflow) pay(ctx workflow.Context, paymentID string) error {
	if w.paying {
		if err := workflow.Await(ctx, func() bool { return !w.paying }); err != nil {
			return err
		}
	}
	if w.state.Status == states.OrderPaid {
		return nil
	}
	if w.state.Status != states.OrderPendingPayment {
		return temporal.NewApplicationError("the order is "+string(w.state.Status), contract.ErrTypeOrderExpired)
	}
	w.paying = true
	defer func() { w.paying = false }()
	// Update handlers get the workflow's root context, without options.
	ctx = workflow.WithActivityOptions(ctx, activityOptions)
	var a *activities.Activities
	run := func(activity any, args ...any) workflow.Future {
		return workflow.ExecuteActivity(ctx, activity, args...)
	}
	if w.since(ctx, localPayment, revisionLean) {
		w.localPay = true
		lctx := workflow.WithLocalActivityOptions(ctx, localOptions)
		run = func(activity any, args ...any) workflow.Future {
			return workflow.ExecuteLocalActivity(lctx, activity, args...)
		}
	}
	var res activities.PayResult
	if err := run(a.MarkOrderPaid, w.in.OrderID, paymentID).Get(ctx, &res); err != nil {
		return err
	}
	if res.Status != states.OrderPaid {
		// The window closed in Postgres's clock: the timer cancels it.
		return temporal.NewApplicationError("the payment window has closed", contract.ErrTypeOrderExpired)
	}
	w.paidWith = paymentID
	w.setStatus(ctx, states.OrderPaid)
	if w.current() {
		// MarkOrderPaid issued the tickets in its transaction: a second
		// local activity would only count them again.
		w.state.TicketsIssued = res.Tickets
		return nil
	}
	return run(a.IssueTickets, w.in.OrderID).Get(ctx, &w.state.TicketsIssued)
}

// Revisions of the order workflow (contract.OrderInput.Revision): an order
// started at revision 1 or later takes the paths below without GetVersion
// (whose marker, and the TemporalChangeVersion upsert the SDK adds to it,
// are two history events per change), and has its tickets counted by the
// transaction that pays it.
const revisionLean = 1

// current reports whether the order was started at revisionLean or later.
func (w *orderWorkflow) current() bool { return w.in.Revision >= revisionLean }

// since reports whether a change applies to this order: by its revision
// when the change was folded into one (foldedAt), else by GetVersion. The
// three changes before revisions are folded at revisionLean; a change made
// after it asks GetVersion, or is folded into a new revision, never into
// one orders already run with (their replay would take the new branch).
func (w *orderWorkflow) since(ctx workflow.Context, change string, foldedAt int) bool {
	return w.in.Revision >= foldedAt || workflow.GetVersion(ctx, change, workflow.DefaultVersion, 1) != workflow.DefaultVersion
}

func (w *orderWorkflow) setStatus(ctx workflow.Context, status states.OrderStatus) {
	w.state.Status = status
	if err := workflow.UpsertTypedSearchAttributes(ctx, contract.OrderStatusAttr.ValueSet(string(status))); err != nil {
		workflow.GetLogger(ctx).Warn("upsert contract.OrderStatus", "err", err)
	}
}

func (w *orderWorkflow) run(ctx workflow.Context) (contract.OrderStatus, error) {
	log := workflow.GetLogger(ctx)
	var a *activities.Activities
	for w.state.Status == states.OrderPendingPayment {
		left := w.in.ExpiresAt.Sub(workflow.Now(ctx))
		woke, err := workflow.AwaitWithTimeout(ctx, max(left, 0), func() bool {
			return w.state.Status != states.OrderPendingPayment || len(w.payments) > 0 || w.cancel
		})
		if err != nil {
			return w.state, err
		}
		switch {
		case w.state.Status != states.OrderPendingPayment:
		case len(w.payments) > 0:
			p := w.payments[0]
			w.payments = w.payments[1:]
			if p.Status != states.GatewayPaid {
				log.Info("payment declined; the order stays payable until its deadline")
				continue
			}
			if !w.since(ctx, recordedPayments, revisionLean) {
				if err := w.pay(ctx, p.PaymentID); err != nil {
					log.Warn("gateway payment not applied", "err", err)
				}
				continue
			}
			if err := w.settle(ctx, p); err != nil {
				return w.state, err
			}
		case w.cancel:
			// The api cancelled the order in Postgres already.
			w.setStatus(ctx, states.OrderCancelled)
		case !woke:
			var res activities.CancelResult
			if err := workflow.ExecuteActivity(ctx, a.CancelOrder, w.in.OrderID, states.CancelPaymentTimeout).Get(ctx, &res); err != nil {
				return w.state, err
			}
			w.setStatus(ctx, res.Status) // paid if a payment won the race
			if res.Status == states.OrderPaid {
				w.state.TicketsIssued = res.Tickets // issued with the payment
			}
		}
	}
	if w.localPay {
		// The confirm marks the order paid before it issues the tickets:
		// the e-mail waits for them (before this change it started beside
		// the issue and failed its first attempt when it came first).
		if err := workflow.Await(ctx, func() bool { return !w.paying }); err != nil {
			return w.state, err
		}
	}
	if err := w.returnUnapplied(ctx); err != nil {
		return w.state, err
	}
	if w.state.Status == states.OrderPaid && !w.in.IsTest {
		err := workflow.ExecuteActivity(ctx, a.SendTicketsEmail, w.in.OrderID).Get(ctx, nil)
		var appErr *temporal.ApplicationError
		switch {
		case err == nil:
			w.state.Emailed = true
		case errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeMailRefused &&
			w.since(ctx, mailRefusalNotFatal, revisionLean):
			// The buyer's mail server refused for good: the order stays paid
			// and its tickets are on the order page; the saga goes on to
			// return any late payment.
			log.Warn("the tickets e-mail was refused for good", "order_id", w.in.OrderID)
		default:
			return w.state, err
		}
	}
	if w.in.IsTest && !w.in.DeleteAt.IsZero() {
		// Sandbox orders live one day, whatever happened to them.
		if err := workflow.Sleep(ctx, max(w.in.DeleteAt.Sub(workflow.Now(ctx)), 0)); err != nil {
			return w.state, err
		}
		if err := workflow.ExecuteActivity(ctx, a.DeleteTestOrder, w.in.OrderID).Get(ctx, nil); err != nil {
			return w.state, err
		}
		w.state.Deleted = true
	}
	if err := w.returnUnapplied(ctx); err != nil {
		return w.state, err
	}
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) && len(w.returning) == 0 }); err != nil {
		return w.state, err
	}
	return w.state, nil
}

// settle applies a recorded gateway payment to the order, or gives it back
// when the order cannot take it (closed, paid by another payment, another
// amount, a seat lost): SettlePayment decides in one transaction.
func (w *orderWorkflow) settle(ctx workflow.Context, p contract.PaymentEvent) error {
	var a *activities.Activities
	var res activities.SettleResult
	if err := workflow.ExecuteActivity(ctx, a.SettlePayment, w.in.OrderID, p.Gateway, p.PaymentID).Get(ctx, &res); err != nil {
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) && appErr.Type() == activities.ErrTypePaymentUnknown {
			// Nothing on record to apply or give back: the order's own
			// saga goes on, operators see the payment in the alert.
			return workflow.ExecuteActivity(ctx, a.AlertPaymentUnknown, p.Gateway, p.PaymentID, err.Error()).Get(ctx, nil)
		}
		return err
	}
	switch res.Status {
	case states.PaymentApplied:
		if w.state.Status == states.OrderPaid {
			return nil
		}
		w.paidWith = p.PaymentID
		w.setStatus(ctx, states.OrderPaid)
		if w.current() {
			// Settling issued the tickets in its transaction.
			w.state.TicketsIssued = res.Tickets
			return nil
		}
		return workflow.ExecuteActivity(ctx, a.IssueTickets, w.in.OrderID).Get(ctx, &w.state.TicketsIssued)
	case states.PaymentRefundDue:
		workflow.GetLogger(ctx).Info("gateway payment goes back", "payment_id", p.PaymentID, "reason", res.RefundReason)
		w.giveBack(ctx, res.Gateway, p.PaymentID)
	}
	return nil
}

// giveBack returns a payment due back, beside the order's own work so a slow
// gateway holds nothing up; the workflow ends only after it. A payment
// already being returned is not returned twice at once. When the retries
// run out, operators are alerted and the reaper goes on returning it.
func (w *orderWorkflow) giveBack(ctx workflow.Context, gateway, paymentID string) {
	if w.returning[paymentID] {
		return
	}
	if w.returning == nil {
		w.returning = map[string]bool{}
	}
	w.returning[paymentID] = true
	workflow.Go(ctx, func(ctx workflow.Context) {
		defer delete(w.returning, paymentID)
		var a *activities.Activities
		err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, returnOptions), a.ReturnPayment, gateway, paymentID).Get(ctx, nil)
		if err != nil {
			_ = workflow.ExecuteActivity(ctx, a.AlertPaymentNotReturned, gateway, paymentID, err.Error()).Get(ctx, nil)
		}
	})
}

// returnUnapplied refunds gateway payments that arrived when the order could
// no longer take them (cancelled, or paid by another payment): the buyer's
// money is never kept for nothing.
func (w *orderWorkflow) returnUnapplied(ctx workflow.Context) error {
	var a *activities.Activities
	// Signals delivered in this very task may not have reached the
	// receiving goroutine yet: take them from the channel too.
	ch := workflow.GetSignalChannel(ctx, contract.PaymentSignal)
	for {
		var p contract.PaymentEvent
		if !ch.ReceiveAsync(&p) {
			break
		}
		w.payments = append(w.payments, p)
	}
	for len(w.payments) > 0 {
		p := w.payments[0]
		w.payments = w.payments[1:]
		if p.Status != states.GatewayPaid || (w.state.Status == states.OrderPaid && p.PaymentID == w.paidWith) {
			continue
		}
		if w.since(ctx, recordedPayments, revisionLean) {
			if err := w.settle(ctx, p); err != nil {
				return err
			}
			continue
		}
		if err := workflow.ExecuteActivity(ctx, a.RefundLatePayment, w.in.OrderID, p.PaymentID).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

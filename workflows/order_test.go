package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/suite"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/workflows"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

type orderSuite struct {
	suite.Suite
	testsuite.WorkflowTestSuite
	env  *testsuite.TestWorkflowEnvironment
	acts *activities.Activities
	t0   time.Time
	// asked is every change the workflow asked GetVersion about: none for
	// an order of the current revision (each would be a marker and a
	// TemporalChangeVersion upsert in its history).
	asked []string
	older bool // the test runs an order of revision 0
}

func TestOrderWorkflow(t *testing.T) { suite.Run(t, new(orderSuite)) }

func (s *orderSuite) SetupTest() {
	s.env = s.NewTestWorkflowEnvironment()
	s.t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	s.env.SetStartTime(s.t0)
	s.asked, s.older = nil, false
	s.env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{&versionSpy{asked: &s.asked}}})
	s.env.RegisterWorkflow(workflows.Order)
	s.env.RegisterActivity(s.acts)
}

func (s *orderSuite) TearDownTest() {
	if !s.older {
		s.Empty(s.asked, "an order of the current revision asked GetVersion")
	}
}

// versionSpy records the changes a workflow asks GetVersion about.
type versionSpy struct {
	interceptor.WorkerInterceptorBase
	asked *[]string
}

func (v *versionSpy) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &versionSpyInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, asked: v.asked}
}

type versionSpyInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	asked *[]string
}

func (i *versionSpyInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&versionSpyOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}, asked: i.asked})
}

type versionSpyOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	asked *[]string
}

func (o *versionSpyOutbound) GetVersion(ctx workflow.Context, changeID string, minSupported, maxSupported workflow.Version) workflow.Version {
	*o.asked = append(*o.asked, changeID)
	return o.Next.GetVersion(ctx, changeID, minSupported, maxSupported)
}

func (s *orderSuite) input(isTest bool) contract.OrderInput {
	in := contract.OrderInput{OrderID: 42, CompanyID: 1, EventID: 2, IsTest: isTest, Payment: "external",
		Amount: 495000, ExpiresAt: s.t0.Add(15 * time.Minute), Revision: contract.OrderRevision}
	if isTest {
		in.DeleteAt = s.t0.Add(24 * time.Hour)
	}
	return in
}

func (s *orderSuite) result() contract.OrderStatus {
	s.True(s.env.IsWorkflowCompleted())
	s.NoError(s.env.GetWorkflowError())
	var r contract.OrderStatus
	s.NoError(s.env.GetWorkflowResult(&r))
	return r
}

// confirmAt sends the confirm update at workflow time d.
func (s *orderSuite) confirmAt(d time.Duration, amount int64, done func(contract.OrderStatus, error)) {
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(contract.ConfirmUpdate, "confirm-1", &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { done(contract.OrderStatus{}, err) },
			OnComplete: func(v any, err error) {
				st, _ := v.(contract.OrderStatus)
				done(st, err)
			},
		}, contract.ConfirmInput{PaidAmount: amount, ExternalPaymentID: "ext-1"})
	}, d)
}

func (s *orderSuite) TestPaymentTimeoutCancelsAndFreesSeats() {
	var cancelledAt time.Time
	s.env.OnActivity(s.acts.CancelOrder, mock.Anything, int64(42), states.CancelPaymentTimeout).Return(
		func(context.Context, int64, states.CancelReason) (activities.CancelResult, error) {
			cancelledAt = s.env.Now()
			return activities.CancelResult{Status: "cancelled", Changed: true}, nil
		})
	s.env.ExecuteWorkflow(workflows.Order, s.input(false))
	r := s.result()
	s.Equal(states.OrderCancelled, r.Status)
	s.True(s.t0.Add(15*time.Minute).Equal(cancelledAt), "cancelled at %v", cancelledAt)
	s.env.AssertNotCalled(s.T(), "SendTicketsEmail", mock.Anything, mock.Anything)
}

func (s *orderSuite) TestConfirmBeforeTheWindowIssuesTicketsAndMailsProduction() {
	// MarkOrderPaid issues the tickets in its transaction: an IssueTickets
	// call would find no mock and fail the test.
	s.env.OnActivity(s.acts.MarkOrderPaid, mock.Anything, int64(42), "ext-1").Return(activities.PayResult{Status: "paid", Changed: true, Tickets: 2}, nil).Once()
	s.env.OnActivity(s.acts.SendTicketsEmail, mock.Anything, int64(42)).Return(nil).Once()
	var got contract.OrderStatus
	var gotErr error
	s.confirmAt(5*time.Minute, 495000, func(st contract.OrderStatus, err error) { got, gotErr = st, err })
	s.env.ExecuteWorkflow(workflows.Order, s.input(false))
	s.NoError(gotErr)
	s.Equal(states.OrderPaid, got.Status)
	s.Equal(2, got.TicketsIssued)
	r := s.result()
	s.Equal(states.OrderPaid, r.Status)
	s.True(r.Emailed)
	s.env.AssertNotCalled(s.T(), "CancelOrder", mock.Anything, mock.Anything, mock.Anything)
}

func (s *orderSuite) TestAmountMismatchIsRejectedBeforeHistory() {
	s.env.OnActivity(s.acts.CancelOrder, mock.Anything, int64(42), states.CancelPaymentTimeout).Return(activities.CancelResult{Status: "cancelled", Changed: true}, nil)
	var gotErr error
	s.confirmAt(time.Minute, 1, func(_ contract.OrderStatus, err error) { gotErr = err })
	s.env.ExecuteWorkflow(workflows.Order, s.input(false))
	var appErr *temporal.ApplicationError
	s.True(errors.As(gotErr, &appErr), "want an application error, got %v", gotErr)
	s.Equal(contract.ErrTypeAmountMismatch, appErr.Type())
	s.env.AssertNotCalled(s.T(), "MarkOrderPaid", mock.Anything, mock.Anything, mock.Anything)
	s.Equal(states.OrderCancelled, s.result().Status)
}

func (s *orderSuite) TestGatewayPaymentSignal() {
	// Settling issues the tickets: no IssueTickets mock, so a call fails.
	s.env.OnActivity(s.acts.SettlePayment, mock.Anything, int64(42), "test", "pay_1").Return(activities.SettleResult{Gateway: "test", Status: "applied", Tickets: 1}, nil).Once()
	s.env.OnActivity(s.acts.DeleteTestOrder, mock.Anything, int64(42)).Return(true, nil)
	in := s.input(true)
	in.Payment = "gateway"
	// A decline signalled by an older api changes nothing.
	s.env.RegisterDelayedCallback(func() {
		s.env.SignalWorkflow(contract.PaymentSignal, contract.PaymentEvent{Status: "declined", PaymentID: "pay_1"})
	}, 2*time.Minute)
	s.env.RegisterDelayedCallback(func() {
		s.env.SignalWorkflow(contract.PaymentSignal, contract.PaymentEvent{Status: "paid", PaymentID: "pay_1", Gateway: "test"})
	}, 3*time.Minute)
	s.env.ExecuteWorkflow(workflows.Order, in)
	r := s.result()
	s.Equal(states.OrderPaid, r.Status)
	s.Equal(1, r.TicketsIssued)
	s.False(r.Emailed, "sandbox orders send no e-mail")
	s.env.AssertNotCalled(s.T(), "SendTicketsEmail", mock.Anything, mock.Anything)
	s.env.AssertNotCalled(s.T(), "MarkOrderPaid", mock.Anything, mock.Anything, mock.Anything)
}

// TestPaymentTheOrderCannotTakeGoesBack: a payment the order cannot take
// (here: one of its seats was retaken) is given back at once; the order
// stays payable until its window closes.
func (s *orderSuite) TestPaymentTheOrderCannotTakeGoesBack() {
	s.env.OnActivity(s.acts.SettlePayment, mock.Anything, int64(42), "hosted", "pay_1").
		Return(activities.SettleResult{Gateway: "hosted", Status: "refund_due", RefundReason: "seats_lost"}, nil).Once()
	s.env.OnActivity(s.acts.ReturnPayment, mock.Anything, "hosted", "pay_1").Return(nil).Once()
	s.env.OnActivity(s.acts.CancelOrder, mock.Anything, int64(42), states.CancelPaymentTimeout).Return(activities.CancelResult{Status: "cancelled", Changed: true}, nil)
	in := s.input(false)
	in.Payment = "gateway"
	s.env.RegisterDelayedCallback(func() {
		s.env.SignalWorkflow(contract.PaymentSignal, contract.PaymentEvent{Status: "paid", PaymentID: "pay_1", Gateway: "hosted"})
	}, 3*time.Minute)
	s.env.ExecuteWorkflow(workflows.Order, in)
	s.Equal(states.OrderCancelled, s.result().Status)
	s.env.AssertNumberOfCalls(s.T(), "ReturnPayment", 1)
	s.env.AssertNotCalled(s.T(), "SendTicketsEmail", mock.Anything, mock.Anything)
}

// TestPaymentNotReturnedIsAlerted: when the gateway will not take a payment
// back within the workflow's retries, operators are alerted and the
// workflow still ends (the reaper goes on returning it).
func (s *orderSuite) TestPaymentNotReturnedIsAlerted() {
	s.env.OnActivity(s.acts.CancelOrder, mock.Anything, int64(42), states.CancelPaymentTimeout).Return(activities.CancelResult{Status: "cancelled", Changed: true}, nil)
	s.env.OnActivity(s.acts.SettlePayment, mock.Anything, int64(42), "hosted", "pay_9").
		Return(activities.SettleResult{Gateway: "hosted", Status: "refund_due", RefundReason: "other_payment"}, nil)
	s.env.OnActivity(s.acts.ReturnPayment, mock.Anything, "hosted", "pay_9").Return(errors.New("provider down"))
	s.env.OnActivity(s.acts.AlertPaymentNotReturned, mock.Anything, "hosted", "pay_9", mock.Anything).Return(nil).Once()
	in := s.input(false)
	in.Payment = "gateway"
	s.env.RegisterDelayedCallback(func() {
		s.env.SignalWorkflow(contract.PaymentSignal, contract.PaymentEvent{Status: "paid", PaymentID: "pay_9", Gateway: "hosted"})
	}, 3*time.Minute)
	s.env.ExecuteWorkflow(workflows.Order, in)
	s.Equal(states.OrderCancelled, s.result().Status)
	s.env.AssertNumberOfCalls(s.T(), "AlertPaymentNotReturned", 1)
}

func (s *orderSuite) TestSandboxOrderDeletedAfterOneDay() {
	s.env.OnActivity(s.acts.MarkOrderPaid, mock.Anything, int64(42), "ext-1").Return(activities.PayResult{Status: "paid", Changed: true, Tickets: 2}, nil)
	var deletedAt time.Time
	s.env.OnActivity(s.acts.DeleteTestOrder, mock.Anything, int64(42)).Return(func(context.Context, int64) (bool, error) {
		deletedAt = s.env.Now()
		return true, nil
	})
	s.confirmAt(time.Minute, 495000, func(contract.OrderStatus, error) {})
	s.env.ExecuteWorkflow(workflows.Order, s.input(true))
	r := s.result()
	s.True(r.Deleted)
	s.True(s.t0.Add(24*time.Hour).Equal(deletedAt), "deleted at %v", deletedAt)
	s.env.AssertNotCalled(s.T(), "SendTicketsEmail", mock.Anything, mock.Anything)
}

func (s *orderSuite) TestPaymentRetriedAfterAFailureThenMailed() {
	attempts := 0
	s.env.OnActivity(s.acts.MarkOrderPaid, mock.Anything, int64(42), "ext-1").Return(func(context.Context, int64, string) (activities.PayResult, error) {
		attempts++
		if attempts == 1 {
			return activities.PayResult{}, errors.New("connection reset")
		}
		return activities.PayResult{Status: "paid", Changed: true, Tickets: 2}, nil
	})
	emailedAfter := -1
	s.env.OnActivity(s.acts.SendTicketsEmail, mock.Anything, int64(42)).Return(func(context.Context, int64) error {
		emailedAfter = attempts
		return nil
	})
	var got contract.OrderStatus
	s.confirmAt(time.Minute, 495000, func(st contract.OrderStatus, _ error) { got = st })
	s.env.ExecuteWorkflow(workflows.Order, s.input(false))
	s.Equal(2, got.TicketsIssued, "the confirm's answer counts the tickets")
	s.Equal(2, s.result().TicketsIssued)
	s.Equal(2, attempts)
	s.Equal(2, emailedAfter, "the tickets e-mail started before the tickets were issued")
}

// TestOlderRevisionIssuesTicketsApart: an order started before
// contract.OrderRevision replays its recorded path: MarkOrderPaid, then
// IssueTickets as an activity of its own, retried.
func (s *orderSuite) TestOlderRevisionIssuesTicketsApart() {
	s.env.OnActivity(s.acts.MarkOrderPaid, mock.Anything, int64(42), "ext-1").Return(activities.PayResult{Status: "paid", Changed: true}, nil)
	attempts := 0
	s.env.OnActivity(s.acts.IssueTickets, mock.Anything, int64(42)).Return(func(context.Context, int64) (int, error) {
		attempts++
		if attempts == 1 {
			return 0, errors.New("connection reset")
		}
		return 2, nil
	})
	// The e-mail waits for the tickets: it used to start beside the issue.
	emailedAfter := -1
	s.env.OnActivity(s.acts.SendTicketsEmail, mock.Anything, int64(42)).Return(func(context.Context, int64) error {
		emailedAfter = attempts
		return nil
	})
	s.confirmAt(time.Minute, 495000, func(contract.OrderStatus, error) {})
	in := s.input(false)
	in.Revision = 0
	s.older = true
	s.env.ExecuteWorkflow(workflows.Order, in)
	s.Equal(2, s.result().TicketsIssued)
	s.Equal(2, attempts)
	s.Contains(s.asked, "local-payment-activities", "an older order chooses by its markers")
	s.Equal(2, emailedAfter, "the tickets e-mail started before the tickets were issued")
}

func (s *orderSuite) TestPartnerCancelEndsThePendingOrder() {
	s.env.RegisterDelayedCallback(func() { s.env.SignalWorkflow(contract.OrderCancelledSignal, nil) }, time.Minute)
	s.env.ExecuteWorkflow(workflows.Order, s.input(false))
	s.Equal(states.OrderCancelled, s.result().Status)
}

func (s *orderSuite) TestLateGatewayPaymentIsReturned() {
	s.env.OnActivity(s.acts.CancelOrder, mock.Anything, int64(42), states.CancelPaymentTimeout).Return(activities.CancelResult{Status: "cancelled", Changed: true}, nil)
	s.env.OnActivity(s.acts.DeleteTestOrder, mock.Anything, int64(42)).Return(true, nil)
	s.env.OnActivity(s.acts.SettlePayment, mock.Anything, int64(42), "test", "pay_1").
		Return(activities.SettleResult{Gateway: "test", Status: "refund_due", RefundReason: "order_closed"}, nil).Once()
	s.env.OnActivity(s.acts.ReturnPayment, mock.Anything, "test", "pay_1").Return(nil).Once()
	in := s.input(true)
	in.Payment = "gateway"
	// The buyer pays five minutes after the window closed.
	s.env.RegisterDelayedCallback(func() {
		s.env.SignalWorkflow(contract.PaymentSignal, contract.PaymentEvent{Status: "paid", PaymentID: "pay_1", Gateway: "test"})
	}, 20*time.Minute)
	s.env.ExecuteWorkflow(workflows.Order, in)
	s.Equal(states.OrderCancelled, s.result().Status)
	s.env.AssertNumberOfCalls(s.T(), "ReturnPayment", 1)
	s.env.AssertNotCalled(s.T(), "MarkOrderPaid", mock.Anything, mock.Anything, mock.Anything)
}

// TestRefusedTicketsEmailDoesNotFailTheSaga: a mail server's final refusal
// leaves the order paid and the workflow completed.
func (s *orderSuite) TestRefusedTicketsEmailDoesNotFailTheSaga() {
	s.env.OnActivity(s.acts.MarkOrderPaid, mock.Anything, int64(42), "ext-1").Return(activities.PayResult{Status: "paid", Changed: true, Tickets: 1}, nil)
	s.env.OnActivity(s.acts.SendTicketsEmail, mock.Anything, int64(42)).
		Return(temporal.NewNonRetryableApplicationError("mail server refused", activities.ErrTypeMailRefused, nil)).Once()
	s.confirmAt(time.Minute, 495000, func(contract.OrderStatus, error) {})
	s.env.ExecuteWorkflow(workflows.Order, s.input(false))
	r := s.result()
	s.Equal(states.OrderPaid, r.Status)
	s.False(r.Emailed)
}

package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/suite"
	"go.temporal.io/sdk/testsuite"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/workflows"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

type reservationSuite struct {
	suite.Suite
	testsuite.WorkflowTestSuite
	env  *testsuite.TestWorkflowEnvironment
	acts *activities.Activities
	t0   time.Time
}

func TestReservationWorkflow(t *testing.T) { suite.Run(t, new(reservationSuite)) }

func (s *reservationSuite) SetupTest() {
	s.env = s.NewTestWorkflowEnvironment()
	s.t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	s.env.SetStartTime(s.t0)
	s.env.RegisterWorkflow(workflows.Reservation)
	s.env.RegisterActivity(s.acts)
}

func (s *reservationSuite) input() contract.ReservationInput {
	return contract.ReservationInput{ReservationID: "rsv_1", CompanyID: 7, EventID: 9, ExpiresAt: s.t0.Add(15 * time.Minute)}
}

func (s *reservationSuite) result() contract.ReservationStatus {
	s.True(s.env.IsWorkflowCompleted())
	s.NoError(s.env.GetWorkflowError())
	var r contract.ReservationStatus
	s.NoError(s.env.GetWorkflowResult(&r))
	return r
}

func (s *reservationSuite) TestExpiresAtTheDeadline() {
	var calledAt time.Time
	s.env.OnActivity(s.acts.ExpireReservation, mock.Anything, "rsv_1").Return(
		func(_ context.Context, _ string) (activities.ExpireResult, error) {
			calledAt = s.env.Now()
			return activities.ExpireResult{Status: "expired", Changed: true}, nil
		})
	// While the hold lives, the status query says reserved.
	s.env.RegisterDelayedCallback(func() {
		v, err := s.env.QueryWorkflow(contract.StatusQuery)
		s.NoError(err)
		var st contract.ReservationStatus
		s.NoError(v.Get(&st))
		s.Equal(states.ReservationReserved, st.Status)
	}, 14*time.Minute)
	s.env.ExecuteWorkflow(workflows.Reservation, s.input())
	s.Equal(states.ReservationExpired, s.result().Status)
	s.True(s.t0.Add(15*time.Minute).Equal(calledAt), "expiry must run exactly at expires_at, ran at %v", calledAt)
	s.env.AssertExpectations(s.T())
}

func (s *reservationSuite) TestReleasedBeforeTheDeadline() {
	s.env.RegisterDelayedCallback(func() {
		s.env.SignalWorkflow(contract.ReservationEndedSignal, contract.ReservationEnded{Status: "released"})
	}, 5*time.Minute)
	s.env.ExecuteWorkflow(workflows.Reservation, s.input())
	s.Equal(states.ReservationReleased, s.result().Status)
	s.True(s.t0.Add(5*time.Minute).Equal(s.env.Now()), "the workflow ends at the release, not at the deadline: %v", s.env.Now())
	s.env.AssertNotCalled(s.T(), "ExpireReservation", mock.Anything, mock.Anything)
}

func (s *reservationSuite) TestOrderedBeforeTheDeadline() {
	s.env.RegisterDelayedCallback(func() {
		s.env.SignalWorkflow(contract.ReservationEndedSignal, contract.ReservationEnded{Status: "ordered"})
	}, time.Minute)
	s.env.ExecuteWorkflow(workflows.Reservation, s.input())
	s.Equal(states.ReservationOrdered, s.result().Status)
}

func (s *reservationSuite) TestExpiryRetriedAfterAFailure() {
	s.env.OnActivity(s.acts.ExpireReservation, mock.Anything, "rsv_1").
		Return(activities.ExpireResult{}, errors.New("connection reset")).Once()
	s.env.OnActivity(s.acts.ExpireReservation, mock.Anything, "rsv_1").
		Return(activities.ExpireResult{Status: "expired", Changed: true}, nil).Once()
	s.env.ExecuteWorkflow(workflows.Reservation, s.input())
	s.Equal(states.ReservationExpired, s.result().Status)
	s.env.AssertNumberOfCalls(s.T(), "ExpireReservation", 2)
}

func (s *reservationSuite) TestRejectsInputWithoutDeadline() {
	s.env.ExecuteWorkflow(workflows.Reservation, contract.ReservationInput{ReservationID: "rsv_1"})
	s.Error(s.env.GetWorkflowError())
}

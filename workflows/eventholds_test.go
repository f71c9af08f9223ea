package workflows_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/suite"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/workflows"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

type eventHoldsSuite struct {
	suite.Suite
	testsuite.WorkflowTestSuite
	env  *testsuite.TestWorkflowEnvironment
	acts *activities.Activities
	t0   time.Time

	mu      sync.Mutex
	expired map[string]time.Time // reservation id → when its pass ran
	passes  int
}

func TestEventHoldsWorkflow(t *testing.T) { suite.Run(t, new(eventHoldsSuite)) }

func (s *eventHoldsSuite) SetupTest() {
	s.env = s.NewTestWorkflowEnvironment()
	s.t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	s.env.SetStartTime(s.t0)
	s.env.RegisterWorkflowWithOptions(workflows.EventHolds, workflow.RegisterOptions{Name: contract.EventHoldsWorkflow})
	s.env.RegisterActivity(s.acts)
	s.expired = map[string]time.Time{}
	s.passes = 0
}

// expireAll answers a deadline pass as Postgres would for holds nobody
// ended: expired; "ord_" holds were ordered before their deadline.
func (s *eventHoldsSuite) expireAll() {
	s.env.OnActivity(s.acts.ExpireReservations, mock.Anything, mock.Anything).Return(
		func(_ context.Context, ids []string) ([]activities.ExpiredHold, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.passes++
			out := make([]activities.ExpiredHold, 0, len(ids))
			for _, id := range ids {
				if _, twice := s.expired[id]; twice {
					s.Failf("hold passed twice", "%s", id)
				}
				s.expired[id] = s.env.Now()
				st := states.ReservationExpired
				if strings.HasPrefix(id, "ord_") {
					st = states.ReservationOrdered
				}
				out = append(out, activities.ExpiredHold{ReservationID: id, Status: st, Changed: st == states.ReservationExpired})
			}
			return out, nil
		})
}

func (s *eventHoldsSuite) add(after time.Duration, holds ...contract.Hold) {
	s.env.RegisterDelayedCallback(func() {
		s.env.SignalWorkflow(contract.HoldsAddedSignal, contract.HoldsAdded{Holds: holds})
	}, after)
}

func (s *eventHoldsSuite) query(id string) contract.HoldState {
	v, err := s.env.QueryWorkflow(contract.HoldQuery, id)
	s.Require().NoError(err)
	var st contract.HoldState
	s.Require().NoError(v.Get(&st))
	return st
}

func (s *eventHoldsSuite) TestEveryHoldIsFinalisedWithinASecondOfItsDeadlineNeverBefore() {
	s.expireAll()
	deadline := func(d time.Duration) time.Time { return s.t0.Add(d) }
	// Holds arrive in batches, out of deadline order, some sharing a second.
	s.add(time.Second,
		contract.Hold{ReservationID: "r_a", ExpiresAt: deadline(15*time.Minute + 300*time.Millisecond)},
		contract.Hold{ReservationID: "r_b", ExpiresAt: deadline(15*time.Minute + 900*time.Millisecond)},
		contract.Hold{ReservationID: "ord_c", ExpiresAt: deadline(20 * time.Minute)})
	s.add(2*time.Second,
		contract.Hold{ReservationID: "r_d", ExpiresAt: deadline(5 * time.Minute)},                       // shorter ttl: earlier than all
		contract.Hold{ReservationID: "r_a", ExpiresAt: deadline(15*time.Minute + 300*time.Millisecond)}) // sent again
	s.env.RegisterDelayedCallback(func() {
		st := s.query("r_a")
		s.True(st.Known)
		s.Empty(st.Status, "a hold before its deadline has no final status yet")
		s.False(s.query("r_zzz").Known)
	}, 10*time.Minute)
	s.env.RegisterDelayedCallback(func() {
		s.Equal(states.ReservationExpired, s.query("r_d").Status, "the query still answers for a finalised hold")
	}, 16*time.Minute)
	// (One run per minute in production; this one is given every deadline
	// to show the order and the sharing of passes.)
	s.env.ExecuteWorkflow(contract.EventHoldsWorkflow, contract.EventHoldsInput{EventID: 9, CompanyID: 7, Minute: s.t0.Add(15 * time.Minute)})

	s.True(s.env.IsWorkflowCompleted())
	s.NoError(s.env.GetWorkflowError(), "the run ends cleanly")
	want := map[string]time.Time{
		"r_d":   deadline(5 * time.Minute),
		"r_a":   deadline(15*time.Minute + 300*time.Millisecond),
		"r_b":   deadline(15*time.Minute + 900*time.Millisecond),
		"ord_c": deadline(20 * time.Minute),
	}
	s.Len(s.expired, len(want))
	for id, at := range want {
		got, ok := s.expired[id]
		s.True(ok, "%s never finalised", id)
		s.False(got.Before(at), "%s finalised at %v, before its deadline %v", id, got, at)
		s.LessOrEqual(got.Sub(at), time.Second, "%s finalised %v after its deadline", id, got.Sub(at))
	}
	s.Equal(3, s.passes, "holds of the same second share one pass (r_a and r_b)")
}

func (s *eventHoldsSuite) TestAHoldThePassCouldNotFinaliseIsTriedAgain() {
	calls := 0
	s.env.OnActivity(s.acts.ExpireReservations, mock.Anything, []string{"r_1"}).Return(
		func(_ context.Context, ids []string) ([]activities.ExpiredHold, error) {
			calls++
			if calls == 1 { // Postgres's clock still behind the deadline
				return []activities.ExpiredHold{{ReservationID: "r_1", Retry: true}}, nil
			}
			return []activities.ExpiredHold{{ReservationID: "r_1", Status: states.ReservationExpired, Changed: true}}, nil
		})
	s.add(0, contract.Hold{ReservationID: "r_1", ExpiresAt: s.t0.Add(time.Minute)})
	s.env.RegisterDelayedCallback(func() {
		st := s.query("r_1")
		s.Empty(st.Status, "still pending between the tries")
		s.Equal(s.t0.Add(time.Minute), st.ExpiresAt, "the query shows the real deadline, not the retry")
	}, time.Minute+2*time.Second)
	s.env.ExecuteWorkflow(contract.EventHoldsWorkflow, contract.EventHoldsInput{EventID: 9, CompanyID: 7, Minute: s.t0.Add(time.Minute)})
	s.NoError(s.env.GetWorkflowError())
	s.Equal(2, calls)
	s.Equal(states.ReservationExpired, s.query("r_1").Status)
}

func (s *eventHoldsSuite) TestTheRunEndsOnceItsMinuteIsOverAndEveryHoldFinal() {
	s.expireAll()
	minute := s.t0.Add(15 * time.Minute)
	s.add(time.Second, contract.Hold{ReservationID: "r_1", ExpiresAt: minute.Add(10 * time.Second)})
	// A hold of the same minute made later still joins the run.
	s.add(40*time.Second, contract.Hold{ReservationID: "r_2", ExpiresAt: minute.Add(50 * time.Second)})
	s.env.ExecuteWorkflow(contract.EventHoldsWorkflow, contract.EventHoldsInput{EventID: 9, CompanyID: 7, Minute: minute})
	s.True(s.env.IsWorkflowCompleted())
	s.NoError(s.env.GetWorkflowError())
	s.Len(s.expired, 2)
	s.True(minute.Add(time.Minute).Equal(s.env.Now()), "the run waits out its minute, then ends: %v", s.env.Now())
}

func (s *eventHoldsSuite) TestALateHandOverIsFinalisedAtOnce() {
	s.expireAll()
	// A sweep hands over a hold whose deadline passed while its api was
	// dead: a new run of that minute finalises it and ends.
	minute := s.t0.Add(-10 * time.Minute)
	s.add(0, contract.Hold{ReservationID: "r_late", ExpiresAt: minute.Add(5 * time.Second)})
	s.env.ExecuteWorkflow(contract.EventHoldsWorkflow, contract.EventHoldsInput{EventID: 9, CompanyID: 7, Minute: minute})
	s.NoError(s.env.GetWorkflowError())
	s.True(s.t0.Equal(s.expired["r_late"]), "finalised at %v", s.expired["r_late"])
}

func (s *eventHoldsSuite) TestACancelledRunStops() {
	s.add(time.Second, contract.Hold{ReservationID: "r_1", ExpiresAt: s.t0.Add(15 * time.Minute)})
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, time.Minute)
	s.env.ExecuteWorkflow(contract.EventHoldsWorkflow, contract.EventHoldsInput{EventID: 9, CompanyID: 7, Minute: s.t0.Add(15 * time.Minute)})
	s.True(s.env.IsWorkflowCompleted())
	var canceled *temporal.CanceledError
	s.ErrorAs(s.env.GetWorkflowError(), &canceled)
	s.True(s.t0.Add(time.Minute).Equal(s.env.Now()), "stopped at %v", s.env.Now())
}

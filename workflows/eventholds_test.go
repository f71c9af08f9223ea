package workflows_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/suite"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"ticketsales/activities"
	"ticketsales/internal/states"
	"ticketsales/workflows"
	"ticketsales/workflows/contract"
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
	s.env.ExecuteWorkflow(contract.EventHoldsWorkflow, contract.EventHoldsInput{EventID: 9, CompanyID: 7})

	s.True(s.env.IsWorkflowCompleted())
	s.NoError(s.env.GetWorkflowError(), "the idle run ends cleanly")
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
	s.env.ExecuteWorkflow(contract.EventHoldsWorkflow, contract.EventHoldsInput{EventID: 9, CompanyID: 7})
	s.NoError(s.env.GetWorkflowError())
	s.Equal(2, calls)
}

func (s *eventHoldsSuite) TestContinuesAsNewCarryingPendingAndFinishedHolds() {
	s.expireAll()
	s.add(time.Second,
		contract.Hold{ReservationID: "r_late", ExpiresAt: s.t0.Add(15 * time.Minute)},
		contract.Hold{ReservationID: "r_early", ExpiresAt: s.t0.Add(2 * time.Minute)},
		contract.Hold{ReservationID: "r_mid", ExpiresAt: s.t0.Add(10 * time.Minute)})
	// The server suggests continuing as new (a long history); the next
	// wake-up, a new batch, makes the run hand everything over.
	s.env.RegisterDelayedCallback(func() { s.env.SetContinueAsNewSuggested(true) }, 3*time.Minute)
	s.add(4*time.Minute, contract.Hold{ReservationID: "r_new", ExpiresAt: s.t0.Add(19 * time.Minute)})
	s.env.ExecuteWorkflow(contract.EventHoldsWorkflow, contract.EventHoldsInput{EventID: 9, CompanyID: 7})
	s.True(s.env.IsWorkflowCompleted())
	err := s.env.GetWorkflowError()
	s.Require().Error(err)
	var can *workflow.ContinueAsNewError
	s.Require().ErrorAs(err, &can)
	var next contract.EventHoldsInput
	s.Require().NoError(converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	s.Equal(int64(9), next.EventID)
	s.Equal(int64(7), next.CompanyID)
	var ids []string
	for _, h := range next.Pending {
		ids = append(ids, h.ReservationID)
	}
	s.Equal([]string{"r_mid", "r_late", "r_new"}, ids, "the pending holds, in deadline order, the new batch among them")
	s.Require().Len(next.Finished, 1)
	s.Equal("r_early", next.Finished[0].ReservationID)
	s.Equal(states.ReservationExpired, next.Finished[0].Status)
	s.Len(s.expired, 1)
}

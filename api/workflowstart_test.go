package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/worker"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// stalledStarter makes holds queue for a hand-over that never comes: the
// api that took them died before giving them to their event's workflow.
func stalledStarter(f *fixture) {
	f.Holds.UseStarter(holds.NewStarter(f.DB, f.Temporal, slog.New(slog.NewTextHandler(io.Discard, nil)), f.TaskQueue, 100, 1))
}

func (f *fixture) holdWithoutWorkflow(t *testing.T, seat string) string {
	t.Helper()
	res := f.reserve(t, f.keyA, seat)
	if res.Status != http.StatusCreated {
		t.Fatalf("reserve: %d %s", res.Status, res.Body)
	}
	var r reservationBody
	res.Decode(t, &r)
	if f.workflowStarted(t, r.Data.ID) {
		t.Fatal("a queued hand-over is recorded as made")
	}
	return r.Data.ID
}

func (f *fixture) workflowStarted(t *testing.T, id string) bool {
	t.Helper()
	var started bool
	if err := f.DB.NewRaw("SELECT workflow_started FROM reservations WHERE id = ?", id).Scan(context.Background(), &started); err != nil {
		t.Fatal(err)
	}
	return started
}

func TestHoldIsHandedToItsEventsWorkflowAfterTheAnswerAndIsRecorded(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	res := f.reserve(t, f.keyA, "parterre-2-1")
	var r reservationBody
	res.Decode(t, &r)
	if res.Status != http.StatusCreated {
		t.Fatalf("reserve: %d %s", res.Status, res.Body)
	}
	// Operators find the hold in its event's workflow, with its deadline.
	st := f.AwaitHold(t, r.Data.ID, "", 20*time.Second)
	if !st.ExpiresAt.Equal(r.Data.ExpiresAt) || st.Status != "" {
		t.Fatalf("the workflow has %+v for a hold expiring at %v", st, r.Data.ExpiresAt)
	}
	for deadline := time.Now().Add(10 * time.Second); !f.workflowStarted(t, r.Data.ID); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the hand-over was never recorded on the reservation")
		}
	}
	desc, err := f.Temporal.DescribeWorkflowExecution(context.Background(), contract.EventHoldsWorkflowID(f.ids["swan-lake"], r.Data.ExpiresAt), "")
	if err != nil {
		t.Fatal(err)
	}
	if desc.WorkflowExecutionInfo.Type.Name != contract.EventHoldsWorkflow {
		t.Fatalf("workflow type %q", desc.WorkflowExecutionInfo.Type.Name)
	}
}

// Many holds of one event cost a few signals, not a workflow each.
func TestHoldsOfAnEventShareOneWorkflow(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	seats := []string{"parterre-1-1", "parterre-1-2", "parterre-1-3", "parterre-1-4", "parterre-1-5", "parterre-1-6"}
	ids := make([]string, len(seats))
	for i, seat := range seats {
		res := f.reserve(t, f.keyA, seat)
		if res.Status != http.StatusCreated {
			t.Fatalf("reserve %s: %d %s", seat, res.Status, res.Body)
		}
		var r reservationBody
		res.Decode(t, &r)
		ids[i] = r.Data.ID
	}
	for _, id := range ids {
		f.AwaitHold(t, id, "", 20*time.Second)
	}
	// One holds workflow per deadline minute (these holds almost always
	// share one), none per hold.
	minutes := map[string]bool{}
	for _, id := range ids {
		var at time.Time
		if err := f.DB.NewRaw("SELECT expires_at FROM reservations WHERE id = ?", id).Scan(context.Background(), &at); err != nil {
			t.Fatal(err)
		}
		minutes[contract.EventHoldsWorkflowID(f.ids["swan-lake"], at)] = true
	}
	countWorkflows(t, f.Stack, fmt.Sprintf("WorkflowType = '%s' AND EventId = %d", contract.EventHoldsWorkflow, f.ids["swan-lake"]), int64(len(minutes)))
	countWorkflows(t, f.Stack, fmt.Sprintf("WorkflowType = '%s'", contract.ReservationWorkflow), 0)
	pending := 0
	for wid := range minutes {
		v, err := f.Temporal.QueryWorkflow(context.Background(), wid, "", contract.HoldsQuery)
		if err != nil {
			t.Fatal(err)
		}
		var sum contract.HoldsSummary
		if err := v.Get(&sum); err != nil {
			t.Fatal(err)
		}
		pending += sum.Pending
	}
	if pending != len(ids) {
		t.Fatalf("%d holds pending in %d workflows, want %d", pending, len(minutes), len(ids))
	}
}

func TestSweepHandsOverTheHoldsACrashedAPINeverHandedOver(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	stalledStarter(f)
	id := f.holdWithoutWorkflow(t, "parterre-2-2")
	reaper := worker.Reaper{DB: f.DB, Temporal: f.Temporal, TaskQueue: f.TaskQueue,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Grace: 0}
	reaper.Once(context.Background())
	f.AwaitHold(t, id, "", 20*time.Second)
	if !f.workflowStarted(t, id) {
		t.Fatal("the sweep did not record its hand-over")
	}
	// Nothing left to sweep; a second run hands over nothing new.
	if n, err := holds.Sweep(context.Background(), f.DB, f.Temporal, f.TaskQueue, 0); n != 0 || err != nil {
		t.Fatalf("second sweep: %d %v", n, err)
	}
	// Ended holds are not the sweep's business.
	released := f.holdWithoutWorkflow(t, "parterre-2-3")
	if res := f.Do(t, http.MethodDelete, "/v1/reservations/"+released, f.keyA, ""); res.Status != http.StatusOK {
		t.Fatalf("release: %d %s", res.Status, res.Body)
	}
	if n, err := holds.Sweep(context.Background(), f.DB, f.Temporal, f.TaskQueue, 0); n != 0 || err != nil {
		t.Fatalf("sweep over an ended hold: %d %v", n, err)
	}
}

// A hold released or ordered before its deadline is left as it is by the
// deadline pass, which reports how it ended.
func TestDeadlinePassLeavesHoldsThatEndedOtherwise(t *testing.T) {
	f := newFixture(t)
	f.Holds.TTLUnit = time.Second // ttl_minutes=5 → a five-second hold
	f.StartWorker(t)
	hold := func(seat string) string {
		res := f.Do(t, http.MethodPost, "/v1/reservations", f.keyA,
			fmt.Sprintf(`{"event_id": %d, "seats": %s, "ttl_minutes": 5}`, f.ids["swan-lake"], seatsJSON(seat)), idemKey(t))
		if res.Status != http.StatusCreated {
			t.Fatalf("reserve: %d %s", res.Status, res.Body)
		}
		var r reservationBody
		res.Decode(t, &r)
		return r.Data.ID
	}
	released, ordered := hold("parterre-3-5"), hold("parterre-3-6")
	if res := f.Do(t, http.MethodDelete, "/v1/reservations/"+released, f.keyA, ""); res.Status != http.StatusOK {
		t.Fatalf("release: %d %s", res.Status, res.Body)
	}
	if res := f.orderFromReservation(t, f.keyA, ordered, "external"); res.Status != http.StatusCreated {
		t.Fatalf("order: %d %s", res.Status, res.Body)
	}
	f.AwaitHold(t, released, states.ReservationReleased, 30*time.Second)
	f.AwaitHold(t, ordered, states.ReservationOrdered, 30*time.Second)
}

// The starter gathers holds per event and deadline minute: a burst of
// holds costs a few signals (at most 500 holds each), every hold reaches
// its workflow, and nothing is taken after Close.
func TestStarterHandsOverBurstsInBatches(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	st := holds.NewStarter(f.DB, f.Temporal, slog.New(slog.NewTextHandler(io.Discard, nil)), f.TaskQueue, 5000, 4)
	st.Run()
	deadline := time.Now().Add(15 * time.Minute).Truncate(time.Minute).Add(30 * time.Second)
	eventA, eventB := f.ids["swan-lake"], f.foreignID
	for i := range 1200 {
		if !st.Enqueue(store.Reservation{ID: fmt.Sprintf("rsv_burst_a_%04d", i), CompanyID: f.companyA, EventID: eventA,
			ExpiresAt: deadline.Add(time.Duration(i) * time.Millisecond)}) {
			t.Fatalf("hold %d refused by a starter with room", i)
		}
	}
	for i := range 3 {
		st.Enqueue(store.Reservation{ID: fmt.Sprintf("rsv_burst_b_%d", i), CompanyID: f.companyA, EventID: eventB, ExpiresAt: deadline})
	}
	st.Close(30 * time.Second)
	if st.Enqueue(store.Reservation{ID: "rsv_after_close", EventID: eventA, ExpiresAt: deadline}) {
		t.Fatal("a closed starter took a hold")
	}
	summary := func(event int64) contract.HoldsSummary {
		v, err := f.Temporal.QueryWorkflow(context.Background(), contract.EventHoldsWorkflowID(event, deadline), "", contract.HoldsQuery)
		if err != nil {
			t.Fatalf("holds workflow of event %d: %v", event, err)
		}
		var sum contract.HoldsSummary
		if err := v.Get(&sum); err != nil {
			t.Fatal(err)
		}
		return sum
	}
	if a, b := summary(eventA), summary(eventB); a.Pending != 1200 || b.Pending != 3 {
		t.Fatalf("pending holds: event A %d (want 1200), event B %d (want 3)", a.Pending, b.Pending)
	}
	signals := 0
	it := f.Temporal.GetWorkflowHistory(context.Background(), contract.EventHoldsWorkflowID(eventA, deadline), "", false, 0)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e.GetWorkflowExecutionSignaledEventAttributes() != nil {
			signals++
		}
	}
	// 1,200 holds: at least three batches of at most 500; a handful more
	// when the 50 ms gathering window cut the burst.
	if signals < 3 || signals > 30 {
		t.Fatalf("%d signals for 1,200 holds", signals)
	}
	t.Logf("1,200 holds of one event handed over in %d signals", signals)
}

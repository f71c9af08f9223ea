package api_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"

	"ticketsales/internal/sales"
	"ticketsales/internal/states"
	"ticketsales/store"
	"ticketsales/worker"
	"ticketsales/workflows/contract"
)

// stalledStarter makes holds queue for a start that never comes: the api
// that took them died before starting their workflows.
func stalledStarter(f *fixture) {
	f.Sales.UseStarter(sales.NewStarter(f.DB, f.Temporal, slog.New(slog.NewTextHandler(io.Discard, nil)), f.TaskQueue, 100, 1))
}

func (f *fixture) holdWithoutWorkflow(t *testing.T, seat string) string {
	t.Helper()
	res := f.reserve(t, f.keyA, seat)
	if res.Status != http.StatusCreated {
		t.Fatalf("reserve: %d %s", res.Status, res.Body)
	}
	var r reservationBody
	res.Decode(t, &r)
	_, err := f.Temporal.DescribeWorkflowExecution(context.Background(), contract.ReservationWorkflowID(r.Data.ID), "")
	var nf *serviceerror.NotFound
	if !errors.As(err, &nf) {
		t.Fatalf("the stalled hold has a workflow already: %v", err)
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

func (f *fixture) reservationResult(t *testing.T, id string) contract.ReservationStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out contract.ReservationStatus
	if err := f.Temporal.GetWorkflow(ctx, contract.ReservationWorkflowID(id), "").Get(ctx, &out); err != nil {
		t.Fatalf("workflow of %s: %v", id, err)
	}
	return out
}

func TestHoldWorkflowStartsAfterTheAnswerAndIsRecorded(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	res := f.reserve(t, f.keyA, "parterre-2-1")
	var r reservationBody
	res.Decode(t, &r)
	if res.Status != http.StatusCreated {
		t.Fatalf("reserve: %d %s", res.Status, res.Body)
	}
	f.AwaitWorkflow(t, contract.ReservationWorkflowID(r.Data.ID))
	for deadline := time.Now().Add(10 * time.Second); !f.workflowStarted(t, r.Data.ID); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the started workflow was never recorded on the reservation")
		}
	}
}

func TestSweepStartsTheWorkflowsACrashedAPINeverStarted(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	stalledStarter(f)
	id := f.holdWithoutWorkflow(t, "parterre-2-2")
	if f.workflowStarted(t, id) {
		t.Fatal("a queued start is recorded as made")
	}
	reaper := worker.Reaper{DB: f.DB, Temporal: f.Temporal, TaskQueue: f.TaskQueue,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Grace: 0}
	reaper.Once(context.Background())
	desc, err := f.Temporal.DescribeWorkflowExecution(context.Background(), contract.ReservationWorkflowID(id), "")
	if err != nil {
		t.Fatalf("after the sweep: %v", err)
	}
	if !f.workflowStarted(t, id) {
		t.Fatal("the sweep did not record its start")
	}
	// Nothing left to sweep; a second run starts nothing new.
	if n, err := sales.Sweep(context.Background(), f.DB, f.Temporal, f.TaskQueue, 0); n != 0 || err != nil {
		t.Fatalf("second sweep: %d %v", n, err)
	}
	// The swept workflow is the hold's: releasing ends it.
	if res := f.Do(t, http.MethodDelete, "/v1/reservations/"+id, f.keyA, ""); res.Status != http.StatusOK {
		t.Fatalf("release: %d %s", res.Status, res.Body)
	}
	if got := f.reservationResult(t, id); got.Status != states.ReservationReleased {
		t.Fatalf("swept workflow ended %q", got.Status)
	}
	again, _ := f.Temporal.DescribeWorkflowExecution(context.Background(), contract.ReservationWorkflowID(id), "")
	if again.WorkflowExecutionInfo.Execution.RunId != desc.WorkflowExecutionInfo.Execution.RunId {
		t.Fatal("the release started a second run")
	}
}

func TestHoldEndedBeforeItsWorkflowStartedStillShowsInTemporal(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	stalledStarter(f)

	released := f.holdWithoutWorkflow(t, "parterre-2-3")
	if res := f.Do(t, http.MethodDelete, "/v1/reservations/"+released, f.keyA, ""); res.Status != http.StatusOK {
		t.Fatalf("release: %d %s", res.Status, res.Body)
	}
	if got := f.reservationResult(t, released); got.Status != states.ReservationReleased {
		t.Fatalf("released hold's workflow ended %q", got.Status)
	}

	ordered := f.holdWithoutWorkflow(t, "parterre-2-4")
	if res := f.orderFromReservation(t, f.keyA, ordered, "external"); res.Status != http.StatusCreated {
		t.Fatalf("order: %d %s", res.Status, res.Body)
	}
	if got := f.reservationResult(t, ordered); got.Status != states.ReservationOrdered {
		t.Fatalf("ordered hold's workflow ended %q", got.Status)
	}

	// The start the dead api owed comes late: it must not run the hold again.
	first, _ := f.Temporal.DescribeWorkflowExecution(context.Background(), contract.ReservationWorkflowID(released), "")
	r, _, err := store.GetReservation(context.Background(), f.DB, f.companyA, released)
	if err != nil {
		t.Fatal(err)
	}
	if err := sales.StartReservationWorkflow(context.Background(), f.Temporal, f.TaskQueue, r); err != nil {
		t.Fatalf("late start: %v", err)
	}
	after, _ := f.Temporal.DescribeWorkflowExecution(context.Background(), contract.ReservationWorkflowID(released), "")
	if after.WorkflowExecutionInfo.Execution.RunId != first.WorkflowExecutionInfo.Execution.RunId {
		t.Fatal("a late start ran a closed hold's workflow again")
	}
	// Ended holds are not the sweep's business.
	if n, err := sales.Sweep(context.Background(), f.DB, f.Temporal, f.TaskQueue, 0); n != 0 || err != nil {
		t.Fatalf("sweep over ended holds: %d %v", n, err)
	}
}

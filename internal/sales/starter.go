package sales

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/uptrace/bun"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"ticketsales/store"
	"ticketsales/workflows/contract"
)

// reservationStart is how every reservation workflow is started, by the
// starter, the sweep or a signal-with-start. A duplicate is refused even
// after the first run closed, so a late start never runs a hold twice.
func reservationStart(taskQueue string, r *store.Reservation) (client.StartWorkflowOptions, contract.ReservationInput) {
	return client.StartWorkflowOptions{
			ID:                    contract.ReservationWorkflowID(r.ID),
			TaskQueue:             taskQueue,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			TypedSearchAttributes: temporal.NewSearchAttributes(
				contract.CompanyIDAttr.ValueSet(r.CompanyID),
				contract.EventIDAttr.ValueSet(r.EventID),
				contract.IsTestAttr.ValueSet(r.IsTest),
			),
		}, contract.ReservationInput{
			ReservationID: r.ID, CompanyID: r.CompanyID, EventID: r.EventID, IsTest: r.IsTest, ExpiresAt: r.ExpiresAt,
		}
}

// StartReservationWorkflow starts the workflow of a hold; one that exists
// already (running or closed) counts as started.
func StartReservationWorkflow(ctx context.Context, tc client.Client, taskQueue string, r *store.Reservation) error {
	opts, in := reservationStart(taskQueue, r)
	_, err := tc.ExecuteWorkflow(ctx, opts, contract.ReservationWorkflow, in)
	// The SDK answers a duplicate with the existing run and no error unless
	// told otherwise; the check keeps that true whatever the options say.
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return fmt.Errorf("start workflow of reservation %s: %w", r.ID, err)
	}
	return nil
}

// Starter starts reservation workflows after the hold committed, off the
// request path: Postgres decides a hold (DESIGN.md §1, principle 3: a hold
// is correct without its workflow), the workflow only makes the expiry
// final and visible. So an on-sale rush is answered at the speed of the
// hold statement while the Temporal server takes the starts at its own
// pace. Each start is recorded on the reservation (in batches); a start
// lost with a crashed process is made by Sweep.
type Starter struct {
	db        *bun.DB // for the marks: the bookkeeping pool
	tc        client.Client
	log       *slog.Logger
	taskQueue string
	workers   int

	mu     sync.RWMutex
	closed bool
	queue  chan store.Reservation
	marks  chan string
	done   sync.WaitGroup
	marked sync.WaitGroup
}

// NewStarter makes a starter holding at most capacity pending starts,
// started by workers goroutines once Run is called.
func NewStarter(db *bun.DB, tc client.Client, log *slog.Logger, taskQueue string, capacity, workers int) *Starter {
	return &Starter{db: db, tc: tc, log: log, taskQueue: taskQueue, workers: max(workers, 1),
		queue: make(chan store.Reservation, capacity), marks: make(chan string, capacity)}
}

// Enqueue hands a committed hold to the starter. It reports false when the
// starter is full or closed; the caller then starts the workflow itself, so
// a backlog turns into backpressure rather than unbounded memory.
func (st *Starter) Enqueue(r store.Reservation) bool {
	st.mu.RLock()
	defer st.mu.RUnlock()
	if st.closed {
		return false
	}
	select {
	case st.queue <- r:
		return true
	default:
		return false
	}
}

// Run starts the workers and the marker; Close stops them.
func (st *Starter) Run() {
	st.marked.Add(1)
	go st.mark()
	for range st.workers {
		st.done.Add(1)
		go func() {
			defer st.done.Done()
			for r := range st.queue {
				st.start(&r)
			}
		}()
	}
}

func (st *Starter) start(r *store.Reservation) {
	var err error
	for attempt := range 3 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * time.Second)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = StartReservationWorkflow(ctx, st.tc, st.taskQueue, r)
		cancel()
		if err == nil {
			st.marks <- r.ID
			return
		}
	}
	// Left for the sweep; the hold itself is safe in Postgres meanwhile.
	st.log.Warn("reservation workflow not started; the sweep will retry", "reservation_id", r.ID, "err", err)
}

// mark records started workflows in batches: one statement for up to 500
// starts, at least every 100 ms.
func (st *Starter) mark() {
	defer st.marked.Done()
	var batch []string
	flush := func() {
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := store.MarkWorkflowsStarted(ctx, st.db, batch); err != nil {
			st.log.Warn("record reservation workflow starts", "count", len(batch), "err", err)
		}
		batch = batch[:0]
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case id, ok := <-st.marks:
			if !ok {
				flush()
				return
			}
			if batch = append(batch, id); len(batch) >= 500 {
				flush()
			}
		case <-tick.C:
			flush()
		}
	}
}

// Close stops taking holds and waits up to timeout for the pending starts;
// what is left then is the sweep's.
func (st *Starter) Close(timeout time.Duration) {
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return
	}
	st.closed = true
	close(st.queue)
	st.mu.Unlock()
	finished := make(chan struct{})
	go func() {
		st.done.Wait()
		close(st.marks)
		st.marked.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(timeout):
		st.log.Warn("reservation workflow starts left for the sweep", "pending", len(st.queue))
	}
}

// Sweep starts the workflows of live holds created before olderThan ago
// whose start was never recorded, and records them. The worker runs it with
// its reaper.
func Sweep(ctx context.Context, db *bun.DB, tc client.Client, taskQueue string, olderThan time.Duration) (int, error) {
	rs, err := store.UnstartedReservations(ctx, db, time.Now().Add(-olderThan), 1000)
	if err != nil || len(rs) == 0 {
		return 0, err
	}
	ids := make([]string, 0, len(rs))
	var errs []error
	for i := range rs {
		if err := StartReservationWorkflow(ctx, tc, taskQueue, &rs[i]); err != nil {
			errs = append(errs, err) // the others still get theirs
			continue
		}
		ids = append(ids, rs[i].ID)
	}
	if len(ids) > 0 {
		errs = append(errs, store.MarkWorkflowsStarted(ctx, db, ids))
	}
	return len(ids), errors.Join(errs...)
}

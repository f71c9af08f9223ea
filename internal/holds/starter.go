package holds

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/uptrace/bun"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// eventHoldsStart is how every event's holds workflow is started: by the
// first batch of holds of its minute (signal-with-start). A late hand-over
// after the run ended starts a new run, which finalises it at once.
func eventHoldsStart(taskQueue string, eventID, companyID int64, deadline time.Time) (client.StartWorkflowOptions, contract.EventHoldsInput) {
	return client.StartWorkflowOptions{
		ID:                    contract.EventHoldsWorkflowID(eventID, deadline),
		TaskQueue:             taskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			contract.CompanyIDAttr.ValueSet(companyID),
			contract.EventIDAttr.ValueSet(eventID),
		),
	}, contract.EventHoldsInput{EventID: eventID, CompanyID: companyID, Minute: contract.HoldsMinute(deadline)}
}

// holdsKey is what one hand-over has in common: the event and the minute
// of the deadlines, that is, one holds workflow.
type holdsKey struct {
	event  int64
	minute time.Time
}

func keyOf(r *store.Reservation) holdsKey {
	return holdsKey{r.EventID, contract.HoldsMinute(r.ExpiresAt)}
}

// HandOverHolds gives committed holds of one event, whose deadlines fall in
// one minute, to the holds workflow of that event and minute, which makes
// each final at its deadline: one signal-with-start for the whole batch.
// Sending a hold twice is harmless.
func HandOverHolds(ctx context.Context, tc client.Client, taskQueue string, rs []store.Reservation) error {
	if len(rs) == 0 {
		return nil
	}
	k := keyOf(&rs[0])
	holds := make([]contract.Hold, len(rs))
	for i := range rs {
		if keyOf(&rs[i]) != k {
			return fmt.Errorf("hand over holds: reservation %s is not of event %d with a deadline in %v", rs[i].ID, k.event, k.minute)
		}
		holds[i] = contract.Hold{ReservationID: rs[i].ID, ExpiresAt: rs[i].ExpiresAt}
	}
	opts, in := eventHoldsStart(taskQueue, rs[0].EventID, rs[0].CompanyID, rs[0].ExpiresAt)
	_, err := tc.SignalWithStartWorkflow(ctx, opts.ID, contract.HoldsAddedSignal, contract.HoldsAdded{Holds: holds},
		opts, contract.EventHoldsWorkflow, in)
	if err != nil {
		return fmt.Errorf("hand %d holds of event %d to %s: %w", len(rs), k.event, opts.ID, err)
	}
	return nil
}

// Starter hands committed holds to their events' holds workflows off the
// request path: Postgres decides a hold (docs/decisions.md, principle 3: a hold
// is correct without its workflow), the workflow only makes the expiry
// final and visible. Holds are gathered per event for up to batchEvery or
// batchMax holds and handed over with one signal each, so the Temporal
// server sees a few calls a second per event however fast holds come
// (holds of one event made within 50 ms mostly share a deadline minute).
// Each hand-over is recorded on the reservations (in batches); one lost
// with a crashed process is made by Sweep.
type Starter struct {
	db        *bun.DB // for the marks: the bookkeeping pool
	tc        client.Client
	log       *slog.Logger
	taskQueue string
	workers   int

	mu      sync.RWMutex
	closed  bool
	queue   chan store.Reservation
	batches chan []store.Reservation
	marks   chan []string
	done    sync.WaitGroup
	marked  sync.WaitGroup
}

// How holds are gathered before a hand-over.
const (
	batchEvery = 50 * time.Millisecond
	batchMax   = 500
)

// NewStarter makes a starter holding at most capacity pending holds,
// handed over by workers goroutines once Run is called.
func NewStarter(db *bun.DB, tc client.Client, log *slog.Logger, taskQueue string, capacity, workers int) *Starter {
	return &Starter{db: db, tc: tc, log: log, taskQueue: taskQueue, workers: max(workers, 1),
		queue: make(chan store.Reservation, capacity), batches: make(chan []store.Reservation, max(workers, 1)),
		marks: make(chan []string, 64)}
}

// Enqueue hands a committed hold to the starter. It reports false when the
// starter is full or closed; the caller then hands it over itself, so a
// backlog turns into backpressure rather than unbounded memory.
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

// Run starts the gatherer, the workers and the marker; Close stops them.
func (st *Starter) Run() {
	st.marked.Add(1)
	go st.mark()
	st.done.Add(1)
	go st.gather()
	for range st.workers {
		st.done.Add(1)
		go func() {
			defer st.done.Done()
			for b := range st.batches {
				st.handOver(b)
			}
		}()
	}
}

// gather groups queued holds by event and deadline minute.
func (st *Starter) gather() {
	defer st.done.Done()
	defer close(st.batches)
	byKey := map[holdsKey][]store.Reservation{}
	flush := func() {
		for k, b := range byKey {
			st.batches <- b
			delete(byKey, k)
		}
	}
	tick := time.NewTicker(batchEvery)
	defer tick.Stop()
	for {
		select {
		case r, ok := <-st.queue:
			if !ok {
				flush()
				return
			}
			k := keyOf(&r)
			b := append(byKey[k], r)
			if len(b) >= batchMax {
				st.batches <- b
				delete(byKey, k)
				continue
			}
			byKey[k] = b
		case <-tick.C:
			flush()
		}
	}
}

func (st *Starter) handOver(b []store.Reservation) {
	var err error
	for attempt := range 3 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * time.Second)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = HandOverHolds(ctx, st.tc, st.taskQueue, b)
		cancel()
		if err == nil {
			ids := make([]string, len(b))
			for i, r := range b {
				ids[i] = r.ID
			}
			st.marks <- ids
			return
		}
	}
	// Left for the sweep; the holds themselves are safe in Postgres meanwhile.
	st.log.Warn("holds not handed to their workflow; the sweep will retry", "event_id", b[0].EventID, "holds", len(b), "err", err)
}

// mark records handed-over holds in batches: one statement for up to 500,
// at least every 100 ms.
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
			st.log.Warn("record holds handed to their workflow", "count", len(batch), "err", err)
		}
		batch = batch[:0]
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case ids, ok := <-st.marks:
			if !ok {
				flush()
				return
			}
			if batch = append(batch, ids...); len(batch) >= 500 {
				flush()
			}
		case <-tick.C:
			flush()
		}
	}
}

// Close stops taking holds and waits up to timeout for the pending
// hand-overs; what is left then is the sweep's.
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
		st.log.Warn("holds left for the sweep", "pending", len(st.queue))
	}
}

// Sweep hands to their workflows the live holds created before olderThan
// ago whose hand-over was never recorded, and records it. The worker runs
// it with its reaper.
func Sweep(ctx context.Context, db *bun.DB, tc client.Client, taskQueue string, olderThan time.Duration) (int, error) {
	rs, err := store.UnstartedReservations(ctx, db, time.Now().Add(-olderThan), 1000)
	if err != nil || len(rs) == 0 {
		return 0, err
	}
	byKey := map[holdsKey][]store.Reservation{}
	var keys []holdsKey
	for _, r := range rs {
		k := keyOf(&r)
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], r)
	}
	var ids []string
	var errs []error
	for _, k := range keys {
		if err := HandOverHolds(ctx, tc, taskQueue, byKey[k]); err != nil {
			errs = append(errs, err) // the others still get theirs
			continue
		}
		for _, r := range byKey[k] {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) > 0 {
		if err := store.MarkWorkflowsStarted(ctx, db, ids); err != nil {
			return 0, errors.Join(append(errs, err)...)
		}
	}
	return len(ids), errors.Join(errs...)
}

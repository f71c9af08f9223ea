package workflows

import (
	"container/heap"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"ticketsales/activities"
	"ticketsales/workflows/contract"
)

// Limits of an event's holds workflow.
const (
	// holdsIdleFor: a run that owns no pending hold ends after this long
	// without a new one; the next hold starts a new run.
	holdsIdleFor = time.Hour
	// holdsPassChunk: holds finalised per activity of a deadline pass.
	holdsPassChunk = 500
	// holdsRetryAfter: a hold the pass could not finalise is tried again
	// this much later.
	holdsRetryAfter = 5 * time.Second
	// holdsBatchesPerRun: signals taken before continuing as new, whatever
	// the server suggests, so a run's history stays small to replay.
	holdsBatchesPerRun = 1000
	// holdsFinishedKept: how many finalised holds the hold query still
	// answers for.
	holdsFinishedKept = 1000
)

// eventHolds owns the deadlines of one event's holds, so a rush of holds
// costs the Temporal server one signal per batch of holds instead of one
// workflow per hold. Postgres decides every hold and already treats a
// lapsed one as free at expires_at; this workflow makes it final (the same
// guarded transition the per-hold workflow ran) within a second of it.
type eventHolds struct {
	in       contract.EventHoldsInput
	pending  map[string]time.Time // reservation id → deadline
	order    deadlineHeap         // pending by deadline; entries of finished holds are skipped
	finished map[string]contract.HoldState
	recent   []string // finished ids, oldest first, for the bound on finished
	batches  int
	done     int
}

// EventHolds is the workflow "event-holds/{event_id}". Holds arrive by the
// holds-added signal (signal-with-start); the hold query answers for one
// hold, the holds query for all of them.
func EventHolds(ctx workflow.Context, in contract.EventHoldsInput) error {
	w := &eventHolds{in: in, pending: make(map[string]time.Time, len(in.Pending)),
		finished: make(map[string]contract.HoldState, len(in.Finished))}
	for _, f := range in.Finished {
		w.remember(f)
	}
	w.add(in.Pending)
	if err := workflow.SetQueryHandler(ctx, contract.HoldQuery, w.hold); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, contract.HoldsQuery, w.summary); err != nil {
		return err
	}
	return w.run(ctx)
}

func (w *eventHolds) hold(id string) (contract.HoldState, error) {
	if at, ok := w.pending[id]; ok {
		return contract.HoldState{ReservationID: id, ExpiresAt: at, Known: true}, nil
	}
	if f, ok := w.finished[id]; ok {
		return f, nil
	}
	return contract.HoldState{ReservationID: id}, nil
}

func (w *eventHolds) summary() (contract.HoldsSummary, error) {
	next, _ := w.next()
	return contract.HoldsSummary{Pending: len(w.pending), NextDeadline: next, Finished: w.done}, nil
}

// add takes holds; one already pending or finished (a sweep or a retried
// signal sends it again) changes nothing.
func (w *eventHolds) add(hs []contract.Hold) {
	for _, h := range hs {
		if _, ok := w.pending[h.ReservationID]; ok {
			continue
		}
		if _, ok := w.finished[h.ReservationID]; ok {
			continue
		}
		w.pending[h.ReservationID] = h.ExpiresAt
		heap.Push(&w.order, deadline{at: h.ExpiresAt, id: h.ReservationID})
	}
}

func (w *eventHolds) remember(f contract.HoldState) {
	f.Known = true
	if _, ok := w.finished[f.ReservationID]; !ok {
		w.recent = append(w.recent, f.ReservationID)
	}
	w.finished[f.ReservationID] = f
	for len(w.recent) > holdsFinishedKept {
		delete(w.finished, w.recent[0])
		w.recent = w.recent[1:]
	}
}

// next is the earliest pending deadline.
func (w *eventHolds) next() (time.Time, bool) {
	for w.order.Len() > 0 {
		top := w.order[0]
		if at, ok := w.pending[top.id]; ok && at.Equal(top.at) {
			return top.at, true
		}
		heap.Pop(&w.order) // finished, or re-queued under a later deadline
	}
	return time.Time{}, false
}

// receive takes every holds-added signal already delivered; it reports
// whether there was one.
func (w *eventHolds) receive(ctx workflow.Context, ch workflow.ReceiveChannel) bool {
	got := false
	var sig contract.HoldsAdded
	for ch.ReceiveAsync(&sig) {
		w.add(sig.Holds)
		w.batches++
		got = true
		sig = contract.HoldsAdded{}
	}
	return got
}

func (w *eventHolds) run(ctx workflow.Context) error {
	added := workflow.GetSignalChannel(ctx, contract.HoldsAddedSignal)
	var (
		timer       workflow.Future
		timerAt     time.Time
		cancelTimer workflow.CancelFunc
	)
	for {
		w.receive(ctx, added)
		if w.batches >= holdsBatchesPerRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			return workflow.NewContinueAsNewError(ctx, contract.EventHoldsWorkflow, w.carry())
		}
		now := workflow.Now(ctx)
		next, pending := w.next()
		if pending && !next.After(now) {
			if err := w.pass(ctx); err != nil {
				return err
			}
			continue
		}
		// Deadlines are met to the second: holds made in the same second
		// share one timer and one pass.
		wake := now.Add(holdsIdleFor)
		if pending {
			wake = next.Truncate(time.Second)
			if wake.Before(next) {
				wake = wake.Add(time.Second)
			}
		}
		if timer == nil || !wake.Equal(timerAt) {
			if cancelTimer != nil {
				cancelTimer()
			}
			var tctx workflow.Context
			tctx, cancelTimer = workflow.WithCancel(ctx)
			timer, timerAt = workflow.NewTimer(tctx, wake.Sub(now)), wake
		}
		fired := false
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(timer, func(f workflow.Future) { fired = f.Get(ctx, nil) == nil })
		sel.AddReceive(added, func(workflow.ReceiveChannel, bool) {}) // taken at the loop's top
		sel.Select(ctx)
		if !fired {
			continue
		}
		timer, cancelTimer = nil, nil
		if !pending && !w.receive(ctx, added) {
			return nil // idle: the next hold starts a new run
		}
	}
}

// pass finalises every hold whose deadline came, in chunks.
func (w *eventHolds) pass(ctx workflow.Context) error {
	now := workflow.Now(ctx)
	var due []string
	for {
		next, ok := w.next()
		if !ok || next.After(now) {
			break
		}
		d := heap.Pop(&w.order).(deadline)
		due = append(due, d.id)
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
	})
	var a *activities.Activities
	for chunk := range slices.Chunk(due, holdsPassChunk) {
		var res []activities.ExpiredHold
		if err := workflow.ExecuteActivity(actx, a.ExpireReservations, chunk).Get(ctx, &res); err != nil {
			return err
		}
		found := make(map[string]activities.ExpiredHold, len(res))
		for _, r := range res {
			found[r.ReservationID] = r
		}
		for _, id := range chunk {
			r, ok := found[id]
			if !ok || r.Retry {
				retry := workflow.Now(ctx).Add(holdsRetryAfter)
				w.pending[id] = retry
				heap.Push(&w.order, deadline{at: retry, id: id})
				continue
			}
			at := w.pending[id]
			delete(w.pending, id)
			w.done++
			w.remember(contract.HoldState{ReservationID: id, ExpiresAt: at, Status: r.Status})
		}
	}
	workflow.GetLogger(ctx).Info("hold deadlines passed", "holds", len(due), "pending", len(w.pending))
	return nil
}

// carry is the next run's input: the pending holds and the latest finished.
func (w *eventHolds) carry() contract.EventHoldsInput {
	next := contract.EventHoldsInput{EventID: w.in.EventID, CompanyID: w.in.CompanyID}
	for w.order.Len() > 0 {
		d := heap.Pop(&w.order).(deadline)
		if at, ok := w.pending[d.id]; ok && at.Equal(d.at) {
			next.Pending = append(next.Pending, contract.Hold{ReservationID: d.id, ExpiresAt: d.at})
		}
	}
	for _, id := range w.recent {
		next.Finished = append(next.Finished, w.finished[id])
	}
	return next
}

// deadlineHeap orders pending holds by deadline, then id, so the workflow
// visits them in the same order on every replay.
type deadline struct {
	at time.Time
	id string
}

type deadlineHeap []deadline

func (h deadlineHeap) Len() int { return len(h) }
func (h deadlineHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].id < h[j].id
}
func (h deadlineHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *deadlineHeap) Push(x any)   { *h = append(*h, x.(deadline)) }
func (h *deadlineHeap) Pop() any {
	old := *h
	d := old[len(old)-1]
	*h = old[:len(old)-1]
	return d
}

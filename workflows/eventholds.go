package workflows

import (
	"container/heap"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// Limits of an event's holds workflow.
const (
	// holdsPassChunk: holds finalised per activity of a deadline pass.
	holdsPassChunk = 500
	// holdsRetryAfter: a hold the pass could not finalise is tried again
	// this much later.
	holdsRetryAfter = 5 * time.Second
)

// eventHolds owns the deadlines of one event's holds that fall in one
// minute, so a rush of holds costs the Temporal server one signal per
// batch of holds instead of one workflow per hold. Postgres decides every
// hold and already treats a lapsed one as free at expires_at; this
// workflow makes it final (the same guarded transition the per-hold
// workflow ran) at the deadline's second.
//
// One run per minute of deadlines keeps a run's state and history bounded
// by the holds of that minute and lets it end on its own once the minute
// is over and every hold in it is final: no hold made later can have a
// deadline in a minute that has passed (a sweep's late hand-over starts a
// new run, which finalises it at once).
type eventHolds struct {
	in       contract.EventHoldsInput
	pending  map[string]pendingHold
	order    deadlineHeap // pending holds by when they are next due
	finished map[string]contract.HoldState
}

type pendingHold struct {
	expiresAt time.Time
	due       time.Time // expiresAt, or later after a pass could not finalise it
}

// EventHolds is the workflow "event-holds/{event_id}/{minute}". Holds
// arrive by the holds-added signal (signal-with-start); the reservation
// query answers for one hold, the holds query for all of them.
func EventHolds(ctx workflow.Context, in contract.EventHoldsInput) error {
	w := &eventHolds{in: in, pending: map[string]pendingHold{}, finished: map[string]contract.HoldState{}}
	if err := workflow.SetQueryHandler(ctx, contract.HoldQuery, w.hold); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, contract.HoldsQuery, w.summary); err != nil {
		return err
	}
	return w.run(ctx)
}

func (w *eventHolds) hold(id string) (contract.HoldState, error) {
	if p, ok := w.pending[id]; ok {
		return contract.HoldState{ReservationID: id, ExpiresAt: p.expiresAt, Known: true}, nil
	}
	if f, ok := w.finished[id]; ok {
		return f, nil
	}
	return contract.HoldState{ReservationID: id}, nil
}

func (w *eventHolds) summary() (contract.HoldsSummary, error) {
	var next time.Time
	if len(w.order) > 0 {
		next = w.order[0].at // every heap entry is a pending hold's due time
	}
	return contract.HoldsSummary{Pending: len(w.pending), NextDeadline: next, Finished: len(w.finished)}, nil
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
		w.pending[h.ReservationID] = pendingHold{expiresAt: h.ExpiresAt, due: h.ExpiresAt}
		heap.Push(&w.order, deadline{at: h.ExpiresAt, id: h.ReservationID})
	}
}

// receive takes every holds-added signal already delivered; it reports
// whether there was one.
func (w *eventHolds) receive(ch workflow.ReceiveChannel) bool {
	got := false
	for {
		var sig contract.HoldsAdded
		if !ch.ReceiveAsync(&sig) {
			return got
		}
		w.add(sig.Holds)
		got = true
	}
}

func (w *eventHolds) run(ctx workflow.Context) error {
	added := workflow.GetSignalChannel(ctx, contract.HoldsAddedSignal)
	minuteEnd := w.in.Minute.Add(time.Minute)
	var (
		timer       workflow.Future
		timerAt     time.Time
		cancelTimer workflow.CancelFunc
	)
	for {
		w.receive(added)
		now := workflow.Now(ctx)
		if len(w.order) > 0 && !w.order[0].at.After(now) {
			if err := w.pass(ctx); err != nil {
				return err
			}
			continue
		}
		// Deadlines are met to the second: holds due in the same second
		// share one timer and one pass.
		var wake time.Time
		switch {
		case len(w.order) > 0:
			next := w.order[0].at
			if wake = next.Truncate(time.Second); wake.Before(next) {
				wake = wake.Add(time.Second)
			}
		case now.Before(minuteEnd):
			wake = minuteEnd // holds may still come for this minute
		default:
			return nil // the minute is over and every hold in it is final
		}
		if timer == nil || !wake.Equal(timerAt) {
			if cancelTimer != nil {
				cancelTimer()
			}
			var tctx workflow.Context
			tctx, cancelTimer = workflow.WithCancel(ctx)
			timer, timerAt = workflow.NewTimer(tctx, wake.Sub(now)), wake
		}
		var timerErr error
		fired := false
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(timer, func(f workflow.Future) { fired, timerErr = true, f.Get(ctx, nil) })
		sel.AddReceive(added, func(workflow.ReceiveChannel, bool) {}) // taken at the loop's top
		sel.Select(ctx)
		if fired {
			timer, cancelTimer = nil, nil
			if timerErr != nil && ctx.Err() != nil {
				return ctx.Err() // the workflow was cancelled
			}
		}
	}
}

// pass finalises every hold that is due, in chunks.
func (w *eventHolds) pass(ctx workflow.Context) error {
	now := workflow.Now(ctx)
	var due []string
	for len(w.order) > 0 && !w.order[0].at.After(now) {
		due = append(due, heap.Pop(&w.order).(deadline).id)
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
	})
	var a *activities.Activities
	retried := 0
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
			p := w.pending[id]
			if r, ok := found[id]; ok && !r.Retry {
				delete(w.pending, id)
				w.finished[id] = contract.HoldState{ReservationID: id, ExpiresAt: p.expiresAt, Status: r.Status, Known: true}
				continue
			}
			// Postgres's clock behind the deadline, or an error: again soon.
			p.due = workflow.Now(ctx).Add(holdsRetryAfter)
			w.pending[id] = p
			heap.Push(&w.order, deadline{at: p.due, id: id})
			retried++
		}
	}
	workflow.GetLogger(ctx).Info("hold deadlines passed", "holds", len(due), "retried", retried, "pending", len(w.pending))
	return nil
}

// deadlineHeap orders pending holds by when they are due, then id, so the
// workflow visits them in the same order on every replay. Each pending
// hold has exactly one entry.
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

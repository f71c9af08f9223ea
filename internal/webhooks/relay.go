package webhooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// Renderer gives an event its data: the object as the API returns it.
type Renderer func(ctx context.Context, ev *store.WebhookEvent) (any, error)

// Relay moves the outbox to Temporal: it gives each new event its body,
// makes a delivery per endpoint that takes it, and starts each delivery's
// workflow. It is also the sweep: a delivery whose workflow was never
// started (the process died between its commit and the start) is started
// on a later round.
type Relay struct {
	DB        *bun.DB
	Temporal  client.Client
	TaskQueue string
	Render    Renderer
	Retry     contract.WebhookRetry
	Log       *slog.Logger
	// Interval between rounds; Grace is how old an unstarted delivery must
	// be before the sweep starts it, so it does not race a start under way.
	Interval, Grace time.Duration
}

// batch bounds the events one round takes per transaction.
const batch = 200

// Once runs a round: it returns how many deliveries it started.
func (r *Relay) Once(ctx context.Context) (int, error) {
	var errs []error
	started := 0
	for {
		made, err := store.DispatchEvents(ctx, r.DB, batch, r.body)
		if err != nil {
			errs = append(errs, err)
			break
		}
		n, err := r.startAll(ctx, made)
		started += n
		if err != nil {
			errs = append(errs, err)
		}
		if len(made) == 0 {
			break // no events left (or none any endpoint takes)
		}
	}
	unstarted, err := store.UnstartedDeliveries(ctx, r.DB, time.Now().Add(-r.Grace), 500)
	if err != nil {
		errs = append(errs, err)
	}
	n, err := r.startAll(ctx, unstarted)
	if err != nil {
		errs = append(errs, err)
	}
	return started + n, errors.Join(errs...)
}

// starters is how many workflow starts a relay has in flight: each waits
// for a round trip to the Temporal server.
const starters = 16

// startAll starts the deliveries' workflows, several at a time.
func (r *Relay) startAll(ctx context.Context, ds []store.WebhookDelivery) (int, error) {
	var mu sync.Mutex
	var errs []error
	started := 0
	next := make(chan store.WebhookDelivery)
	var wg sync.WaitGroup
	for range min(starters, len(ds)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range next {
				err := r.Start(ctx, d.EventID, d.EndpointID)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					started++
				}
				mu.Unlock()
			}
		}()
	}
	for _, d := range ds {
		next <- d
	}
	close(next)
	wg.Wait()
	return started, errors.Join(errs...)
}

// renderPatience is how long an event whose data cannot be read is retried
// before it goes out with its ids only: one such event must not hold up
// every event behind it.
const renderPatience = time.Minute

func (r *Relay) body(ctx context.Context, ev *store.WebhookEvent) ([]byte, error) {
	data, err := r.Render(ctx, ev)
	if err != nil {
		if ctx.Err() != nil || time.Since(ev.CreatedAt) < renderPatience {
			return nil, err
		}
		r.Log.Error("webhook event sent with its ids only: its data could not be read", "event_id", ev.ID, "type", ev.Type, "err", err)
		data = idsOnly(ev)
	}
	return Body(ev.ID, ev.Type, ev.CreatedAt, data)
}

// idsOnly is an event's data when its subject cannot be read.
func idsOnly(ev *store.WebhookEvent) map[string]any {
	out := map[string]any{}
	switch {
	case ev.RefundID != nil:
		out["id"], out["order_id"] = *ev.RefundID, ev.OrderID
	case ev.OrderID != nil:
		out["id"] = *ev.OrderID
	case ev.ReservationID != nil:
		out["id"] = *ev.ReservationID
	case ev.ChannelID != nil:
		out["event_id"], out["channel"] = ev.CatalogEventID, map[string]any{"id": *ev.ChannelID}
	}
	return out
}

// Start starts a delivery's workflow and marks it started.
func (r *Relay) Start(ctx context.Context, eventID string, endpointID int64) error {
	if err := StartDelivery(ctx, r.Temporal, r.TaskQueue, r.Retry, eventID, endpointID, false); err != nil {
		return err
	}
	return store.MarkDeliveryStarted(ctx, r.DB, eventID, endpointID)
}

// StartDelivery starts the workflow of a delivery. After a finished run a
// new one starts (a redelivery, or the sweep after a crash between a start
// and its mark: the new run finds the delivery delivered and sends
// nothing). A running one counts as started, unless again: a redelivery
// replaces it, so the event goes out now, not after the running one's wait.
func StartDelivery(ctx context.Context, tc client.Client, taskQueue string, retry contract.WebhookRetry, eventID string, endpointID int64, again bool) error {
	conflict := enums.WORKFLOW_ID_CONFLICT_POLICY_FAIL
	if again {
		conflict = enums.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING
	}
	_, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: contract.WebhookWorkflowID(eventID, endpointID), TaskQueue: taskQueue,
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE, WorkflowIDConflictPolicy: conflict,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}, contract.WebhookWorkflow, contract.WebhookInput{EventID: eventID, EndpointID: endpointID, Retry: retry})
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &already) {
		return fmt.Errorf("start delivery of %s to endpoint %d: %w", eventID, endpointID, err)
	}
	return nil
}

// Run runs a round every interval until ctx ends.
func (r *Relay) Run(ctx context.Context) {
	t := time.NewTicker(r.Interval)
	defer t.Stop()
	for {
		if n, err := r.Once(ctx); err != nil && ctx.Err() == nil {
			r.Log.Warn("webhook relay", "started", n, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

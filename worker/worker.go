// Package worker wires the workflows and activities into Temporal workers.
package worker

import (
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/workflows"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// New returns a worker on the task queue with every workflow and activity
// registered.
func New(c client.Client, taskQueue string, acts *activities.Activities) sdkworker.Worker {
	w := sdkworker.New(c, taskQueue, Options())
	Register(w, acts)
	return w
}

// Options are the main queue's worker settings; the sell-out benchmark
// runs its empty workflows with the same, to measure the limit of one
// workflow per order as the service meets it.
func Options() sdkworker.Options {
	return sdkworker.Options{
		// Let running activities finish on shutdown.
		WorkerStopTimeout: 20 * time.Second,
		// The SDK's two pollers each left tasks waiting in the server's
		// queue under load: eight took the sandbox saga benchmark from
		// 14–16 to 21–22 sagas/s on the 2-core machine.
		MaxConcurrentWorkflowTaskPollers: 8,
		MaxConcurrentActivityTaskPollers: 8,
	}
}

// WebhookLimits bound the webhook worker: concurrent delivery attempts
// (each may wait 10 s on a slow receiver), concurrent workflow tasks,
// pollers of each kind, and attempts started per second over the whole
// queue (0: no limit; enforced by the server across every webhook worker).
type WebhookLimits struct {
	Activities, WorkflowTasks, Pollers int
	AttemptsPerSecond                  float64
}

// NewWebhooks returns the worker of the webhook task queue: delivery
// workflows and their activities only, within limits of their own, so a
// flood of slow deliveries waits for its own slots and never for those of
// payments, confirms and refunds.
func NewWebhooks(c client.Client, taskQueue string, l WebhookLimits, acts *activities.Activities) sdkworker.Worker {
	w := sdkworker.New(c, taskQueue, sdkworker.Options{
		WorkerStopTimeout:                      20 * time.Second,
		MaxConcurrentActivityExecutionSize:     l.Activities,
		MaxConcurrentWorkflowTaskExecutionSize: l.WorkflowTasks,
		MaxConcurrentWorkflowTaskPollers:       l.Pollers,
		MaxConcurrentActivityTaskPollers:       l.Pollers,
		TaskQueueActivitiesPerSecond:           l.AttemptsPerSecond,
	})
	RegisterWebhooks(w, acts)
	return w
}

// Register adds every workflow, under the name the contract gives it, and
// every activity to a registry (a worker, or a replayer or test
// environment).
func Register(r interface {
	RegisterWorkflowWithOptions(any, workflow.RegisterOptions)
	RegisterActivity(any)
}, acts *activities.Activities) {
	// Deprecated: Reservation is only for holds an api from before
	// EventHolds started. It stays registered until no run of it is open
	// (docs/operating.md, "Retiring the Reservation workflow").
	r.RegisterWorkflowWithOptions(workflows.Reservation, workflow.RegisterOptions{Name: contract.ReservationWorkflow})
	r.RegisterWorkflowWithOptions(workflows.EventHolds, workflow.RegisterOptions{Name: contract.EventHoldsWorkflow})
	r.RegisterWorkflowWithOptions(workflows.Order, workflow.RegisterOptions{Name: contract.OrderWorkflow})
	r.RegisterWorkflowWithOptions(workflows.Refund, workflow.RegisterOptions{Name: contract.RefundWorkflow})
	r.RegisterWorkflowWithOptions(workflows.ResendTickets, workflow.RegisterOptions{Name: contract.ResendTicketsWorkflow})
	r.RegisterWorkflowWithOptions(workflows.AllocationRelease, workflow.RegisterOptions{Name: contract.AllocationReleaseWorkflow})
	// Deliveries started on the main queue before they had their own keep
	// their workflow there (its task queue is fixed at the start): this
	// worker finishes them.
	r.RegisterWorkflowWithOptions(workflows.WebhookDelivery, workflow.RegisterOptions{Name: contract.WebhookWorkflow})
	r.RegisterActivity(acts)
}

// RegisterWebhooks adds the delivery workflow and its activities alone:
// nothing else runs on the webhook queue.
func RegisterWebhooks(r interface {
	RegisterWorkflowWithOptions(any, workflow.RegisterOptions)
	RegisterActivity(any)
}, acts *activities.Activities) {
	r.RegisterWorkflowWithOptions(workflows.WebhookDelivery, workflow.RegisterOptions{Name: contract.WebhookWorkflow})
	// Registered as methods, they have the names the workflow schedules
	// them by (the method's, as for the whole struct).
	r.RegisterActivity(acts.DeliverWebhook)
	r.RegisterActivity(acts.FailWebhookDelivery)
}

// Package worker wires the workflows and activities into a Temporal worker.
package worker

import (
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"ticketsales/activities"
	"ticketsales/workflows"
	"ticketsales/workflows/contract"
)

// New returns a worker on the task queue with every workflow and activity
// registered.
func New(c client.Client, taskQueue string, acts *activities.Activities) sdkworker.Worker {
	w := sdkworker.New(c, taskQueue, sdkworker.Options{
		// Let running activities finish on shutdown.
		WorkerStopTimeout: 20 * time.Second,
		// The SDK's two pollers each left tasks waiting in the server's
		// queue under load: eight took the sandbox saga benchmark from
		// 14–16 to 21–22 sagas/s on the 2-core machine.
		MaxConcurrentWorkflowTaskPollers: 8,
		MaxConcurrentActivityTaskPollers: 8,
	})
	Register(w, acts)
	return w
}

// Register adds every workflow, under the name the contract gives it, and
// every activity to a registry (a worker, or a replayer or test
// environment).
func Register(r interface {
	RegisterWorkflowWithOptions(any, workflow.RegisterOptions)
	RegisterActivity(any)
}, acts *activities.Activities) {
	// Reservation stays for holds made before EventHolds owned them.
	r.RegisterWorkflowWithOptions(workflows.Reservation, workflow.RegisterOptions{Name: contract.ReservationWorkflow})
	r.RegisterWorkflowWithOptions(workflows.EventHolds, workflow.RegisterOptions{Name: contract.EventHoldsWorkflow})
	r.RegisterWorkflowWithOptions(workflows.Order, workflow.RegisterOptions{Name: contract.OrderWorkflow})
	r.RegisterWorkflowWithOptions(workflows.Refund, workflow.RegisterOptions{Name: contract.RefundWorkflow})
	r.RegisterWorkflowWithOptions(workflows.WebhookDelivery, workflow.RegisterOptions{Name: contract.WebhookWorkflow})
	r.RegisterActivity(acts)
}

// Package worker wires the workflows and activities into a Temporal worker.
package worker

import (
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"ticketsales/activities"
	"ticketsales/workflows"
)

// New returns a worker on the task queue with every workflow and activity
// registered.
func New(c client.Client, taskQueue string, acts *activities.Activities) sdkworker.Worker {
	w := sdkworker.New(c, taskQueue, sdkworker.Options{
		// Let running activities finish on shutdown.
		WorkerStopTimeout: 20 * time.Second,
	})
	Register(w, acts)
	return w
}

// Register adds every workflow and activity to a registry (a worker, or a
// replayer or test environment).
func Register(r interface {
	RegisterWorkflow(any)
	RegisterActivity(any)
}, acts *activities.Activities) {
	r.RegisterWorkflow(workflows.Reservation)
	r.RegisterWorkflow(workflows.Order)
	r.RegisterWorkflow(workflows.Refund)
	r.RegisterActivity(acts)
}

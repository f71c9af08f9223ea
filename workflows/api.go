// Package workflows holds the deterministic workflow code and its contract:
// task queue, workflow ids, signal and query names, inputs and statuses. The
// api imports this contract without pulling in worker code.
package workflows

import (
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
)

// TaskQueue is where the worker polls for every workflow and activity.
const TaskQueue = "ticketsales"

// Names shared by the api (which signals and queries) and the workflows.
const (
	StatusQuery            = "status"
	ReservationEndedSignal = "reservation-ended"
)

// Search attributes operators filter by in the Temporal UI.
var (
	CompanyIDAttr   = temporal.NewSearchAttributeKeyInt64("CompanyId")
	EventIDAttr     = temporal.NewSearchAttributeKeyInt64("EventId")
	OrderStatusAttr = temporal.NewSearchAttributeKeyKeyword("OrderStatus")
	IsTestAttr      = temporal.NewSearchAttributeKeyBool("IsTest")
)

// ReservationWorkflowID is the readable workflow id of a reservation.
func ReservationWorkflowID(id string) string { return "reservation/" + id }

// ReservationIDFromWorkflowID is the inverse of ReservationWorkflowID.
func ReservationIDFromWorkflowID(wid string) string { return strings.TrimPrefix(wid, "reservation/") }

// ReservationInput starts the reservation workflow: ids and the deadline,
// never personal data.
type ReservationInput struct {
	ReservationID string
	CompanyID     int64
	EventID       int64
	IsTest        bool
	ExpiresAt     time.Time
}

// ReservationEnded is the signal the api sends when the reservation ended
// outside the workflow (released by the partner, or turned into an order).
type ReservationEnded struct {
	Status string // "released" or "ordered"
}

// ReservationStatus answers the status query.
type ReservationStatus struct {
	ReservationID string
	Status        string // reserved, released, ordered, expired
	ExpiresAt     time.Time
}

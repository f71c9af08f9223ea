// Package contract is what the api and the worker agree on about the
// workflows: task queue, workflow names and ids, signal, update and query
// names, inputs, results and error types. The api starts, signals and
// queries workflows through it without importing any worker code.
package contract

import (
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/ticketsales/ticketsales/internal/states"
)

// TaskQueue is where the worker polls for every workflow and activity.
const TaskQueue = "ticketsales"

// Workflow type names, as the worker registers them.
const (
	// ReservationWorkflow was one per hold, before EventHolds.
	//
	// Deprecated: nothing starts it (docs/operating.md, "Retiring the
	// Reservation workflow").
	ReservationWorkflow = "Reservation"
	EventHoldsWorkflow  = "EventHolds"
	OrderWorkflow       = "Order"
	RefundWorkflow      = "Refund"
	// ResendTicketsWorkflow sends an order's tickets e-mail again, when the
	// organizer asks in the cabinet.
	ResendTicketsWorkflow = "ResendTickets"
)

// Names shared by the api (which signals and queries) and the workflows.
const (
	StatusQuery            = "status"
	ReservationEndedSignal = "reservation-ended"
	HoldsAddedSignal       = "holds-added"
	// HoldQuery asks an event's holds workflow about one hold (argument:
	// the reservation id); HoldsQuery for a summary of all it owns.
	HoldQuery  = "reservation"
	HoldsQuery = "holds"
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

// EventHoldsWorkflowID is the readable id of the workflow that owns the
// deadlines of an event's holds that fall in one minute (UTC):
// "event-holds/{event_id}/{YYYYMMDDTHHMM}". Operators find a hold's
// workflow from its event and expires_at.
func EventHoldsWorkflowID(eventID int64, deadline time.Time) string {
	return "event-holds/" + strconv.FormatInt(eventID, 10) + "/" + HoldsMinute(deadline).Format("20060102T1504")
}

// HoldsMinute is the minute whose workflow owns a deadline.
func HoldsMinute(deadline time.Time) time.Time { return deadline.UTC().Truncate(time.Minute) }

// Hold is one reservation handed to its event's holds workflow.
type Hold struct {
	ReservationID string
	ExpiresAt     time.Time
}

// EventHoldsInput starts an event's holds workflow for one minute of
// deadlines: ids only.
type EventHoldsInput struct {
	EventID   int64
	CompanyID int64
	Minute    time.Time // the deadlines it owns are in [Minute, Minute+1m)
}

// HoldsAdded is the signal that hands new holds to the workflow.
type HoldsAdded struct {
	Holds []Hold
}

// HoldState answers HoldQuery: a hold waiting for its deadline has an
// empty Status; once the deadline pass ran, Status is what Postgres said
// (expired, or ordered/released if it ended first), or reserved when the
// hold was extended to a later minute and passed on to that minute's run.
type HoldState struct {
	ReservationID string
	ExpiresAt     time.Time
	Status        states.ReservationStatus
	Known         bool // false: this workflow run never had the hold
}

// HoldsSummary answers HoldsQuery.
type HoldsSummary struct {
	Pending      int
	NextDeadline time.Time // zero when nothing is pending
	Finished     int       // finalised by this run
}

// ReservationInput starts the reservation workflow: ids and the deadline,
// never personal data.
type ReservationInput struct {
	ReservationID string
	CompanyID     int64
	EventID       int64
	IsTest        bool
	ExpiresAt     time.Time
}

// ReservationEnded is the signal an api from before EventHolds sent when
// the reservation ended outside the workflow (released by the partner, or
// turned into an order); this release sends none.
type ReservationEnded struct {
	Status states.ReservationStatus // released or ordered
}

// ReservationStatus answers the status query.
type ReservationStatus struct {
	ReservationID string
	Status        states.ReservationStatus
	ExpiresAt     time.Time
}

// Order workflow names.
const (
	ConfirmUpdate        = "confirm"
	PaymentSignal        = "payment"
	OrderCancelledSignal = "order-cancelled"
)

// Error types the confirm update answers with (temporal.ApplicationError).
const (
	ErrTypeAmountMismatch = "amount_mismatch"
	ErrTypeOrderExpired   = "order_expired"
	ErrTypeInvalidState   = "invalid_state"
	ErrTypeSeatsLost      = "seats_lost" // the order lost a seat: it cannot be paid
)

// OrderWorkflowID is the readable workflow id of an order.
func OrderWorkflowID(id int64) string { return "order/" + strconv.FormatInt(id, 10) }

// OrderInput starts the order workflow: ids, amounts and deadlines only.
type OrderInput struct {
	OrderID   int64
	CompanyID int64
	EventID   int64
	IsTest    bool
	Payment   states.PaymentMethod
	Amount    int64
	ExpiresAt time.Time // end of the payment window
	// DeleteAt is when a sandbox order is deleted (zero for production).
	DeleteAt time.Time
	// Revision is the order workflow's revision the api started it with
	// (ORDER_REVISION): from 1 on, the workflow takes its newest paths
	// without asking GetVersion, so a new order's history holds no version
	// markers and no TemporalChangeVersion upserts. Orders started before
	// revisions (0) choose by their recorded markers, as they always did.
	Revision int `json:",omitempty"`
}

// OrderRevision is the newest revision this release's workers run, and
// what new orders start with unless ORDER_REVISION says less: an api must
// not send a revision before every worker knows it (docs/operating.md).
const OrderRevision = 1

// ConfirmInput is the partner's confirmation of an external payment.
type ConfirmInput struct {
	PaidAmount        int64
	ExternalPaymentID string
}

// PaymentEvent is the gateway's word on a payment, signalled once the
// callback recorded it (only paid ones are signalled now; declines came
// before payments were recorded).
type PaymentEvent struct {
	Status    states.GatewayResult
	PaymentID string
	Gateway   string // the gateway that reported it ("" in signals sent before it was recorded)
}

// OrderStatus answers the status query and is the confirm update's result.
type OrderStatus struct {
	OrderID       int64
	Status        states.OrderStatus
	TicketsIssued int
	Emailed       bool
	Deleted       bool
}

// RefundWorkflowID is the readable workflow id of a refund.
func RefundWorkflowID(id string) string { return "refund/" + id }

// ResendTicketsWorkflowID is the id of one resend of an order's tickets
// e-mail: "resend-tickets/{order_id}/{resend_id}". The resend id derives
// from the cabinet action's one-time token, so a double submit starts
// the workflow once.
func ResendTicketsWorkflowID(orderID int64, resendID string) string {
	return "resend-tickets/" + strconv.FormatInt(orderID, 10) + "/" + resendID
}

// ResendTicketsInput starts the resend workflow: ids only.
type ResendTicketsInput struct {
	OrderID   int64
	CompanyID int64
	// ResendID names this resend: the e-mail's Message-ID carries it, so a
	// send repeated after a crash is the same message.
	ResendID string
}

// RefundInput starts the refund workflow.
type RefundInput struct {
	RefundID  string
	OrderID   int64
	CompanyID int64
	EventID   int64
	IsTest    bool
	TicketIDs []int64 // empty: every active ticket
	// MoneyRetryBudget is how long the gateway refund is retried before the
	// refund is marked failed (0: DefaultRefundRetryBudget).
	MoneyRetryBudget time.Duration
}

// DefaultRefundRetryBudget is how long a refund keeps trying the gateway.
const DefaultRefundRetryBudget = 24 * time.Hour

// RefundStatus answers the status query and is the workflow's result.
type RefundStatus struct {
	RefundID        string
	Status          states.RefundStatus
	Amount          int64
	MoneyReturnedBy states.PaymentMethod
	OrderStatus     states.OrderStatus
}

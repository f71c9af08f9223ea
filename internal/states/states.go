// Package states names, once, every status and kind of the service as a
// named type with its constants: reservations, orders, tickets, refunds,
// payments, seats, events, webhook deliveries and events, the aggregator's
// statuses. Store rows, workflow results and API bodies all speak in these,
// and the OpenAPI document's enums are made from the lists below (the api
// registers them), so a value is written once. The error of a transition a
// status forbids is errs.StateError.
package states

import "slices"

// ReservationStatus is a hold's status. A reserved hold past its deadline
// reads as expired even before its workflow records it.
type ReservationStatus string

const (
	ReservationReserved ReservationStatus = "reserved"
	ReservationOrdered  ReservationStatus = "ordered"
	ReservationExpired  ReservationStatus = "expired"
	ReservationReleased ReservationStatus = "released"
)

// OrderStatus is an order's status.
type OrderStatus string

const (
	OrderPendingPayment    OrderStatus = "pending_payment"
	OrderPaid              OrderStatus = "paid"
	OrderCancelled         OrderStatus = "cancelled"
	OrderPartiallyRefunded OrderStatus = "partially_refunded"
	OrderRefunded          OrderStatus = "refunded"
)

// Sold tells whether the order was paid (refunds since included).
func (s OrderStatus) Sold() bool {
	return s == OrderRefunded || s.TicketsValid()
}

// TicketsValid tells whether the order's active tickets are good: it is
// paid and not wholly refunded. Only such tickets admit at the door, may
// be refunded and are e-mailed; every path asks this (SQL through
// TicketsValidStatuses).
func (s OrderStatus) TicketsValid() bool {
	return slices.Contains(TicketsValidStatuses, s)
}

// TicketsValidStatuses are the order statuses whose active tickets are
// good (TicketsValid), for a query's IN list.
var TicketsValidStatuses = []OrderStatus{OrderPaid, OrderPartiallyRefunded}

// CancelReason says why an order was cancelled.
type CancelReason string

const (
	CancelBuyer          CancelReason = "buyer"
	CancelPaymentTimeout CancelReason = "payment_timeout"
	CancelPartner        CancelReason = "partner"
)

// TicketStatus is a ticket's status.
type TicketStatus string

const (
	TicketActive   TicketStatus = "active"
	TicketRefunded TicketStatus = "refunded"
)

// RefundStatus is a refund's status.
type RefundStatus string

const (
	RefundPending   RefundStatus = "pending"
	RefundCompleted RefundStatus = "completed"
	RefundFailed    RefundStatus = "failed" // out of retries; the reaper resumes it
)

// PaymentStatus is a gateway payment's status (see the payments migration
// for its transitions).
type PaymentStatus string

const (
	PaymentReceived  PaymentStatus = "received"
	PaymentApplied   PaymentStatus = "applied"
	PaymentRefundDue PaymentStatus = "refund_due"
	PaymentRefunded  PaymentStatus = "refunded"
)

// GatewayResult is a gateway's word on a payment attempt, in its callback
// (and the built-in test gateway's own record: pending until the buyer
// pays or declines).
type GatewayResult string

const (
	GatewayPending  GatewayResult = "pending"
	GatewayPaid     GatewayResult = "paid"
	GatewayDeclined GatewayResult = "declined"
)

// ReturnReason says why a payment goes back instead of paying its order.
type ReturnReason string

const (
	ReturnOrderClosed    ReturnReason = "order_closed"    // cancelled, or its payment window passed
	ReturnOrderGone      ReturnReason = "order_gone"      // a sandbox order deleted after its day
	ReturnOtherPayment   ReturnReason = "other_payment"   // not the order's payment, or the order was paid otherwise
	ReturnAmountMismatch ReturnReason = "amount_mismatch" // another sum or currency than the order's
	ReturnSeatsLost      ReturnReason = "seats_lost"      // a seat of the order was retaken after a lapse
)

// DeliveryStatus is a webhook delivery's status: pending while it is being
// attempted, delivered on a 2xx, failed when its retries ran out or its
// endpoint was disabled.
type DeliveryStatus string

const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliveryDelivered DeliveryStatus = "delivered"
	DeliveryFailed    DeliveryStatus = "failed"
)

// EventStatus is an event's catalog status.
type EventStatus string

const (
	EventPublished EventStatus = "published"
	EventDraft     EventStatus = "draft"
	EventArchived  EventStatus = "archived"
)

// PaymentMethod is who takes an order's payment: the service through a
// gateway, or the partner (external). A refund's money goes back the same
// way.
type PaymentMethod string

const (
	PayByGateway  PaymentMethod = "gateway"
	PayExternally PaymentMethod = "external"
)

// Channel is how an order was sold, as the organizer's report groups
// orders: the /v1 API or the aggregator adapter.
type Channel string

const (
	ChannelAPI        Channel = "api"
	ChannelAggregator Channel = "aggregator"
)

// SeatState is a seat's stored state for an event: held by a hold (or an
// order awaiting payment) until a deadline, or sold.
type SeatState string

const (
	SeatStateFree SeatState = "free"
	SeatStateHeld SeatState = "held"
	SeatStateSold SeatState = "sold"
)

// SeatStatus is a seat as availability shows it: a hold past its deadline
// is free at once.
type SeatStatus string

const (
	SeatFree     SeatStatus = "free"
	SeatReserved SeatStatus = "reserved"
	SeatSold     SeatStatus = "sold"
)

// WebhookEventType is the type of a partner webhook event.
type WebhookEventType string

const (
	EventOrderCreated       WebhookEventType = "order.created"
	EventOrderPaid          WebhookEventType = "order.paid"
	EventOrderCancelled     WebhookEventType = "order.cancelled"
	EventOrderRefunded      WebhookEventType = "order.refunded"
	EventOrderDeleted       WebhookEventType = "order.deleted"
	EventReservationExpired WebhookEventType = "reservation.expired"
	EventTicketCheckedIn    WebhookEventType = "ticket.checked_in"
	// A door let a ticket's holder in that the record says it should not
	// have (ConflictKind says how).
	EventTicketCheckInConflict WebhookEventType = "ticket.check_in_conflict"
	// A sales channel's allocation on an event changed (seats or
	// quantities allocated or released, its window or timed release);
	// sent only to the endpoints of the channel's applications.
	EventAllocationChanged WebhookEventType = "allocation.changed"
	EventPing              WebhookEventType = "webhook.test"
)

// ScanOutcome is what a door is told of a scanned ticket.
type ScanOutcome string

const (
	ScanAdmitted         ScanOutcome = "admitted"           // let in
	ScanAlreadyCheckedIn ScanOutcome = "already_checked_in" // inside already: a copy, or scanned twice
	ScanVoid             ScanOutcome = "void"               // refunded, or its order cancelled
	ScanNotPaid          ScanOutcome = "not_paid"           // its order is not paid
	ScanWrongEvent       ScanOutcome = "wrong_event"        // a ticket of another of the company's events
	ScanUnknown          ScanOutcome = "unknown"            // no ticket of the company has the barcode
	ScanSandbox          ScanOutcome = "sandbox"            // a sandbox ticket at a real door
	ScanExited           ScanOutcome = "exited"             // let out (events that allow re-entry)
)

// ScanUndone is the record of an admission undone at the cabinet's door
// desk (by a person, with a reason): no door is told it, so it is not one
// of ScanOutcomes.
const ScanUndone ScanOutcome = "undone"

// ConflictKind is how a door's admission made offline contradicts what the
// service had recorded of the ticket when the scan was uploaded: the
// holder is inside, and the organizer decides what to do.
type ConflictKind string

const (
	// Let in at two doors while apart: the ticket was inside by another
	// door's admission (most likely a copy: look for two on one seat).
	ConflictTwoDoors ConflictKind = "two_doors"
	// At an event with re-entry: let in while the ticket was inside by
	// another door's admission, since let out (or let in by another door
	// after the scan, before any exit): two holders inside at once.
	ConflictAdmittedWhileInside ConflictKind = "admitted_while_inside"
	// Let in, but the ticket is void by the upload (refunded, or its order
	// cancelled; a device that does not say it let the holder in only when
	// it became void after the scan): the holder is inside and the money
	// was returned.
	ConflictAdmittedVoid ConflictKind = "admitted_void"
)

// ScanDirection is which way a scan lets a ticket through.
type ScanDirection string

const (
	ScanIn  ScanDirection = "in"
	ScanOut ScanDirection = "out"
)

// DoorTicketState is what a door list says of a ticket: whether a scan of
// it admits (valid), never does (void: refunded, or its order cancelled
// or refunded) or not yet (not_paid).
type DoorTicketState string

const (
	DoorValid   DoorTicketState = "valid"
	DoorVoid    DoorTicketState = "void"
	DoorNotPaid DoorTicketState = "not_paid"
)

// AllocationChange is what changed a channel's allocation on an event, as
// an allocation.changed webhook says.
type AllocationChange string

const (
	AllocationAllocated AllocationChange = "allocated" // seats moved to the channel
	AllocationQuota     AllocationChange = "quota"     // a quantity of a category (or session) set
	AllocationReleased  AllocationChange = "released"  // seats or quantities returned to general sale
	AllocationTerms     AllocationChange = "terms"     // its window or its timed release changed
)

// AggregatorStatus is an order's status in the aggregator adapter's
// contract. CREATED is the instant the hold is being placed, which a
// synchronous hold never shows; BOOKED is never entered.
type AggregatorStatus string

const (
	AggregatorCreated   AggregatorStatus = "CREATED"
	AggregatorReserved  AggregatorStatus = "RESERVED"
	AggregatorApproved  AggregatorStatus = "APPROVED"
	AggregatorCancelled AggregatorStatus = "CANCELLED"
)

// The values of the types partners see, in the order the API documents
// them.
var (
	ReservationStatuses = []ReservationStatus{ReservationReserved, ReservationOrdered, ReservationExpired, ReservationReleased}
	OrderStatuses       = []OrderStatus{OrderPendingPayment, OrderPaid, OrderCancelled, OrderPartiallyRefunded, OrderRefunded}
	CancelReasons       = []CancelReason{CancelBuyer, CancelPaymentTimeout, CancelPartner}
	TicketStatuses      = []TicketStatus{TicketActive, TicketRefunded}
	RefundStatuses      = []RefundStatus{RefundPending, RefundCompleted, RefundFailed}
	DeliveryStatuses    = []DeliveryStatus{DeliveryPending, DeliveryDelivered, DeliveryFailed}
	EventStatuses       = []EventStatus{EventPublished, EventDraft, EventArchived}
	PaymentMethods      = []PaymentMethod{PayByGateway, PayExternally}
	SeatStatuses        = []SeatStatus{SeatFree, SeatReserved, SeatSold}
	WebhookEventTypes   = []WebhookEventType{EventOrderCreated, EventOrderPaid, EventOrderCancelled, EventOrderRefunded,
		EventOrderDeleted, EventReservationExpired, EventTicketCheckedIn, EventTicketCheckInConflict, EventAllocationChanged, EventPing}
	ScanOutcomes       = []ScanOutcome{ScanAdmitted, ScanAlreadyCheckedIn, ScanVoid, ScanNotPaid, ScanWrongEvent, ScanUnknown, ScanSandbox, ScanExited}
	ScanDirections     = []ScanDirection{ScanIn, ScanOut}
	ConflictKinds      = []ConflictKind{ConflictTwoDoors, ConflictAdmittedWhileInside, ConflictAdmittedVoid}
	DoorTicketStates   = []DoorTicketState{DoorValid, DoorVoid, DoorNotPaid}
	AggregatorStatuses = []AggregatorStatus{AggregatorCreated, AggregatorReserved, AggregatorApproved, AggregatorCancelled}
	AllocationChanges  = []AllocationChange{AllocationAllocated, AllocationQuota, AllocationReleased, AllocationTerms}
)

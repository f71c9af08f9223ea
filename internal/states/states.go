// Package states names, once, the statuses of reservations, orders,
// tickets, refunds and gateway payments as typed constants. Store rows,
// workflow results and API bodies all speak in these; the error of a
// transition a status forbids is errs.StateError.
package states

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
	return s == OrderPaid || s == OrderPartiallyRefunded || s == OrderRefunded
}

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

// GatewayResult is a gateway's word on a payment attempt, in its callback.
type GatewayResult string

const (
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

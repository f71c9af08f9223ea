package webhooks

import (
	"reflect"
	"time"

	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/orders"
	"github.com/ticketsales/ticketsales/internal/refunds"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// EventKind describes one event type for the API's document: what it
// announces and the Go types its data is rendered from (Render and the
// SQL snapshots they mirror), so the document's webhooks are derived from
// the types that build the payloads. More than one type: the data is one
// of them (a refund, or what is left of one whose sandbox order is gone).
type EventKind struct {
	Summary string
	Data    []reflect.Type
}

// EventKinds has an entry for every states.WebhookEventTypes entry
// (TestEventKindsCoverEveryType): a type without one is not in the
// document, and the contract test fails.
var EventKinds = map[states.WebhookEventType]EventKind{
	states.EventOrderCreated: {"An order was created (its payment may follow).",
		one[orders.Order]()},
	states.EventOrderPaid: {"An order was paid and its tickets issued.",
		one[orders.Order]()},
	states.EventOrderCancelled: {"An order was cancelled (cancel_reason says why).",
		one[orders.Order]()},
	states.EventOrderRefunded: {"Some or all of an order's tickets were refunded: one event per refund.",
		either[refunds.Refund, DeletedRefund]()},
	states.EventOrderDeleted: {"A sandbox order was deleted, or an order taken back because its saga could not start.",
		one[orders.Order]()},
	states.EventReservationExpired: {"A reservation passed its deadline without an order; its seats are free again.",
		either[holds.Reservation, GoneReservation]()},
	states.EventTicketCheckedIn: {"A ticket was first admitted at the door.",
		one[TicketCheckedIn]()},
	states.EventTicketCheckInConflict: {"A door working offline let a holder in against the record.",
		one[store.OfflineConflict]()},
	states.EventAllocationChanged: {"Your sales channel's allocation on an event changed.",
		one[AllocationChanged]()},
	states.EventPing: {"A test event sent on request to one endpoint.",
		one[Ping]()},
}

// one is data of type T.
func one[T any]() []reflect.Type { return []reflect.Type{reflect.TypeFor[T]()} }

// either is data of type A or of type B.
func either[A, B any]() []reflect.Type {
	return []reflect.Type{reflect.TypeFor[A](), reflect.TypeFor[B]()}
}

// DeletedRefund is an order.refunded event's data when the refund's
// sandbox order was deleted before the event went out: only the ids.
type DeletedRefund struct {
	ID      string `json:"id"`
	OrderID int64  `json:"order_id"`
}

// GoneReservation is a reservation.expired event's data when the
// reservation could no longer be read (a sandbox reservation deleted
// before the event went out): only its id and status.
type GoneReservation struct {
	ID     string                   `json:"id"`
	Status states.ReservationStatus `json:"status" enum:"expired"`
}

// TicketCheckedIn is a ticket.checked_in event's data: the first
// admission as the scan recorded it (the snapshot written with the scan,
// store.RecordScan).
type TicketCheckedIn struct {
	CheckInID    int64     `json:"check_in_id" doc:"The scan that let the ticket in."`
	TicketID     int64     `json:"ticket_id"`
	TicketNumber string    `json:"ticket_number"`
	OrderID      int64     `json:"order_id"`
	EventID      int64     `json:"event_id"`
	Gate         string    `json:"gate"`
	CheckedInAt  time.Time `json:"checked_in_at"`
}

// AllocationChanged is an allocation.changed event's data: the channel's
// allocation on the event as the change left it (the snapshot of
// store's allocationEventSQL).
type AllocationChanged struct {
	EventID    int64                   `json:"event_id" doc:"The catalog event."`
	Channel    AllocationChannel       `json:"channel"`
	Change     states.AllocationChange `json:"change" doc:"What changed: allocated (seats moved), quota (a quantity set), released (to general sale), terms (the window or the timed release)."`
	Seats      store.SeatCounts        `json:"seats" doc:"The channel's seats by state; after a release as a whole, only what it sold."`
	Categories []AllocationQuota       `json:"categories" doc:"Its general-admission quantities."`
	Window     AllocationWindow        `json:"window" doc:"When its keys sell, as GET /v1/events/{id}/allocation shows it."`
	ReleaseAt  *time.Time              `json:"release_at" doc:"When the unsold rest returns to general sale; null: only by the organizer's hand."`
	ReleasedAt *time.Time              `json:"released_at" doc:"When it was released as a whole; null: not yet."`
}

// AllocationChannel names the channel of an allocation.changed event.
type AllocationChannel struct {
	ID  int64  `json:"id"`
	Ref string `json:"ref"`
}

// AllocationQuota is a quantity of a category (and session) allocated to
// the channel.
type AllocationQuota struct {
	TicketCategoryID int64  `json:"ticket_category_id"`
	SessionID        *int64 `json:"schedule_slot_id,omitempty" doc:"Only for a session of a scheduled event."`
	Allocated        int    `json:"allocated"`
	Left             int    `json:"left"`
}

// AllocationWindow is when the channel's keys sell.
type AllocationWindow struct {
	StartsAt *time.Time `json:"starts_at" doc:"Null: since the event was published."`
	EndsAt   time.Time  `json:"ends_at" doc:"The window's end, or the event's start."`
}

// Ping is a webhook.test event's data.
type Ping struct {
	EndpointID int64  `json:"endpoint_id" doc:"The endpoint the test was sent to."`
	Message    string `json:"message"`
}

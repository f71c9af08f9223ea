// Package errs holds the errors of the service that partners can act on.
// Each carries the problem it is answered with (HTTP status, problem code,
// detail), so the api maps every one of them in one place, and no package
// imports another just for its errors. Wrap them with the business context
// (fmt.Errorf("order %d: %w", id, errs.OrderExpired)) and test them with
// errors.Is (the sentinels) or errors.As (the types).
package errs

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Problem is what an error is answered with. RetryAfter, when set, is sent
// as Retry-After.
type Problem struct {
	Status     int
	Code       string
	Detail     string
	RetryAfter time.Duration
}

// Coded is an error that knows its problem; every error of this package is
// one.
type Coded interface {
	error
	Problem() Problem
}

// Error is an error that is its problem, as the sentinels below.
type Error struct{ p Problem }

func (e *Error) Error() string { return e.p.Code + ": " + e.p.Detail }

// Problem makes Error Coded.
func (e *Error) Problem() Problem { return e.p }

func sentinel(status int, code, detail string) *Error {
	return &Error{Problem{Status: status, Code: code, Detail: detail}}
}

// The sentinels, one per answer.
var (
	NotFound = sentinel(http.StatusNotFound, "not_found",
		"The resource does not exist or is not visible to this API key.")
	NoScheme = sentinel(http.StatusNotFound, "not_found",
		"This event has no seating scheme: it sells general-admission tickets by category (order them by items).")
	ReservationExpired = sentinel(http.StatusConflict, "reservation_expired",
		"The reservation's hold has expired; its seats may be taken again.")
	OrderExpired = sentinel(http.StatusConflict, "order_expired",
		"The order's payment window has closed; its seats were freed.")
	OrderPaid = sentinel(http.StatusConflict, "order_paid",
		"A paid order cannot be cancelled; refund it instead.")
	PaymentConflict = sentinel(http.StatusConflict, "invalid_state",
		"This payment is on record with another order or amount; it was not applied.")
	GatewayUnavailable = sentinel(http.StatusUnprocessableEntity, "gateway_unavailable",
		"This deployment has no payment gateway for production orders: use payment=external and confirm the "+
			"payment, or ask the service's operators to configure a gateway. Sandbox keys use the test gateway. Nothing was changed.")
	// Unavailable: a backing service failed and nothing was changed.
	Unavailable = &Error{Problem{Status: http.StatusServiceUnavailable, Code: "unavailable",
		Detail: "A backing service is unreachable and nothing was changed; retry later.", RetryAfter: 5 * time.Second}}
	// Incomplete: a backing service failed after the request changed
	// something (so "nothing was changed" would be false); a retry with
	// the same Idempotency-Key finds and finishes what it began.
	Incomplete = &Error{Problem{Status: http.StatusServiceUnavailable, Code: "unavailable",
		Detail: "A backing service failed before the request was finished; retry it with the same Idempotency-Key.", RetryAfter: 5 * time.Second}}
)

// SeatRef names a seat as partners do.
type SeatRef struct {
	ZoneID string `json:"zone_id" minLength:"1" maxLength:"32"`
	SeatID string `json:"seat_id" minLength:"1" maxLength:"100"`
}

// SeatTakenError: some requested seats are held or sold by someone else.
type SeatTakenError struct {
	Seats []SeatRef
}

func (e *SeatTakenError) Error() string { return fmt.Sprintf("%d seat(s) taken", len(e.Seats)) }

func (e *SeatTakenError) Problem() Problem {
	return Problem{Status: http.StatusConflict, Code: "seat_taken", Detail: "Some seats are no longer free: refresh availability and offer others."}
}

// NotForSaleError: some requested seats are allocated to a sales channel
// the caller's key does not sell in; they are not for sale through it,
// whatever their state, so refreshing availability will not free them.
type NotForSaleError struct {
	Seats []SeatRef
}

func (e *NotForSaleError) Error() string {
	return fmt.Sprintf("%d seat(s) allocated to another sales channel", len(e.Seats))
}

func (e *NotForSaleError) Problem() Problem {
	return Problem{Status: http.StatusConflict, Code: "seat_not_for_sale",
		Detail: "Some seats are allocated to another sales channel and are not for sale through this key; nothing was changed. Offer seats the availability lists."}
}

// SalesWindowError: the caller's sales window for the event is not open
// at the moment of the request: OpensAt when it has not opened yet (nil
// when it never will: it closed), ClosedAt when it has closed.
type SalesWindowError struct {
	OpensAt, ClosedAt *time.Time
}

func (e *SalesWindowError) Error() string {
	if e.OpensAt != nil {
		return "sales open at " + e.OpensAt.UTC().Format(time.RFC3339)
	}
	if e.ClosedAt != nil {
		return "sales closed at " + e.ClosedAt.UTC().Format(time.RFC3339)
	}
	return "sales closed"
}

func (e *SalesWindowError) Problem() Problem {
	if e.OpensAt != nil {
		return Problem{Status: http.StatusConflict, Code: "sales_not_open",
			Detail: "Sales of this event through this key open at " + e.OpensAt.UTC().Format(time.RFC3339) + "; nothing was changed."}
	}
	at := ""
	if e.ClosedAt != nil {
		at = " at " + e.ClosedAt.UTC().Format(time.RFC3339)
	}
	return Problem{Status: http.StatusConflict, Code: "sales_closed",
		Detail: "Sales of this event through this key closed" + at + "; nothing was changed."}
}

// FieldError is one problem of a request field.
type FieldError struct {
	Location string
	Message  string
	Value    any
}

// ValidationError lists every problem of a request that reached the service.
type ValidationError struct {
	Fields []FieldError
}

func (e *ValidationError) Error() string {
	if len(e.Fields) == 0 {
		return "validation failed"
	}
	return fmt.Sprintf("validation failed: %s: %s", e.Fields[0].Location, e.Fields[0].Message)
}

func (e *ValidationError) Problem() Problem {
	return Problem{Status: http.StatusUnprocessableEntity, Code: "validation_error", Detail: "validation failed"}
}

// Add records one field's problem.
func (e *ValidationError) Add(location, message string, value any) {
	e.Fields = append(e.Fields, FieldError{Location: location, Message: message, Value: value})
}

// OrNil is the error when any field was added, else nil.
func (e *ValidationError) OrNil() error {
	if len(e.Fields) == 0 {
		return nil
	}
	return e
}

// Text adds a problem when s is not minLen to maxLen characters long. The
// domain checks again what the API's schema states, so a value the schema
// never saw (another caller, a decoder that read another member) cannot
// store more than a field may hold.
func (e *ValidationError) Text(location, s string, minLen, maxLen int) {
	if n := utf8.RuneCountInString(s); n < minLen || n > maxLen {
		e.Add(location, fmt.Sprintf("must be %d to %d characters long", minLen, maxLen), clip(s))
	}
}

// Line is Text for a value of one line: no control characters either (a
// CR or LF in a name or an address could start a new e-mail header).
func (e *ValidationError) Line(location, s string, minLen, maxLen int) {
	e.Text(location, s, minLen, maxLen)
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		e.Add(location, "must not contain control characters (line breaks, tabs)", clip(s))
	}
}

// clip is a value short enough to echo in a problem.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= 64 {
		return s
	}
	return string([]rune(s)[:64]) + "…"
}

// Invalid is a ValidationError of one field.
func Invalid(location, message string, value any) *ValidationError {
	return &ValidationError{Fields: []FieldError{{Location: location, Message: message, Value: value}}}
}

// StateError is a transition the current state forbids: Status says what
// the entity is (a status, or a fuller description).
type StateError struct {
	Entity, ID, Status string
}

func (e *StateError) Error() string { return fmt.Sprintf("%s %s is %s", e.Entity, e.ID, e.Status) }

func (e *StateError) Problem() Problem {
	return Problem{Status: http.StatusConflict, Code: "invalid_state",
		Detail: fmt.Sprintf("The %s is %s; that does not allow this request.", e.Entity, e.Status)}
}

// SoldOutError lists the categories (or the slot) that lack capacity.
type SoldOutError struct {
	CategoryIDs []int64
	Slot        bool
	// Available is what is left when best-available seats did not fit:
	// free seats within the request's categories and zones.
	Available *int
	Together  bool // the request wanted its seats side by side
	// Withheld: the request would fit but for tickets allocated to sales
	// channels the caller does not sell in.
	Withheld bool
}

func (e *SoldOutError) Error() string {
	return fmt.Sprintf("sold out: categories %v, slot %v", e.CategoryIDs, e.Slot)
}

func (e *SoldOutError) Problem() Problem {
	p := Problem{Status: http.StatusConflict, Code: "sold_out", Detail: "Not enough tickets left for this order."}
	if e.Available != nil {
		side := ""
		if e.Together {
			side = "side-by-side "
		}
		p.Detail = fmt.Sprintf("No %sseats fit the request; %d free seats are left within its categories and zones.", side, *e.Available)
	}
	if e.Withheld {
		p.Detail += " The rest is allocated to sales channels (what a channel has left is sold only through its keys; see GET /v1/events/{id}/allocation)."
	}
	return p
}

// AmountMismatchError: a confirmation named another amount. Amount and
// Currency are the order's, which the problem carries so the partner sees
// what to pay.
type AmountMismatchError struct {
	Paid, Amount int64
	Currency     string
}

func (e *AmountMismatchError) Error() string {
	return fmt.Sprintf("paid_amount %d differs from the order amount %d", e.Paid, e.Amount)
}

func (e *AmountMismatchError) Problem() Problem {
	return Problem{Status: http.StatusUnprocessableEntity, Code: "amount_mismatch",
		Detail: fmt.Sprintf("paid_amount %d must equal the order amount, %d %s (expected_amount); nothing was changed.",
			e.Paid, e.Amount, e.Currency)}
}

// LimitError: the environment already has the most webhook endpoints
// allowed.
type LimitError struct{ Max int }

func (e *LimitError) Error() string {
	return fmt.Sprintf("this environment already has %d webhook endpoints, the most allowed", e.Max)
}

func (e *LimitError) Problem() Problem {
	return Problem{Status: http.StatusConflict, Code: "limit_reached", Detail: fmt.Sprintf("This environment already has %d webhook "+
		"endpoints, the most allowed: delete one it no longer needs before adding another. Nothing was changed.", e.Max)}
}

// RateError: the environment used its test pings or redeliveries of the
// minute; the next one is allowed after RetryAfter.
type RateError struct {
	What       string // "test events", "redeliveries"
	PerMinute  int
	RetryAfter time.Duration
}

func (e *RateError) Error() string {
	return fmt.Sprintf("at most %d %s per minute per environment", e.PerMinute, e.What)
}

func (e *RateError) Problem() Problem {
	secs := max(int(math.Ceil(e.RetryAfter.Seconds())), 1)
	return Problem{Status: http.StatusTooManyRequests, Code: "rate_limited", RetryAfter: time.Duration(secs) * time.Second,
		Detail: fmt.Sprintf("At most %d %s per minute per environment: the next one is allowed in %d s. Nothing was sent.",
			e.PerMinute, e.What, secs)}
}

// CheckedInError: tickets a partner asked to refund were admitted at the
// door already (store.Refund.AllowCheckedIn is the organizer's override).
type CheckedInError struct{ TicketIDs []int64 }

func (e *CheckedInError) Error() string {
	return fmt.Sprintf("tickets %v were checked in at the door", e.TicketIDs)
}

func (e *CheckedInError) Problem() Problem {
	return Problem{Status: http.StatusConflict, Code: "ticket_checked_in",
		Detail: fmt.Sprintf("Tickets %v were checked in at the door: they cannot be refunded through the API; "+
			"refund the order's other tickets by ticket_ids (the organizer may refund these). Nothing was changed.", e.TicketIDs)}
}

// DoorElsewhere: a door key limited to one event or gate scanned at
// another.
// Not insufficient_scope: the key has the scope, it is at the wrong door.
var DoorElsewhere = sentinel(http.StatusForbidden, "door_key_elsewhere",
	"This door key is limited to another event or gate.")

// HoldLimitError: an extension would make a hold last longer than a hold
// may, counted from its creation; Latest is the latest deadline it may
// have.
type HoldLimitError struct {
	MaxMinutes int
	Latest     time.Time
}

func (e *HoldLimitError) Error() string {
	return fmt.Sprintf("a hold lasts at most %d minutes from its creation, until %s", e.MaxMinutes, e.Latest.UTC().Format(time.RFC3339))
}

func (e *HoldLimitError) Problem() Problem {
	return Problem{Status: http.StatusConflict, Code: "hold_limit_reached",
		Detail: fmt.Sprintf("A hold lasts at most %d minutes from its creation: this one can be extended until %s "+
			"(latest_expires_at) and no further. Nothing was changed.", e.MaxMinutes, e.Latest.UTC().Format(time.RFC3339))}
}

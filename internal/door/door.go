// Package door holds the door's rules as pure functions over plain values:
// whether a ticket admits (TicketState), what a scan decides (Decide), and
// which conflict an entry a device let in while offline reveals
// (ConflictOf, AdmittedVoid). store.CheckIn locks the ticket and reads its
// record, then asks these; the door list (internal/checkin) states each
// ticket with TicketState. No other code states a door rule.
package door

import (
	"time"

	"github.com/ticketsales/ticketsales/internal/states"
)

// Ticket is what a door decides on: the ticket as locked for the scan.
type Ticket struct {
	EventID     int64
	SessionID   *int64 // its order's schedule slot
	Status      states.TicketStatus
	OrderStatus states.OrderStatus
	Inside      bool
}

// Scan is a scan as the rules see it.
type Scan struct {
	EventID   int64
	SessionID int64 // the door's session (0: any)
	Direction states.ScanDirection
	Gate      string
	DeviceID  string
	// Offline: made without the network, uploaded later, at ScannedAt by
	// the device's clock; DoorOutcome is what the device says it answered
	// ("": it did not say).
	Offline     bool
	ScannedAt   time.Time
	DoorOutcome states.ScanOutcome
	// LeftAt is when the same upload lets the ticket out next, after this
	// scan (zero: it does not).
	LeftAt time.Time
}

// TicketState is whether a ticket admits by its and its order's status:
// void (refunded, or its order cancelled or refunded), not_paid (its order
// not paid yet), or valid.
func TicketState(status states.TicketStatus, orderStatus states.OrderStatus) states.DoorTicketState {
	switch {
	case status == states.TicketRefunded || orderStatus == states.OrderCancelled || orderStatus == states.OrderRefunded:
		return states.DoorVoid
	case !orderStatus.TicketsValid():
		return states.DoorNotPaid
	}
	return states.DoorValid
}

// Decide is a scan's outcome from the ticket as locked (nil: no ticket of
// the company and the door's environment has the barcode). A ticket of
// another session of the event is wrong_event at a session's door.
func Decide(t *Ticket, s Scan) states.ScanOutcome {
	switch {
	case t == nil:
		return states.ScanUnknown
	case t.EventID != s.EventID:
		return states.ScanWrongEvent
	case s.SessionID != 0 && (t.SessionID == nil || *t.SessionID != s.SessionID):
		return states.ScanWrongEvent
	case TicketState(t.Status, t.OrderStatus) == states.DoorVoid:
		return states.ScanVoid
	case TicketState(t.Status, t.OrderStatus) == states.DoorNotPaid:
		return states.ScanNotPaid
	case s.Direction == states.ScanOut:
		return states.ScanExited // out already, or now
	case t.Inside:
		return states.ScanAlreadyCheckedIn
	}
	return states.ScanAdmitted
}

// Pass is a recorded scan that let a ticket's holder in or out, as a
// conflict is judged against it: an admission, an offline entry its
// device let in although the record had the ticket inside, or an exit
// (an undo at the door desk too: it ends the stay).
type Pass struct {
	ID       int64              `bun:"id"`
	Side     string             `bun:"side"` // before or after the scan judged, in time
	Outcome  states.ScanOutcome `bun:"outcome"`
	Gate     string             `bun:"gate"`
	DeviceID string             `bun:"device_id"`
	// At is its time as the record orders scans: an offline scan's device
	// clock, an online scan's receipt by the service.
	At time.Time `bun:"at"`
}

// Entry tells whether p let the holder in (else it let them out: an exit,
// or an admission undone at the door desk).
func (p *Pass) Entry() bool { return p.Outcome != states.ScanExited && p.Outcome != states.ScanUndone }

// OtherDoor tells whether p was made at another door than s: another
// device, or another gate when p names no device (an online scan may not).
func (p *Pass) OtherDoor(s Scan) bool {
	if p.DeviceID != "" {
		return p.DeviceID != s.DeviceID
	}
	return p.Gate != s.Gate
}

// LetIn tells whether s is an entry a device let the holder in with while
// offline: it says so (door_outcome admitted), or it does not say, and an
// entry it kept is taken as let in (a refusal it kept is presumed let in
// rather than a holder inside going untold).
func LetIn(s Scan) bool {
	return s.Offline && s.Direction == states.ScanIn && (s.DoorOutcome == "" || s.DoorOutcome == states.ScanAdmitted)
}

// AdmittedVoid tells whether an offline entry of a ticket void now was the
// door's admission of a void ticket (admitted_void). A device that says
// what it answered is believed. One that does not say is taken to have let
// the holder in only when the ticket became void after the scan
// (voidSince, the refund's or cancellation's time; nil: unknown): a list
// downloaded before then said valid. A scan made after it could have been
// refused by the list, so no admission is assumed.
func AdmittedVoid(doorOutcome states.ScanOutcome, scannedAt time.Time, voidSince *time.Time) bool {
	switch doorOutcome {
	case states.ScanAdmitted:
		return true
	case "":
		return voidSince != nil && voidSince.After(scannedAt)
	}
	return false
}

// ConflictOf is the conflict an offline scan reveals as it settles with
// outcome, and the recorded pass it conflicts with (nil for admitted_void,
// which conflicts with the ticket's void state). Only an entry its device
// let in (LetIn) conflicts:
//
//   - void: the device let the holder in although the ticket is void
//     (AdmittedVoid): admitted_void;
//   - already_checked_in or admitted: by the scans' times (not the
//     uploads' order) the ticket was inside when the scan was made, by an
//     entry at another door just before it (before) with no exit between,
//     or another door let it in just after the scan with no exit between
//     (after): two holders inside at once, two_doors when the record had
//     the ticket inside at the upload (already_checked_in),
//     admitted_while_inside when it had it out.
//
// An entry elsewhere after the ticket's exit later in the same upload
// (s.LeftAt) is the holder back in, and conflicts with nothing.
func ConflictOf(s Scan, outcome states.ScanOutcome, voidSince *time.Time, before, after *Pass) (states.ConflictKind, *Pass) {
	if !LetIn(s) {
		return "", nil
	}
	kind := states.ConflictTwoDoors
	switch outcome {
	case states.ScanVoid:
		if AdmittedVoid(s.DoorOutcome, s.ScannedAt, voidSince) {
			return states.ConflictAdmittedVoid, nil
		}
		return "", nil
	case states.ScanAdmitted:
		kind = states.ConflictAdmittedWhileInside
	case states.ScanAlreadyCheckedIn:
	default:
		return "", nil
	}
	if before != nil && before.Entry() && before.OtherDoor(s) {
		return kind, before
	}
	if after != nil && after.Entry() && after.OtherDoor(s) && (s.LeftAt.IsZero() || after.At.Before(s.LeftAt)) {
		return kind, after
	}
	return "", nil
}

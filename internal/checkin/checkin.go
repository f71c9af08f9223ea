// Package checkin lets tickets in at the door: a scan answers one of a
// small, fixed set of outcomes (states.ScanOutcome), and of scans of one
// ticket racing at several gates exactly one admits it. Door keys (scope
// checkin) may be limited to one event and one gate, and see of a ticket
// only what a door needs: its number, event, category and seat.
package checkin

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// Service scans tickets for the caller's company.
type Service struct {
	DB *bun.DB
	// events remembers the company's events a scan found: an event never
	// changes company nor goes away, so each is read once per process,
	// not once per scan.
	events sync.Map // [2]int64{company, event} → struct{}
	// keys are the events' public keys of signed codes, read once.
	keysOnce sync.Once
	keys     *keyOf
}

func (s *Service) codeKeys() *keyOf {
	s.keysOnce.Do(func() { s.keys = &keyOf{db: s.DB} })
	return s.keys
}

// ScanInput is one scan as a door sends it.
type ScanInput struct {
	Barcode   string
	EventID   int64
	Gate      string // "": the door key's gate
	DeviceID  string
	Direction states.ScanDirection // "": in
	SessionID int64                // the door's session of a scheduled event; 0: any
	ScannedAt time.Time            // zero: now
}

// CheckIn is a scan as the door is answered.
type CheckIn struct {
	ID        int64                `json:"id"`
	Outcome   states.ScanOutcome   `json:"outcome"`
	Barcode   string               `json:"barcode"`
	EventID   int64                `json:"event_id" doc:"The door's event."`
	Gate      string               `json:"gate"`
	SessionID *int64               `json:"session_id,omitempty" doc:"The door's session, when the scan named one."`
	Direction states.ScanDirection `json:"direction"`
	Ticket    *DoorTicket          `json:"ticket,omitempty" doc:"The ticket scanned: absent for unknown and sandbox. For wrong_event, its event_id (and session_id) say what it is for."`
	// FirstCheckIn is when and where the ticket was first admitted.
	FirstCheckIn *FirstCheckIn `json:"first_check_in,omitempty" doc:"When and at which gate the ticket was first admitted: on already_checked_in, and on admitted when it is a re-entry (after an exit). Absent on the ticket's first admission and on other outcomes."`
}

// DoorTicket is what a door may know of a ticket: no buyer, no money.
type DoorTicket struct {
	ID      int64  `json:"id"`
	Number  string `json:"number"`
	EventID int64  `json:"event_id"`
	// SessionID is the schedule slot of a scheduled event's ticket.
	SessionID *int64    `json:"session_id,omitempty" doc:"For a scheduled event: the session (schedule slot) the ticket is for."`
	Category  string    `json:"category"`
	Seat      *DoorSeat `json:"seat" doc:"null for general admission."`
}

// DoorSeat is a ticket's seat.
type DoorSeat struct {
	ZoneID string `json:"zone_id"`
	SeatID string `json:"seat_id"`
	Label  string `json:"label"`
}

// FirstCheckIn is a ticket's first admission.
type FirstCheckIn struct {
	At   time.Time `json:"at"`
	Gate string    `json:"gate"`
}

func (s *Service) known(k [2]int64) bool {
	_, ok := s.events.Load(k)
	return ok
}

// Scan decides one scan and records it. A door key limited to an event or
// a gate scans only there (403); an event not the company's is 404.
func (s *Service) Scan(ctx context.Context, p *apikey.Principal, in ScanInput) (*CheckIn, error) {
	in.Barcode = strings.TrimSpace(in.Barcode) // a scanner's trailing CR or tab
	if err := checkScan("body", in.Barcode, in.Gate, in.DeviceID, in.Direction); err != nil {
		return nil, err
	}
	if p.CheckinEventID != nil && *p.CheckinEventID != in.EventID {
		return nil, fmt.Errorf("door key %d at event %d: %w", p.KeyID, in.EventID, errs.DoorElsewhere)
	}
	if p.CheckinGate != nil {
		switch in.Gate {
		case "":
			in.Gate = *p.CheckinGate
		case *p.CheckinGate:
		default:
			return nil, fmt.Errorf("door key %d at gate %q: %w", p.KeyID, in.Gate, errs.DoorElsewhere)
		}
	}
	if in.Gate == "" {
		return nil, errs.Invalid("body.gate", "name the gate (or use a door key limited to one)", "")
	}
	if in.Direction == "" {
		in.Direction = states.ScanIn
	}
	if err := checkScannedAt(in.ScannedAt, time.Now()); err != nil {
		return nil, err
	}
	// A scan in without a session needs only to know the event is the
	// company's, which never changes: read once per process. Exits and
	// sessions read the door's event (its re-entry, its sessions).
	if k := [2]int64{p.CompanyID, in.EventID}; in.Direction != states.ScanIn || in.SessionID != 0 || !s.known(k) {
		door, err := store.GetDoorEvent(ctx, s.DB, p.CompanyID, in.EventID, in.SessionID)
		if err != nil {
			return nil, err
		}
		if in.Direction == states.ScanOut && !door.AllowReentry {
			return nil, errs.Invalid("body.direction", "the event does not allow re-entry: scan exits only where it does", in.Direction)
		}
		if in.SessionID != 0 && !door.SessionFound {
			return nil, errs.Invalid("body.session_id", "not a session of the event (see /v1/sessions)", in.SessionID)
		}
		s.events.Store(k, struct{}{})
	}
	// A signed code (format 2) is looked up by the barcode it names once
	// its signature verifies; one that does not is looked up as it is,
	// and no ticket has it (unknown).
	barcode, err := lookupBarcode(ctx, s.codeKeys(), in.Barcode, p.IsTest())
	if err != nil {
		return nil, err
	}
	res, err := store.CheckIn(ctx, s.DB, store.Scan{CompanyID: p.CompanyID, APIKeyID: p.KeyID, IsTest: p.IsTest(),
		EventID: in.EventID, SessionID: in.SessionID, Barcode: barcode, Gate: in.Gate, DeviceID: in.DeviceID,
		Direction: in.Direction, ScannedAt: in.ScannedAt})
	if err != nil {
		return nil, err
	}
	out := &CheckIn{ID: res.CheckInID, Outcome: res.Outcome, Barcode: in.Barcode, EventID: in.EventID, Gate: in.Gate,
		Direction: in.Direction}
	if in.SessionID != 0 {
		out.SessionID = &in.SessionID
	}
	if t := res.Ticket; t != nil {
		out.Ticket = &DoorTicket{ID: t.ID, Number: t.Number, EventID: t.EventID, SessionID: t.SessionID, Category: t.Category}
		// The seat's zone and label come from the event's inventory, which
		// a catalog import may have changed after a refund freed the seat.
		if t.SeatID != nil && t.ZoneID != nil && t.Label != nil {
			out.Ticket.Seat = &DoorSeat{ZoneID: *t.ZoneID, SeatID: *t.SeatID, Label: *t.Label}
		}
		out.FirstCheckIn = firstCheckIn(res.Outcome, res.First, t.CheckedInAt, t.CheckedInGate)
	}
	return out, nil
}

// firstCheckIn is the ticket's first admission (at, gate) as a door is
// told it: on a repeat (already_checked_in) and on an admission that is
// not the first (a re-entry), so a scanner tells those from a first
// entry; nil on the first admission itself and on every other outcome.
func firstCheckIn(outcome states.ScanOutcome, first bool, at *time.Time, gate *string) *FirstCheckIn {
	if at == nil || gate == nil {
		return nil
	}
	if outcome == states.ScanAlreadyCheckedIn || outcome == states.ScanAdmitted && !first {
		return &FirstCheckIn{At: *at, Gate: *gate}
	}
	return nil
}

// A device's time of a scan is believed within these bounds: a clock far
// off would put arrivals in another year and tell every later door so.
const (
	MaxScanAge   = 7 * 24 * time.Hour
	MaxScanAhead = 5 * time.Minute
)

// checkScannedAt refuses a device's scan time (zero: none given) outside
// [now-MaxScanAge, now+MaxScanAhead].
func checkScannedAt(at, now time.Time) error {
	if at.IsZero() || !at.Before(now.Add(-MaxScanAge)) && !at.After(now.Add(MaxScanAhead)) {
		return nil
	}
	return errs.Invalid("body.scanned_at", "the device's clock is off: a scan's time is within the last 7 days and at most 5 minutes ahead", at)
}

// ManualInput is an admission by hand at the cabinet's door desk: a
// person lets the holder of a ticket they looked up in (its scanner
// broken, a phone's screen unreadable), for a reason.
type ManualInput struct {
	CompanyID int64
	UserID    int64
	IsTest    bool // the desk's environment
	EventID   int64
	SessionID int64 // the desk's session of a scheduled event; 0: any
	TicketID  int64
	Gate      string
	Reason    string
}

// MaxReason bounds a manual admission's or an undo's reason.
const MaxReason = 500

// Admit admits a ticket by hand: the same scan a door makes (store.CheckIn,
// the door's rules), of the ticket's barcode at the desk's event, session
// and gate, recorded with the user and the reason instead of a key. A
// refunded ticket is void, one inside already_checked_in, exactly as a
// scanner is answered; an admission announces ticket.checked_in as a
// scan's does. A ticket not the company's is errs.NotFound.
func Admit(ctx context.Context, db bun.IDB, in ManualInput) (store.ScanResult, error) {
	in.Gate, in.Reason = strings.TrimSpace(in.Gate), strings.TrimSpace(in.Reason)
	if err := checkScan("form", "-", in.Gate, "", states.ScanIn); err != nil {
		return store.ScanResult{}, err
	}
	if in.Gate == "" {
		return store.ScanResult{}, errs.Invalid("gate", "name the gate the holder goes in at", "")
	}
	if err := CheckReason(in.Reason); err != nil {
		return store.ScanResult{}, err
	}
	door, err := store.GetDoorEvent(ctx, db, in.CompanyID, in.EventID, in.SessionID)
	if err != nil {
		return store.ScanResult{}, err
	}
	if in.SessionID != 0 && !door.SessionFound {
		return store.ScanResult{}, errs.Invalid("session", "not a session of the event", in.SessionID)
	}
	barcode, err := store.GetDeskBarcode(ctx, db, in.CompanyID, in.TicketID)
	if err != nil {
		return store.ScanResult{}, err
	}
	return store.CheckIn(ctx, db, store.Scan{CompanyID: in.CompanyID, IsTest: in.IsTest, EventID: in.EventID, SessionID: in.SessionID,
		Barcode: barcode, Gate: in.Gate, Direction: states.ScanIn, UserID: in.UserID, Reason: in.Reason})
}

// CheckReason refuses a manual admission's or an undo's reason that is
// empty, longer than MaxReason characters or has control characters.
func CheckReason(reason string) error {
	switch {
	case strings.TrimSpace(reason) == "":
		return errs.Invalid("reason", "say why (for example “scanner broken”, “admitted by mistake”)", "")
	case utf8.RuneCountInString(reason) > MaxReason:
		return errs.Invalid("reason", fmt.Sprintf("the reason has at most %d characters", MaxReason), "")
	case !utf8.ValidString(reason) || strings.ContainsFunc(reason, unicode.IsControl):
		return errs.Invalid("reason", "the reason is text without control characters", "")
	}
	return nil
}

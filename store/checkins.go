package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/door"
	"github.com/ticketsales/ticketsales/internal/states"
)

// Scan is one ticket scan at a door, as a scanner sends it.
type Scan struct {
	CompanyID int64
	APIKeyID  int64
	IsTest    bool // a sandbox key's scan: it scans sandbox tickets only
	EventID   int64
	Barcode   string
	Gate      string
	DeviceID  string
	Direction states.ScanDirection
	// SessionID is the door's session of a scheduled event (0: any): a
	// ticket of another session is wrong_event.
	SessionID int64
	// ScannedAt is the device's time of the scan (zero: now); Offline marks
	// a scan made without the network and uploaded later.
	ScannedAt time.Time
	Offline   bool
	// DoorOutcome is what the device says it answered at the door, for a
	// scan made offline ("": it did not say; an entry is taken as let in,
	// unless its ticket was void already: door.AdmittedVoid).
	DoorOutcome states.ScanOutcome
	// LeftAt is when the same upload lets the ticket out next, after this
	// scan (zero: it does not). That exit is not recorded yet while this
	// scan settles: an admission elsewhere after it is the holder coming
	// back, not a second holder.
	LeftAt time.Time
	// UserID and Reason: an admission by hand at the cabinet's door desk
	// (APIKeyID 0), by that user, for that reason.
	UserID int64
	Reason string
}

// ScannedTicket is what a door may know of a ticket: no buyer.
type ScannedTicket struct {
	ID            int64               `bun:"id"`
	Number        string              `bun:"number"`
	EventID       int64               `bun:"event_id"`
	Status        states.TicketStatus `bun:"status"`
	OrderStatus   states.OrderStatus  `bun:"order_status"`
	IsTest        bool                `bun:"is_test"`
	Category      string              `bun:"category"`
	ZoneID        *string             `bun:"zone_id"`
	SeatID        *string             `bun:"seat_id"`
	Label         *string             `bun:"label"`
	CheckedInAt   *time.Time          `bun:"checked_in_at"`
	CheckedInGate *string             `bun:"checked_in_gate"`
	Inside        bool                `bun:"inside"`
	SessionID     *int64              `bun:"session_id"` // its order's schedule slot
}

// door is t as the door's rules see it (nil: no ticket).
func (t *ScannedTicket) door() *door.Ticket {
	if t == nil {
		return nil
	}
	return &door.Ticket{EventID: t.EventID, SessionID: t.SessionID, Status: t.Status, OrderStatus: t.OrderStatus, Inside: t.Inside}
}

// door is s as the door's rules see it.
func (s Scan) door() door.Scan {
	return door.Scan{EventID: s.EventID, SessionID: s.SessionID, Direction: s.Direction, Gate: s.Gate, DeviceID: s.DeviceID,
		Offline: s.Offline, ScannedAt: s.ScannedAt, DoorOutcome: s.DoorOutcome, LeftAt: s.LeftAt}
}

// ScanResult is what a scan decided.
type ScanResult struct {
	Outcome states.ScanOutcome
	// Ticket is the ticket scanned, when it is the company's and of the
	// scanner's environment (nil for unknown and sandbox).
	Ticket *ScannedTicket
	// CheckInID is the scan's record.
	CheckInID int64
	// First: the scan is the ticket's first admission (Ticket's
	// CheckedInAt and CheckedInGate are then the scan's own).
	First bool
	// Conflict is what the scan revealed ("": nothing): its door let the
	// holder in against what the service had recorded (door.ConflictOf).
	Conflict states.ConflictKind
}

// CheckIn decides one scan in one transaction and records it with its
// outcome. The ticket's row is locked first, so of scans of one ticket
// racing at several gates exactly one admits it (the first to lock); the
// others find it inside. Only a ticket of the door's environment is locked
// or changed: a sandbox door never touches a real ticket, and a real door
// only learns that a sandbox ticket is one. Admitting writes the
// ticket.checked_in event to the outbox in the same transaction, and so
// does a conflict its ticket.check_in_conflict event; an offline exit
// judges again the conflicts it lies between (rejudgeAcross).
func CheckIn(ctx context.Context, db bun.IDB, s Scan) (ScanResult, error) {
	var out ScanResult
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		t, err := lockScannedTicket(ctx, tx, s)
		if err != nil {
			return err
		}
		out = ScanResult{Outcome: door.Decide(t.door(), s.door()), Ticket: t}
		if t == nil && !s.IsTest {
			// Not a real ticket: a sandbox one shown at a real door is
			// told apart (read, not locked: nothing of it changes).
			var sandbox bool
			if err := tx.NewRaw(`SELECT EXISTS (SELECT 1 FROM tickets t JOIN orders o ON o.id = t.order_id
				WHERE t.barcode = ? AND o.company_id = ? AND o.is_test)`, s.Barcode, s.CompanyID).Scan(ctx, &sandbox); err != nil {
				return fmt.Errorf("look for sandbox ticket: %w", err)
			}
			if sandbox {
				out.Outcome = states.ScanSandbox
			}
		}
		// A scan made offline before what is recorded of the ticket since
		// (an entry or an exit, by the service's clock for online scans)
		// is history: it may still be the ticket's first admission, but it
		// does not move the ticket in or out (an exit uploaded late would
		// let a copy in).
		stale, err := isStale(ctx, tx, t, s)
		if err != nil {
			return err
		}
		// An offline entry made before an undo of the ticket's admission
		// (the door desk's) changes nothing of the ticket: the undo, a
		// person's decision recorded later, is the last word. An admission
		// it decides is recorded as that undo withdrew it (undone_by), as
		// the undo would have had it been uploaded first: it counts in no
		// figure, conflicts with nothing, and is no first admission.
		undoneBy, err := undoneSince(ctx, tx, t, s)
		if err != nil {
			return err
		}
		var undone *int64
		switch out.Outcome {
		case states.ScanAdmitted:
			if undoneBy != nil {
				undone = undoneBy
				break
			}
			out.First = t.CheckedInAt == nil
			// The first admission's time and gate are kept. Its time is
			// Postgres's for a scan online (a device's clock may be off,
			// and every later door is told it); an offline scan's is the
			// device's, the only time there is.
			var at *time.Time
			if s.Offline {
				at = nullTime(s.ScannedAt)
			}
			if err := tx.NewRaw(`UPDATE tickets SET inside = inside OR NOT ?,
					checked_in_at = coalesce(checked_in_at, coalesce(?, now())),
					checked_in_gate = coalesce(checked_in_gate, ?) WHERE id = ?
				RETURNING checked_in_at, checked_in_gate, inside`,
				stale, at, s.Gate, t.ID).Scan(ctx, &t.CheckedInAt, &t.CheckedInGate, &t.Inside); err != nil {
				return fmt.Errorf("admit ticket %d: %w", t.ID, err)
			}
		case states.ScanExited:
			if stale {
				break
			}
			if _, err := tx.NewRaw(`UPDATE tickets SET inside = false WHERE id = ?`, t.ID).Exec(ctx); err != nil {
				return fmt.Errorf("let ticket %d out: %w", t.ID, err)
			}
			t.Inside = false
		}
		var ticketID *int64
		if t != nil {
			ticketID = &t.ID
		}
		var with *int64
		if undone == nil {
			out.Conflict, with, err = findConflict(ctx, tx, t, s, out.Outcome)
			if err != nil {
				return err
			}
		}
		if err := tx.NewRaw(`INSERT INTO check_ins (company_id, event_id, session_id, ticket_id, barcode, gate, device_id,
				direction, outcome, api_key_id, scanned_at, offline, is_test, door_outcome, conflict, conflict_with,
				cabinet_user_id, reason, undone_by)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, coalesce(?, now()), ?, ?, nullif(?, ''), nullif(?, ''), ?, ?, nullif(?, ''), ?) RETURNING id`,
			s.CompanyID, s.EventID, nullID(s.SessionID), ticketID, s.Barcode, s.Gate, s.DeviceID, s.Direction,
			out.Outcome, nullID(s.APIKeyID), nullTime(s.ScannedAt), s.Offline, s.IsTest, s.DoorOutcome, out.Conflict, with,
			nullID(s.UserID), s.Reason, undone).Scan(ctx, &out.CheckInID); err != nil {
			return fmt.Errorf("record scan: %w", err)
		}
		if s.UserID != 0 { // an admission by hand at the door desk, admitted or refused
			subject := "barcode " + s.Barcode
			if ticketID != nil {
				subject = fmt.Sprintf("ticket %d", *ticketID)
			}
			if err := Audit(ctx, tx, AuditEntry{CompanyID: s.CompanyID, Action: AuditDoorAdmit, Subject: subject,
				Detail: map[string]any{"gate": s.Gate, "reason": s.Reason, "outcome": out.Outcome, "event_id": s.EventID}}); err != nil {
				return err
			}
		}
		if out.Conflict != "" {
			if err := conflictEvent(ctx, tx, s, out.CheckInID); err != nil {
				return err
			}
		}
		if s.Offline && out.Outcome == states.ScanExited && !s.ScannedAt.IsZero() {
			if err := rejudgeAcross(ctx, tx, t.ID, s.ScannedAt); err != nil {
				return err
			}
		}
		if out.First {
			// Re-entries after an exit are scans, not news.
			_, err := tx.NewRaw(`INSERT INTO webhook_events (id, type, company_id, is_test, order_id, snapshot)
				SELECT `+newEventID+`, ?, x.company_id, x.is_test, x.order_id,
					jsonb_build_object('check_in_id', ?::bigint, 'ticket_id', x.id, 'ticket_number', x.number,
						'order_id', x.order_id, 'event_id', x.event_id, 'gate', ?::text, 'checked_in_at', ?::timestamptz)
				FROM (SELECT t.id, t.number, t.order_id, o.company_id, o.is_test, o.event_id
					FROM tickets t JOIN orders o ON o.id = t.order_id WHERE t.id = ?) x
				WHERE `+hasEndpoint, states.EventTicketCheckedIn, out.CheckInID, *t.CheckedInGate, *t.CheckedInAt, t.ID).Exec(ctx)
			if err != nil {
				return fmt.Errorf("write ticket.checked_in event of ticket %d: %w", t.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return ScanResult{}, fmt.Errorf("check in %s at event %d: %w", s.Barcode, s.EventID, err)
	}
	return out, nil
}

// isStale tells whether an offline scan was made before an entry or exit
// of the ticket already recorded: admitted, let out, or found inside
// (an offline entry another device's upload had made already_checked_in).
// Online scans are timed by the service's clock here: a device's clock
// may run ahead.
func isStale(ctx context.Context, tx bun.Tx, t *ScannedTicket, s Scan) (bool, error) {
	if !s.Offline || t == nil || s.ScannedAt.IsZero() {
		return false, nil
	}
	var stale bool
	if err := tx.NewRaw(`SELECT EXISTS (SELECT 1 FROM check_ins WHERE ticket_id = ? AND outcome IN (?, ?, ?)
			AND CASE WHEN offline THEN scanned_at ELSE received_at END > ?)`,
		t.ID, states.ScanAdmitted, states.ScanExited, states.ScanAlreadyCheckedIn, s.ScannedAt).Scan(ctx, &stale); err != nil {
		return false, fmt.Errorf("scans of ticket %d after %s: %w", t.ID, s.ScannedAt, err)
	}
	return stale, nil
}

// undoneSince is the undo of the ticket's admission recorded first after
// an offline scan was made (by the service's clock: an undo is made
// online, at the desk), nil: none. The scan belongs to the stay it
// withdrew, or to one before.
func undoneSince(ctx context.Context, tx bun.Tx, t *ScannedTicket, s Scan) (*int64, error) {
	if !s.Offline || t == nil || s.ScannedAt.IsZero() {
		return nil, nil
	}
	var ids []int64
	if err := tx.NewRaw(`SELECT id FROM check_ins WHERE ticket_id = ? AND outcome = ? AND received_at > ? ORDER BY received_at, id LIMIT 1`,
		t.ID, states.ScanUndone, s.ScannedAt).Scan(ctx, &ids); err != nil {
		return nil, fmt.Errorf("undos of ticket %d after %s: %w", t.ID, s.ScannedAt, err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return &ids[0], nil
}

// lockScannedTicket finds the company's ticket of the door's environment
// with the scanned barcode and locks its row (nil: none).
func lockScannedTicket(ctx context.Context, tx bun.Tx, s Scan) (*ScannedTicket, error) {
	// The query is lock_scanned_ticket's (migration 25): planned once per
	// connection, not per scan.
	t := new(ScannedTicket)
	err := tx.NewRaw(`SELECT * FROM lock_scanned_ticket(?, ?, ?)`, s.Barcode, s.CompanyID, s.IsTest).Scan(ctx, t)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("find ticket: %w", err)
	}
	return t, nil
}

// doorPasses selects a ticket's passes (door.Pass), timed as isStale times
// scans; its argument is the ticket's id. An admission the door desk
// undid is none (the desk said the holder was not let in), and the undo
// ends the stay as an exit does.
const doorPasses = `SELECT id, outcome, gate, device_id, CASE WHEN offline THEN scanned_at ELSE received_at END AS at
	FROM check_ins WHERE ticket_id = ? AND (outcome IN ('` + string(states.ScanAdmitted) + `', '` + string(states.ScanExited) + `', '` + string(states.ScanUndone) + `')
			AND undone_by IS NULL
		OR offline AND direction = '` + string(states.ScanIn) + `' AND outcome = '` + string(states.ScanAlreadyCheckedIn) + `'
			AND coalesce(door_outcome, '` + string(states.ScanAdmitted) + `') = '` + string(states.ScanAdmitted) + `')`

// findConflict reads what door.ConflictOf needs of the ticket's record (the
// row is locked: no scan of it is recorded meanwhile) and judges s; it
// reads nothing for a scan that cannot conflict (online scans, exits,
// refusals its device reported). It returns the kind and the id of the
// scan it conflicts with.
func findConflict(ctx context.Context, tx bun.Tx, t *ScannedTicket, s Scan, outcome states.ScanOutcome) (states.ConflictKind, *int64, error) {
	if t == nil || !door.LetIn(s.door()) {
		return "", nil, nil
	}
	var before, after *door.Pass
	var voidSince *time.Time
	switch outcome {
	case states.ScanVoid:
		// When it became void: its refund, or its order's cancellation.
		if err := tx.NewRaw(`SELECT least((SELECT min(r.created_at) FROM refund_tickets rt JOIN refunds r ON r.id = rt.refund_id
				WHERE rt.ticket_id = t.id), CASE WHEN o.status = ? THEN o.cancelled_at END)
			FROM tickets t JOIN orders o ON o.id = t.order_id WHERE t.id = ?`, states.OrderCancelled, t.ID).Scan(ctx, &voidSince); err != nil {
			return "", nil, fmt.Errorf("when ticket %d became void: %w", t.ID, err)
		}
	case states.ScanAlreadyCheckedIn, states.ScanAdmitted:
		// The ticket's passes next to the scan in time (the scan itself
		// is not recorded yet).
		var passes []door.Pass
		if err := tx.NewRaw(`
			WITH p AS (`+doorPasses+`)
			(SELECT 'before' AS side, * FROM p WHERE at <= ? ORDER BY at DESC, id DESC LIMIT 1)
			UNION ALL
			(SELECT 'after' AS side, * FROM p WHERE at > ? ORDER BY at, id LIMIT 1)`,
			t.ID, s.ScannedAt, s.ScannedAt).Scan(ctx, &passes); err != nil {
			return "", nil, fmt.Errorf("entries and exits of ticket %d around %s: %w", t.ID, s.ScannedAt, err)
		}
		for i := range passes {
			if passes[i].Side == "before" {
				before = &passes[i]
			} else {
				after = &passes[i]
			}
		}
	}
	kind, with := door.ConflictOf(s.door(), outcome, voidSince, before, after)
	if with != nil {
		return kind, &with.ID, nil
	}
	return kind, nil, nil
}

// rejudgeAcross judges again, under the ticket's row lock, the conflicts
// of the ticket that an exit at exitAt, just recorded, lies between in
// time: an entry and the entry it was paired with, one of which was
// uploaded before the exit that separates them. Each is judged against
// the pass now just before it (door.ConflictOf, with nothing after: of two
// entries no exit separates, the later one carries the conflict): an
// entry elsewhere keeps it a conflict, paired with that entry; the exit
// clears it. Its announcement is not repeated, nor withdrawn.
func rejudgeAcross(ctx context.Context, tx bun.Tx, ticketID int64, exitAt time.Time) error {
	var judged []struct {
		ID          int64              `bun:"id"`
		Outcome     states.ScanOutcome `bun:"outcome"`
		Gate        string             `bun:"gate"`
		DeviceID    string             `bun:"device_id"`
		DoorOutcome states.ScanOutcome `bun:"door_outcome"`
		ScannedAt   time.Time          `bun:"scanned_at"`
	}
	// A conflict is an offline scan's, timed by the device's clock; its
	// partner is timed as passes are.
	if err := tx.NewRaw(`SELECT c.id, c.outcome, c.gate, c.device_id, coalesce(c.door_outcome, '') AS door_outcome, c.scanned_at
		FROM check_ins c
		JOIN LATERAL (SELECT CASE WHEN a.offline THEN a.scanned_at ELSE a.received_at END AS at
			FROM check_ins a WHERE a.id = c.conflict_with) a ON true
		WHERE c.ticket_id = ? AND c.conflict IN (?, ?)
			AND least(c.scanned_at, a.at) < ? AND ? < greatest(c.scanned_at, a.at)
		ORDER BY c.id`, ticketID, states.ConflictTwoDoors, states.ConflictAdmittedWhileInside, exitAt, exitAt).Scan(ctx, &judged); err != nil {
		return fmt.Errorf("conflicts of ticket %d across its exit at %s: %w", ticketID, exitAt, err)
	}
	for _, c := range judged {
		var before []door.Pass
		if err := tx.NewRaw(`SELECT * FROM (`+doorPasses+`) p WHERE id <> ? AND at <= ? ORDER BY at DESC, id DESC LIMIT 1`,
			ticketID, c.ID, c.ScannedAt).Scan(ctx, &before); err != nil {
			return fmt.Errorf("pass of ticket %d before scan %d: %w", ticketID, c.ID, err)
		}
		var p *door.Pass
		if len(before) > 0 {
			p = &before[0]
		}
		s := door.Scan{Offline: true, Direction: states.ScanIn, Gate: c.Gate, DeviceID: c.DeviceID, DoorOutcome: c.DoorOutcome, ScannedAt: c.ScannedAt}
		kind, with := door.ConflictOf(s, c.Outcome, nil, p, nil)
		var withID *int64
		if with != nil {
			withID = &with.ID
		}
		if _, err := tx.NewRaw(`UPDATE check_ins SET conflict = nullif(?, ''), conflict_with = ? WHERE id = ?`,
			kind, withID, c.ID).Exec(ctx); err != nil {
			return fmt.Errorf("judge scan %d again: %w", c.ID, err)
		}
	}
	return nil
}

// conflictEvent writes the ticket.check_in_conflict event of a conflict
// just recorded, in its transaction: its data is the conflict as the API
// lists it.
func conflictEvent(ctx context.Context, tx bun.Tx, s Scan, checkInID int64) error {
	var c OfflineConflict
	if err := tx.NewRaw(conflictsQuery+` WHERE c.id = ?`, checkInID).Scan(ctx, &c); err != nil {
		return fmt.Errorf("conflict of scan %d: %w", checkInID, err)
	}
	data, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("conflict of scan %d: %w", checkInID, err)
	}
	if _, err := tx.NewRaw(`INSERT INTO webhook_events (id, type, company_id, is_test, order_id, snapshot)
		SELECT `+newEventID+`, ?, x.company_id, x.is_test, ?, ?::jsonb
		FROM (SELECT ?::bigint AS company_id, ?::boolean AS is_test) x WHERE `+hasEndpoint,
		states.EventTicketCheckInConflict, c.OrderID, string(data), s.CompanyID, s.IsTest).Exec(ctx); err != nil {
		return fmt.Errorf("write %s event of scan %d: %w", states.EventTicketCheckInConflict, checkInID, err)
	}
	return nil
}

// DoorEvent is what a scan needs to know of its event first.
type DoorEvent struct {
	AllowReentry bool `bun:"allow_reentry"`
	// SessionFound: the session the door named is one of the event's.
	SessionFound bool `bun:"session_found"`
}

// GetDoorEvent reads the company's event for a door scanning at it (and
// the session it names, 0: none) in one small query.
func GetDoorEvent(ctx context.Context, db bun.IDB, companyID, eventID, sessionID int64) (*DoorEvent, error) {
	e := new(DoorEvent)
	err := db.NewRaw(`SELECT e.allow_reentry,
			EXISTS (SELECT 1 FROM sessions s WHERE s.id = ? AND s.event_id = e.id) AS session_found
		FROM events e WHERE e.id = ? AND e.company_id = ?`, sessionID, eventID, companyID).Scan(ctx, e)
	if err != nil {
		return nil, notFound(err, fmt.Sprintf("event %d", eventID))
	}
	return e, nil
}

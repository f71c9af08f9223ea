package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"ticketsales/internal/errs"
	"ticketsales/internal/states"
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
	// ScannedAt is the device's time of the scan (zero: now); Offline marks
	// a scan made without the network and uploaded later.
	ScannedAt time.Time
	Offline   bool
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
	AllowReentry  bool                `bun:"allow_reentry"`
}

// ScanResult is what a scan decided.
type ScanResult struct {
	Outcome states.ScanOutcome
	// Ticket is the ticket scanned, when it is the company's and of the
	// scanner's environment (nil for unknown and sandbox).
	Ticket *ScannedTicket
	// CheckInID is the scan's record.
	CheckInID int64
}

// CheckIn decides one scan in one transaction and records it with its
// outcome. The ticket's row is locked first, so of scans of one ticket
// racing at several gates exactly one admits it (the first to lock); the
// others find it inside. Admitting writes the ticket.checked_in event to
// the outbox in the same transaction.
func CheckIn(ctx context.Context, db bun.IDB, s Scan) (ScanResult, error) {
	var out ScanResult
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		t := new(ScannedTicket)
		err := tx.NewRaw(`
			SELECT t.id, t.number, o.event_id, t.status, o.status AS order_status, o.is_test, c.name AS category,
				es.zone_id, i.seat_id, es.label, t.checked_in_at, t.checked_in_gate, t.inside, e.allow_reentry
			FROM tickets t JOIN orders o ON o.id = t.order_id JOIN events e ON e.id = o.event_id
			JOIN order_items i ON i.order_id = t.order_id AND i.position = t.position
			JOIN ticket_categories c ON c.id = i.category_id
			LEFT JOIN event_seats es ON es.event_id = o.event_id AND es.seat_id = i.seat_id
			WHERE t.barcode = ? AND o.company_id = ?
			FOR UPDATE OF t`, s.Barcode, s.CompanyID).Scan(ctx, t)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			t = nil
		case err != nil:
			return err
		}
		out = ScanResult{Outcome: decide(t, s), Ticket: t}
		if t != nil && t.IsTest != s.IsTest {
			out.Ticket = nil // of the other environment: the door learns nothing of it
		}
		if out.Outcome == states.ScanExited && !t.AllowReentry {
			return errs.Invalid("body.direction", "the event does not allow re-entry: scan exits only where it does", s.Direction)
		}
		first := false
		switch out.Outcome {
		case states.ScanAdmitted:
			if _, err := tx.NewRaw(`UPDATE tickets SET inside = true,
					checked_in_at = coalesce(checked_in_at, coalesce(?, now())),
					checked_in_gate = coalesce(checked_in_gate, ?) WHERE id = ?`,
				nullTime(s.ScannedAt), s.Gate, t.ID).Exec(ctx); err != nil {
				return fmt.Errorf("admit ticket %d: %w", t.ID, err)
			}
			if first = t.CheckedInAt == nil; first {
				at := s.ScannedAt
				if at.IsZero() {
					at = time.Now()
				}
				t.CheckedInAt, t.CheckedInGate = &at, &s.Gate
			}
			t.Inside = true
		case states.ScanExited:
			if _, err := tx.NewRaw(`UPDATE tickets SET inside = false WHERE id = ?`, t.ID).Exec(ctx); err != nil {
				return fmt.Errorf("let ticket %d out: %w", t.ID, err)
			}
			t.Inside = false
		}
		var ticketID *int64
		if t != nil {
			ticketID = &t.ID
		}
		if err := tx.NewRaw(`INSERT INTO check_ins (company_id, event_id, ticket_id, barcode, gate, device_id, direction,
				outcome, api_key_id, scanned_at, offline)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, coalesce(?, now()), ?) RETURNING id`,
			s.CompanyID, s.EventID, ticketID, s.Barcode, s.Gate, s.DeviceID, s.Direction, out.Outcome, s.APIKeyID,
			nullTime(s.ScannedAt), s.Offline).Scan(ctx, &out.CheckInID); err != nil {
			return fmt.Errorf("record scan: %w", err)
		}
		if first {
			// Re-entries after an exit are scans, not news.
			_, err := tx.NewRaw(`INSERT INTO webhook_events (id, type, company_id, is_test, order_id, snapshot)
				SELECT `+newEventID+`, ?, x.company_id, x.is_test, x.order_id,
					jsonb_build_object('check_in_id', ?::bigint, 'ticket_id', x.id, 'event_id', x.event_id,
						'gate', ?::text, 'checked_in_at', ?::timestamptz)
				FROM (SELECT t.id, t.order_id, o.company_id, o.is_test, o.event_id FROM tickets t JOIN orders o ON o.id = t.order_id
					WHERE t.id = ?) x
				WHERE `+hasEndpoint, states.EventTicketCheckedIn, out.CheckInID, s.Gate, *t.CheckedInAt, t.ID).Exec(ctx)
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

// decide is a scan's outcome from the ticket as locked (nil: no ticket of
// the company has the barcode).
func decide(t *ScannedTicket, s Scan) states.ScanOutcome {
	switch {
	case t == nil:
		return states.ScanUnknown
	case t.IsTest && !s.IsTest:
		return states.ScanSandbox // a sandbox ticket at a real door
	case !t.IsTest && s.IsTest:
		return states.ScanUnknown // a sandbox door knows no real tickets
	case t.EventID != s.EventID:
		return states.ScanWrongEvent
	case t.Status == states.TicketRefunded || t.OrderStatus == states.OrderCancelled || t.OrderStatus == states.OrderRefunded:
		return states.ScanVoid
	case t.OrderStatus != states.OrderPaid && t.OrderStatus != states.OrderPartiallyRefunded:
		return states.ScanNotPaid
	case s.Direction == states.ScanOut:
		return states.ScanExited // out already, or now
	case t.Inside:
		return states.ScanAlreadyCheckedIn
	}
	return states.ScanAdmitted
}

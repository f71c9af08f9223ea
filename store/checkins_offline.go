package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/states"
)

// EventSigningKey is an event's Ed25519 key of ticket codes in one
// environment (sandbox tickets have their own, so their codes never verify
// at a real door): the public key, and the private one sealed
// (internal/delivery opens it).
type EventSigningKey struct {
	bun.BaseModel `bun:"table:event_signing_keys"`

	EventID          int64     `bun:"event_id,pk"`
	IsTest           bool      `bun:"is_test,pk"`
	PublicKey        []byte    `bun:"public_key"`
	SealedPrivateKey []byte    `bun:"sealed_private_key"`
	CreatedAt        time.Time `bun:"created_at"`
}

// GetEventSigningKey is the event's key of the environment (errs.NotFound:
// none made yet).
func GetEventSigningKey(ctx context.Context, db bun.IDB, eventID int64, isTest bool) (*EventSigningKey, error) {
	k := new(EventSigningKey)
	if err := db.NewSelect().Model(k).Where("event_id = ? AND is_test = ?", eventID, isTest).Scan(ctx); err != nil {
		return nil, notFound(err, fmt.Sprintf("signing key of event %d", eventID))
	}
	return k, nil
}

// CreateEventSigningKey stores k unless the event has a key already, and
// returns the event's key either way: of two made at once, one is kept.
func CreateEventSigningKey(ctx context.Context, db bun.IDB, k *EventSigningKey) (*EventSigningKey, error) {
	if _, err := db.NewRaw(`INSERT INTO event_signing_keys (event_id, is_test, public_key, sealed_private_key)
		VALUES (?, ?, ?, ?) ON CONFLICT (event_id, is_test) DO NOTHING`, k.EventID, k.IsTest, k.PublicKey, k.SealedPrivateKey).Exec(ctx); err != nil {
		return nil, fmt.Errorf("create signing key of event %d: %w", k.EventID, err)
	}
	return GetEventSigningKey(ctx, db, k.EventID, k.IsTest)
}

// DoorTicket is a row of an event's door list: what a door needs of a
// ticket to decide a scan offline.
type DoorTicket struct {
	ID            int64               `bun:"id"`
	Barcode       string              `bun:"barcode"`
	CategoryID    int64               `bun:"category_id"`
	Label         *string             `bun:"label"`
	Status        states.TicketStatus `bun:"status"`
	OrderStatus   states.OrderStatus  `bun:"order_status"`
	CheckedInAt   *time.Time          `bun:"checked_in_at"`
	CheckedInGate *string             `bun:"checked_in_gate"`
	Inside        bool                `bun:"inside"`
	SessionID     *int64              `bun:"session_id"` // its order's schedule slot
}

// DoorCategory names a category of a door list.
type DoorCategory struct {
	ID   int64  `bun:"id"`
	Name string `bun:"name"`
}

// ListDoorTickets lists the tickets of the company's event of one
// environment (isTest) a door needs, by id: all of them, or with since
// (a cursor an earlier call returned) those changed since. The cursor is
// the snapshot the list was read in (pg_snapshot as text): a ticket
// whose last change that snapshot did not see is in the next delta, and
// no other.
func ListDoorTickets(ctx context.Context, db bun.IDB, companyID int64, isTest bool, eventID int64, since string) (cursor string, delta bool, rows []DoorTicket, err error) {
	err = db.RunInTx(ctx, &sqlRepeatableRead, func(ctx context.Context, tx bun.Tx) error {
		var ahead bool
		if err := tx.NewRaw(`SELECT pg_current_snapshot()::text,
				? <> '' AND pg_snapshot_xmax(nullif(?, '')::pg_snapshot) > pg_snapshot_xmax(pg_current_snapshot())`,
			since, since).Scan(ctx, &cursor, &ahead); err != nil {
			return fmt.Errorf("door list cursor: %w", err)
		}
		// A cursor ahead of the database (made up, or from before a
		// restore that lost transactions) would hide changes: such a
		// door gets the whole list again.
		if ahead {
			since = ""
		}
		delta = since != ""
		q := `SELECT t.id, t.barcode, i.category_id, es.label, t.status, o.status AS order_status,
				t.checked_in_at, t.checked_in_gate, t.inside, o.schedule_slot_id AS session_id
			FROM orders o JOIN tickets t ON t.order_id = o.id
			JOIN order_items i ON i.order_id = t.order_id AND i.position = t.position
			LEFT JOIN event_seats es ON es.event_id = o.event_id AND es.seat_id = i.seat_id
			WHERE o.event_id = ? AND o.company_id = ? AND o.is_test = ?`
		args := []any{eventID, companyID, isTest}
		if since != "" {
			q += ` AND t.door_xid IS NOT NULL AND NOT pg_visible_in_snapshot(t.door_xid, ?::pg_snapshot)`
			args = append(args, since)
		}
		return tx.NewRaw(q+` ORDER BY t.id`, args...).Scan(ctx, &rows)
	})
	if err != nil {
		return "", false, nil, fmt.Errorf("door list of event %d: %w", eventID, err)
	}
	return cursor, delta, rows, nil
}

// ListDoorCategories lists the event's ticket categories.
func ListDoorCategories(ctx context.Context, db bun.IDB, eventID int64) ([]DoorCategory, error) {
	var out []DoorCategory
	if err := db.NewRaw(`SELECT id, name FROM ticket_categories WHERE event_id = ? ORDER BY position, id`, eventID).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("categories of event %d: %w", eventID, err)
	}
	return out, nil
}

// RecordedScan is a scan as recorded, with its ticket's first admission.
type RecordedScan struct {
	ID       int64              `bun:"id"`
	TicketID *int64             `bun:"ticket_id"`
	Outcome  states.ScanOutcome `bun:"outcome"`
	// First: the scan was the ticket's first admission (as ScanResult).
	First         bool                `bun:"first"`
	Conflict      states.ConflictKind `bun:"conflict"`
	CheckedInAt   *time.Time          `bun:"checked_in_at"`
	CheckedInGate *string             `bun:"checked_in_gate"`
}

// GetOfflineCheckIn is the offline scan recorded of a device's scan of a
// barcode at a moment, by a door of the company and environment
// (errs.NotFound: none).
func GetOfflineCheckIn(ctx context.Context, db bun.IDB, companyID int64, isTest bool, eventID int64, deviceID, barcode string,
	scannedAt time.Time) (*RecordedScan, error) {
	r := new(RecordedScan)
	// A ticket's admissions are recorded under its row's lock, so the
	// first admission is its admitted scan of the lowest id, not counting
	// those an undo withdrew (after an undo, the next admission is a
	// first one again; one withdrawn is no first admission itself).
	err := db.NewRaw(`SELECT c.id, c.ticket_id, c.outcome, coalesce(c.conflict, '') AS conflict, t.checked_in_at, t.checked_in_gate,
			c.outcome = ? AND c.undone_by IS NULL AND NOT EXISTS (SELECT 1 FROM check_ins a WHERE a.ticket_id = c.ticket_id AND a.outcome = ? AND a.id < c.id AND a.undone_by IS NULL) AS first
		FROM check_ins c LEFT JOIN tickets t ON t.id = c.ticket_id
		WHERE c.company_id = ? AND c.is_test = ? AND c.event_id = ? AND c.device_id = ? AND c.barcode = ? AND c.scanned_at = ? AND c.offline`,
		states.ScanAdmitted, states.ScanAdmitted, companyID, isTest, eventID, deviceID, barcode, scannedAt).Scan(ctx, r)
	if err != nil {
		return nil, notFound(err, fmt.Sprintf("offline scan of %s by %s at %s", barcode, deviceID, scannedAt))
	}
	return r, nil
}

// IsRecordedAlready tells whether err is an offline scan's second record
// refused (check_ins_offline_once): the scan was recorded before.
func IsRecordedAlready(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "check_ins_offline_once"
}

// OfflineConflict is a check-in conflict: a scan made offline whose door
// let the holder in against what the service had recorded of the ticket
// (Kind says how), and the admission it conflicts with.
type OfflineConflict struct {
	CheckInID int64               `bun:"check_in_id" json:"check_in_id" doc:"The scan made offline that let the holder in."`
	Kind      states.ConflictKind `bun:"kind" json:"kind" doc:"two_doors: let in at two doors while apart, the ticket inside by the other's admission (most likely a copy); admitted_while_inside: at an event with re-entry, let in while another door's admission had the ticket inside (let out only since); admitted_void: let in though the ticket is void by the upload (refunded, or its order cancelled; a scan without door_outcome only when it became void after the scan): the holder is inside and the money was returned."`
	Outcome   states.ScanOutcome  `bun:"outcome" json:"outcome" doc:"The service's answer to the scan: already_checked_in (two_doors), admitted (admitted_while_inside), void (admitted_void)."`
	// DoorOutcome is what the device said it answered, when it said.
	DoorOutcome  *states.ScanOutcome `bun:"door_outcome" json:"door_outcome,omitempty" doc:"What the device said it answered (admitted); absent: it did not say, and the entry was taken as let in."`
	EventID      int64               `bun:"event_id" json:"event_id"`
	TicketID     int64               `bun:"ticket_id" json:"ticket_id"`
	TicketNumber string              `bun:"ticket_number" json:"ticket_number"`
	OrderID      int64               `bun:"order_id" json:"order_id"`
	Gate         string              `bun:"gate" json:"gate"`
	DeviceID     string              `bun:"device_id" json:"device_id"`
	ScannedAt    time.Time           `bun:"scanned_at" json:"scanned_at"`
	ReceivedAt   time.Time           `bun:"received_at" json:"received_at" doc:"When the device's upload reached the service."`
	// The admission it conflicts with: for admitted_void, the scan itself.
	AdmittedCheckInID int64     `bun:"admitted_check_in_id" json:"admitted_check_in_id" doc:"The admission the scan conflicts with (two_doors: the ticket's admission it found inside; admitted_while_inside: the other door's admission it overlapped). For admitted_void, the scan itself: the door's own admission of a void ticket."`
	AdmittedGate      string    `bun:"admitted_gate" json:"admitted_gate"`
	AdmittedDeviceID  string    `bun:"admitted_device_id" json:"admitted_device_id"`
	AdmittedAt        time.Time `bun:"admitted_at" json:"admitted_at"`
	AdmittedOffline   bool      `bun:"admitted_offline" json:"admitted_offline"`
}

// ListCheckInConflicts returns a page (from 1) of the conflicts of the
// company's event among the tickets of one environment (isTest), in the
// order they were scanned, and how many there are: the offline scans
// whose settlement found a conflict (door.ConflictOf, decided and kept as each
// settled). An event may have thousands: never all at once.
func ListCheckInConflicts(ctx context.Context, db bun.IDB, companyID int64, isTest bool, eventID int64, p Paging) ([]OfflineConflict, int, error) {
	const where = ` WHERE c.event_id = ? AND c.company_id = ? AND c.is_test = ? AND c.conflict IS NOT NULL`
	var out []OfflineConflict
	var total int
	err := db.RunInTx(ctx, &sqlRepeatableRead, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewRaw(`SELECT count(*) FROM check_ins c`+where, eventID, companyID, isTest).Scan(ctx, &total); err != nil {
			return err
		}
		if p.After != nil {
			return tx.NewRaw(conflictsQuery+where+` AND (c.scanned_at, c.id) > (?, ?) ORDER BY c.scanned_at, c.id LIMIT ?`,
				eventID, companyID, isTest, p.After.Time, p.After.ID, p.PerPage).Scan(ctx, &out)
		}
		return tx.NewRaw(conflictsQuery+where+` ORDER BY c.scanned_at, c.id LIMIT ? OFFSET ?`,
			eventID, companyID, isTest, p.PerPage, (p.Page-1)*p.PerPage).Scan(ctx, &out)
	})
	if err != nil {
		return nil, 0, fmt.Errorf("check-in conflicts of event %d, page %d: %w", eventID, p.Page, err)
	}
	return out, total, nil
}

// conflictsQuery reads conflicts (OfflineConflict) from their scans,
// aliased c; the caller adds the WHERE.
const conflictsQuery = `SELECT c.id AS check_in_id, c.conflict AS kind, c.outcome, c.door_outcome, c.event_id,
		c.ticket_id, t.number AS ticket_number, t.order_id, c.gate, c.device_id, c.scanned_at, c.received_at,
		a.id AS admitted_check_in_id, a.gate AS admitted_gate, a.device_id AS admitted_device_id,
		a.scanned_at AS admitted_at, a.offline AS admitted_offline
	FROM check_ins c
	JOIN tickets t ON t.id = c.ticket_id
	JOIN check_ins a ON a.id = coalesce(c.conflict_with, c.id)`

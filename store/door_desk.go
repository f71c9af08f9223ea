package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
)

// The cabinet's door desk (docs/cabinet.md, "The door desk"): a ticket
// looked up by its number, barcode or buyer's name, admitted or its
// admission undone by hand, the refused scans, and a lost scanner's key
// replaced. A manual admission is store.CheckIn's like any scan (Scan with
// UserID and Reason, no key); an undo is UndoCheckIn.

// DeskTicket is a ticket as the door desk shows it: what the door needs,
// and the buyer's name (no e-mail, no phone, no money).
type DeskTicket struct {
	ID            int64               `bun:"id"`
	Number        string              `bun:"number"`
	OrderID       int64               `bun:"order_id"`
	EventID       int64               `bun:"event_id"`
	EventTitle    string              `bun:"event_title"`
	SessionID     *int64              `bun:"session_id"`
	Status        states.TicketStatus `bun:"status"`
	OrderStatus   states.OrderStatus  `bun:"order_status"`
	IsTest        bool                `bun:"is_test"`
	Category      string              `bun:"category"`
	Label         *string             `bun:"label"`
	CheckedInAt   *time.Time          `bun:"checked_in_at"`
	CheckedInGate *string             `bun:"checked_in_gate"`
	Inside        bool                `bun:"inside"`
	FirstName     string              `bun:"customer_first_name"`
	LastName      string              `bun:"customer_last_name"`
}

// DeskSearch is what the desk's search box looks for: a ticket's barcode
// or number (any of the company's events and either environment: a
// ticket of another event is shown as such, one of the other environment
// marked, without its holder's name), or the beginning of the buyer's
// first or last name (lower case; the desk's event and environment only).
type DeskSearch struct {
	Barcode, TicketNumber, NamePrefix string
}

// ParseDeskSearch reads the desk's search text as the order search does
// (ParseOrderSearch), keeping what names a ticket or its holder.
func ParseDeskSearch(q string) DeskSearch {
	s := ParseOrderSearch(q)
	return DeskSearch{Barcode: s.Barcode, TicketNumber: s.TicketNumber, NamePrefix: s.NamePrefix}
}

// FindDeskTickets finds up to limit of the company's tickets s names (the
// desk works at eventID in the environment isTest), by buyer and number.
// A ticket of the other environment (found by its barcode or number: the
// desk marks it) comes without its holder's name.
func FindDeskTickets(ctx context.Context, db bun.IDB, companyID int64, isTest bool, eventID int64, s DeskSearch, limit int) ([]DeskTicket, error) {
	var or []string
	var args []any
	if s.Barcode != "" {
		or, args = append(or, "t.barcode = ?"), append(args, s.Barcode)
	}
	if s.TicketNumber != "" {
		or, args = append(or, "t.number = ?"), append(args, s.TicketNumber)
	}
	if s.NamePrefix != "" {
		// The expressions are the order search's indexes'.
		or = append(or, "o.event_id = ? AND o.is_test = ? AND (lower(o.customer_first_name || ' ' || o.customer_last_name) LIKE ? OR lower(o.customer_last_name || ' ' || o.customer_first_name) LIKE ?)")
		args = append(args, eventID, isTest, likePrefix(s.NamePrefix), likePrefix(s.NamePrefix))
	}
	if len(or) == 0 {
		return nil, nil
	}
	var out []DeskTicket
	err := db.NewRaw(`SELECT t.id, t.number, t.order_id, o.event_id, e.title AS event_title, o.schedule_slot_id AS session_id,
			t.status, o.status AS order_status, o.is_test, c.name AS category, es.label,
			t.checked_in_at, t.checked_in_gate, t.inside,
			CASE WHEN o.is_test = ? THEN o.customer_first_name ELSE '' END AS customer_first_name,
			CASE WHEN o.is_test = ? THEN o.customer_last_name ELSE '' END AS customer_last_name
		FROM orders o JOIN tickets t ON t.order_id = o.id
		JOIN events e ON e.id = o.event_id
		JOIN order_items i ON i.order_id = t.order_id AND i.position = t.position
		JOIN ticket_categories c ON c.id = i.category_id
		LEFT JOIN event_seats es ON es.event_id = o.event_id AND es.seat_id = i.seat_id
		WHERE o.company_id = ? AND ((`+strings.Join(or, ") OR (")+`))
		ORDER BY lower(o.customer_last_name), lower(o.customer_first_name), t.number LIMIT ?`,
		append(append([]any{isTest, isTest, companyID}, args...), limit)...).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("door desk search at event %d: %w", eventID, err)
	}
	return out, nil
}

// GetDeskBarcode is the barcode of the company's ticket (errs.NotFound:
// not the company's): a manual admission scans it.
func GetDeskBarcode(ctx context.Context, db bun.IDB, companyID, ticketID int64) (string, error) {
	var barcode string
	err := db.NewRaw(`SELECT t.barcode FROM tickets t JOIN orders o ON o.id = t.order_id WHERE t.id = ? AND o.company_id = ?`,
		ticketID, companyID).Scan(ctx, &barcode)
	if err != nil {
		return "", notFound(err, fmt.Sprintf("ticket %d", ticketID))
	}
	return barcode, nil
}

// Undo is an admission undone at the door desk.
type Undo struct {
	CompanyID int64
	IsTest    bool // the desk's environment: another's ticket is not found
	EventID   int64
	// SessionID is the desk's session of a scheduled event (0: any): a
	// ticket of another session is ErrOtherSession.
	SessionID int64
	TicketID  int64
	UserID    int64
	Reason    string
}

// ErrOtherSession: the ticket is of another session of the event than the
// desk's; nothing was undone.
var ErrOtherSession = errors.New("the ticket is of another session")

// passTime is a check-in's time as the door orders passes (doorPasses):
// an offline scan's device clock, else its receipt.
const passTime = `CASE WHEN offline THEN scanned_at ELSE received_at END`

// ErrNotAdmitted: the ticket is not inside now; nothing was undone (an
// undo of its admission came first, or it was let out, or never in).
var ErrNotAdmitted = errors.New("the ticket is not admitted now")

// UndoCheckIn undoes the ticket's current admission in one transaction:
// the ticket's row is locked (as a scan locks it), then one guarded UPDATE
// takes it out only if it is inside, so of two undos racing one wins and
// the other gets ErrNotAdmitted. The undo is recorded (outcome undone, by
// the user, for the reason), and the admissions of the current stay (since
// the last exit or undo) point to it (undone_by). The ticket is admissible
// again; with no admission left standing its first admission is cleared
// too (checked_in_at: the figures' "admitted" and the arrivals drop it,
// and its next admission is a first one, announced again), while an
// earlier stay, let out since (re-entry), stands. A ticket not the
// company's, of another event or environment is errs.NotFound; of another
// session than the desk's, ErrOtherSession.
func UndoCheckIn(ctx context.Context, db bun.IDB, u Undo) (int64, error) {
	var undoID int64
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var t struct {
			Barcode   string `bun:"barcode"`
			SessionID *int64 `bun:"session_id"`
		}
		err := tx.NewRaw(`SELECT t.barcode, o.schedule_slot_id AS session_id FROM tickets t JOIN orders o ON o.id = t.order_id
			WHERE t.id = ? AND o.company_id = ? AND o.is_test = ? AND o.event_id = ? FOR UPDATE OF t`,
			u.TicketID, u.CompanyID, u.IsTest, u.EventID).Scan(ctx, &t)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("ticket %d: %w", u.TicketID, errs.NotFound)
		}
		if err != nil {
			return fmt.Errorf("lock ticket %d: %w", u.TicketID, err)
		}
		if u.SessionID != 0 && (t.SessionID == nil || *t.SessionID != u.SessionID) {
			return ErrOtherSession
		}
		var gate string
		err = tx.NewRaw(`UPDATE tickets SET inside = false WHERE id = ? AND inside
			RETURNING coalesce((SELECT gate FROM check_ins WHERE ticket_id = ? AND outcome = ? AND undone_by IS NULL
				ORDER BY `+passTime+` DESC, id DESC LIMIT 1), '')`,
			u.TicketID, u.TicketID, states.ScanAdmitted).Scan(ctx, &gate)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotAdmitted
		}
		if err != nil {
			return fmt.Errorf("take ticket %d out: %w", u.TicketID, err)
		}
		if err := tx.NewRaw(`INSERT INTO check_ins (company_id, event_id, session_id, ticket_id, barcode, gate, direction, outcome,
				scanned_at, is_test, cabinet_user_id, reason)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, now(), ?, ?, ?) RETURNING id`,
			u.CompanyID, u.EventID, t.SessionID, u.TicketID, t.Barcode, gate, states.ScanOut, states.ScanUndone,
			u.IsTest, u.UserID, u.Reason).Scan(ctx, &undoID); err != nil {
			return fmt.Errorf("record undo of ticket %d: %w", u.TicketID, err)
		}
		// The admissions withdrawn: the current stay's, since the last
		// exit or undo, in the time the door orders passes by (doorPasses):
		// an offline exit uploaded late is recorded after the stay's
		// admission but made before it.
		if _, err := tx.NewRaw(`UPDATE check_ins SET undone_by = ?
			WHERE ticket_id = ? AND outcome = ? AND undone_by IS NULL AND `+passTime+` > coalesce((SELECT max(`+passTime+`) FROM check_ins
				WHERE ticket_id = ? AND outcome IN (?, ?) AND id <> ?), '-infinity')`,
			undoID, u.TicketID, states.ScanAdmitted, u.TicketID, states.ScanExited, states.ScanUndone, undoID).Exec(ctx); err != nil {
			return fmt.Errorf("mark admissions of ticket %d undone: %w", u.TicketID, err)
		}
		if err := Audit(ctx, tx, AuditEntry{CompanyID: u.CompanyID, Action: AuditDoorUndo, Subject: fmt.Sprintf("ticket %d", u.TicketID),
			Detail: map[string]any{"gate": gate, "reason": u.Reason, "event_id": u.EventID}}); err != nil {
			return err
		}
		// With none left standing (an earlier stay, let out since), the
		// ticket was never admitted.
		if _, err := tx.NewRaw(`UPDATE tickets SET checked_in_at = NULL, checked_in_gate = NULL WHERE id = ?
			AND NOT EXISTS (SELECT 1 FROM check_ins WHERE ticket_id = ? AND outcome = ? AND undone_by IS NULL)`,
			u.TicketID, u.TicketID, states.ScanAdmitted).Exec(ctx); err != nil {
			return fmt.Errorf("clear admission of ticket %d: %w", u.TicketID, err)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("undo admission of ticket %d: %w", u.TicketID, err)
	}
	return undoID, nil
}

// RefusedScan is a scan the door refused (any outcome but admitted and
// exited; undos are not scans), as the door desk lists it.
type RefusedScan struct {
	ID           int64              `bun:"id"`
	ScannedAt    time.Time          `bun:"scanned_at"`
	Gate         string             `bun:"gate"`
	DeviceID     string             `bun:"device_id"`
	Outcome      states.ScanOutcome `bun:"outcome"`
	Offline      bool               `bun:"offline"`
	Barcode      string             `bun:"barcode"`
	TicketNumber *string            `bun:"ticket_number"`
	KeyID        *int64             `bun:"key_id"`
	KeyName      *string            `bun:"key_name"`
	KeyPrefix    *string            `bun:"key_prefix"`
	UserEmail    *string            `bun:"user_email"` // a manual admission's, refused
	Reason       *string            `bun:"reason"`
}

// ListRefusedScans returns a page (from 1) of the refused scans of the
// company's event in one environment, the newest first (by the scans'
// times), of one outcome or all (""), and how many there are.
func ListRefusedScans(ctx context.Context, db bun.IDB, companyID int64, isTest bool, eventID int64, outcome states.ScanOutcome,
	page, perPage int) ([]RefusedScan, int, error) {
	where := ` WHERE c.event_id = ? AND c.company_id = ? AND c.is_test = ? AND c.outcome NOT IN (?, ?, ?)`
	args := []any{eventID, companyID, isTest, states.ScanAdmitted, states.ScanExited, states.ScanUndone}
	if outcome != "" {
		where, args = where+` AND c.outcome = ?`, append(args, outcome)
	}
	var out []RefusedScan
	var total int
	err := db.RunInTx(ctx, &sqlRepeatableRead, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewRaw(`SELECT count(*) FROM check_ins c`+where, args...).Scan(ctx, &total); err != nil {
			return err
		}
		return tx.NewRaw(`SELECT c.id, c.scanned_at, c.gate, c.device_id, c.outcome, c.offline, c.barcode, t.number AS ticket_number,
				k.id AS key_id, k.name AS key_name, k.key_prefix, u.email AS user_email, c.reason
			FROM check_ins c
			LEFT JOIN tickets t ON t.id = c.ticket_id
			LEFT JOIN api_keys k ON k.id = c.api_key_id
			LEFT JOIN cabinet_users u ON u.id = c.cabinet_user_id`+where+`
			ORDER BY c.scanned_at DESC, c.id DESC LIMIT ? OFFSET ?`, append(args, perPage, (page-1)*perPage)...).Scan(ctx, &out)
	})
	if err != nil {
		return nil, 0, fmt.Errorf("refused scans of event %d, page %d: %w", eventID, page, err)
	}
	return out, total, nil
}

// ListEventSessions lists the event's sessions (schedule slots), soonest
// first: a scheduled event's door desk works at one.
func ListEventSessions(ctx context.Context, db bun.IDB, eventID int64) ([]EventSession, error) {
	var out []EventSession
	if err := db.NewRaw(`SELECT id, ref, starts_at FROM sessions WHERE event_id = ? ORDER BY starts_at, id`, eventID).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("sessions of event %d: %w", eventID, err)
	}
	return out, nil
}

// EventSession is one of an event's sessions.
type EventSession struct {
	ID       int64     `bun:"id"`
	Ref      string    `bun:"ref"`
	StartsAt time.Time `bun:"starts_at"`
}

// ReplaceDoorKey revokes the company's door key keyID and makes, in the
// same transaction, its replacement: the same application (environment),
// name, scope, event, gate and rate limits, with the new hash and prefix,
// claimed by the form's token as CreateAPIKey claims it. The revocation is
// one guarded statement (a live door key of the company: scopes exactly
// checkin), so of two replacements racing one makes a key; the other, the
// same form sent again, is *KeyMadeBefore (the same token), else
// ErrKeyNotLive. A form whose token made the replacement of another key
// is ErrFormUsed, and nothing changes. Another company's key and a
// partner key are errs.NotFound.
func ReplaceDoorKey(ctx context.Context, db *bun.DB, companyID, keyID int64, hash []byte, prefix string, claim KeyClaim) (old, made *APIKey, err error) {
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		old = new(APIKey)
		err := tx.NewRaw(`UPDATE api_keys k SET revoked_at = now() FROM applications a
			WHERE k.id = ? AND a.id = k.application_id AND a.company_id = ? AND k.scopes = ARRAY[?]::text[] AND k.revoked_at IS NULL
			RETURNING k.*`, keyID, companyID, "checkin").Scan(ctx, old)
		if errors.Is(err, sql.ErrNoRows) {
			var door, revoked bool
			switch err := tx.NewRaw(`SELECT k.scopes = ARRAY[?]::text[], k.revoked_at IS NOT NULL FROM api_keys k
				JOIN applications a ON a.id = k.application_id WHERE k.id = ? AND a.company_id = ?`,
				"checkin", keyID, companyID).Scan(ctx, &door, &revoked); {
			case errors.Is(err, sql.ErrNoRows) || err == nil && !door:
				return fmt.Errorf("door key %d: %w", keyID, errs.NotFound)
			case err != nil:
				return err
			}
			if claim.TokenHash != nil {
				var before KeyMadeBefore
				err := tx.NewRaw(`SELECT k.id FROM api_keys k JOIN applications a ON a.id = k.application_id
					WHERE k.creation_token = ? AND a.company_id = ?`, claim.TokenHash, companyID).Scan(ctx, &before.ID)
				if err == nil {
					return &before
				}
				if !errors.Is(err, sql.ErrNoRows) {
					return err
				}
			}
			return ErrKeyNotLive
		}
		if err != nil {
			return fmt.Errorf("revoke door key %d: %w", keyID, err)
		}
		made = &APIKey{ApplicationID: old.ApplicationID, Name: old.Name, KeyHash: hash, KeyPrefix: prefix, Scopes: old.Scopes,
			RateLimitRPS: old.RateLimitRPS, RateLimitBurst: old.RateLimitBurst, CheckinEventID: old.CheckinEventID,
			CheckinGate: old.CheckinGate, CreationToken: claim.TokenHash, Reveal: claim.Reveal}
		if _, err := tx.NewInsert().Model(made).Returning("*").Exec(ctx); err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "api_keys_creation_token" {
				// The form's token made a key already, a replacement of
				// another key: the revocation is rolled back with this.
				return ErrFormUsed
			}
			return fmt.Errorf("replacement of door key %d: %w", keyID, err)
		}
		return Audit(ctx, tx, AuditEntry{CompanyID: companyID, Action: AuditDoorReplaceKey, Subject: fmt.Sprintf("key %s…", old.KeyPrefix),
			Detail: map[string]any{"revoked_key_id": old.ID, "new_key_id": made.ID, "new_key_prefix": made.KeyPrefix}})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("replace door key %d of company %d: %w", keyID, companyID, err)
	}
	return old, made, nil
}

// KeyEnvironment is the environment of the company's key keyID
// (errs.NotFound: not a key of the company).
func KeyEnvironment(ctx context.Context, db bun.IDB, companyID, keyID int64) (string, error) {
	var env string
	err := db.NewRaw(`SELECT a.environment FROM api_keys k JOIN applications a ON a.id = k.application_id
		WHERE k.id = ? AND a.company_id = ?`, keyID, companyID).Scan(ctx, &env)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("key %d: %w", keyID, errs.NotFound)
	}
	if err != nil {
		return "", fmt.Errorf("environment of key %d: %w", keyID, err)
	}
	return env, nil
}

// ErrKeyNotLive: the key is revoked already; nothing was made.
var ErrKeyNotLive = errors.New("the key is revoked already")

// ErrFormUsed: the form's token made another key's replacement already;
// nothing was revoked or made.
var ErrFormUsed = errors.New("the form was used for another key")

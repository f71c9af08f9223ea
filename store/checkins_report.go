package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/states"
)

// CheckInFilter selects the door figures of one of a company's events, of
// one environment (sandbox tickets and scans, or production).
type CheckInFilter struct {
	CompanyID int64
	EventID   int64
	IsTest    bool
	// Bin is the width of an arrivals bar; ConflictWindow how close in
	// time a second gate's scan of an admitted ticket counts as a copy.
	Bin            time.Duration
	ConflictWindow time.Duration
	// MaxConflicts bounds the conflicts listed, newest first.
	MaxConflicts int
}

// CheckInCategory is one category's tickets at the door: expected (valid
// tickets: paid orders, not refunded), admitted at least once, inside now.
type CheckInCategory struct {
	Name     string `bun:"name" json:"name"`
	Expected int64  `bun:"expected" json:"expected"`
	Admitted int64  `bun:"admitted" json:"admitted"`
	Inside   int64  `bun:"inside" json:"inside"`
}

// CheckInGate is one gate's scans: the tickets admitted there (but for
// admissions undone at the door desk), every scan, and the scans refused
// (anything but admitted and exited; an undo is no scan).
type CheckInGate struct {
	Gate     string    `bun:"gate" json:"gate"`
	Admitted int64     `bun:"admitted" json:"admitted"`
	Scans    int64     `bun:"scans" json:"scans"`
	Refused  int64     `bun:"refused" json:"refused"`
	LastScan time.Time `bun:"last_scan" json:"last_scan"`
}

// CheckInBin counts first admissions in [Start, Start+Bin).
type CheckInBin struct {
	Start    time.Time `bun:"start" json:"start"`
	Admitted int64     `bun:"admitted" json:"admitted"`
}

// CheckInConflict is a ticket at two doors, or let in against the record:
// a conflict an offline scan revealed (Kind, as the API lists it), or a
// ticket admitted at one gate or device and shown again at another soon
// after, or with either scan made offline, and refused there (Kind ""): a
// copy turned away. First is the admission (none for admitted_void),
// Second the scan that conflicts with it.
type CheckInConflict struct {
	Kind          states.ConflictKind `bun:"kind" json:"kind"`
	TicketNumber  string              `bun:"ticket_number" json:"ticket_number"`
	FirstGate     string              `bun:"first_gate" json:"first_gate"`
	FirstDevice   string              `bun:"first_device" json:"first_device"`
	FirstAt       *time.Time          `bun:"first_at" json:"first_at"`
	FirstOffline  bool                `bun:"first_offline" json:"first_offline"`
	SecondGate    string              `bun:"second_gate" json:"second_gate"`
	SecondDevice  string              `bun:"second_device" json:"second_device"`
	SecondAt      time.Time           `bun:"second_at" json:"second_at"`
	SecondOffline bool                `bun:"second_offline" json:"second_offline"`
}

// CheckInFigures is an event's door, as read in one snapshot.
type CheckInFigures struct {
	Categories []CheckInCategory
	Gates      []CheckInGate
	Arrivals   []CheckInBin
	Conflicts  []CheckInConflict
}

// validTickets are the event's tickets a door expects: of paid orders of
// the environment, not refunded. Its arguments: company, event, is_test.
const validTickets = `
	SELECT t.id, t.number, t.checked_in_at, t.inside, i.category_id
	FROM orders o JOIN tickets t ON t.order_id = o.id
	JOIN order_items i ON i.order_id = t.order_id AND i.position = t.position
	WHERE o.company_id = ? AND o.event_id = ? AND o.is_test = ? AND o.status IN (?) AND t.status = ?`

// GetCheckInFigures reads an event's door figures in one snapshot: per
// category, per gate, arrivals per Bin, and the conflicts.
func GetCheckInFigures(ctx context.Context, db *bun.DB, f CheckInFilter) (*CheckInFigures, error) {
	out := &CheckInFigures{}
	valid := []any{f.CompanyID, f.EventID, f.IsTest, bun.In(states.TicketsValidStatuses), states.TicketActive}
	err := db.RunInTx(ctx, &sqlRepeatableRead, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewRaw(`
			WITH v AS (`+validTickets+`)
			SELECT c.name, count(v.id) AS expected, count(v.checked_in_at) AS admitted,
				count(v.id) FILTER (WHERE v.inside) AS inside
			FROM ticket_categories c LEFT JOIN v ON v.category_id = c.id
			WHERE c.event_id = ? GROUP BY c.id ORDER BY c.position, c.id`,
			append(valid, f.EventID)...).Scan(ctx, &out.Categories); err != nil {
			return fmt.Errorf("categories: %w", err)
		}
		// A scan's environment is its door's (check_ins.is_test): unknown
		// barcodes have no ticket to tell it.
		if err := tx.NewRaw(`
			SELECT ci.gate, count(DISTINCT ci.ticket_id) FILTER (WHERE ci.outcome = ? AND ci.undone_by IS NULL) AS admitted, count(*) AS scans,
				count(*) FILTER (WHERE ci.outcome NOT IN (?, ?)) AS refused, max(ci.scanned_at) AS last_scan
			FROM check_ins ci
			WHERE ci.company_id = ? AND ci.event_id = ? AND ci.is_test = ? AND ci.outcome <> ?
			GROUP BY ci.gate ORDER BY ci.gate`,
			states.ScanAdmitted, states.ScanAdmitted, states.ScanExited, f.CompanyID, f.EventID, f.IsTest, states.ScanUndone).Scan(ctx, &out.Gates); err != nil {
			return fmt.Errorf("gates: %w", err)
		}
		if err := tx.NewRaw(`
			WITH v AS (`+validTickets+`)
			SELECT date_bin(? * interval '1 second', v.checked_in_at, timestamptz '2000-01-01 00:00:00+00') AS start,
				count(*) AS admitted
			FROM v WHERE v.checked_in_at IS NOT NULL GROUP BY 1 ORDER BY 1`,
			append(valid, f.Bin.Seconds())...).Scan(ctx, &out.Arrivals); err != nil {
			return fmt.Errorf("arrivals: %w", err)
		}
		// The conflicts offline scans revealed (kept on their records as
		// they settled), and the copies refused: each other
		// already_checked_in scan paired with the admission recorded just
		// before it (ids, not device clocks: the ticket's row lock orders
		// them), at another gate or device; an admission the door desk
		// undid, and the stay it ended, pair with none. The window is the service's
		// clock; a scan made offline is a copy at any time, if its device
		// refused it (one it let in and no conflict is the holder back).
		// The newest recorded first.
		if err := tx.NewRaw(`
			SELECT kind, ticket_number, first_gate, first_device, first_at, first_offline,
				second_gate, second_device, second_at, second_offline
			FROM (
				(SELECT b.id, b.conflict AS kind, t.number AS ticket_number,
					coalesce(a.gate, '') AS first_gate, coalesce(a.device_id, '') AS first_device, a.scanned_at AS first_at,
					coalesce(a.offline, false) AS first_offline,
					b.gate AS second_gate, b.device_id AS second_device, b.scanned_at AS second_at, b.offline AS second_offline
				FROM check_ins b
				JOIN tickets t ON t.id = b.ticket_id
				LEFT JOIN check_ins a ON a.id = b.conflict_with
				WHERE b.company_id = ? AND b.event_id = ? AND b.is_test = ? AND b.conflict IS NOT NULL
				ORDER BY b.id DESC LIMIT ?)
				UNION ALL
				(SELECT DISTINCT ON (b.id) b.id, '' AS kind, t.number AS ticket_number,
					a.gate AS first_gate, a.device_id AS first_device, a.scanned_at AS first_at, a.offline AS first_offline,
					b.gate AS second_gate, b.device_id AS second_device, b.scanned_at AS second_at, b.offline AS second_offline
				FROM check_ins b
				JOIN check_ins a ON a.ticket_id = b.ticket_id AND a.id < b.id AND a.outcome = ? AND a.undone_by IS NULL
				JOIN tickets t ON t.id = b.ticket_id
				WHERE b.company_id = ? AND b.event_id = ? AND b.outcome = ? AND b.is_test = ? AND b.conflict IS NULL
					AND NOT (b.offline AND coalesce(b.door_outcome, ?) = ?)
					AND (a.gate <> b.gate OR (a.device_id <> '' AND b.device_id <> '' AND a.device_id <> b.device_id))
					AND (b.received_at - a.received_at <= ? * interval '1 second' OR a.offline OR b.offline)
					AND NOT EXISTS (SELECT 1 FROM check_ins u WHERE u.ticket_id = b.ticket_id AND u.id > a.id AND u.id < b.id
						AND u.outcome = a.outcome AND u.undone_by IS NOT NULL)
				ORDER BY b.id DESC, a.id DESC LIMIT ?)
			) x ORDER BY id DESC LIMIT ?`,
			f.CompanyID, f.EventID, f.IsTest, f.MaxConflicts,
			states.ScanAdmitted, f.CompanyID, f.EventID, states.ScanAlreadyCheckedIn, f.IsTest, states.ScanAdmitted, states.ScanAdmitted,
			f.ConflictWindow.Seconds(), f.MaxConflicts, f.MaxConflicts).Scan(ctx, &out.Conflicts); err != nil {
			return fmt.Errorf("conflicts: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("check-in figures of event %d: %w", f.EventID, err)
	}
	return out, nil
}

package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/ticketsales/ticketsales/internal/states"
)

// ExportBatch is how many orders (or scans) an export reads per query:
// a large export is many short queries, each its next page by the list's
// cursor, not one long one holding a connection while the file goes out.
const ExportBatch = 500

// ExportOrderRow is one order of the orders export: the list's row and
// its money, session and refunds.
type ExportOrderRow struct {
	CabinetOrderRow
	CustomerPhone   string     `bun:"customer_phone"`
	SessionRef      *string    `bun:"session_ref"`
	SessionStartsAt *time.Time `bun:"session_starts_at"`
	Total           int64      `bun:"total"`
	ServiceFee      int64      `bun:"service_fee"`
	CancelledAt     *time.Time `bun:"cancelled_at"`
	// Refunded is the completed refunds' money; RefundPending the rest's.
	Refunded        int64 `bun:"refunded"`
	RefundPending   int64 `bun:"refund_pending"`
	TicketsRefunded int   `bun:"tickets_refunded"`
}

// EachExportOrder calls fn with every order of the company f selects (its
// cursors and Limit aside), newest first, as the list pages them.
func EachExportOrder(ctx context.Context, db bun.IDB, f CabinetOrderFilter, fn func(ExportOrderRow) error) error {
	f.Before, f.After, f.Limit = nil, nil, ExportBatch
	for {
		where, args := f.where(true)
		var rows []ExportOrderRow
		err := db.NewRaw(`
			SELECT o.id, o.is_test, o.event_id, e.title AS event_title, v.timezone, o.status, o.channel, o.api_key_id,
				coalesce(k.name, '') AS key_name, coalesce(k.key_prefix, '') AS key_prefix, o.payment, o.payment_id,
				o.currency, o.amount, (SELECT count(*) FROM order_items i WHERE i.order_id = o.id) AS tickets,
				o.customer_email, o.customer_first_name, o.customer_last_name, o.customer_phone, o.created_at, o.paid_at,
				o.cancelled_at, o.total, o.service_fee, s.ref AS session_ref, s.starts_at AS session_starts_at,
				coalesce((SELECT sum(r.amount) FROM refunds r WHERE r.order_id = o.id AND r.status = ?), 0) AS refunded,
				coalesce((SELECT sum(r.amount) FROM refunds r WHERE r.order_id = o.id AND r.status <> ?), 0) AS refund_pending,
				(SELECT count(*) FROM tickets t WHERE t.order_id = o.id AND t.status = ?) AS tickets_refunded
			FROM orders o JOIN events e ON e.id = o.event_id JOIN venues v ON v.id = e.venue_id
			LEFT JOIN api_keys k ON k.id = o.api_key_id
			LEFT JOIN sessions s ON s.id = o.schedule_slot_id
			WHERE `+where+`
			ORDER BY o.created_at DESC, o.id DESC LIMIT ?`,
			append(append([]any{states.RefundCompleted, states.RefundCompleted, states.TicketRefunded}, args...), f.Limit)...).Scan(ctx, &rows)
		if err != nil {
			return fmt.Errorf("orders export of company %d: %w", f.CompanyID, err)
		}
		for _, r := range rows {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(rows) < f.Limit {
			return nil
		}
		last := rows[len(rows)-1]
		f.After = &OrderCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
}

// ExportTicketRow is one position of an order, and its ticket once
// issued: the attendees export.
type ExportTicketRow struct {
	OrderID       int64                `bun:"order_id"`
	Position      int                  `bun:"position"`
	Category      string               `bun:"category"`
	SeatID        *string              `bun:"seat_id"`
	SeatLabel     *string              `bun:"label"`
	Price         int64                `bun:"price"`
	Number        *string              `bun:"number"`
	Status        *states.TicketStatus `bun:"ticket_status"`
	CheckedInAt   *time.Time           `bun:"checked_in_at"`
	CheckedInGate *string              `bun:"checked_in_gate"`
	Inside        bool                 `bun:"inside"`
}

// EachExportTicket calls fn with every position of every order of the
// company f selects, the orders newest first (as EachExportOrder), each
// order's positions in order.
func EachExportTicket(ctx context.Context, db bun.IDB, f CabinetOrderFilter, fn func(ExportOrderRow, ExportTicketRow) error) error {
	var batch []ExportOrderRow
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		ids := make([]int64, len(batch))
		for i, o := range batch {
			ids[i] = o.ID
		}
		var rows []ExportTicketRow
		if err := db.NewRaw(`SELECT i.order_id, i.position, c.name AS category, i.seat_id, es.label, i.price,
				t.number, t.status AS ticket_status, t.checked_in_at, t.checked_in_gate, coalesce(t.inside, false) AS inside
			FROM order_items i
			JOIN orders o ON o.id = i.order_id
			JOIN ticket_categories c ON c.id = i.category_id
			LEFT JOIN event_seats es ON es.event_id = o.event_id AND es.seat_id = i.seat_id
			LEFT JOIN tickets t ON t.order_id = i.order_id AND t.position = i.position
			WHERE i.order_id = ANY (?) AND o.company_id = ?
			ORDER BY i.order_id, i.position`, pgdialect.Array(ids), f.CompanyID).Scan(ctx, &rows); err != nil {
			return fmt.Errorf("tickets export of company %d: %w", f.CompanyID, err)
		}
		byOrder := map[int64][]ExportTicketRow{}
		for _, r := range rows {
			byOrder[r.OrderID] = append(byOrder[r.OrderID], r)
		}
		for _, o := range batch {
			for _, t := range byOrder[o.ID] {
				if err := fn(o, t); err != nil {
					return err
				}
			}
		}
		batch = batch[:0]
		return nil
	}
	err := EachExportOrder(ctx, db, f, func(o ExportOrderRow) error {
		batch = append(batch, o)
		if len(batch) < ExportBatch {
			return nil
		}
		return flush()
	})
	if err != nil {
		return err
	}
	return flush()
}

// ExportCheckInRow is one scan at an event's doors.
type ExportCheckInRow struct {
	ID         int64                `bun:"id"`
	ScannedAt  time.Time            `bun:"scanned_at"`
	ReceivedAt time.Time            `bun:"received_at"`
	Gate       string               `bun:"gate"`
	DeviceID   string               `bun:"device_id"`
	Direction  states.ScanDirection `bun:"direction"`
	Outcome    states.ScanOutcome   `bun:"outcome"`
	Offline    bool                 `bun:"offline"`
	Conflict   *string              `bun:"conflict"`
	Number     *string              `bun:"number"`
	OrderID    *int64               `bun:"order_id"`
	Category   *string              `bun:"category"`
	SeatID     *string              `bun:"seat_id"`
	SeatLabel  *string              `bun:"label"`
	// The door desk's: the user who admitted by hand or undid (their
	// e-mail), and why; an admission undone, the undo's id.
	UserEmail *string `bun:"user_email"`
	Reason    *string `bun:"reason"`
	UndoneBy  *int64  `bun:"undone_by"`
	// The buyer's, read only when asked (WithBuyer).
	BuyerFirstName *string `bun:"customer_first_name"`
	BuyerLastName  *string `bun:"customer_last_name"`
	BuyerEmail     *string `bun:"customer_email"`
}

// CheckInExportFilter selects the scans of one of a company's events, of
// one environment (check_ins.is_test: the door's).
type CheckInExportFilter struct {
	CompanyID int64
	EventID   int64
	IsTest    bool
	// WithBuyer reads the buyer's name and e-mail of each scanned ticket
	// (a door keeper's export has none).
	WithBuyer bool
}

// EachExportCheckIn calls fn with every scan of the event f selects, in
// the order they were recorded.
func EachExportCheckIn(ctx context.Context, db bun.IDB, f CheckInExportFilter, fn func(ExportCheckInRow) error) error {
	buyer := "NULL AS customer_first_name, NULL AS customer_last_name, NULL AS customer_email"
	if f.WithBuyer {
		buyer = "o.customer_first_name, o.customer_last_name, o.customer_email"
	}
	var after int64
	for {
		var rows []ExportCheckInRow
		if err := db.NewRaw(`SELECT ci.id, ci.scanned_at, ci.received_at, ci.gate, ci.device_id, ci.direction, ci.outcome, ci.offline,
				ci.conflict, t.number, t.order_id, c.name AS category, i.seat_id, es.label,
				u.email AS user_email, ci.reason, ci.undone_by, `+buyer+`
			FROM check_ins ci
			LEFT JOIN cabinet_users u ON u.id = ci.cabinet_user_id
			LEFT JOIN tickets t ON t.id = ci.ticket_id
			LEFT JOIN orders o ON o.id = t.order_id AND o.company_id = ci.company_id
			LEFT JOIN order_items i ON i.order_id = t.order_id AND i.position = t.position
			LEFT JOIN ticket_categories c ON c.id = i.category_id
			LEFT JOIN event_seats es ON es.event_id = ci.event_id AND es.seat_id = i.seat_id
			WHERE ci.company_id = ? AND ci.event_id = ? AND ci.is_test = ? AND ci.id > ?
			ORDER BY ci.id LIMIT ?`, f.CompanyID, f.EventID, f.IsTest, after, ExportBatch).Scan(ctx, &rows); err != nil {
			return fmt.Errorf("check-ins export of event %d: %w", f.EventID, err)
		}
		for _, r := range rows {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(rows) < ExportBatch {
			return nil
		}
		after = rows[len(rows)-1].ID
	}
}

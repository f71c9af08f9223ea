package store

import (
	"context"
	"fmt"
	"slices"
	"ticketsales/internal/states"
	"time"

	"github.com/uptrace/bun"
)

// ReportFilter selects what the sales report counts: a company's production
// orders (sandbox orders never: the contract keeps them out of organizer
// reporting), optionally of one event, in [From, To). Sales count at the
// moment an order was paid, refunds at the moment they completed, so a
// refund of an earlier sale lowers the period it happened in.
type ReportFilter struct {
	CompanyID int64
	EventID   int64     // 0: every event
	From, To  time.Time // zero: open
}

// SalesFigures are the sums of one report row. Money is in minor units.
type SalesFigures struct {
	TicketsSold     int64 `bun:"tickets_sold" json:"tickets_sold"`
	TicketsRefunded int64 `bun:"tickets_refunded" json:"tickets_refunded"`
	TicketsNet      int64 `bun:"tickets_net" json:"tickets_net"`
	Orders          int64 `bun:"orders" json:"orders"`
	Gross           int64 `bun:"gross" json:"gross"`               // Σ amount paid by buyers
	ServiceFees     int64 `bun:"service_fees" json:"service_fees"` // Σ service fee of those orders
	Refunds         int64 `bun:"refunds" json:"refunds"`           // Σ money returned
	NetRevenue      int64 `bun:"net_revenue" json:"net_revenue"`   // gross − refunds
}

// EventSales is one event's row.
type EventSales struct {
	EventID  int64     `bun:"event_id" json:"event_id"`
	Title    string    `bun:"title" json:"title"`
	StartsAt time.Time `bun:"starts_at" json:"starts_at"`
	Currency string    `bun:"currency" json:"currency"`
	SalesFigures
}

// CategorySales is one ticket category's row: tickets and their face value
// (fees are per order, not per category).
type CategorySales struct {
	EventID         int64  `bun:"event_id" json:"event_id"`
	EventTitle      string `bun:"event_title" json:"event_title"`
	CategoryID      int64  `bun:"category_id" json:"category_id"`
	Name            string `bun:"name" json:"name"`
	TicketsSold     int64  `bun:"tickets_sold" json:"tickets_sold"`
	TicketsRefunded int64  `bun:"tickets_refunded" json:"tickets_refunded"`
	TicketsNet      int64  `bun:"tickets_net" json:"tickets_net"`
	FaceValueSold   int64  `bun:"face_value_sold" json:"face_value_sold"`
	FaceValueRefund int64  `bun:"face_value_refunded" json:"face_value_refunded"`
}

// ChannelSales is one sales channel's row: the API key (and its
// application) that sold, over /v1 ("api") or the aggregator adapter.
type ChannelSales struct {
	Channel         states.Channel `bun:"channel" json:"channel"`
	APIKeyID        int64          `bun:"api_key_id" json:"api_key_id"`
	KeyName         string         `bun:"key_name" json:"key_name"`
	KeyPrefix       string         `bun:"key_prefix" json:"key_prefix"`
	ApplicationID   int64          `bun:"application_id" json:"application_id"`
	ApplicationName string         `bun:"application_name" json:"application_name"`
	SalesFigures
}

// DaySales is one day's row (days in UTC).
type DaySales struct {
	Day time.Time `bun:"day" json:"day"`
	SalesFigures
}

// SalesReport is the organizer's sales report.
type SalesReport struct {
	From       *time.Time      `json:"from,omitempty"`
	To         *time.Time      `json:"to,omitempty"`
	EventID    int64           `json:"event_id,omitempty"`
	Total      SalesFigures    `json:"total"`
	Events     []EventSales    `json:"events"`
	Categories []CategorySales `json:"categories"`
	Channels   []ChannelSales  `json:"channels"`
	Days       []DaySales      `json:"days"`
}

// salesFactsSQL is one row per sale (a paid production order, at paid_at)
// and one per completed refund of one (at completed_at), in the filter's
// range: the facts every figure of the report sums. Arguments: company,
// event (0: all), from, to (NULL: open) — twice.
const salesFactsSQL = `
	SELECT o.id AS order_id, o.event_id, o.api_key_id, o.channel,
		(o.paid_at AT TIME ZONE 'UTC')::date AS day,
		count(i.order_id) AS tickets_sold,
		0::bigint AS tickets_refunded, 1 AS orders, o.amount AS gross, o.service_fee AS service_fees, 0::bigint AS refunds
	FROM orders o LEFT JOIN order_items i ON i.order_id = o.id
	WHERE o.company_id = ?0 AND NOT o.is_test AND o.paid_at IS NOT NULL
		AND (?1 = 0 OR o.event_id = ?1)
		AND (?2::timestamptz IS NULL OR o.paid_at >= ?2) AND (?3::timestamptz IS NULL OR o.paid_at < ?3)
	GROUP BY o.id
	UNION ALL
	SELECT o.id, o.event_id, o.api_key_id, o.channel,
		(r.completed_at AT TIME ZONE 'UTC')::date,
		0, (SELECT count(*) FROM refund_tickets rt WHERE rt.refund_id = r.id), 0, 0, 0, r.amount
	FROM refunds r JOIN orders o ON o.id = r.order_id
	WHERE o.company_id = ?0 AND NOT o.is_test AND r.status = 'completed'
		AND (?1 = 0 OR o.event_id = ?1)
		AND (?2::timestamptz IS NULL OR r.completed_at >= ?2) AND (?3::timestamptz IS NULL OR r.completed_at < ?3)`

// sums are the report's figures over a group of facts.
const sums = `
	coalesce(sum(f.tickets_sold), 0)::bigint AS tickets_sold,
	coalesce(sum(f.tickets_refunded), 0)::bigint AS tickets_refunded,
	coalesce(sum(f.tickets_sold) - sum(f.tickets_refunded), 0)::bigint AS tickets_net,
	coalesce(sum(f.orders), 0)::bigint AS orders,
	coalesce(sum(f.gross), 0)::bigint AS gross,
	coalesce(sum(f.service_fees), 0)::bigint AS service_fees,
	coalesce(sum(f.refunds), 0)::bigint AS refunds,
	coalesce(sum(f.gross) - sum(f.refunds), 0)::bigint AS net_revenue`

// GetSalesReport computes the report in SQL, in one snapshot: the totals and
// the rows per event, channel and day in one pass over the facts (grouping
// sets), the categories in another.
func GetSalesReport(ctx context.Context, db *bun.DB, f ReportFilter) (*SalesReport, error) {
	rep := &SalesReport{EventID: f.EventID, Events: []EventSales{}, Categories: []CategorySales{}, Channels: []ChannelSales{}, Days: []DaySales{}}
	var from, to *time.Time
	if !f.From.IsZero() {
		from, rep.From = &f.From, &f.From
	}
	if !f.To.IsZero() {
		to, rep.To = &f.To, &f.To
	}
	args := []any{f.CompanyID, f.EventID, from, to}
	err := db.RunInTx(ctx, &sqlRepeatableRead, func(ctx context.Context, tx bun.Tx) error {
		var rows []struct {
			Grouping        int             `bun:"grouping"`
			EventID         *int64          `bun:"event_id"`
			Title           *string         `bun:"title"`
			StartsAt        *time.Time      `bun:"starts_at"`
			Currency        *string         `bun:"currency"`
			Channel         *states.Channel `bun:"channel"`
			APIKeyID        *int64          `bun:"api_key_id"`
			KeyName         *string         `bun:"key_name"`
			KeyPrefix       *string         `bun:"key_prefix"`
			ApplicationID   *int64          `bun:"application_id"`
			ApplicationName *string         `bun:"application_name"`
			Day             *time.Time      `bun:"day"`
			SalesFigures
		}
		// grouping() has a bit set for each of (event, channel, day) the row
		// is not grouped by: 0b111 the total, 0b011 an event, 0b101 a
		// channel, 0b110 a day.
		err := tx.NewRaw(`
			SELECT g.*, e.title, e.starts_at, e.currency, k.name AS key_name, k.key_prefix,
				a.id AS application_id, a.name AS application_name
			FROM (SELECT grouping(f.event_id, f.channel, f.day) AS grouping, f.event_id, f.channel, f.api_key_id,
					f.day::timestamptz AS day, `+sums+`
				FROM (`+salesFactsSQL+`) f
				GROUP BY GROUPING SETS ((), (f.event_id), (f.channel, f.api_key_id), (f.day))) g
			LEFT JOIN events e ON e.id = g.event_id
			LEFT JOIN api_keys k ON k.id = g.api_key_id LEFT JOIN applications a ON a.id = k.application_id
			ORDER BY e.starts_at, g.event_id, g.gross DESC, g.api_key_id, g.channel, g.day`, args...).Scan(ctx, &rows)
		if err != nil {
			return fmt.Errorf("figures: %w", err)
		}
		for _, r := range rows {
			switch r.Grouping {
			case 0b111:
				rep.Total = r.SalesFigures
			case 0b011:
				rep.Events = append(rep.Events, EventSales{EventID: *r.EventID, Title: *r.Title, StartsAt: *r.StartsAt,
					Currency: *r.Currency, SalesFigures: r.SalesFigures})
			case 0b101:
				rep.Channels = append(rep.Channels, ChannelSales{Channel: *r.Channel, APIKeyID: *r.APIKeyID, KeyName: *r.KeyName,
					KeyPrefix: *r.KeyPrefix, ApplicationID: *r.ApplicationID, ApplicationName: *r.ApplicationName, SalesFigures: r.SalesFigures})
			case 0b110:
				rep.Days = append(rep.Days, DaySales{Day: *r.Day, SalesFigures: r.SalesFigures})
			}
		}
		if err := tx.NewRaw(categorySQL, args...).Scan(ctx, &rep.Categories); err != nil {
			return fmt.Errorf("by category: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sales report of company %d: %w", f.CompanyID, err)
	}
	slices.SortStableFunc(rep.Days, func(a, b DaySales) int { return a.Day.Compare(b.Day) })
	return rep, nil
}

// categorySQL counts tickets per category: every position of a sale, and
// every ticket of a completed refund, with their prices.
const categorySQL = `
	WITH items AS (
		SELECT o.event_id, i.category_id, 1 AS sold, 0 AS refunded, i.price AS sold_value, 0::bigint AS refunded_value
		FROM orders o JOIN order_items i ON i.order_id = o.id
		WHERE o.company_id = ?0 AND NOT o.is_test AND o.paid_at IS NOT NULL
			AND (?1 = 0 OR o.event_id = ?1)
			AND (?2::timestamptz IS NULL OR o.paid_at >= ?2) AND (?3::timestamptz IS NULL OR o.paid_at < ?3)
		UNION ALL
		SELECT o.event_id, i.category_id, 0, 1, 0, i.price
		FROM refunds r JOIN orders o ON o.id = r.order_id
			JOIN refund_tickets rt ON rt.refund_id = r.id
			JOIN tickets t ON t.id = rt.ticket_id
			JOIN order_items i ON i.order_id = t.order_id AND i.position = t.position
		WHERE o.company_id = ?0 AND NOT o.is_test AND r.status = 'completed'
			AND (?1 = 0 OR o.event_id = ?1)
			AND (?2::timestamptz IS NULL OR r.completed_at >= ?2) AND (?3::timestamptz IS NULL OR r.completed_at < ?3))
	SELECT e.id AS event_id, e.title AS event_title, c.id AS category_id, c.name,
		sum(x.sold)::bigint AS tickets_sold, sum(x.refunded)::bigint AS tickets_refunded,
		(sum(x.sold) - sum(x.refunded))::bigint AS tickets_net,
		sum(x.sold_value)::bigint AS face_value_sold, sum(x.refunded_value)::bigint AS face_value_refunded
	FROM items x JOIN ticket_categories c ON c.id = x.category_id JOIN events e ON e.id = x.event_id
	GROUP BY e.id, c.id ORDER BY e.starts_at, e.id, c.position, c.id`

// EventInventory is an event as the cabinet's catalog page lists it, with
// its seats sold, held and free (general admission: capacity − sold, of its
// sessions when it has a schedule).
type EventInventory struct {
	ID       int64              `bun:"id" json:"id"`
	Ref      string             `bun:"ref" json:"ref"`
	Title    string             `bun:"title" json:"title"`
	Status   states.EventStatus `bun:"status" json:"status"`
	StartsAt time.Time          `bun:"starts_at" json:"starts_at"`
	Venue    string             `bun:"venue" json:"venue"`
	Sold     int64              `bun:"sold" json:"sold"`
	Held     int64              `bun:"held" json:"held"`
	Free     int64              `bun:"free" json:"free"`
}

// ListCompanyInventory lists the company's events with their seat counts. A
// hold past its expires_at counts as free, as every read treats it.
func ListCompanyInventory(ctx context.Context, db bun.IDB, companyID int64, now time.Time) ([]EventInventory, error) {
	var out []EventInventory
	err := db.NewRaw(`
		SELECT e.id, e.ref, e.title, e.status, e.starts_at, v.name AS venue,
			coalesce(s.sold, 0) + CASE WHEN ses.n > 0 THEN ses.sold ELSE coalesce(g.sold, 0) END AS sold,
			coalesce(s.held, 0) AS held,
			coalesce(s.free, 0) + CASE WHEN ses.n > 0 THEN ses.free ELSE coalesce(g.free, 0) END AS free
		FROM events e JOIN venues v ON v.id = e.venue_id
		LEFT JOIN LATERAL (
			SELECT count(*) FILTER (WHERE state = 'sold') AS sold,
				count(*) FILTER (WHERE state = 'held' AND (hold_expires_at IS NULL OR hold_expires_at > ?1)) AS held,
				count(*) FILTER (WHERE state = 'free' OR (state = 'held' AND hold_expires_at <= ?1)) AS free
			FROM event_seats WHERE event_id = e.id) s ON true
		LEFT JOIN LATERAL (
			SELECT sum(sold) AS sold, sum(greatest(capacity - sold, 0)) AS free
			FROM ticket_categories WHERE event_id = e.id AND capacity IS NOT NULL) g ON true
		-- A scheduled event's capacity is its sessions' (schedule slots').
		CROSS JOIN LATERAL (
			SELECT count(*) AS n, coalesce(sum(sold), 0) AS sold, coalesce(sum(greatest(capacity - sold, 0)), 0) AS free
			FROM sessions WHERE event_id = e.id) ses
		WHERE e.company_id = ?0
		ORDER BY e.starts_at, e.id`, companyID, now).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("inventory of company %d: %w", companyID, err)
	}
	return out, nil
}

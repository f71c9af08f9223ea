package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/states"
)

// ReportFilter selects what the sales report counts: a company's production
// orders (sandbox orders never: the contract keeps them out of organizer
// reporting), optionally of one event, in [From, To). Sales count at the
// moment an order was paid, refunds at the moment they completed, so a
// refund of an earlier sale lowers the period it happened in. Days are the
// company's local days in TimeZone (an IANA name; empty: UTC).
type ReportFilter struct {
	CompanyID int64
	EventID   int64     // 0: every event
	From, To  time.Time // zero: open
	TimeZone  string
	// First and Last are the local days asked for (calendar dates, midnight
	// UTC), both included, when From and To were set from days: the report
	// is labelled with them, not with dates read back from instants.
	First, Last time.Time
}

// SalesFigures are the sums of one report row, money in minor units. The
// service fee is the ticket service's, not the organizer's: charged on top
// of the prices (fee mode separate) or inside them (included). A partial
// refund returns the refunded tickets' prices and the service keeps its
// fee; the refund that voids an order's last ticket returns the rest of the
// amount, so the buyer gets everything back and the service gives its fee
// back (docs/cabinet.md, "Sales report").
type SalesFigures struct {
	TicketsSold     int64 `bun:"tickets_sold" json:"tickets_sold"`
	TicketsRefunded int64 `bun:"tickets_refunded" json:"tickets_refunded"`
	TicketsNet      int64 `bun:"tickets_net" json:"tickets_net"`
	Orders          int64 `bun:"orders" json:"orders"`
	// FaceValue is Σ ticket prices sold (in included mode the fee is inside).
	FaceValue int64 `bun:"face_value" json:"face_value"`
	// ServiceFees is Σ the sold orders' fees, on top or inside the prices.
	ServiceFees int64 `bun:"service_fees" json:"service_fees"`
	// FeesInPrice is the part of ServiceFees inside the prices (included).
	FeesInPrice int64 `bun:"fees_in_price" json:"fees_in_price"`
	// Gross is Σ paid by buyers: FaceValue + ServiceFees − FeesInPrice.
	Gross int64 `bun:"gross" json:"gross"`
	// FaceValueRefunded is Σ the prices of the refunded tickets.
	FaceValueRefunded int64 `bun:"face_value_refunded" json:"face_value_refunded"`
	// FeeRefunded is Σ money refunded beyond those prices: the fee on top,
	// returned with an order's last ticket.
	FeeRefunded int64 `bun:"fee_refunded" json:"fee_refunded"`
	// Refunds is Σ money returned: FaceValueRefunded + FeeRefunded.
	Refunds int64 `bun:"refunds" json:"refunds"`
	// FeesReturned is Σ the fees the service gave back with orders refunded
	// whole: the fee on top refunded, and a fee inside the prices when the
	// order's refunds have all completed.
	FeesReturned int64 `bun:"fees_returned" json:"fees_returned"`
	// FeesKept is ServiceFees − FeesReturned: the service's share.
	FeesKept int64 `bun:"fees_kept" json:"fees_kept"`
	// NetToOrganizer is Gross − Refunds − FeesKept: what the organizer earns.
	NetToOrganizer int64 `bun:"net_to_organizer" json:"net_to_organizer"`
}

// EventSales is one event's row; a scheduled event has a row per session
// too. StartsAt is in the event's (its venue's) time zone.
type EventSales struct {
	EventID  int64          `bun:"event_id" json:"event_id"`
	Title    string         `bun:"title" json:"title"`
	StartsAt time.Time      `bun:"starts_at" json:"starts_at"`
	TimeZone string         `bun:"timezone" json:"time_zone"`
	Currency string         `bun:"currency" json:"currency"`
	Sessions []SessionSales `json:"sessions,omitempty"`
	SalesFigures
}

// SessionSales is one session's row of a scheduled event (orders name it
// by schedule_slot_id). StartsAt is in the event's time zone. The row of
// SessionID 0 (no ref, no start) is the event's orders that name no
// session, so the rows add up to the event's.
type SessionSales struct {
	SessionID int64     `json:"session_id"`
	Ref       string    `json:"ref"`
	StartsAt  time.Time `json:"starts_at"`
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

// DaySales is one day's row: a local day of the report's time zone,
// YYYY-MM-DD.
type DaySales struct {
	Day string `bun:"day" json:"day"`
	SalesFigures
}

// SalesReport is the organizer's sales report. Money is in minor units of
// Currency, the currency of the company's events.
type SalesReport struct {
	From       *time.Time      `json:"from,omitempty"`
	To         *time.Time      `json:"to,omitempty"`
	TimeZone   string          `json:"time_zone"`
	Currency   string          `json:"currency"`
	EventID    int64           `json:"event_id,omitempty"`
	Total      SalesFigures    `json:"total"`
	Events     []EventSales    `json:"events"`
	Categories []CategorySales `json:"categories"`
	Channels   []ChannelSales  `json:"channels"`
	Days       []DaySales      `json:"days"`
}

// DefaultCurrency is the report's currency when the company has no events.
const DefaultCurrency = "RUB"

// salesFactsSQL is one row per sale (a paid production order, at paid_at)
// and one per completed refund of one (at completed_at), in the filter's
// range: the facts every figure of the report sums. A refund's face value
// is its tickets' prices, the rest of its money is fee; a fee inside the
// prices goes back to the buyer with the order's last refund to complete
// (the order refunded whole, nothing of it pending). Arguments: company,
// event (0: all), from, to (NULL: open), the days' time zone.
const salesFactsSQL = `
	SELECT o.id AS order_id, o.event_id, o.schedule_slot_id AS session_id, o.api_key_id, o.channel,
		(o.paid_at AT TIME ZONE ?4)::date AS day,
		count(i.order_id) AS tickets_sold, 0::bigint AS tickets_refunded, 1 AS orders,
		o.total AS face_value, o.service_fee AS service_fees, o.service_fee - (o.amount - o.total) AS fees_in_price, o.amount AS gross,
		0::bigint AS face_value_refunded, 0::bigint AS fee_refunded, 0::bigint AS refunds, 0::bigint AS fees_returned
	FROM orders o LEFT JOIN order_items i ON i.order_id = o.id
	WHERE o.company_id = ?0 AND NOT o.is_test AND o.paid_at IS NOT NULL
		AND (?1 = 0 OR o.event_id = ?1)
		AND (?2::timestamptz IS NULL OR o.paid_at >= ?2) AND (?3::timestamptz IS NULL OR o.paid_at < ?3)
	GROUP BY o.id
	UNION ALL
	SELECT o.id, o.event_id, o.schedule_slot_id, o.api_key_id, o.channel,
		(r.completed_at AT TIME ZONE ?4)::date,
		0, rt.n, 0, 0, 0, 0, 0,
		rt.face, r.amount - rt.face, r.amount,
		r.amount - rt.face + CASE WHEN o.status = 'refunded' AND NOT EXISTS (
			SELECT 1 FROM refunds r2 WHERE r2.order_id = o.id AND r2.id <> r.id
				AND (r2.status <> 'completed' OR (r2.completed_at, r2.id) > (r.completed_at, r.id)))
			THEN o.service_fee - (o.amount - o.total) ELSE 0 END
	FROM refunds r JOIN orders o ON o.id = r.order_id
	CROSS JOIN LATERAL (
		SELECT count(*) AS n, coalesce(sum(i.price), 0)::bigint AS face
		FROM refund_tickets x JOIN tickets t ON t.id = x.ticket_id
			JOIN order_items i ON i.order_id = t.order_id AND i.position = t.position
		WHERE x.refund_id = r.id) rt
	WHERE o.company_id = ?0 AND NOT o.is_test AND r.status = 'completed'
		AND (?1 = 0 OR o.event_id = ?1)
		AND (?2::timestamptz IS NULL OR r.completed_at >= ?2) AND (?3::timestamptz IS NULL OR r.completed_at < ?3)`

// sums are the report's figures over a group of facts.
const sums = `
	coalesce(sum(f.tickets_sold), 0)::bigint AS tickets_sold,
	coalesce(sum(f.tickets_refunded), 0)::bigint AS tickets_refunded,
	coalesce(sum(f.tickets_sold) - sum(f.tickets_refunded), 0)::bigint AS tickets_net,
	coalesce(sum(f.orders), 0)::bigint AS orders,
	coalesce(sum(f.face_value), 0)::bigint AS face_value,
	coalesce(sum(f.service_fees), 0)::bigint AS service_fees,
	coalesce(sum(f.fees_in_price), 0)::bigint AS fees_in_price,
	coalesce(sum(f.gross), 0)::bigint AS gross,
	coalesce(sum(f.face_value_refunded), 0)::bigint AS face_value_refunded,
	coalesce(sum(f.fee_refunded), 0)::bigint AS fee_refunded,
	coalesce(sum(f.refunds), 0)::bigint AS refunds,
	coalesce(sum(f.fees_returned), 0)::bigint AS fees_returned,
	coalesce(sum(f.service_fees) - sum(f.fees_returned), 0)::bigint AS fees_kept,
	coalesce(sum(f.gross) - sum(f.refunds) - (sum(f.service_fees) - sum(f.fees_returned)), 0)::bigint AS net_to_organizer`

// MixedCurrenciesError: the report would sum events of several currencies
// (the company's, or of no one event), which is no sum. A report of one
// event is in that event's currency.
type MixedCurrenciesError struct{ Currencies []string }

func (e *MixedCurrenciesError) Error() string {
	return fmt.Sprintf("the events are in several currencies (%s): a report sums one, choose an event",
		strings.Join(e.Currencies, ", "))
}

// GetSalesReport computes the report in SQL, in one snapshot: the totals and
// the rows per event, session, channel and day in one pass over the facts
// (grouping sets), the categories in another.
func GetSalesReport(ctx context.Context, db *bun.DB, f ReportFilter) (*SalesReport, error) {
	tz := cmp.Or(f.TimeZone, "UTC")
	rep := &SalesReport{EventID: f.EventID, TimeZone: tz, Events: []EventSales{}, Categories: []CategorySales{},
		Channels: []ChannelSales{}, Days: []DaySales{}}
	var from, to *time.Time
	if !f.From.IsZero() {
		from, rep.From = &f.From, &f.From
	}
	if !f.To.IsZero() {
		to, rep.To = &f.To, &f.To
	}
	args := []any{f.CompanyID, f.EventID, from, to, tz}
	err := db.RunInTx(ctx, &sqlRepeatableRead, func(ctx context.Context, tx bun.Tx) error {
		var currencies []string
		if err := tx.NewRaw("SELECT DISTINCT currency FROM events WHERE company_id = ? AND (? = 0 OR id = ?) ORDER BY 1",
			f.CompanyID, f.EventID, f.EventID).Scan(ctx, &currencies); err != nil {
			return fmt.Errorf("currency: %w", err)
		}
		switch len(currencies) {
		case 0:
			rep.Currency = DefaultCurrency
		case 1:
			rep.Currency = currencies[0]
		default: // one sum of two currencies would be no sum at all
			return &MixedCurrenciesError{Currencies: currencies}
		}
		var rows []struct {
			Grouping        int             `bun:"grouping"`
			EventID         *int64          `bun:"event_id"`
			Title           *string         `bun:"title"`
			StartsAt        *time.Time      `bun:"starts_at"`
			TimeZone        *string         `bun:"timezone"`
			Currency        *string         `bun:"currency"`
			SessionID       *int64          `bun:"session_id"`
			SessionRef      *string         `bun:"session_ref"`
			SessionStartsAt *time.Time      `bun:"session_starts_at"`
			Channel         *states.Channel `bun:"channel"`
			APIKeyID        *int64          `bun:"api_key_id"`
			KeyName         *string         `bun:"key_name"`
			KeyPrefix       *string         `bun:"key_prefix"`
			ApplicationID   *int64          `bun:"application_id"`
			ApplicationName *string         `bun:"application_name"`
			Day             *string         `bun:"day"`
			LocalDay        *time.Time      `bun:"local_day"` // the day as a date, for the order
			SalesFigures
		}
		// grouping() has a bit set for each of (event, session, channel,
		// day) the row is not grouped by: 0b1111 the total, 0b0111 an
		// event, 0b0011 a session of one, 0b1101 a channel, 0b1110 a day.
		err := tx.NewRaw(`
			SELECT g.*, to_char(g.local_day, 'YYYY-MM-DD') AS day, e.title, e.starts_at, v.timezone, e.currency,
				s.ref AS session_ref, s.starts_at AS session_starts_at,
				k.name AS key_name, k.key_prefix, a.id AS application_id, a.name AS application_name
			FROM (SELECT grouping(f.event_id, f.session_id, f.channel, f.day) AS grouping, f.event_id, f.session_id,
					f.channel, f.api_key_id, f.day AS local_day, `+sums+`
				FROM (`+salesFactsSQL+`) f
				GROUP BY GROUPING SETS ((), (f.event_id), (f.event_id, f.session_id), (f.channel, f.api_key_id), (f.day))) g
			LEFT JOIN events e ON e.id = g.event_id LEFT JOIN venues v ON v.id = e.venue_id
			LEFT JOIN sessions s ON s.id = g.session_id
			LEFT JOIN api_keys k ON k.id = g.api_key_id LEFT JOIN applications a ON a.id = k.application_id
			ORDER BY e.starts_at, g.event_id, s.starts_at, s.id, g.gross DESC, g.api_key_id, g.channel, g.local_day`, args...).Scan(ctx, &rows)
		if err != nil {
			return fmt.Errorf("figures: %w", err)
		}
		sessions := map[int64][]SessionSales{}
		noSession := map[int64]SalesFigures{} // orders of an event that name no session
		for _, r := range rows {
			switch r.Grouping {
			case 0b1111:
				rep.Total = r.SalesFigures
			case 0b0111:
				rep.Events = append(rep.Events, EventSales{EventID: *r.EventID, Title: *r.Title, StartsAt: inZone(*r.StartsAt, *r.TimeZone),
					TimeZone: *r.TimeZone, Currency: *r.Currency, SalesFigures: r.SalesFigures})
			case 0b0011:
				if r.SessionID == nil { // orders of an event without sessions, or made before it had them
					noSession[*r.EventID] = r.SalesFigures
					continue
				}
				sessions[*r.EventID] = append(sessions[*r.EventID], SessionSales{SessionID: *r.SessionID, Ref: *r.SessionRef,
					StartsAt: inZone(*r.SessionStartsAt, *r.TimeZone), SalesFigures: r.SalesFigures})
			case 0b1101:
				rep.Channels = append(rep.Channels, ChannelSales{Channel: *r.Channel, APIKeyID: *r.APIKeyID, KeyName: *r.KeyName,
					KeyPrefix: *r.KeyPrefix, ApplicationID: *r.ApplicationID, ApplicationName: *r.ApplicationName, SalesFigures: r.SalesFigures})
			case 0b1110:
				rep.Days = append(rep.Days, DaySales{Day: *r.Day, SalesFigures: r.SalesFigures})
			}
		}
		for i := range rep.Events {
			id := rep.Events[i].EventID
			// A scheduled event's rows add up to it: its orders without a
			// session get a row of their own (session id 0), last.
			if fig, ok := noSession[id]; ok && len(sessions[id]) > 0 {
				sessions[id] = append(sessions[id], SessionSales{SalesFigures: fig})
			}
			rep.Events[i].Sessions = sessions[id]
		}
		if err := tx.NewRaw(categorySQL, args...).Scan(ctx, &rep.Categories); err != nil {
			return fmt.Errorf("by category: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sales report of company %d: %w", f.CompanyID, err)
	}
	slices.SortStableFunc(rep.Days, func(a, b DaySales) int { return strings.Compare(a.Day, b.Day) })
	return rep, nil
}

// inZone is t in the IANA zone tz (t as it is if the zone cannot be
// loaded: the instant stays right, only its offset is UTC's).
func inZone(t time.Time, tz string) time.Time {
	if loc, err := time.LoadLocation(tz); err == nil {
		return t.In(loc)
	}
	return t
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
	// Timezone is the venue's (IANA name): the event's times show in it.
	Timezone string `bun:"timezone" json:"timezone"`
	Sold     int64  `bun:"sold" json:"sold"`
	Held     int64  `bun:"held" json:"held"`
	Free     int64  `bun:"free" json:"free"`
}

// ListCompanyInventory lists the company's events with their seat counts. A
// hold past its expires_at counts as free, as every read treats it.
func ListCompanyInventory(ctx context.Context, db bun.IDB, companyID int64, now time.Time) ([]EventInventory, error) {
	var out []EventInventory
	err := db.NewRaw(`
		SELECT e.id, e.ref, e.title, e.status, e.starts_at, v.name AS venue, v.timezone,
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

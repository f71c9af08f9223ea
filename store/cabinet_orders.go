package store

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/ticketsales/ticketsales/internal/states"
)

// OrderSearch is what the cabinet's one search box looks for; every field
// set is one kind of match, and an order matching any of them is found.
// Each is an index lookup within the company (migrations
// 20261128000027_cabinet_orders_search, 20261207000047_order_reference).
type OrderSearch struct {
	OrderID      int64  // the order's id
	Barcode      string // a ticket's barcode (13 digits)
	TicketNumber string // a ticket's number, T-000123-01
	PaymentID    string // the payment's id: external, or the gateway's
	Reference    string // the partner's reference of the order, exactly
	EmailPrefix  string // lower case; the buyer's e-mail starts with it
	NamePrefix   string // lower case; "first last" or "last first" starts with it
}

// Empty reports whether the search looks for nothing (no search).
func (s OrderSearch) Empty() bool { return s == OrderSearch{} }

// Exact is the search's exact keys alone (an order id, a barcode, a
// ticket's number, a payment id, a reference), without the prefixes of
// names and e-mails: what names one order, which the cabinet opens
// directly (a reference may name several: the list shows them).
func (s OrderSearch) Exact() OrderSearch {
	return OrderSearch{OrderID: s.OrderID, Barcode: s.Barcode, TicketNumber: s.TicketNumber, PaymentID: s.PaymentID,
		Reference: s.Reference}
}

// paymentIDCases are the spellings of a payment id the search looks up:
// as typed, in lower and in upper case. Payment ids are kept as the
// gateway or partner wrote them, nearly always in one case, and people
// type them in another; each spelling is a lookup of the index on
// (company_id, payment_id), where lower(payment_id) would need an index
// of its own (a mixed-case id is found as typed).
func paymentIDCases(id string) []string {
	out := []string{id}
	for _, v := range []string{strings.ToLower(id), strings.ToUpper(id)} {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// MinSearch is the shortest text searched: one letter of a name would
// match a good part of any company's buyers.
const MinSearch = 2

var (
	ticketNumberRE = regexp.MustCompile(`^[Tt]-[0-9]+-[0-9]+$`)
	barcodeRE      = regexp.MustCompile(`^[0-9]{13}$`)
	digitsRE       = regexp.MustCompile(`^[0-9]+$`)
)

// ParseOrderSearch decides what a search text can be: digits are an order
// id, a barcode (13 digits) or a payment id; T-…-… a ticket's number; text
// with @ an e-mail (its beginning, so a whole address matches exactly);
// other text a name's or an e-mail's beginning, or a payment id. Any text
// is also a partner's reference, as typed (the partner's own ids look like
// anything).
func ParseOrderSearch(q string) OrderSearch {
	// What no order holds (a NUL, other control characters, broken UTF-8)
	// is dropped: Postgres refuses a NUL and broken UTF-8 outright.
	q = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(q, ""))
	q = strings.Join(strings.Fields(q), " ")
	var s OrderSearch
	if len([]rune(q)) >= MinSearch {
		s.Reference = q
	}
	switch {
	case len([]rune(q)) < MinSearch:
		return s
	case digitsRE.MatchString(q):
		if id, err := strconv.ParseInt(q, 10, 64); err == nil && id > 0 {
			s.OrderID = id
		}
		if barcodeRE.MatchString(q) {
			s.Barcode = q
		}
		s.PaymentID = q
	case ticketNumberRE.MatchString(q):
		s.TicketNumber = strings.ToUpper(q)
	case strings.Contains(q, "@"):
		s.EmailPrefix = strings.ToLower(q)
		s.PaymentID = q
	default:
		s.PaymentID = q
		s.NamePrefix = strings.ToLower(q)
		if !strings.Contains(q, " ") {
			s.EmailPrefix = s.NamePrefix
		}
	}
	return s
}

// likePrefix is a LIKE pattern matching text that starts with p.
func likePrefix(p string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(p) + "%"
}

// OrderCursor is a place in the order list (newest first): the order at
// the edge of a page.
type OrderCursor struct {
	CreatedAt time.Time
	ID        int64
}

// String is the cursor as a URL carries it.
func (c OrderCursor) String() string {
	return strconv.FormatInt(c.CreatedAt.UnixMicro(), 10) + "_" + strconv.FormatInt(c.ID, 10)
}

// ParseOrderCursor reads a cursor String made.
func ParseOrderCursor(s string) (OrderCursor, bool) {
	a, b, ok := strings.Cut(s, "_")
	us, err1 := strconv.ParseInt(a, 10, 64)
	id, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || id <= 0 {
		return OrderCursor{}, false
	}
	return OrderCursor{CreatedAt: time.UnixMicro(us).UTC(), ID: id}, true
}

// CabinetOrderFilter selects a company's orders of one environment for
// the cabinet's list.
type CabinetOrderFilter struct {
	CompanyID int64
	IsTest    bool
	Search    OrderSearch
	EventID   int64
	Status    states.OrderStatus
	Channel   states.Channel // "": any
	APIKeyID  int64          // 0: any key
	// From and To are days, both included, in Zone (the company's time
	// zone, as the list shows its times; nil: UTC); zero: open. ByPaid
	// makes them the days the orders were paid (as the sales report counts
	// them), else the days they were created.
	From, To time.Time
	Zone     *time.Location
	ByPaid   bool
	// After lists the orders older than it; Before the ones newer (the
	// page before), both newest first.
	After, Before *OrderCursor
	Limit         int
}

// CabinetOrderRow is one order of the list.
type CabinetOrderRow struct {
	ID                int64                `bun:"id"`
	IsTest            bool                 `bun:"is_test"`
	EventID           int64                `bun:"event_id"`
	EventTitle        string               `bun:"event_title"`
	TimeZone          string               `bun:"timezone"`
	Status            states.OrderStatus   `bun:"status"`
	Channel           states.Channel       `bun:"channel"`
	APIKeyID          int64                `bun:"api_key_id"`
	KeyName           string               `bun:"key_name"`
	KeyPrefix         string               `bun:"key_prefix"`
	Payment           states.PaymentMethod `bun:"payment"`
	PaymentID         *string              `bun:"payment_id"`
	Currency          string               `bun:"currency"`
	Amount            int64                `bun:"amount"`
	Tickets           int                  `bun:"tickets"`
	CustomerEmail     string               `bun:"customer_email"`
	CustomerFirstName string               `bun:"customer_first_name"`
	CustomerLastName  string               `bun:"customer_last_name"`
	CreatedAt         time.Time            `bun:"created_at"`
	PaidAt            *time.Time           `bun:"paid_at"`
}

// MaxOrderCount bounds the count of a list's matches: past it the cabinet
// says "more than", and the count never reads a whole large table.
const MaxOrderCount = 1000

// midnight is the start of day's date plus days in the filter's zone.
func (f CabinetOrderFilter) midnight(day time.Time, days int) time.Time {
	loc := f.Zone
	if loc == nil {
		loc = time.UTC
	}
	y, m, d := day.Date()
	return time.Date(y, m, d+days, 0, 0, 0, 0, loc)
}

// where is the filter as SQL over orders o joined to venues v, and its
// arguments; with the cursor or not (the count has none).
func (f CabinetOrderFilter) where(cursor bool) (string, []any) {
	w := []string{"o.company_id = ?", "o.is_test = ?"}
	args := []any{f.CompanyID, f.IsTest}
	if !f.Search.Empty() {
		// One condition of OR'ed index conditions on orders: a narrow match
		// is a BitmapOr of the indexes; a broad one (a common name's
		// beginning) may instead walk the newest orders until the page is
		// full. A ticket's barcode or number becomes its order's id first
		// (an InitPlan, once).
		var or []string
		s := f.Search
		if s.OrderID != 0 {
			or, args = append(or, "o.id = ?"), append(args, s.OrderID)
		}
		if s.Barcode != "" {
			or, args = append(or, "o.id = ANY (ARRAY(SELECT order_id FROM tickets WHERE barcode = ?))"), append(args, s.Barcode)
		}
		if s.TicketNumber != "" {
			or, args = append(or, "o.id = ANY (ARRAY(SELECT order_id FROM tickets WHERE number = ?))"), append(args, s.TicketNumber)
		}
		if s.PaymentID != "" {
			or, args = append(or, "o.payment_id = ANY (?)"), append(args, pgdialect.Array(paymentIDCases(s.PaymentID)))
		}
		if s.Reference != "" {
			or, args = append(or, "o.reference = ?"), append(args, s.Reference)
		}
		// The expressions are the indexes': LIKE with a constant prefix is a
		// range scan of them.
		if s.EmailPrefix != "" {
			or, args = append(or, "lower(o.customer_email) LIKE ?"), append(args, likePrefix(s.EmailPrefix))
		}
		if s.NamePrefix != "" {
			or = append(or, "lower(o.customer_first_name || ' ' || o.customer_last_name) LIKE ?",
				"lower(o.customer_last_name || ' ' || o.customer_first_name) LIKE ?")
			args = append(args, likePrefix(s.NamePrefix), likePrefix(s.NamePrefix))
		}
		w = append(w, "("+strings.Join(or, " OR ")+")")
	}
	if f.EventID != 0 {
		w, args = append(w, "o.event_id = ?"), append(args, f.EventID)
	}
	if f.Status != "" {
		w, args = append(w, "o.status = ?"), append(args, f.Status)
	}
	if f.Channel != "" {
		w, args = append(w, "o.channel = ?"), append(args, f.Channel)
	}
	if f.APIKeyID != 0 {
		w, args = append(w, "o.api_key_id = ?"), append(args, f.APIKeyID)
	}
	// A day is from its midnight in the zone to the next (a range of the
	// column's index), as the report's days are.
	col := "o.created_at"
	if f.ByPaid {
		col = "o.paid_at"
	}
	if !f.From.IsZero() {
		w, args = append(w, col+" >= ?"), append(args, f.midnight(f.From, 0))
	}
	if !f.To.IsZero() {
		w, args = append(w, col+" < ?"), append(args, f.midnight(f.To, 1))
	}
	if cursor && f.After != nil {
		w = append(w, "o.created_at <= ?", "(o.created_at < ? OR o.id < ?)")
		args = append(args, f.After.CreatedAt, f.After.CreatedAt, f.After.ID)
	}
	if cursor && f.Before != nil {
		w = append(w, "o.created_at >= ?", "(o.created_at > ? OR o.id > ?)")
		args = append(args, f.Before.CreatedAt, f.Before.CreatedAt, f.Before.ID)
	}
	return strings.Join(w, " AND "), args
}

// ListCabinetOrders returns a page of the company's orders matching f,
// newest first, and whether there are more beyond it (older ones; with
// Before, newer ones).
func ListCabinetOrders(ctx context.Context, db bun.IDB, f CabinetOrderFilter) ([]CabinetOrderRow, bool, error) {
	where, args := f.where(true)
	order := "o.created_at DESC, o.id DESC"
	if f.Before != nil {
		order = "o.created_at, o.id"
	}
	var rows []CabinetOrderRow
	err := db.NewRaw(`
		SELECT o.id, o.is_test, o.event_id, e.title AS event_title, v.timezone, o.status, o.channel, o.api_key_id,
			coalesce(k.name, '') AS key_name, coalesce(k.key_prefix, '') AS key_prefix, o.payment, o.payment_id,
			o.currency, o.amount, (SELECT count(*) FROM order_items i WHERE i.order_id = o.id) AS tickets,
			o.customer_email, o.customer_first_name, o.customer_last_name, o.created_at, o.paid_at
		FROM orders o JOIN events e ON e.id = o.event_id JOIN venues v ON v.id = e.venue_id
		LEFT JOIN api_keys k ON k.id = o.api_key_id
		WHERE `+where+`
		ORDER BY `+order+` LIMIT ?`, append(args, f.Limit+1)...).Scan(ctx, &rows)
	if err != nil {
		return nil, false, fmt.Errorf("orders of company %d: %w", f.CompanyID, err)
	}
	more := len(rows) > f.Limit
	rows = rows[:min(len(rows), f.Limit)]
	if f.Before != nil {
		for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
			rows[i], rows[j] = rows[j], rows[i]
		}
	}
	return rows, more, nil
}

// CountCabinetOrders counts the orders matching f (its cursor aside), up
// to MaxOrderCount + 1.
func CountCabinetOrders(ctx context.Context, db bun.IDB, f CabinetOrderFilter) (int, error) {
	where, args := f.where(false)
	var n int
	err := db.NewRaw(`SELECT count(*) FROM (SELECT 1 FROM orders o JOIN events e ON e.id = o.event_id JOIN venues v ON v.id = e.venue_id
		WHERE `+where+` LIMIT ?) m`, append(args, MaxOrderCount+1)...).Scan(ctx, &n)
	if err != nil {
		return 0, fmt.Errorf("count orders of company %d: %w", f.CompanyID, err)
	}
	return n, nil
}

// CabinetOrder is everything the cabinet's order page shows, read in one
// snapshot.
type CabinetOrder struct {
	Order     *Order
	Event     CabinetOrderEvent
	Key       CabinetOrderKey
	Positions []CabinetOrderPosition
	Refunds   []CabinetOrderRefund
	CheckIns  []CabinetOrderCheckIn
	// Payments are what gateways reported for the order (gateway orders;
	// an external payment is the order's PaymentID alone).
	Payments []Payment
}

// CabinetOrderEvent is the order's event, venue and session.
type CabinetOrderEvent struct {
	Title           string     `bun:"title"`
	StartsAt        time.Time  `bun:"starts_at"`
	VenueName       string     `bun:"venue_name"`
	TimeZone        string     `bun:"timezone"`
	SessionRef      *string    `bun:"session_ref"`
	SessionStartsAt *time.Time `bun:"session_starts_at"`
}

// CabinetOrderKey is the key (and application) that sold the order.
type CabinetOrderKey struct {
	Name            string `bun:"name"`
	Prefix          string `bun:"key_prefix"`
	ApplicationName string `bun:"application_name"`
	Environment     string `bun:"environment"`
}

// CabinetOrderPosition is one position of the order and its ticket, once
// issued.
type CabinetOrderPosition struct {
	Position      int                  `bun:"position"`
	Category      string               `bun:"category"`
	SeatID        *string              `bun:"seat_id"`
	SeatLabel     *string              `bun:"label"`
	Price         int64                `bun:"price"`
	TicketID      *int64               `bun:"ticket_id"`
	Number        *string              `bun:"number"`
	Barcode       *string              `bun:"barcode"`
	Status        *states.TicketStatus `bun:"ticket_status"`
	IssuedAt      *time.Time           `bun:"issued_at"`
	CheckedInAt   *time.Time           `bun:"checked_in_at"`
	CheckedInGate *string              `bun:"checked_in_gate"`
	Inside        bool                 `bun:"inside"`
	RefundID      *string              `bun:"refund_id"`
}

// CabinetOrderRefund is a refund of the order and how many tickets it voids.
type CabinetOrderRefund struct {
	ID              string               `bun:"id"`
	Amount          int64                `bun:"amount"`
	Reason          string               `bun:"reason"`
	MoneyReturnedBy states.PaymentMethod `bun:"money_returned_by"`
	Status          states.RefundStatus  `bun:"status"`
	CreatedAt       time.Time            `bun:"created_at"`
	CompletedAt     *time.Time           `bun:"completed_at"`
	FailedAt        *time.Time           `bun:"failed_at"`
	Tickets         int                  `bun:"tickets"`
}

// CabinetOrderCheckIn is a scan of one of the order's tickets at a door.
type CabinetOrderCheckIn struct {
	TicketNumber string               `bun:"number"`
	Gate         string               `bun:"gate"`
	DeviceID     string               `bun:"device_id"`
	Direction    states.ScanDirection `bun:"direction"`
	Outcome      states.ScanOutcome   `bun:"outcome"`
	ScannedAt    time.Time            `bun:"scanned_at"`
	ReceivedAt   time.Time            `bun:"received_at"`
	Offline      bool                 `bun:"offline"`
}

// GetCabinetOrder reads a company's order of one environment with its
// event, positions and tickets, refunds, door scans and payments; another
// company's order, or one of the other environment, is errs.NotFound.
func GetCabinetOrder(ctx context.Context, db *bun.DB, companyID int64, isTest bool, orderID int64) (*CabinetOrder, error) {
	out := &CabinetOrder{Order: new(Order)}
	err := db.RunInTx(ctx, &sqlRepeatableRead, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewSelect().Model(out.Order).Where("id = ? AND company_id = ? AND is_test = ?", orderID, companyID, isTest).
			Scan(ctx); err != nil {
			return notFound(err, fmt.Sprintf("order %d", orderID))
		}
		if err := tx.NewRaw(`SELECT e.title, e.starts_at, v.name AS venue_name, v.timezone,
				s.ref AS session_ref, s.starts_at AS session_starts_at
			FROM events e JOIN venues v ON v.id = e.venue_id LEFT JOIN sessions s ON s.id = ?
			WHERE e.id = ?`, out.Order.ScheduleSlotID, out.Order.EventID).Scan(ctx, &out.Event); err != nil {
			return fmt.Errorf("event: %w", err)
		}
		if err := tx.NewRaw(`SELECT k.name, k.key_prefix, a.name AS application_name, a.environment
			FROM api_keys k JOIN applications a ON a.id = k.application_id WHERE k.id = ?`, out.Order.APIKeyID).
			Scan(ctx, &out.Key); err != nil {
			return fmt.Errorf("key: %w", err)
		}
		if err := tx.NewRaw(`SELECT i.position, c.name AS category, i.seat_id, es.label, i.price,
				t.id AS ticket_id, t.number, t.barcode, t.status AS ticket_status, t.created_at AS issued_at,
				t.checked_in_at, t.checked_in_gate, coalesce(t.inside, false) AS inside, rt.refund_id
			FROM order_items i
			JOIN ticket_categories c ON c.id = i.category_id
			LEFT JOIN event_seats es ON es.event_id = ? AND es.seat_id = i.seat_id
			LEFT JOIN tickets t ON t.order_id = i.order_id AND t.position = i.position
			LEFT JOIN refund_tickets rt ON rt.ticket_id = t.id
			WHERE i.order_id = ? ORDER BY i.position`, out.Order.EventID, orderID).Scan(ctx, &out.Positions); err != nil {
			return fmt.Errorf("positions: %w", err)
		}
		if err := tx.NewRaw(`SELECT r.id, r.amount, r.reason, r.money_returned_by, r.status, r.created_at, r.completed_at, r.failed_at,
				(SELECT count(*) FROM refund_tickets rt WHERE rt.refund_id = r.id) AS tickets
			FROM refunds r WHERE r.order_id = ? ORDER BY r.created_at, r.id`, orderID).Scan(ctx, &out.Refunds); err != nil {
			return fmt.Errorf("refunds: %w", err)
		}
		if err := tx.NewRaw(`SELECT t.number, c.gate, c.device_id, c.direction, c.outcome, c.scanned_at, c.received_at, c.offline
			FROM tickets t JOIN check_ins c ON c.ticket_id = t.id
			WHERE t.order_id = ? ORDER BY c.received_at, c.id`, orderID).Scan(ctx, &out.CheckIns); err != nil {
			return fmt.Errorf("check-ins: %w", err)
		}
		if err := tx.NewSelect().Model(&out.Payments).Where("order_id = ?", orderID).Order("received_at").Scan(ctx); err != nil {
			return fmt.Errorf("payments: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cabinet order %d of company %d: %w", orderID, companyID, err)
	}
	return out, nil
}

// OrderEventOption is one of the company's events, as the order list's
// filter offers it.
type OrderEventOption struct {
	ID       int64     `bun:"id"`
	Title    string    `bun:"title"`
	StartsAt time.Time `bun:"starts_at"`
	TimeZone string    `bun:"timezone"`
}

// ListOrderEventOptions lists the company's events, soonest first.
func ListOrderEventOptions(ctx context.Context, db bun.IDB, companyID int64) ([]OrderEventOption, error) {
	var out []OrderEventOption
	if err := db.NewRaw(`SELECT e.id, e.title, e.starts_at, v.timezone FROM events e JOIN venues v ON v.id = e.venue_id
		WHERE e.company_id = ? ORDER BY e.starts_at, e.id`, companyID).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("events of company %d: %w", companyID, err)
	}
	return out, nil
}

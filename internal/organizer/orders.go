package organizer

// What the cabinet shows of a company's orders: the list a search and
// filters select, and an order's page (buyer, tickets, money and its
// timeline). An event's times (its start, its session, the scans at its
// door) are in the event's time zone; the rest (created, paid, refunds, the
// timeline, notes) in the company's, which the caller gives.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// The store's types the cabinet uses as they are.
type (
	Search      = store.OrderSearch
	Cursor      = store.OrderCursor
	Filter      = store.CabinetOrderFilter
	EventOption = store.OrderEventOption
)

// ParseSearch decides what the search box's text is looked up as (see
// store.ParseOrderSearch); ParseCursor reads a page's cursor.
var (
	ParseSearch = store.ParseOrderSearch
	ParseCursor = store.ParseOrderCursor
)

// MaxCount bounds the matches counted (past it: "more than").
const MaxCount = store.MaxOrderCount

// When is a moment as the cabinet shows it, in the time zone it was put in
// (zero: not happened).
type When struct{ t time.Time }

// At is t in loc.
func At(t time.Time, loc *time.Location) When { return When{t.In(loc)} }

func atp(t *time.Time, loc *time.Location) When {
	if t == nil {
		return When{}
	}
	return At(*t, loc)
}

// IsZero reports whether nothing happened.
func (w When) IsZero() bool { return w.t.IsZero() }

// String is the local time with the zone's abbreviation (or offset).
func (w When) String() string {
	if w.t.IsZero() {
		return "—"
	}
	return w.t.Format("2006-01-02 15:04:05 MST")
}

// ISO is the moment for <time datetime>.
func (w When) ISO() string { return w.t.Format(time.RFC3339) }

// Time is the moment itself.
func (w When) Time() time.Time { return w.t }

// zone is the venue's time zone; a name Go does not know shows UTC, named
// so.
func zone(name string) (*time.Location, string) {
	if loc, err := time.LoadLocation(name); err == nil && name != "" {
		return loc, name
	}
	return time.UTC, "UTC"
}

// Row is one order of the list.
type Row struct {
	ID       int64
	IsTest   bool
	Created  When
	Paid     When
	Zone     string
	Event    string
	Buyer    string
	Email    string
	Status   states.OrderStatus
	Channel  string
	Amount   int64
	Currency string
	Tickets  int
}

// List is a page of the order list.
type List struct {
	Rows []Row
	// Count is how many orders match (at most MaxCount + 1).
	Count int
	// Older and Newer are the cursors of the pages beside this one (nil:
	// none).
	Older, Newer *Cursor
}

// ExactOrder is the one order f's exact keys (an order id, a ticket's
// barcode or number, a payment id; not a name's or an e-mail's beginning)
// find under f's other filters: ok is false when none or several match.
func ExactOrder(ctx context.Context, db bun.IDB, f Filter) (id int64, ok bool, err error) {
	f.Search = f.Search.Exact()
	if f.Search.Empty() {
		return 0, false, nil
	}
	f.Limit, f.After, f.Before = 2, nil, nil
	rows, _, err := store.ListCabinetOrders(ctx, db, f)
	if err != nil || len(rows) != 1 {
		return 0, false, err
	}
	return rows[0].ID, true, nil
}

// ListOrders reads a page of the company's orders f selects, newest first,
// and how many match. f.Limit is the page's length; f.Zone the company's
// time zone, which the rows' times and the filter's days are in.
func ListOrders(ctx context.Context, db bun.IDB, f Filter) (*List, error) {
	rows, more, err := store.ListCabinetOrders(ctx, db, f)
	if err != nil {
		return nil, err
	}
	n, err := store.CountCabinetOrders(ctx, db, f)
	if err != nil {
		return nil, err
	}
	l := &List{Count: n}
	for _, r := range rows {
		loc := f.Zone
		if loc == nil {
			loc = time.UTC
		}
		l.Rows = append(l.Rows, Row{ID: r.ID, IsTest: r.IsTest, Created: At(r.CreatedAt, loc), Paid: atp(r.PaidAt, loc), Zone: loc.String(), Event: r.EventTitle,
			Buyer: strings.TrimSpace(r.CustomerFirstName + " " + r.CustomerLastName), Email: r.CustomerEmail, Status: r.Status,
			Channel: channelLabel(r.Channel, r.KeyPrefix, r.KeyName), Amount: r.Amount, Currency: r.Currency, Tickets: r.Tickets})
	}
	if len(rows) > 0 {
		first, last := rows[0], rows[len(rows)-1]
		// Going back (Before), the page has newer ones beyond it when more,
		// and older ones always (the page it came from); going forward, the
		// other way round.
		if f.Before == nil && more || f.Before != nil {
			l.Older = &Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
		}
		if f.Before != nil && more || f.After != nil {
			l.Newer = &Cursor{CreatedAt: first.CreatedAt, ID: first.ID}
		}
	}
	return l, nil
}

// EventOptions lists the company's events for the list's filter.
func EventOptions(ctx context.Context, db bun.IDB, companyID int64) ([]EventOption, error) {
	return store.ListOrderEventOptions(ctx, db, companyID)
}

// ChannelLabel is the route and key an order was sold through, as the
// order list shows it ("API · ab12… Box office").
func ChannelLabel(ch states.Channel, prefix, name string) string {
	return channelLabel(ch, prefix, name)
}

func channelLabel(ch states.Channel, prefix, name string) string {
	kind := "API"
	if ch == states.ChannelAggregator {
		kind = "Aggregator"
	}
	key := strings.TrimSpace(prefix + "… " + name)
	if prefix == "" {
		key = strings.TrimSpace(name)
	}
	return kind + " · " + key
}

// Order is an order's page.
type Order struct {
	ID     int64
	IsTest bool
	Status states.OrderStatus
	// Zone is the company's time zone: the page's times are in it, but
	// for the event's (EventZone): its start, session and door scans.
	Zone      string
	EventZone string
	Buyer     Buyer
	Event     Event
	Channel   string
	Tickets   []Ticket
	Money     Money
	Refunds   []Refund
	CheckIns  []CheckIn
	Timeline  []Entry
	// Notes are the back office's notes on it, newest first (notes.go).
	Notes     []Note
	Created   When
	Paid      When
	Cancelled string // why, when cancelled
	// Reference and Metadata are the partner's ("" and none when it gave
	// none), the metadata in key order.
	Reference string
	Metadata  []MetaPair
	// WorkflowID is the order's workflow in Temporal.
	WorkflowID string
}

// MetaPair is one pair of an order's metadata.
type MetaPair struct{ Key, Value string }

// Buyer is who the order is for.
type Buyer struct{ Name, Email, Phone string }

// Event is the order's event, venue and session.
type Event struct {
	ID      int64
	Title   string
	Venue   string
	Starts  When
	Session string // a scheduled event's session: its ref and start
}

// Ticket is a position of the order and its ticket.
type Ticket struct {
	Position  int
	Category  string
	Seat      string // the seat's label, "" general admission
	Price     int64
	Number    string // "" not issued (unpaid, cancelled)
	Barcode   string
	State     string // not issued, active, checked in, inside, refunded
	CheckedIn When
	Gate      string
}

// Money is what the order costs and what moved.
type Money struct {
	Currency string
	Total    int64 // Σ ticket prices (face value)
	Fee      int64 // the service fee
	Amount   int64 // what the buyer pays
	Paid     int64
	Refunded int64 // completed refunds
	Pending  int64 // refunds not completed yet
	// How is "gateway" (Gateway names which) or "external" (a partner took
	// the payment; PaymentID is theirs).
	How       states.PaymentMethod
	Gateway   string
	PaymentID string
}

// Refund is one refund of the order.
type Refund struct {
	ID        string
	Amount    int64
	Tickets   int
	Reason    string
	Status    states.RefundStatus
	By        states.PaymentMethod
	Requested When
	Completed When
	// WorkflowID is the refund's workflow in Temporal.
	WorkflowID string
}

// CheckIn is a scan of one of the order's tickets.
type CheckIn struct {
	Ticket    string
	Gate      string
	Device    string
	Direction states.ScanDirection
	Outcome   states.ScanOutcome
	At        When // the device's time of the scan
	Offline   bool
}

// Entry is one line of the order's timeline.
type Entry struct {
	At     When
	Kind   string // created, payment, paid, issued, emailed, cancelled, refund, checkin
	What   string
	Detail string
}

// GetOrder reads the company's order of one environment and shapes its
// page; another company's order, or one of the other environment, is
// errs.NotFound. company is the company's time zone.
func GetOrder(ctx context.Context, db *bun.DB, companyID int64, isTest bool, orderID int64, company *time.Location) (*Order, error) {
	co, err := store.GetCabinetOrder(ctx, db, companyID, isTest, orderID)
	if err != nil {
		return nil, err
	}
	if company == nil {
		company = time.UTC
	}
	v := shape(co, company)
	// What the cabinet did to it, and who (actions.go).
	acts, err := store.ListCabinetActions(ctx, db, companyID, orderID)
	if err != nil {
		return nil, err
	}
	withActions(v, acts, company)
	if v.Notes, err = Notes(ctx, db, companyID, orderID, company); err != nil {
		return nil, err
	}
	return v, nil
}

var outcomeText = map[states.ScanOutcome]string{
	states.ScanAdmitted:         "admitted",
	states.ScanAlreadyCheckedIn: "refused: already checked in",
	states.ScanVoid:             "refused: void (refunded or cancelled)",
	states.ScanNotPaid:          "refused: order not paid",
	states.ScanWrongEvent:       "refused: another event",
	states.ScanUnknown:          "refused: unknown",
	states.ScanSandbox:          "refused: sandbox ticket",
	states.ScanExited:           "let out",
	states.ScanUndone:           "admission undone at the door desk",
}

// OutcomeText is a scan's outcome as the page words it.
func OutcomeText(o states.ScanOutcome) string {
	if s, ok := outcomeText[o]; ok {
		return s
	}
	return string(o)
}

var cancelText = map[states.CancelReason]string{
	states.CancelBuyer:          "by the buyer",
	states.CancelPaymentTimeout: "not paid in time",
	states.CancelPartner:        "by the partner",
}

var returnText = map[states.ReturnReason]string{
	states.ReturnOrderClosed:    "the order was closed",
	states.ReturnOrderGone:      "the order is gone",
	states.ReturnOtherPayment:   "the order was paid otherwise",
	states.ReturnAmountMismatch: "another amount",
	states.ReturnSeatsLost:      "the seats were lost",
}

// shape is the order's page: the event's times in its zone (ev), the
// rest in the company's (loc).
func shape(co *store.CabinetOrder, loc *time.Location) *Order {
	o := co.Order
	ev, evName := zone(co.Event.TimeZone)
	v := &Order{ID: o.ID, IsTest: o.IsTest, Status: o.Status, Zone: loc.String(), EventZone: evName,
		Created: At(o.CreatedAt, loc), Paid: atp(o.PaidAt, loc),
		Buyer:      Buyer{Name: strings.TrimSpace(o.CustomerFirstName + " " + o.CustomerLastName), Email: o.CustomerEmail, Phone: o.CustomerPhone},
		Event:      Event{ID: o.EventID, Title: co.Event.Title, Venue: co.Event.VenueName, Starts: At(co.Event.StartsAt, ev)},
		Channel:    channelLabel(o.Channel, co.Key.Prefix, co.Key.Name),
		WorkflowID: contract.OrderWorkflowID(o.ID),
	}
	if co.Key.ApplicationName != "" {
		v.Channel += " (" + co.Key.ApplicationName + ")"
	}
	if co.Event.SessionStartsAt != nil {
		v.Event.Session = At(*co.Event.SessionStartsAt, ev).String()
		if co.Event.SessionRef != nil {
			v.Event.Session = *co.Event.SessionRef + ", " + v.Event.Session
		}
	}
	if o.CancelReason != nil {
		v.Cancelled = cancelText[*o.CancelReason]
	}
	if o.Reference != nil {
		v.Reference = *o.Reference
	}
	for _, k := range slices.Sorted(maps.Keys(o.Metadata)) {
		v.Metadata = append(v.Metadata, MetaPair{Key: k, Value: o.Metadata[k]})
	}
	m := Money{Currency: o.Currency, Total: o.Total, Fee: o.ServiceFee, Amount: o.Amount, How: o.Payment}
	if o.PaidAt != nil {
		m.Paid = o.Amount
	}
	if o.Payment == states.PayByGateway {
		m.Gateway = o.GatewayName()
	}
	if o.PaymentID != nil {
		m.PaymentID = *o.PaymentID
	}
	var tl []Entry
	add := func(at When, kind, what, detail string) {
		if !at.IsZero() {
			tl = append(tl, Entry{At: at, Kind: kind, What: what, Detail: detail})
		}
	}
	via := "over the API"
	if o.Channel == states.ChannelAggregator {
		via = "through the aggregator"
	}
	key := strings.TrimSpace(co.Key.Prefix + "… " + co.Key.Name)
	if co.Key.ApplicationName != "" {
		key += " (" + co.Key.ApplicationName + ")"
	}
	add(v.Created, "created", "Order created", fmt.Sprintf("%s with key %s; %d ticket(s), %s to pay %s", via, key, len(co.Positions),
		money(o.Amount, o.Currency), payWord(o)))
	for _, p := range co.Payments {
		add(At(p.ReceivedAt, loc), "payment", "Payment received", fmt.Sprintf("%s on the %s gateway, payment %s", money(p.Amount, p.Currency), p.Gateway, p.ID))
		if p.RefundReason != nil {
			why := returnText[*p.RefundReason]
			if p.RefundedAt != nil {
				add(At(*p.RefundedAt, loc), "payment", "Payment returned", fmt.Sprintf("%s: %s", money(p.Amount, p.Currency), why))
			} else {
				add(atp(p.SettledAt, loc), "payment", "Payment to be returned", fmt.Sprintf("%s: %s", money(p.Amount, p.Currency), why))
			}
		}
	}
	if o.PaymentAcceptedAt != nil && o.PaymentID != nil {
		add(At(*o.PaymentAcceptedAt, loc), "payment", "External payment accepted", "payment "+*o.PaymentID)
	}
	if o.PaidAt != nil {
		add(At(*o.PaidAt, loc), "paid", "Paid", money(o.Amount, o.Currency)+" "+payWord(o))
	}
	var issued *time.Time
	refunded := map[string]bool{}
	for _, p := range co.Positions {
		t := Ticket{Position: p.Position, Category: p.Category, Price: p.Price, State: "not issued"}
		if p.SeatLabel != nil {
			t.Seat = *p.SeatLabel
		} else if p.SeatID != nil {
			t.Seat = *p.SeatID
		}
		if p.TicketID != nil {
			t.Number, t.Barcode = deref(p.Number), deref(p.Barcode)
			t.CheckedIn, t.Gate = atp(p.CheckedInAt, ev), deref(p.CheckedInGate)
			switch {
			case p.Status != nil && *p.Status == states.TicketRefunded:
				t.State = "refunded"
			case p.CheckedInAt != nil:
				t.State = "checked in"
			default:
				t.State = "active"
			}
			if p.IssuedAt != nil && (issued == nil || p.IssuedAt.Before(*issued)) {
				issued = p.IssuedAt
			}
		}
		if p.RefundID != nil {
			refunded[*p.RefundID] = true
		}
		v.Tickets = append(v.Tickets, t)
	}
	if issued != nil {
		n := 0
		for _, t := range v.Tickets {
			if t.Number != "" {
				n++
			}
		}
		add(At(*issued, loc), "issued", "Tickets issued", fmt.Sprintf("%d ticket(s)", n))
	}
	if o.EmailedAt != nil {
		add(At(*o.EmailedAt, loc), "emailed", "Tickets e-mailed", "to "+o.CustomerEmail)
	}
	if o.CancelledAt != nil {
		add(At(*o.CancelledAt, loc), "cancelled", "Cancelled", v.Cancelled)
	}
	for _, r := range co.Refunds {
		rv := Refund{ID: r.ID, Amount: r.Amount, Tickets: r.Tickets, Reason: r.Reason, Status: r.Status, By: r.MoneyReturnedBy,
			Requested: At(r.CreatedAt, loc), Completed: atp(r.CompletedAt, loc), WorkflowID: contract.RefundWorkflowID(r.ID)}
		v.Refunds = append(v.Refunds, rv)
		if r.Status == states.RefundCompleted {
			m.Refunded += r.Amount
		} else {
			m.Pending += r.Amount
		}
		detail := fmt.Sprintf("%s for %d ticket(s), %s; now %s", money(r.Amount, o.Currency), r.Tickets, returnedBy(r.MoneyReturnedBy), r.Status)
		if r.Reason != "" {
			detail += "; reason: " + r.Reason
		}
		add(rv.Requested, "refund", "Refund "+r.ID+" requested", detail)
		add(rv.Completed, "refund", "Refund "+r.ID+" completed", money(r.Amount, o.Currency)+" returned")
		if r.Status == states.RefundFailed {
			add(atp(r.FailedAt, loc), "refund", "Refund "+r.ID+" failed", "the gateway did not take the money back; the service retries it")
		}
	}
	for _, c := range co.CheckIns {
		ci := CheckIn{Ticket: c.TicketNumber, Gate: c.Gate, Device: c.DeviceID, Direction: c.Direction, Outcome: c.Outcome,
			At: At(c.ScannedAt, ev), Offline: c.Offline}
		v.CheckIns = append(v.CheckIns, ci)
		detail := "gate " + c.Gate
		if c.DeviceID != "" {
			detail += ", device " + c.DeviceID
		}
		if c.Offline {
			detail += ", scanned offline (uploaded " + At(c.ReceivedAt, ev).String() + ")"
		}
		// The timeline is in the company's zone, as the rest of it; the
		// check-ins table says the door's time.
		add(At(c.ScannedAt, loc), "checkin", "Ticket "+c.TicketNumber+" "+OutcomeText(c.Outcome), detail)
	}
	v.Money = m
	// In time order; what happened at one moment keeps the order above
	// (created before paid before issued).
	slices.SortStableFunc(tl, func(a, b Entry) int { return cmp.Compare(a.At.t.UnixNano(), b.At.t.UnixNano()) })
	v.Timeline = tl
	return v
}

func payWord(o *store.Order) string {
	if o.Payment == states.PayExternally {
		return "externally (the partner takes the payment)"
	}
	return "through the " + o.GatewayName() + " gateway"
}

func returnedBy(m states.PaymentMethod) string {
	if m == states.PayExternally {
		return "money returned by the partner"
	}
	return "money returned through the gateway"
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// money is pricing.Format, under the short name the code here uses.
var money = pricing.Format

// WorkflowURL is the link to a workflow in the Temporal UI at ui, in the
// namespace ("" ui: no link).
func WorkflowURL(ui, namespace, workflowID string) string {
	if ui == "" {
		return ""
	}
	if namespace == "" {
		namespace = "default"
	}
	return strings.TrimRight(ui, "/") + "/namespaces/" + url.PathEscape(namespace) + "/workflows/" + url.PathEscape(workflowID)
}

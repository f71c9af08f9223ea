// Package report is what organizers read about their sales: the sales
// report with its filter, every day of a range and its CSV, and the
// inventory of their events. The cabinet and ticketctl show the same
// figures through it; the SQL that computes them is the store's
// (store/report.go), and the types here are the report as it is shown,
// apart from the rows the store scans.
package report

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"ticketsales/store"
)

// Filter selects what the sales report counts: a company's production
// orders (sandbox orders never), optionally of one event, in [From, To).
// Sales count at the moment an order was paid, refunds at the moment they
// completed, so a refund of an earlier sale lowers the period it happened
// in.
type Filter struct {
	CompanyID int64
	EventID   int64     // 0: every event
	From, To  time.Time // zero: open
}

// DefaultDays is how many days, today included, the cabinet's report
// covers when no dates are given.
const DefaultDays = 30

// Days sets the filter to whole UTC days, first and last included; given
// the other way round they are swapped.
func (f *Filter) Days(first, last time.Time) {
	if last.Before(first) {
		first, last = last, first
	}
	f.From, f.To = first, last.AddDate(0, 0, 1)
}

// LastDay is the last whole day of a filter set by Days.
func (f Filter) LastDay() time.Time { return f.To.AddDate(0, 0, -1) }

// SalesFigures are the sums of one report row. Money is in minor units.
type SalesFigures struct {
	TicketsSold     int64 `json:"tickets_sold"`
	TicketsRefunded int64 `json:"tickets_refunded"`
	TicketsNet      int64 `json:"tickets_net"`
	Orders          int64 `json:"orders"`
	Gross           int64 `json:"gross"`        // Σ amount paid by buyers
	ServiceFees     int64 `json:"service_fees"` // Σ service fee of those orders
	Refunds         int64 `json:"refunds"`      // Σ money returned
	NetRevenue      int64 `json:"net_revenue"`  // gross − refunds
}

// EventSales is one event's row.
type EventSales struct {
	EventID  int64     `json:"event_id"`
	Title    string    `json:"title"`
	StartsAt time.Time `json:"starts_at"`
	Currency string    `json:"currency"`
	SalesFigures
}

// CategorySales is one ticket category's row: tickets and their face value
// (fees are per order, not per category).
type CategorySales struct {
	EventID         int64  `json:"event_id"`
	EventTitle      string `json:"event_title"`
	CategoryID      int64  `json:"category_id"`
	Name            string `json:"name"`
	TicketsSold     int64  `json:"tickets_sold"`
	TicketsRefunded int64  `json:"tickets_refunded"`
	TicketsNet      int64  `json:"tickets_net"`
	FaceValueSold   int64  `json:"face_value_sold"`
	FaceValueRefund int64  `json:"face_value_refunded"`
}

// ChannelSales is one sales channel's row: the API key (and its
// application) that sold, over /v1 ("api") or the aggregator adapter.
type ChannelSales struct {
	Channel         string `json:"channel"`
	APIKeyID        int64  `json:"api_key_id"`
	KeyName         string `json:"key_name"`
	KeyPrefix       string `json:"key_prefix"`
	ApplicationID   int64  `json:"application_id"`
	ApplicationName string `json:"application_name"`
	SalesFigures
}

// DaySales is one day's row (days in UTC).
type DaySales struct {
	Day time.Time `json:"day"`
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

// Sales computes the report of the filter, in one snapshot of the
// database.
func Sales(ctx context.Context, db *bun.DB, f Filter) (*SalesReport, error) {
	r, err := store.SalesReportOf(ctx, db, store.ReportFilter(f))
	if err != nil {
		return nil, err
	}
	rep := &SalesReport{From: r.From, To: r.To, EventID: r.EventID, Total: SalesFigures(r.Total),
		Events: make([]EventSales, len(r.Events)), Categories: make([]CategorySales, len(r.Categories)),
		Channels: make([]ChannelSales, len(r.Channels)), Days: make([]DaySales, len(r.Days))}
	for i, e := range r.Events {
		rep.Events[i] = EventSales{EventID: e.EventID, Title: e.Title, StartsAt: e.StartsAt, Currency: e.Currency,
			SalesFigures: SalesFigures(e.SalesFigures)}
	}
	for i, c := range r.Categories {
		rep.Categories[i] = CategorySales(c)
	}
	for i, c := range r.Channels {
		rep.Channels[i] = ChannelSales{Channel: c.Channel, APIKeyID: c.APIKeyID, KeyName: c.KeyName, KeyPrefix: c.KeyPrefix,
			ApplicationID: c.ApplicationID, ApplicationName: c.ApplicationName, SalesFigures: SalesFigures(c.SalesFigures)}
	}
	for i, d := range r.Days {
		rep.Days[i] = DaySales{Day: d.Day, SalesFigures: SalesFigures(d.SalesFigures)}
	}
	return rep, nil
}

// FillDays gives every day of [from, to) a row, zero where nothing sold,
// so a chart's time axis has no gaps. A range longer than a year keeps
// only the days with sales.
func FillDays(days []DaySales, from, to time.Time) []DaySales {
	if to.Sub(from) > 366*24*time.Hour {
		return days
	}
	byDay := map[string]DaySales{}
	for _, d := range days {
		byDay[d.Day.UTC().Format(time.DateOnly)] = d
	}
	var out []DaySales
	for d := from; d.Before(to); d = d.AddDate(0, 0, 1) {
		row, ok := byDay[d.Format(time.DateOnly)]
		if !ok {
			row = DaySales{Day: d}
		}
		out = append(out, row)
	}
	return out
}

// EventInventory is one of the company's events with its seats sold, held
// and free (general admission: capacity − sold, of its sessions when it
// has a schedule).
type EventInventory struct {
	ID       int64     `json:"id"`
	Ref      string    `json:"ref"`
	Title    string    `json:"title"`
	Status   string    `json:"status"`
	StartsAt time.Time `json:"starts_at"`
	Venue    string    `json:"venue"`
	Sold     int64     `json:"sold"`
	Held     int64     `json:"held"`
	Free     int64     `json:"free"`
}

// Inventory lists the company's events with their seat counts at now (a
// hold past its expiry counts as free).
func Inventory(ctx context.Context, db bun.IDB, companyID int64, now time.Time) ([]EventInventory, error) {
	rows, err := store.CompanyInventory(ctx, db, companyID, now)
	if err != nil {
		return nil, err
	}
	out := make([]EventInventory, len(rows))
	for i, r := range rows {
		out[i] = EventInventory(r)
	}
	return out, nil
}

// HasEvent tells whether the event is among the inventory's: a filter
// names only an event of the company.
func HasEvent(events []EventInventory, id int64) bool {
	for _, e := range events {
		if e.ID == id {
			return true
		}
	}
	return false
}

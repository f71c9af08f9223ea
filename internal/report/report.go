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

// The report as organizers see it is the rows the store computes: one
// definition (store/report.go), named here for the cabinet and ticketctl.
type (
	// Filter selects what the sales report counts: a company's production
	// orders (sandbox orders never), optionally of one event, in [From,
	// To). Sales count when an order was paid, refunds when they completed.
	Filter         = store.ReportFilter
	SalesReport    = store.SalesReport
	SalesFigures   = store.SalesFigures
	EventSales     = store.EventSales
	CategorySales  = store.CategorySales
	ChannelSales   = store.ChannelSales
	DaySales       = store.DaySales
	EventInventory = store.EventInventory
)

// DefaultDays is how many days, today included, the cabinet's report
// covers when no dates are given.
const DefaultDays = 30

// Days sets the filter to whole UTC days, first and last included; given
// the other way round they are swapped.
func Days(f *Filter, first, last time.Time) {
	if last.Before(first) {
		first, last = last, first
	}
	f.From, f.To = first, last.AddDate(0, 0, 1)
}

// LastDay is the last whole day of a filter set by Days.
func LastDay(f Filter) time.Time { return f.To.AddDate(0, 0, -1) }

// Sales computes the report of the filter, in one snapshot of the
// database.
func Sales(ctx context.Context, db *bun.DB, f Filter) (*SalesReport, error) {
	return store.GetSalesReport(ctx, db, f)
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

// Inventory lists the company's events with their seat counts at now (a
// hold past its expiry counts as free).
func Inventory(ctx context.Context, db bun.IDB, companyID int64, now time.Time) ([]EventInventory, error) {
	return store.ListCompanyInventory(ctx, db, companyID, now)
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

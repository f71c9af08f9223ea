// Package report is what organizers read about their sales: the sales
// report with its filter, every day of a range and its CSV, and the
// inventory of their events. The cabinet and ticketctl show the same
// figures through it; the SQL that computes them is the store's
// (store/report.go), and the types here are the report as it is shown,
// apart from the rows the store scans.
package report

import (
	"context"
	"errors"
	"fmt"
	"time"
	_ "time/tzdata" // report days in any IANA zone, wherever the binary runs

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/store"
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
	SessionSales   = store.SessionSales
	EventInventory = store.EventInventory
	// MixedCurrenciesError: the report would add up several currencies.
	MixedCurrenciesError = store.MixedCurrenciesError
)

// DefaultDays is how many days, today included, the cabinet's report
// covers when no dates are given.
const DefaultDays = 30

// LoadZone is the IANA time zone named tz, as a company's report days may
// be in: "UTC", "Europe/Moscow"; not "Local", not empty, not an offset.
func LoadZone(tz string) (*time.Location, error) {
	if tz == "" || tz == "Local" {
		return nil, errors.New("a time zone is an IANA name such as Europe/Moscow or UTC")
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("%q is not an IANA time zone name (such as Europe/Moscow or UTC)", tz)
	}
	return loc, nil
}

// Zone is the time zone of the company's report days.
func Zone(ctx context.Context, db bun.IDB, companyID int64) (*time.Location, error) {
	tz, err := store.GetCompanyTimezone(ctx, db, companyID)
	if err != nil {
		return nil, err
	}
	return LoadZone(tz)
}

// ZoneError: a time zone name refused, by Go (LoadZone) or by Postgres
// (store.UnknownTimezoneError); nothing was changed. Its message says why,
// for the one who typed it.
type ZoneError struct{ Reason error }

func (e *ZoneError) Error() string { return e.Reason.Error() }

func (e *ZoneError) Unwrap() error { return e.Reason }

// SetZone sets the time zone of the company's report days, a name LoadZone
// and Postgres both accept (else *ZoneError).
func SetZone(ctx context.Context, db bun.IDB, companyID int64, tz string) error {
	if _, err := LoadZone(tz); err != nil {
		return &ZoneError{Reason: err}
	}
	err := store.SetCompanyTimezone(ctx, db, companyID, tz)
	var unknown *store.UnknownTimezoneError
	if errors.As(err, &unknown) {
		return &ZoneError{Reason: unknown}
	}
	return err
}

// Date is the calendar day of t's year, month and day (its location
// ignored), as midnight UTC: a day without a zone.
func Date(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// LocalMidnight is the first instant of the local day y-m-d in loc: its
// midnight, or, where DST begins at midnight and 00:00 does not exist
// (America/Santiago), the instant the day does start (01:00). time.Date
// would normalise the missing 00:00 to 23:00 of the day before.
// A day past the month's end is the next month's, as with time.Date.
func LocalMidnight(y int, m time.Month, d int, loc *time.Location) time.Time {
	t := time.Date(y, m, d, 0, 0, 0, 0, loc)
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC) // the calendar day asked, normalised
	switch {
	case t.Day() != day.Day(): // fell back into the day before: the day starts where its zone period ends
		_, end := t.ZoneBounds()
		return end
	case t.Hour() != 0 || t.Minute() != 0: // pushed into the day past a gap: the day starts at the change
		start, _ := t.ZoneBounds()
		return start
	}
	return t
}

// Days sets the filter to whole local days of loc, first and last included
// (their calendar dates; given the other way round they are swapped): From
// is first's midnight in loc, To the midnight after last, so a day across a
// DST change is 23 or 25 hours long.
func Days(f *Filter, first, last time.Time, loc *time.Location) {
	first, last = Date(first), Date(last)
	if last.Before(first) {
		first, last = last, first
	}
	f.TimeZone, f.First, f.Last = loc.String(), first, last
	f.From = LocalMidnight(first.Year(), first.Month(), first.Day(), loc)
	f.To = LocalMidnight(last.Year(), last.Month(), last.Day()+1, loc)
}

// Today is the calendar day it is at now in loc.
func Today(now time.Time, loc *time.Location) time.Time { return Date(now.In(loc)) }

// FirstDay and LastDay are the first and last whole local days of a filter
// set by Days: the dates asked for.
func FirstDay(f Filter) time.Time {
	if !f.First.IsZero() {
		return f.First
	}
	return Date(f.From)
}

// LastDay: see FirstDay.
func LastDay(f Filter) time.Time {
	if !f.Last.IsZero() {
		return f.Last
	}
	return Date(f.To).AddDate(0, 0, -1)
}

// Sales computes the report of the filter, in one snapshot of the
// database.
func Sales(ctx context.Context, db *bun.DB, f Filter) (*SalesReport, error) {
	return store.GetSalesReport(ctx, db, f)
}

// FillDays gives every day from first to last (calendar days) a row, zero
// where nothing sold, so a chart's time axis has no gaps. A range longer
// than a year keeps only the days with sales.
func FillDays(days []DaySales, first, last time.Time) []DaySales {
	first, last = Date(first), Date(last)
	if last.Sub(first) > 366*24*time.Hour {
		return days
	}
	byDay := map[string]DaySales{}
	for _, d := range days {
		byDay[d.Day] = d
	}
	var out []DaySales
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		key := d.Format(time.DateOnly)
		row, ok := byDay[key]
		if !ok {
			row = DaySales{Day: key}
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

// CommonZones are the time zones the cabinet's form suggests (any IANA
// name is accepted): Russia's, from Kaliningrad to Kamchatka, and a few
// neighbours'.
var CommonZones = []string{"UTC", "Europe/Kaliningrad", "Europe/Moscow", "Europe/Samara", "Asia/Yekaterinburg", "Asia/Omsk",
	"Asia/Novosibirsk", "Asia/Krasnoyarsk", "Asia/Irkutsk", "Asia/Yakutsk", "Asia/Vladivostok", "Asia/Magadan",
	"Asia/Kamchatka", "Europe/Minsk", "Asia/Almaty", "Asia/Tbilisi", "Asia/Yerevan", "Europe/Berlin", "Europe/London"}

package report

import (
	"io"
	"time"

	"github.com/ticketsales/ticketsales/internal/export"
)

// FileName names the CSV download of a filter set by Days.
func FileName(f Filter) string { return BaseName(f) + ".csv" }

// BaseName is a download's name without its ending: the report's days.
func BaseName(f Filter) string {
	return "sales-" + FirstDay(f).Format(time.DateOnly) + "-" + LastDay(f).Format(time.DateOnly)
}

// columns are the report's columns (docs/cabinet.md lists them): what a
// row is, what it is of, then its figures. Key is the plain CSV's header;
// the title the spreadsheets' (XLSX, CSV for Excel). Money columns are
// currency units with two decimals.
func columns(rep *SalesReport) []export.Column {
	m := func(key, title string) export.Column {
		return export.Column{Key: key, Title: title + ", " + rep.Currency, Kind: export.Money}
	}
	n := func(key, title string) export.Column { return export.Column{Key: key, Title: title, Kind: export.Int} }
	t := func(key, title string, w float64) export.Column {
		return export.Column{Key: key, Title: title, Kind: export.Text, Width: w}
	}
	return []export.Column{t("section", "Row", 10), n("event_id", "Event id"), t("event", "Event", 40),
		n("session_id", "Session id"), t("session", "Session", 16),
		{Key: "session_starts_at", Title: "Session starts (event's time zone)", Kind: export.Time},
		n("category_id", "Category id"), t("category", "Category", 24), t("channel", "Channel", 12), n("api_key_id", "Key id"),
		t("api_key", "Key", 28), t("application", "Application", 24),
		{Key: "day", Title: "Day (" + rep.TimeZone + ")", Kind: export.Date}, t("time_zone", "Time zone", 16), t("currency", "Currency", 9),
		n("tickets_sold", "Tickets sold"), n("tickets_refunded", "Tickets refunded"), n("tickets_net", "Tickets net"), n("orders", "Orders"),
		m("face_value", "Face value"), m("service_fees", "Service fees"), m("fees_in_price", "Fees in price"), m("gross", "Gross"),
		m("face_value_refunded", "Face value refunded"), m("fee_refunded", "Fee refunded"), m("refunds", "Refunds"),
		m("fees_returned", "Fees returned"), m("fees_kept", "Fees kept"), m("net_to_organizer", "Net to organizer")}
}

// WriteCSV writes a report as plain CSV (export.CSV): the rows of Write.
func WriteCSV(w io.Writer, rep *SalesReport) error { return Write(w, export.CSV, rep) }

// Write writes a report in format f: the total, then each event (and each
// session of a scheduled one), ticket category, channel and day, with the
// same figures as the cabinet's page.
func Write(w io.Writer, f export.Format, rep *SalesReport) error {
	out, err := export.New(w, f, "Sales "+rep.TimeZone, columns(rep))
	if err != nil {
		return err
	}
	cur := rep.Currency
	// row is a row's 15 describing cells (from section to currency); ""
	// text and 0 ids are empty cells.
	row := func(section string, eventID int64, event string, sessionID int64, session string, sessionStarts any, categoryID int64,
		category, channel string, keyID int64, key, app, day, tz string) []any {
		id := func(v int64) any {
			if v == 0 {
				return nil
			}
			return v
		}
		var d any
		if day != "" {
			d = day
		}
		return []any{section, id(eventID), event, id(sessionID), session, sessionStarts, id(categoryID), category, channel, id(keyID),
			key, app, d, tz, cur}
	}
	fig := func(s SalesFigures) []any {
		return []any{s.TicketsSold, s.TicketsRefunded, s.TicketsNet, s.Orders,
			s.FaceValue, s.ServiceFees, s.FeesInPrice, s.Gross, s.FaceValueRefunded, s.FeeRefunded, s.Refunds,
			s.FeesReturned, s.FeesKept, s.NetToOrganizer}
	}
	put := func(a, b []any) {
		if err == nil {
			err = out.Row(append(a, b...)...)
		}
	}
	put(row("total", 0, "", 0, "", nil, 0, "", "", 0, "", "", "", rep.TimeZone), fig(rep.Total))
	for _, e := range rep.Events {
		put(row("event", e.EventID, e.Title, 0, "", nil, 0, "", "", 0, "", "", "", ""), fig(e.SalesFigures))
		for _, s := range e.Sessions {
			var starts any // the orders that name no session
			if s.SessionID != 0 {
				starts = s.StartsAt
			}
			put(row("session", e.EventID, e.Title, s.SessionID, s.Ref, starts, 0, "", "", 0, "", "", "", e.TimeZone), fig(s.SalesFigures))
		}
	}
	for _, k := range rep.Categories {
		put(row("category", k.EventID, k.EventTitle, 0, "", nil, k.CategoryID, k.Name, "", 0, "", "", "", ""),
			[]any{k.TicketsSold, k.TicketsRefunded, k.TicketsNet, nil, k.FaceValueSold, nil, nil, nil, k.FaceValueRefund, nil, nil, nil, nil, nil})
	}
	for _, ch := range rep.Channels {
		put(row("channel", 0, "", 0, "", nil, 0, "", string(ch.Channel), ch.APIKeyID, ch.KeyName+" ("+ch.KeyPrefix+"…)", ch.ApplicationName, "", ""),
			fig(ch.SalesFigures))
	}
	for _, d := range rep.Days {
		put(row("day", 0, "", 0, "", nil, 0, "", "", 0, "", "", d.Day, rep.TimeZone), fig(d.SalesFigures))
	}
	if err != nil {
		out.Abort()
		return err
	}
	return out.Close()
}

// Units writes minor units as currency units with two decimals, dot
// decimal, no thousands separator: 123456 → "1234.56", -5 → "-0.05".
func Units(minor int64) string { return export.Units(minor) }

// cell keeps a text cell (a title, a name) from being read as a formula by
// a spreadsheet that opens the file (export.Cell).
func cell(s string) string { return export.Cell(s) }

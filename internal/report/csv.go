package report

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"
	"time"
)

// FileName names the CSV download of a filter set by Days.
func FileName(f Filter) string {
	return "sales-" + FirstDay(f).Format(time.DateOnly) + "-" + LastDay(f).Format(time.DateOnly) + ".csv"
}

// csvHeader is the CSV's columns (docs/cabinet.md lists them): what a row
// is, what it is of, then its figures. Money columns are currency units
// with two decimals, dot decimal, no thousands separator.
var csvHeader = []string{"section", "event_id", "event", "session_id", "session", "session_starts_at",
	"category_id", "category", "channel", "api_key_id", "api_key", "application", "day", "time_zone", "currency",
	"tickets_sold", "tickets_refunded", "tickets_net", "orders",
	"face_value", "service_fees", "fees_in_price", "gross", "face_value_refunded", "fee_refunded", "refunds",
	"fees_returned", "fees_kept", "net_to_organizer"}

// WriteCSV writes a report as CSV rows: the total, then each event (and
// each session of a scheduled one), ticket category, channel and day, with
// the same figures as the cabinet's page.
func WriteCSV(w io.Writer, rep *SalesReport) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(csvHeader)
	cur := rep.Currency
	// row is a row's 15 describing cells (from section to currency).
	row := func(section, eventID, event, sessionID, session, sessionStarts, categoryID, category, channel, keyID, key, app, day, tz string) []string {
		return []string{section, eventID, event, sessionID, session, sessionStarts, categoryID, category, channel, keyID, key, app, day, tz, cur}
	}
	fig := func(s SalesFigures) []string {
		return []string{i64(s.TicketsSold), i64(s.TicketsRefunded), i64(s.TicketsNet), i64(s.Orders),
			Units(s.FaceValue), Units(s.ServiceFees), Units(s.FeesInPrice), Units(s.Gross),
			Units(s.FaceValueRefunded), Units(s.FeeRefunded), Units(s.Refunds),
			Units(s.FeesReturned), Units(s.FeesKept), Units(s.NetToOrganizer)}
	}
	_ = cw.Write(append(row("total", "", "", "", "", "", "", "", "", "", "", "", "", rep.TimeZone), fig(rep.Total)...))
	for _, e := range rep.Events {
		_ = cw.Write(append(row("event", i64(e.EventID), cell(e.Title), "", "", "", "", "", "", "", "", "", "", ""), fig(e.SalesFigures)...))
		for _, s := range e.Sessions {
			id, starts := "", "" // the orders that name no session
			if s.SessionID != 0 {
				id, starts = i64(s.SessionID), s.StartsAt.Format(time.RFC3339)
			}
			_ = cw.Write(append(row("session", i64(e.EventID), cell(e.Title), id, cell(s.Ref), starts,
				"", "", "", "", "", "", "", e.TimeZone), fig(s.SalesFigures)...))
		}
	}
	for _, k := range rep.Categories {
		_ = cw.Write(append(row("category", i64(k.EventID), cell(k.EventTitle), "", "", "", i64(k.CategoryID), cell(k.Name), "", "", "", "", "", ""),
			i64(k.TicketsSold), i64(k.TicketsRefunded), i64(k.TicketsNet), "",
			Units(k.FaceValueSold), "", "", "", Units(k.FaceValueRefund), "", "", "", "", ""))
	}
	for _, ch := range rep.Channels {
		_ = cw.Write(append(row("channel", "", "", "", "", "", "", "", string(ch.Channel), i64(ch.APIKeyID), cell(ch.KeyName)+" ("+ch.KeyPrefix+"…)",
			cell(ch.ApplicationName), "", ""), fig(ch.SalesFigures)...))
	}
	for _, d := range rep.Days {
		_ = cw.Write(append(row("day", "", "", "", "", "", "", "", "", "", "", "", d.Day, rep.TimeZone), fig(d.SalesFigures)...))
	}
	cw.Flush()
	return cw.Error()
}

// Units writes minor units as currency units with two decimals, dot
// decimal, no thousands separator: 123456 → "1234.56", -5 → "-0.05".
func Units(minor int64) string {
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	return sign + strconv.FormatInt(minor/100, 10) + "." + strconv.FormatInt(minor%100/10, 10) + strconv.FormatInt(minor%10, 10)
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

// cell keeps a text cell (a title, a name) from being read as a formula by
// a spreadsheet that opens the file: one starting with = + - @ or a control
// character gets a leading apostrophe.
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

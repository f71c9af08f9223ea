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
	return "sales-" + f.From.Format(time.DateOnly) + "-" + LastDay(f).Format(time.DateOnly) + ".csv"
}

// WriteCSV writes a report as CSV rows: the total, then each event, ticket
// category, channel and day, with the same figures as the cabinet's page
// (money in minor units).
func WriteCSV(w io.Writer, rep *SalesReport) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"section", "event_id", "event", "category_id", "category", "channel", "api_key_id", "api_key",
		"application", "day", "tickets_sold", "tickets_refunded", "tickets_net", "orders", "gross", "service_fees", "refunds",
		"net_revenue", "face_value_sold", "face_value_refunded"})
	fig := func(s SalesFigures) []string {
		return []string{i64(s.TicketsSold), i64(s.TicketsRefunded), i64(s.TicketsNet), i64(s.Orders), i64(s.Gross),
			i64(s.ServiceFees), i64(s.Refunds), i64(s.NetRevenue), "", ""}
	}
	_ = cw.Write(append([]string{"total", "", "", "", "", "", "", "", "", ""}, fig(rep.Total)...))
	for _, e := range rep.Events {
		_ = cw.Write(append([]string{"event", i64(e.EventID), cell(e.Title), "", "", "", "", "", "", ""}, fig(e.SalesFigures)...))
	}
	for _, k := range rep.Categories {
		_ = cw.Write([]string{"category", i64(k.EventID), cell(k.EventTitle), i64(k.CategoryID), cell(k.Name), "", "", "", "", "",
			i64(k.TicketsSold), i64(k.TicketsRefunded), i64(k.TicketsNet), "", "", "", "", "", i64(k.FaceValueSold), i64(k.FaceValueRefund)})
	}
	for _, ch := range rep.Channels {
		_ = cw.Write(append([]string{"channel", "", "", "", "", string(ch.Channel), i64(ch.APIKeyID), cell(ch.KeyName) + " (" + ch.KeyPrefix + "…)",
			cell(ch.ApplicationName), ""}, fig(ch.SalesFigures)...))
	}
	for _, d := range rep.Days {
		_ = cw.Write(append([]string{"day", "", "", "", "", "", "", "", "", d.Day.UTC().Format(time.DateOnly)}, fig(d.SalesFigures)...))
	}
	cw.Flush()
	return cw.Error()
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

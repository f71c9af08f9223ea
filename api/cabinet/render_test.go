package cabinet

import (
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/report"
)

func TestMoney(t *testing.T) {
	for minor, want := range map[int64]string{0: "0.00 RUB", 5: "0.05 RUB", 123456: "1\u202f234.56 RUB",
		100000000: "1\u202f000\u202f000.00 RUB", -2550: "−25.50 RUB"} {
		if got := money(minor, "RUB"); got != want {
			t.Errorf("money(%d) = %q, want %q", minor, got, want)
		}
	}
}

// TestChartAndDays: every day of the range gets a bar, scaled to the
// largest of gross and refunds.
func TestChartAndDays(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	days := report.FillDays([]report.DaySales{
		{Day: "2026-11-02", SalesFigures: report.SalesFigures{Gross: 1000, Refunds: 500}},
		{Day: "2026-11-04", SalesFigures: report.SalesFigures{Gross: 250}},
	}, from, from.AddDate(0, 0, 4))
	if len(days) != 5 || days[0].Gross != 0 || days[1].Gross != 1000 || days[3].Gross != 250 {
		t.Fatalf("days: %+v", days)
	}
	ch := newChart(days, "RUB", "Europe/Moscow")
	if len(ch.Bars) != 5 || ch.Bars[0].H != 0 || ch.Bars[1].RH != ch.Bars[1].H/2 || ch.Bars[3].H != ch.Bars[1].H/4 {
		t.Fatalf("bars: %+v", ch.Bars)
	}
	if newChart(nil, "RUB", "UTC") != nil {
		t.Fatal("a chart of no days")
	}
}

// TestReportStatementSigns: a range with only refunds of orders refunded
// whole gives fees back and charges none, so the service "keeps" a
// negative sum: the statement says the fees were given back, with a
// positive amount, and the sum still reads right; a normal range says
// kept.
func TestReportStatementSigns(t *testing.T) {
	p := parsePages()
	for _, c := range []struct {
		fig          report.SalesFigures
		label, shown string
	}{
		{report.SalesFigures{FeesReturned: 500, FeesKept: -500, FeeRefunded: 500, Refunds: 10500, NetToOrganizer: -10000},
			"+ Service fees given back by the ticket service", ">5.00 RUB</td>"},
		{report.SalesFigures{ServiceFees: 500, FeesKept: 500, Gross: 10500, NetToOrganizer: 10000},
			"− Service fees kept by the ticket service", ">5.00 RUB</td>"},
	} {
		var buf strings.Builder
		data := pageData{Title: "Sales report", Currencies: "RUB", Data: reportView{TimeZone: "UTC"},
			Report: &report.SalesReport{Currency: "RUB", TimeZone: "UTC", Total: c.fig}}
		if err := p.byName["report"].ExecuteTemplate(&buf, "layout.html", data); err != nil {
			t.Fatal(err)
		}
		html := buf.String()
		i := strings.Index(html, `id="t-fees-kept"`)
		row := html[strings.LastIndex(html[:i], "<tr>") : strings.Index(html[i:], "</tr>")+i]
		if !strings.Contains(row, c.label) || !strings.Contains(row, c.shown) || strings.Contains(row, "−5.00") {
			t.Errorf("fees kept %d: %s", c.fig.FeesKept, row)
		}
	}
}

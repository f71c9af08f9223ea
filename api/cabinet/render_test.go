package cabinet

import (
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

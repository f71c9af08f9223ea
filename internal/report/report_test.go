package report

import (
	"testing"
	"time"
)

// TestDaysAreLocalMidnights: a range of dates is bounded by the zone's
// midnights, so Berlin's day DST begins is 23 hours and Moscow's day
// starts at 21:00 UTC; the days read back are the dates given.
func TestDaysAreLocalMidnights(t *testing.T) {
	berlin, err := LoadZone("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	moscow, err := LoadZone("Europe/Moscow")
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC)
	var f Filter
	Days(&f, day, day, berlin)
	if !f.From.Equal(time.Date(2026, 3, 28, 23, 0, 0, 0, time.UTC)) || !f.To.Equal(time.Date(2026, 3, 29, 22, 0, 0, 0, time.UTC)) ||
		f.TimeZone != "Europe/Berlin" || FirstDay(f) != day || LastDay(f) != day {
		t.Fatalf("Berlin's 29 March: %v to %v (%s)", f.From, f.To, f.TimeZone)
	}
	Days(&f, day.AddDate(0, 0, 1), day, moscow) // the other way round
	if !f.From.Equal(time.Date(2026, 3, 28, 21, 0, 0, 0, time.UTC)) || !f.To.Equal(time.Date(2026, 3, 30, 21, 0, 0, 0, time.UTC)) ||
		FileName(f) != "sales-2026-03-29-2026-03-30.csv" {
		t.Fatalf("Moscow's 29–30 March: %v to %v", f.From, f.To)
	}
	// 22:30 UTC is already tomorrow in Moscow.
	if got := Today(time.Date(2026, 11, 2, 22, 30, 0, 0, time.UTC), moscow); got != time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC) {
		t.Fatalf("today in Moscow at 22:30 UTC: %v", got)
	}
	for _, bad := range []string{"", "Local", "Mars/Olympus", "+03:00", "MSK"} {
		if _, err := LoadZone(bad); err == nil {
			t.Errorf("LoadZone(%q) accepted", bad)
		}
	}
}

func TestFillDaysNamesEveryDay(t *testing.T) {
	first := time.Date(2026, 10, 24, 0, 0, 0, 0, time.UTC)
	days := FillDays([]DaySales{{Day: "2026-10-25", SalesFigures: SalesFigures{Gross: 7}}}, first, first.AddDate(0, 0, 2))
	if len(days) != 3 || days[0].Day != "2026-10-24" || days[1].Gross != 7 || days[2].Day != "2026-10-26" {
		t.Fatalf("days: %+v", days)
	}
}

// TestDaysStartWhenTheLocalDayDoes: Santiago's DST begins at midnight on 6
// September 2026 (00:00 does not exist, the day starts at 01:00 −03), so
// that day's report starts at 04:00 UTC, not at 23:00 of the 5th; a normal
// day starts at its midnight. The filter still names the dates asked.
func TestDaysStartWhenTheLocalDayDoes(t *testing.T) {
	santiago, err := LoadZone("America/Santiago")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		day, start time.Time
	}{
		{time.Date(2026, 9, 6, 0, 0, 0, 0, time.UTC), time.Date(2026, 9, 6, 4, 0, 0, 0, time.UTC)},   // DST: 01:00 −03
		{time.Date(2026, 9, 5, 0, 0, 0, 0, time.UTC), time.Date(2026, 9, 5, 4, 0, 0, 0, time.UTC)},   // 00:00 −04
		{time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 2, 3, 0, 0, 0, time.UTC)}, // 00:00 −03
	} {
		got := LocalMidnight(c.day.Year(), c.day.Month(), c.day.Day(), santiago)
		if !got.Equal(c.start) || got.Location() != santiago {
			t.Errorf("Santiago's %s starts at %v, want %v", c.day.Format(time.DateOnly), got.UTC(), c.start)
		}
	}
	// The 6th is 23 hours long: from 01:00 −03 to the 7th's midnight −03.
	day := time.Date(2026, 9, 6, 0, 0, 0, 0, time.UTC)
	var f Filter
	Days(&f, day, day, santiago)
	if !f.From.Equal(time.Date(2026, 9, 6, 4, 0, 0, 0, time.UTC)) || !f.To.Equal(time.Date(2026, 9, 7, 3, 0, 0, 0, time.UTC)) ||
		FirstDay(f) != day || LastDay(f) != day || FileName(f) != "sales-2026-09-06-2026-09-06.csv" {
		t.Fatalf("Santiago's 6 September: %v to %v, days %v to %v", f.From.UTC(), f.To.UTC(), FirstDay(f), LastDay(f))
	}
	// The 5th ends where the 6th starts.
	Days(&f, day.AddDate(0, 0, -1), day.AddDate(0, 0, -1), santiago)
	if !f.To.Equal(time.Date(2026, 9, 6, 4, 0, 0, 0, time.UTC)) || LastDay(f) != day.AddDate(0, 0, -1) {
		t.Fatalf("Santiago's 5 September ends at %v (last day %v)", f.To.UTC(), LastDay(f))
	}
}

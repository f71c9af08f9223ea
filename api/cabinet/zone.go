package cabinet

import (
	"net/http"
	"sync"
	"time"
)

// The cabinet's one rule for times. An event's times (its start, a
// session's, its sales windows, the scans at its door) show in the event's
// venue time zone: a door manager in Yekaterinburg reads 19:03 +05, not
// 14:03 UTC (the funcs at, atSec, clock, dayIn and the zone of the
// event). Everything else (an order's created and paid, refunds, its
// timeline and notes, keys, the team, the request log, webhooks, and
// every "day") shows in the company's time zone (report.Zone, the owner
// sets it on the report page), which signedIn loads once per request and
// render gives every page: the funcs time, timep, day and hms print in it.
// Both always print the zone ("2026-11-28 14:03 MSK"), but for a bare day.

// zoneKey is the context key of the company's time zone.
type zoneKey struct{}

// companyZone is the signed-in user's company's time zone (UTC outside
// signedIn).
func companyZone(r *http.Request) *time.Location {
	if loc, ok := r.Context().Value(zoneKey{}).(*time.Location); ok && loc != nil {
		return loc
	}
	return time.UTC
}

// companyFuncs are the template funcs of times in the company's zone loc.
func companyFuncs(loc *time.Location) map[string]any {
	return map[string]any{
		"time": func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return inZone(t, loc, "2006-01-02 15:04:05")
		},
		"timep": func(t *time.Time) string {
			if t == nil {
				return "—"
			}
			return inZone(*t, loc, "2006-01-02 15:04")
		},
		"day": func(t time.Time) string { return t.In(loc).Format("2006-01-02") },
		"hms": func(t time.Time) string { return inZone(t, loc, "15:04:05") },
	}
}

var zones sync.Map // time zone name → *time.Location

// location is a venue's time zone (the catalog import checked its name);
// UTC for a name this binary does not know.
func location(name string) *time.Location {
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location)
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "" {
		loc = time.UTC
	}
	zones.Store(name, loc)
	return loc
}

// inZone formats t in loc with the zone's abbreviation or offset
// ("2027-01-15 19:00 +05", "… MSK"); layout is without the zone.
func inZone(t time.Time, loc *time.Location, layout string) string {
	if t.IsZero() {
		return "—"
	}
	return t.In(loc).Format(layout + " MST")
}

var zoneFuncs = map[string]any{
	"zone": location,
	// at is an event's date and time, atSec a scan's, clock a time of
	// today's door; each in the event's zone.
	"at":    func(t time.Time, loc *time.Location) string { return inZone(t, loc, "2006-01-02 15:04") },
	"atSec": func(t time.Time, loc *time.Location) string { return inZone(t, loc, "2006-01-02 15:04:05") },
	"clock": func(t time.Time, loc *time.Location) string { return inZone(t, loc, "15:04:05") },
	"dayIn": func(t time.Time, loc *time.Location) string { return t.In(loc).Format("2006-01-02") },
}

package cabinet

import (
	"sync"
	"time"
)

// Event times show in the event's venue time zone, labelled with it: a
// door manager in Yekaterinburg reads 19:03 +05, not 14:03 UTC.

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

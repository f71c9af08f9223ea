package checkin

import (
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/states"
)

func TestValidCursor(t *testing.T) {
	for s, want := range map[string]bool{
		"100:105:": true, "100:105:100,103": true, "100:100:": true,
		"": false, "100": false, "100:99:": false, "100:105:99": false, "100:105:105": false,
		"100:105:103,101": false, "0:5:": false, "a:b:": false, "1:2:3:4": false, "100:105:1x": false,
		// Out of range, or ids Postgres refuses: their low 32 bits are 0.
		"1:9223372036854775808:": false, "1:4294967296:": false, "4294967296:4294967297:": false,
		"1:18446744073709551616:": false, "1:18446744073709551615:": true, "4294967297:4294967298:": true,
		"100:105:4294967296": false,
		// Signs, spaces, empty ids.
		"+100:105:": false, "100:105: 101": false, "100:105:101,,102": false, "100:105:101,": false, "1_00:105:": false,
	} {
		if got := validCursor(s); got != want {
			t.Errorf("validCursor(%q) = %v", s, got)
		}
	}
}

// A door is told the ticket's first admission on a repeat and on a
// re-entry, never on the first admission itself nor on a refusal.
func TestFirstCheckInTold(t *testing.T) {
	at, gate := time.Now(), "North"
	for _, c := range []struct {
		outcome states.ScanOutcome
		first   bool
		want    bool
	}{
		{states.ScanAdmitted, true, false},
		{states.ScanAdmitted, false, true},
		{states.ScanAlreadyCheckedIn, false, true},
		{states.ScanExited, false, false},
		{states.ScanVoid, false, false},
		{states.ScanWrongEvent, false, false},
	} {
		got := firstCheckIn(c.outcome, c.first, &at, &gate)
		if (got != nil) != c.want || got != nil && (got.Gate != gate || !got.At.Equal(at)) {
			t.Errorf("%s (first %v): %+v", c.outcome, c.first, got)
		}
	}
	if got := firstCheckIn(states.ScanAlreadyCheckedIn, false, nil, nil); got != nil {
		t.Errorf("a ticket never admitted: %+v", got)
	}
}

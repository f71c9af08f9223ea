package checkin

import "testing"

func TestValidCursor(t *testing.T) {
	for s, want := range map[string]bool{
		"100:105:": true, "100:105:100,103": true, "100:100:": true,
		"": false, "100": false, "100:99:": false, "100:105:99": false, "100:105:105": false,
		"100:105:103,101": false, "0:5:": false, "a:b:": false, "1:2:3:4": false, "100:105:1x": false,
	} {
		if got := validCursor(s); got != want {
			t.Errorf("validCursor(%q) = %v", s, got)
		}
	}
}

package checkin

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/sdk/go/ticketcode"
)

// The barcode a scan is looked up by, online and offline alike: a signed
// code's barcode only when the event's key of the door's environment (or,
// at a real door, the sandbox's) verifies it; what was scanned otherwise.
func TestLookupBarcode(t *testing.T) {
	key := func() (ed25519.PublicKey, ed25519.PrivateKey) {
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return pub, priv
	}
	realPub, realPriv := key()
	sandboxPub, sandboxPriv := key()
	_, strangerPriv := key()
	keys := &keyOf{} // no database: every key the test needs is known
	keys.keys.Store(eventKey{7, false}, realPub)
	keys.keys.Store(eventKey{7, true}, sandboxPub)
	sign := func(priv ed25519.PrivateKey, event int64, barcode string) string {
		s, err := ticketcode.Sign(priv, ticketcode.Code{EventID: event, TicketID: 1, Barcode: barcode})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	real, sandbox := sign(realPriv, 7, "2000000000015"), sign(sandboxPriv, 7, "9000000000012")
	forged := sign(strangerPriv, 7, "2000000000015")
	tampered := real[:len(real)-2] + strings.Map(func(r rune) rune { return 'A' + (r-'A'+1)%26 }, real[len(real)-2:len(real)-1]) + real[len(real)-1:]
	for _, c := range []struct {
		name, scanned string
		sandboxDoor   bool
		want          string
	}{
		{"a 13-digit barcode", "2000000000015", false, "2000000000015"},
		{"a real code at a real door", real, false, "2000000000015"},
		{"a sandbox code at a real door (told apart as sandbox)", sandbox, false, "9000000000012"},
		{"a sandbox code at a sandbox door", sandbox, true, "9000000000012"},
		{"a real code at a sandbox door", real, true, real},
		{"a code signed by another key", forged, false, forged},
		{"a code changed after signing", tampered, false, tampered},
		{"not a code at all", "T2.???", false, "T2.???"},
	} {
		got, err := lookupBarcode(context.Background(), keys, c.scanned, c.sandboxDoor)
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

// A device's clock is believed within a week back and five minutes ahead.
func TestCheckScannedAt(t *testing.T) {
	now := time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		at   time.Time
		ok   bool
	}{
		{"none given", time.Time{}, true},
		{"now", now, true},
		{"a week ago", now.Add(-MaxScanAge), true},
		{"a week and a second ago", now.Add(-MaxScanAge - time.Second), false},
		{"five minutes ahead", now.Add(MaxScanAhead), true},
		{"six minutes ahead", now.Add(6 * time.Minute), false},
		{"a year off", now.AddDate(1, 0, 0), false},
	} {
		if err := checkScannedAt(c.at, now); (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

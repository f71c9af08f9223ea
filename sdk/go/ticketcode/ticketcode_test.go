package ticketcode_test

import (
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/sdk/go/ticketcode"
)

func TestSignAndVerify(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	_, other, _ := ed25519.GenerateKey(nil)
	c := ticketcode.Code{EventID: 42, TicketID: 1234567, Barcode: "0012345678905"}
	code, err := ticketcode.Sign(priv, c)
	if err != nil || !ticketcode.IsSigned(code) || len(code) > 120 {
		t.Fatalf("code %q (%d chars): %v", code, len(code), err)
	}
	got, err := ticketcode.Verify(pub, code, 42)
	if err != nil || got != c {
		t.Fatalf("verify: %+v %v", got, err)
	}
	if _, err := ticketcode.Verify(pub, code, 43); !errors.Is(err, ticketcode.ErrSignature) {
		t.Fatalf("at another event's door: %v", err)
	}
	forged, _ := ticketcode.Sign(other, c)
	if _, err := ticketcode.Verify(pub, forged, 42); !errors.Is(err, ticketcode.ErrSignature) {
		t.Fatalf("signed by another key: %v", err)
	}
	// Any one byte changed fails, whatever it is.
	for i := len(ticketcode.Prefix); i < len(code); i++ {
		for _, ch := range []byte{'A', 'B', '_', '.'} {
			if code[i] == ch {
				continue
			}
			b := []byte(code)
			b[i] = ch
			if _, err := ticketcode.Verify(pub, string(b), 0); err == nil {
				t.Fatalf("tampered at %d (%q) verifies", i, b)
			}
		}
	}
	if _, err := ticketcode.Parse("4006381333931"); !errors.Is(err, ticketcode.ErrNotSigned) {
		t.Fatalf("a format-1 barcode: %v", err)
	}
	if _, err := ticketcode.Parse("T2." + strings.Repeat("A", 200)); !errors.Is(err, ticketcode.ErrMalformed) {
		t.Fatalf("a long code: %v", err)
	}
	k, err := ticketcode.ParsePublicKey(ticketcode.EncodePublicKey(pub))
	if err != nil || !k.Equal(pub) {
		t.Fatalf("public key round trip: %v", err)
	}
	if h := ticketcode.BarcodeHash("0012345678905"); len(h) != 16 {
		t.Fatalf("barcode hash %q", h)
	}
}

package delivery

import (
	"crypto/ed25519"
	"errors"
	"testing"
)

// A sealed key opens with the secret that sealed it (current or listed as
// previous), for its own event and environment only.
func TestSigningKeySeal(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(nil)
	old, err := NewCodeSigner("the-old-secret-of-thirty-two-chars!")
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := old.seal(7, false, priv.Seed())
	if err != nil {
		t.Fatal(err)
	}
	rotated, _ := NewCodeSigner("the-new-secret-of-thirty-two-chars!", "the-old-secret-of-thirty-two-chars!")
	if k, err := rotated.unseal(7, false, sealed); err != nil || !k.Equal(priv) {
		t.Fatalf("after a rotation: %v", err)
	}
	// Rows that do not open are broken seals: their tickets are shown
	// with bare barcodes rather than failing the page.
	if _, err := rotated.unseal(8, false, sealed); !errors.Is(err, ErrBrokenSeal) || !CannotSign(err) {
		t.Fatalf("another event's row opens the key, or fails otherwise: %v", err)
	}
	if _, err := rotated.unseal(7, true, sealed); !errors.Is(err, ErrBrokenSeal) {
		t.Fatalf("the event's sandbox row opens its production key, or fails otherwise: %v", err)
	}
	forgot, _ := NewCodeSigner("the-new-secret-of-thirty-two-chars!")
	if _, err := forgot.unseal(7, false, sealed); !errors.Is(err, ErrUnknownSeal) {
		t.Fatalf("without the old secret: %v", err)
	}
}

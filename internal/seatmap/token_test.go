package seatmap

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestTokenRoundTripAndRefusals(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	s, err := NewSigner("current-secret-0123456789abcdef0123", "old-secret-0123456789abcdef012345")
	if err != nil {
		t.Fatal(err)
	}
	c := Claims{CompanyID: 7, KeyID: 42, EventID: 9001, Sandbox: true, ExpiresAt: now.Add(time.Hour)}
	tok := s.Make(c)
	if !strings.HasPrefix(tok, Prefix) {
		t.Fatalf("token %q lacks the prefix", tok)
	}
	got, err := s.Open(tok, now)
	if err != nil || got != c {
		t.Fatalf("open: %+v %v, want %+v", got, err, c)
	}
	if _, err := s.Open(tok, now.Add(time.Hour)); !errors.Is(err, ErrExpired) {
		t.Fatalf("at its expiry: %v, want ErrExpired", err)
	}

	// Every flipped byte of payload or MAC is refused.
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(tok, Prefix))
	for i := range raw {
		b := append([]byte(nil), raw...)
		b[i] ^= 0x01
		if _, err := s.Open(Prefix+base64.RawURLEncoding.EncodeToString(b), now); !errors.Is(err, ErrInvalid) {
			t.Fatalf("byte %d flipped: %v, want ErrInvalid", i, err)
		}
	}
	for _, bad := range []string{"", "smt_", "smt_!!!", "tk_sandbox_" + strings.Repeat("a", 48), Prefix + strings.Repeat("A", MaxLength)} {
		if _, err := s.Open(bad, now); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%q: %v, want ErrInvalid", bad, err)
		}
	}

	// Rotation: a token of the old secret verifies while it is listed as
	// previous, and not once it is dropped.
	old, _ := NewSigner("old-secret-0123456789abcdef012345")
	oldTok := old.Make(c)
	if _, err := s.Open(oldTok, now); err != nil {
		t.Fatalf("token of a previous secret: %v", err)
	}
	rotated, _ := NewSigner("current-secret-0123456789abcdef0123")
	if _, err := rotated.Open(oldTok, now); !errors.Is(err, ErrInvalid) {
		t.Fatalf("token of a dropped secret: %v, want ErrInvalid", err)
	}
}

// The largest claims still fit MaxLength.
func TestTokenLengthBounded(t *testing.T) {
	s, _ := NewSigner("x")
	big := int64(1<<62 - 1)
	tok := s.Make(Claims{CompanyID: big, KeyID: big, EventID: big, ExpiresAt: time.Unix(big, 0)})
	if len(tok) > MaxLength {
		t.Fatalf("token of %d characters, MaxLength %d", len(tok), MaxLength)
	}
	t.Logf("largest token: %d characters", len(tok))
}

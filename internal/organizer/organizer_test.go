package organizer

import (
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
)

func TestNormalizeEmail(t *testing.T) {
	for in, want := range map[string]string{"Boss@Acme.Example": "boss@acme.example", "  a@b.c ": "a@b.c"} {
		if got, err := NormalizeEmail(in); err != nil || got != want {
			t.Errorf("NormalizeEmail(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "boss", "Boss <boss@acme.example>", "a@b.c, d@e.f", "@acme.example"} {
		if got, err := NormalizeEmail(bad); err == nil {
			t.Errorf("NormalizeEmail(%q) = %q, want an error", bad, got)
		}
	}
}

func TestCheckPassword(t *testing.T) {
	var pe *PasswordError
	for _, bad := range []string{"", "short", strings.Repeat("x", MinPasswordLength-1), strings.Repeat("x", MaxPasswordLength+1)} {
		if err := CheckPassword(bad); !errors.As(err, &pe) {
			t.Errorf("CheckPassword(%d chars) = %v", len(bad), err)
		}
	}
	for _, good := range []string{strings.Repeat("x", MinPasswordLength), "пароль-из-кириллицы", strings.Repeat("x", MaxPasswordLength)} {
		if err := CheckPassword(good); err != nil {
			t.Errorf("CheckPassword(%q) = %v", good, err)
		}
	}
}

func TestLogPath(t *testing.T) {
	for in, want := range map[string]string{
		"/cabinet/link/AbC-123_secret":       "/cabinet/link/…",
		"/cabinet/link/AbC/../../x":          "/cabinet/link/…",
		"//cabinet/link/secret":              "//cabinet/link/…",
		"/cabinet/link/":                     "/cabinet/link/",
		"/cabinet/report":                    "/cabinet/report",
		"/v1/orders/ord_1":                   "/v1/orders/ord_1",
		"/x/cabinet/link/secret?also=secret": "/x/cabinet/link/…",
	} {
		if got := LogPath(in); got != want || strings.Contains(got, "secret") {
			t.Errorf("LogPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// A code is six digits, spaces allowed between them; a recovery code is
// its letters and digits, whatever the case and spacing.
func TestTwoFactorCodeShapes(t *testing.T) {
	for s, want := range map[string]bool{"123456": true, "12345": false, "1234567": false, "12a456": false, "abcde-fghij": false} {
		if isCode(s) != want {
			t.Errorf("isCode(%q) = %v", s, !want)
		}
	}
	key := []byte("k")
	if string(recoveryHash(key, "a@b.test", " ABCDE-fghij ")) != string(recoveryHash(key, "a@b.test", "abcdefghij")) {
		t.Error("a recovery code typed loosely is another code")
	}
	// Keyed and bound to the person: the same code is another hash under
	// another secret or for another person, and none is the old unkeyed
	// SHA-256 (codes made before are not accepted).
	h := string(recoveryHash(key, "a@b.test", "abcdefghij"))
	old := sha256.Sum256([]byte("cabinet-recovery:abcdefghij"))
	if h == string(recoveryHash([]byte("other"), "a@b.test", "abcdefghij")) || h == string(recoveryHash(key, "c@d.test", "abcdefghij")) ||
		h == string(old[:]) {
		t.Error("a recovery code's hash is not keyed, or not the person's")
	}
	s := New(nil, nil, Limits{SealSecrets: []string{"now", "before"}})
	codes, hashes := s.newRecoveryCodes("a@b.test")
	seen := map[string]bool{}
	for i, c := range codes {
		if len(c) != 11 || c[5] != '-' || seen[c] || string(hashes[i]) != string(s.recoveryHashes("a@b.test", c)[0]) {
			t.Errorf("recovery code %q", c)
		}
		seen[c] = true
	}
}

package apikey

import (
	"strings"
	"testing"
)

func TestWellFormed(t *testing.T) {
	for _, env := range []string{Sandbox, Production} {
		key, _, _ := Generate(env)
		if !WellFormed(key) {
			t.Errorf("generated key %q is not well formed", key)
		}
	}
	hex48 := strings.Repeat("0123456789abcdef", 3)
	for _, key := range []string{
		"",
		"tk_sandbox_",
		"tk_sandbox_nope",
		"tk_staging_" + hex48,
		"tk_sandbox_" + hex48[:47],
		"tk_sandbox_" + hex48 + "0",
		"tk_sandbox_" + strings.ToUpper(hex48),
		"tk_sandbox_" + hex48[:47] + "g",
		"TK_sandbox_" + hex48,
		" tk_sandbox_" + hex48,
		"tk_sandbox_" + hex48[:47] + "\x00",
	} {
		if WellFormed(key) {
			t.Errorf("WellFormed(%q) = true", key)
		}
	}
}
